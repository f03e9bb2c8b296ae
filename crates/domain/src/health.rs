//! Room health: one word per room (ok, degraded, offline), since when, and why, derived from
//! what roomlink already observes: the room's listener (its checks or its connection), the
//! room's last observed status (a poll round or a command), and its inventory.
//!
//! - **offline**: nothing reaches the room. It has no listener service; its listener is offline;
//!   it was never observed; or its last observed status is older than
//!   [`HealthPolicy::stale_status_ms`] (a poll round stores a status for every room that
//!   answers, so a room that stops answering stops being observed).
//! - **degraded**: the room answers, but its last inventory shows a peripheral not connected,
//!   or its inventory is older than [`HealthPolicy::stale_inventory_ms`] (reads keep failing).
//! - **ok**: otherwise.
//!
//! `since` is the observation that shows the state: the last status for an offline room (it
//! has not been seen since), the last listener contact for an offline listener, the inventory
//! read for a missing peripheral. It is not the moment of the change itself, which roomlink
//! does not observe.

use crate::ids::{EndpointId, ListenerServiceId};
use crate::inventory::EndpointInventory;
use crate::listener::ListenerHealth;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum HealthState {
    // Worst first: sorting by state puts the broken rooms first.
    Offline,
    Degraded,
    Ok,
}

impl HealthState {
    pub const ALL: [HealthState; 3] =
        [HealthState::Ok, HealthState::Degraded, HealthState::Offline];

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    pub const fn as_str(self) -> &'static str {
        match self {
            HealthState::Ok => "ok",
            HealthState::Degraded => "degraded",
            HealthState::Offline => "offline",
        }
    }
}

/// Why a room is not ok: a stable code and a sentence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HealthReason {
    pub code: &'static str,
    pub message: String,
}

impl HealthReason {
    fn new(code: &'static str, message: impl Into<String>) -> Self {
        HealthReason {
            code,
            message: message.into(),
        }
    }
}

/// How long a room's health changes are kept (the room page's history).
pub const HISTORY_DAYS: i64 = 30;

/// The most changes one history answer holds.
pub const HISTORY_LIMIT: usize = 50;

/// A reason as recorded with a change (the code is a stored text then).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedReason {
    pub code: String,
    pub message: String,
}

/// One change of a room's health, as the health watch recorded it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthChange {
    pub at: i64,
    pub state: HealthState,
    /// `None`: the room was ok or not seen before.
    pub previous_state: Option<HealthState>,
    pub reasons: Vec<RecordedReason>,
}

impl HealthChange {
    /// The change a room observed in `state` with `reasons` makes after `previous` (the state
    /// last recorded; none: ok or not seen): none when the state is the same, or when a room
    /// first seen is ok (no news, as for its events).
    pub fn of(
        previous: Option<HealthState>,
        state: HealthState,
        reasons: &[HealthReason],
        at: i64,
    ) -> Option<HealthChange> {
        let unchanged = previous.unwrap_or(HealthState::Ok) == state;
        (!unchanged).then(|| HealthChange {
            at,
            state,
            previous_state: previous,
            reasons: reasons
                .iter()
                .map(|r| RecordedReason {
                    code: r.code.to_owned(),
                    message: r.message.clone(),
                })
                .collect(),
        })
    }
}

/// The reason codes, for documentation and clients.
pub const REASON_CODES: [&str; 6] = [
    "noListener",
    "listenerOffline",
    "neverObserved",
    "notAnswering",
    "peripheralDisconnected",
    "inventoryStale",
];

/// When observations count as too old.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HealthPolicy {
    /// A status older than this: the room is not answering (3 poll intervals by default).
    pub stale_status_ms: i64,
    /// An inventory older than this (2 refresh intervals by default).
    pub stale_inventory_ms: i64,
}

impl Default for HealthPolicy {
    fn default() -> Self {
        HealthPolicy {
            stale_status_ms: 3 * 30_000,
            stale_inventory_ms: 2 * 60 * 60 * 1000,
        }
    }
}

/// What is known of one room.
#[derive(Debug, Clone, Copy)]
pub struct RoomObservations<'a> {
    /// The room's listener and how it is doing; `None` when the room names none.
    pub listener: Option<(ListenerHealth, Option<i64>)>,
    /// When the room's status was last observed; `None` (or 0) when never.
    pub last_observed: Option<i64>,
    pub inventory: Option<&'a EndpointInventory>,
}

/// One room's health.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RoomHealth {
    pub endpoint_id: EndpointId,
    pub listener_service_id: Option<ListenerServiceId>,
    pub state: HealthState,
    pub since: Option<i64>,
    pub reasons: Vec<HealthReason>,
}

/// The health of one room at `now` (see the module's rules).
pub fn room_health(
    observed: &RoomObservations<'_>,
    now: i64,
    policy: &HealthPolicy,
) -> (HealthState, Option<i64>, Vec<HealthReason>) {
    let last_observed = observed.last_observed.filter(|t| *t > 0);
    match observed.listener {
        None => {
            return (
                HealthState::Offline,
                None,
                vec![HealthReason::new(
                    "noListener",
                    "the room names no listener service, so nothing reaches it",
                )],
            );
        }
        Some((ListenerHealth::Offline, last_contact)) => {
            return (
                HealthState::Offline,
                last_contact,
                vec![HealthReason::new(
                    "listenerOffline",
                    "its listener service is offline",
                )],
            );
        }
        Some(_) => {}
    }
    let Some(seen) = last_observed else {
        return (
            HealthState::Offline,
            None,
            vec![HealthReason::new(
                "neverObserved",
                "no status has been observed yet (the next poll round will try)",
            )],
        );
    };
    if now - seen > policy.stale_status_ms {
        return (
            HealthState::Offline,
            Some(seen),
            vec![HealthReason::new(
                "notAnswering",
                format!(
                    "the room has not answered a status request for {} s",
                    (now - seen) / 1000
                ),
            )],
        );
    }
    let mut reasons = Vec::new();
    let mut since = None;
    if let Some(record) = observed.inventory {
        if let (Some(inventory), Some(read_at)) = (&record.inventory, record.read_at) {
            for p in inventory.disconnected() {
                let name = p
                    .name
                    .as_deref()
                    .or(p.id.as_deref())
                    .unwrap_or("a peripheral");
                reasons.push(HealthReason::new(
                    "peripheralDisconnected",
                    format!("{} {name} is not connected", p.kind.words()),
                ));
                since = Some(read_at);
            }
        }
        let read_at = record.read_at.unwrap_or(0);
        let failed = record
            .last_failure
            .as_ref()
            .is_some_and(|f| !f.no_inventory_for_this_room());
        if failed && now - read_at > policy.stale_inventory_ms {
            let why = record
                .last_failure
                .as_ref()
                .map(|f| format!("{}: {}", f.error_name, f.error_message))
                .unwrap_or_default();
            reasons.push(HealthReason::new(
                "inventoryStale",
                match record.read_at {
                    Some(_) => format!("the inventory has not been read for a while ({why})"),
                    None => format!("the inventory could not be read ({why})"),
                },
            ));
            since = since.or(Some(record.attempted_at));
        }
    }
    if reasons.is_empty() {
        (HealthState::Ok, Some(seen), reasons)
    } else {
        (HealthState::Degraded, since, reasons)
    }
}

/// How many rooms are in each state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct HealthCounts {
    pub ok: u64,
    pub degraded: u64,
    pub offline: u64,
}

impl HealthCounts {
    pub fn add(&mut self, state: HealthState) {
        match state {
            HealthState::Ok => self.ok += 1,
            HealthState::Degraded => self.degraded += 1,
            HealthState::Offline => self.offline += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::{Inventory, Peripheral, PeripheralKind, ReadFailure};

    const NOW: i64 = 10_000_000;

    fn online() -> Option<(ListenerHealth, Option<i64>)> {
        Some((ListenerHealth::Online, Some(NOW)))
    }

    fn record(read_at: Option<i64>, connected: bool, failed: bool) -> EndpointInventory {
        EndpointInventory {
            endpoint_id: EndpointId::from_trusted("e1".into()),
            listener_service_id: None,
            read_at,
            attempted_at: NOW - 1_000,
            inventory: read_at.map(|_| Inventory {
                peripherals: vec![Peripheral {
                    kind: PeripheralKind::Microphone,
                    id: Some("m1".into()),
                    name: Some("Table Microphone".into()),
                    model: None,
                    serial_number: None,
                    software_version: None,
                    connected,
                }],
                ..Inventory::default()
            }),
            last_failure: failed.then(|| ReadFailure {
                error_name: "ExternalSystemUnreachable".into(),
                error_message: "no answer".into(),
            }),
        }
    }

    fn health(o: RoomObservations<'_>) -> (HealthState, Option<i64>, Vec<&'static str>) {
        let (state, since, reasons) = room_health(&o, NOW, &HealthPolicy::default());
        (state, since, reasons.iter().map(|r| r.code).collect())
    }

    #[test]
    fn nothing_reaching_the_room_is_offline_with_why_and_since_when() {
        let o = |listener, last_observed| RoomObservations {
            listener,
            last_observed,
            inventory: None,
        };
        assert_eq!(health(o(None, Some(NOW))).2, ["noListener"]);
        assert_eq!(
            health(o(Some((ListenerHealth::Offline, Some(5))), Some(NOW))),
            (HealthState::Offline, Some(5), vec!["listenerOffline"])
        );
        assert_eq!(health(o(online(), None)).2, ["neverObserved"]);
        assert_eq!(health(o(online(), Some(0))).2, ["neverObserved"]);
        let stale = NOW - HealthPolicy::default().stale_status_ms - 1;
        assert_eq!(
            health(o(online(), Some(stale))),
            (HealthState::Offline, Some(stale), vec!["notAnswering"])
        );
        // Exactly at the limit still counts as answering.
        let edge = NOW - HealthPolicy::default().stale_status_ms;
        assert_eq!(health(o(online(), Some(edge))).0, HealthState::Ok);
        // A listener never checked yet does not make the room offline by itself.
        assert_eq!(
            health(o(Some((ListenerHealth::Unknown, None)), Some(NOW))).0,
            HealthState::Ok
        );
    }

    #[test]
    fn an_answering_room_is_degraded_by_a_missing_peripheral_or_a_stale_inventory() {
        let o = |inventory| RoomObservations {
            listener: online(),
            last_observed: Some(NOW - 1_000),
            inventory,
        };
        let fine = record(Some(NOW - 5_000), true, false);
        assert_eq!(
            health(o(Some(&fine))),
            (HealthState::Ok, Some(NOW - 1_000), vec![])
        );
        let unplugged = record(Some(NOW - 5_000), false, false);
        let (state, since, reasons) =
            room_health(&o(Some(&unplugged)), NOW, &HealthPolicy::default());
        assert_eq!((state, since), (HealthState::Degraded, Some(NOW - 5_000)));
        assert_eq!(
            reasons[0].message,
            "microphone Table Microphone is not connected"
        );
        // A failed read after a recent good one is not yet stale.
        let recent = record(Some(NOW - 5_000), true, true);
        assert_eq!(health(o(Some(&recent))).0, HealthState::Ok);
        let old = record(
            Some(NOW - HealthPolicy::default().stale_inventory_ms - 1),
            true,
            true,
        );
        assert_eq!(health(o(Some(&old))).2, ["inventoryStale"]);
        let never = record(None, true, true);
        assert_eq!(health(o(Some(&never))).2, ["inventoryStale"]);
        // A room whose listener has no inventory for it (Mesh) is not degraded by that.
        let mut mesh = record(None, true, true);
        mesh.last_failure = Some(ReadFailure {
            error_name: "NoSuchHandler".into(),
            error_message: "no handler for readinventory".into(),
        });
        assert_eq!(health(o(Some(&mesh))).0, HealthState::Ok);
        // No record (a listener too old for inventory): nothing to say.
        assert_eq!(health(o(None)).0, HealthState::Ok);
    }

    #[test]
    fn states_sort_worst_first_and_count() {
        let mut states = HealthState::ALL.to_vec();
        states.sort();
        assert_eq!(
            states,
            [HealthState::Offline, HealthState::Degraded, HealthState::Ok]
        );
        let mut counts = HealthCounts::default();
        for s in [HealthState::Ok, HealthState::Offline, HealthState::Ok] {
            counts.add(s);
        }
        assert_eq!((counts.ok, counts.degraded, counts.offline), (2, 0, 1));
    }

    #[test]
    fn a_change_is_recorded_when_the_state_differs_and_a_first_ok_is_none() {
        let why = [HealthReason::new("notAnswering", "no status")];
        assert_eq!(HealthChange::of(None, HealthState::Ok, &[], 1), None);
        assert_eq!(
            HealthChange::of(Some(HealthState::Offline), HealthState::Offline, &why, 1),
            None
        );
        let change = HealthChange::of(None, HealthState::Offline, &why, 5).unwrap();
        assert_eq!(change.previous_state, None);
        assert_eq!(change.reasons[0].code, "notAnswering");
        let back = HealthChange::of(Some(HealthState::Offline), HealthState::Ok, &[], 9).unwrap();
        assert_eq!(
            serde_json::to_value(&back).unwrap(),
            serde_json::json!({"at": 9, "state": "ok", "previousState": "offline", "reasons": []})
        );
    }
}

//! Drift (issue #36 item 3): a template assigned to rooms, and what the last check of each
//! room found.
//!
//! A check reads the template's keys as a plan does ([`RoomPlan::compare`]). A room has
//! drifted when a key it can say holds another value than the template's; a key its driver
//! cannot set (unsupported) or the room would not say (unreadable) is not drift, since
//! re-applying could not change it. A room is assigned one template at most: two could
//! disagree on a key, and "in line" would have no single meaning.
//!
//! Checks run in the status poll rounds, as inventory reads do (at most
//! `templates.drift_checks_per_round` rooms of a listener per round, each at most once per
//! `templates.drift_check_minutes`), or at once on request. A failed check keeps the last read
//! and says why it failed. A room drifting is news (`template.drifted`) once: when a read finds
//! it drifted after a read that found it in line (or none), or drifted in other keys.

use super::key::SettingKey;
use super::plan::{KeyPlan, RoomPlan};
use crate::error::ErrorKind;
use crate::ids::{EndpointId, TemplateId};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// What a check that could read the room found.
#[derive(Debug, Clone, PartialEq)]
pub enum DriftRead {
    /// Every key the room can say holds the template's value.
    InLine,
    /// These keys hold other values than the template's: what the room holds.
    Drifted(BTreeMap<SettingKey, Value>),
}

/// An assigned room's checks: the last attempt, the last read (and since when the room has
/// been drifted, while it is), and why the last attempt failed, if it did.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftRecord {
    pub checked_at: i64,
    pub read: Option<(i64, DriftRead)>,
    pub drifted_since: Option<i64>,
    /// The catalog error of the last attempt (its kind and message); `None` when it read.
    pub failure: Option<(ErrorKind, String)>,
}

/// An assigned room's state, as answers name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriftState {
    /// Assigned, not checked yet.
    Unchecked,
    InLine,
    Drifted,
    /// The last check could not ask the room (its last read, if any, is kept).
    Unreachable,
}

impl DriftState {
    pub const fn name(self) -> &'static str {
        match self {
            DriftState::Unchecked => "unchecked",
            DriftState::InLine => "in_line",
            DriftState::Drifted => "drifted",
            DriftState::Unreachable => "unreachable",
        }
    }

    pub const ALL: [DriftState; 4] = [
        DriftState::Unchecked,
        DriftState::InLine,
        DriftState::Drifted,
        DriftState::Unreachable,
    ];
}

impl DriftRead {
    /// What a plan of the room says about drift; `None` when the room could not be read.
    pub fn of(plan: &RoomPlan) -> Option<DriftRead> {
        let RoomPlan::Read(keys) = plan else {
            return None;
        };
        let drifted: BTreeMap<SettingKey, Value> = keys
            .iter()
            .filter_map(|(key, plan)| match plan {
                KeyPlan::Change { from } => Some((*key, from.clone())),
                _ => None,
            })
            .collect();
        Some(if drifted.is_empty() {
            DriftRead::InLine
        } else {
            DriftRead::Drifted(drifted)
        })
    }

    /// The drifted keys (none when in line).
    pub fn keys(&self) -> Vec<SettingKey> {
        match self {
            DriftRead::InLine => Vec::new(),
            DriftRead::Drifted(held) => held.keys().copied().collect(),
        }
    }
}

impl DriftRecord {
    /// The record after a check at `at` that found `plan`, and whether the room drifting is
    /// news: a read finds it drifted after none, after one finding it in line, or in other keys
    /// than the last read. A failed check changes only the attempt and its failure.
    pub fn after(previous: Option<&DriftRecord>, plan: &RoomPlan, at: i64) -> (DriftRecord, bool) {
        let last_read = previous.and_then(|p| p.read.clone());
        let Some(read) = DriftRead::of(plan) else {
            let RoomPlan::Unreachable { kind, message } = plan else {
                unreachable!("a plan that did not read is unreachable")
            };
            return (
                DriftRecord {
                    checked_at: at,
                    read: last_read,
                    drifted_since: previous.and_then(|p| p.drifted_since),
                    failure: Some((*kind, message.clone())),
                },
                false,
            );
        };
        let before = last_read
            .as_ref()
            .map(|(_, r)| r.keys())
            .unwrap_or_default();
        let news = matches!(read, DriftRead::Drifted(_)) && read.keys() != before;
        let drifted_since = match (&read, previous.and_then(|p| p.drifted_since)) {
            (DriftRead::InLine, _) => None,
            (DriftRead::Drifted(_), Some(since)) => Some(since),
            (DriftRead::Drifted(_), None) => Some(at),
        };
        (
            DriftRecord {
                checked_at: at,
                read: Some((at, read)),
                drifted_since,
                failure: None,
            },
            news,
        )
    }

    pub fn state(&self) -> DriftState {
        match (&self.failure, &self.read) {
            (Some(_), _) => DriftState::Unreachable,
            (None, Some((_, DriftRead::Drifted(_)))) => DriftState::Drifted,
            (None, Some((_, DriftRead::InLine))) => DriftState::InLine,
            (None, None) => DriftState::Unchecked,
        }
    }

    /// Whether the last read found the room drifted (also when a later check failed).
    pub fn drifted(&self) -> bool {
        matches!(self.read, Some((_, DriftRead::Drifted(_))))
    }

    /// The stored form: `{"checkedAt", "read"?: {"at", "held": {key: value}}, "driftedSince"?,
    /// "failure"?: {"name", "message"}}` (`held` empty: in line). Stores keep it as text.
    pub fn to_json(&self) -> Value {
        let mut out = json!({"checkedAt": self.checked_at});
        if let Some((at, read)) = &self.read {
            let held: Map<String, Value> = match read {
                DriftRead::InLine => Map::new(),
                DriftRead::Drifted(held) => held
                    .iter()
                    .map(|(k, v)| (k.name().to_owned(), v.clone()))
                    .collect(),
            };
            out["read"] = json!({"at": at, "held": held});
        }
        if let Some(since) = self.drifted_since {
            out["driftedSince"] = json!(since);
        }
        if let Some((kind, message)) = &self.failure {
            out["failure"] = json!({"name": kind.name(), "message": message});
        }
        out
    }

    /// Reads [`Self::to_json`]'s form; what is wrong with it otherwise (the store's corrupt
    /// error names the room).
    pub fn from_json(value: &Value) -> Result<DriftRecord, String> {
        let checked_at = value
            .get("checkedAt")
            .and_then(Value::as_i64)
            .ok_or("a drift record without checkedAt")?;
        let read = match value.get("read") {
            None | Some(Value::Null) => None,
            Some(read) => {
                let at = read
                    .get("at")
                    .and_then(Value::as_i64)
                    .ok_or("a drift read without its time")?;
                let held = read
                    .get("held")
                    .and_then(Value::as_object)
                    .ok_or("a drift read without held values")?
                    .iter()
                    .map(|(name, v)| {
                        SettingKey::parse(name)
                            .map(|k| (k, v.clone()))
                            .ok_or_else(|| format!("'{name}' is not a setting key"))
                    })
                    .collect::<Result<BTreeMap<_, _>, String>>()?;
                Some((
                    at,
                    if held.is_empty() {
                        DriftRead::InLine
                    } else {
                        DriftRead::Drifted(held)
                    },
                ))
            }
        };
        let failure = match value.get("failure") {
            None | Some(Value::Null) => None,
            Some(failure) => {
                let name = failure.get("name").and_then(Value::as_str).unwrap_or("");
                let kind = ErrorKind::parse(name)
                    .ok_or_else(|| format!("'{name}' is not an error name"))?;
                let message = failure
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                Some((kind, message))
            }
        };
        Ok(DriftRecord {
            checked_at,
            read,
            drifted_since: value.get("driftedSince").and_then(Value::as_i64),
            failure,
        })
    }
}

/// A room assigned a template, with the last check of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    pub endpoint_id: EndpointId,
    /// The endpoint's name when read.
    pub name: String,
    pub template_id: TemplateId,
    pub assigned_at: i64,
    /// `None` until the first check.
    pub drift: Option<DriftRecord>,
}

impl Assignment {
    pub fn state(&self) -> DriftState {
        self.drift
            .as_ref()
            .map_or(DriftState::Unchecked, DriftRecord::state)
    }

    pub fn drifted(&self) -> bool {
        self.drift.as_ref().is_some_and(DriftRecord::drifted)
    }

    /// When the room was last tried, for [`crate::inventory::due_for_read`].
    pub fn checked_at(&self) -> Option<i64> {
        self.drift.as_ref().map(|d| d.checked_at)
    }
}

#[cfg(test)]
#[path = "drift_tests.rs"]
mod tests;

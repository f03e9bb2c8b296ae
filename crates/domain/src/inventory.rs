//! Room inventory: what each room system says about itself (product, serial number, software,
//! uptime, addresses, peripherals), read through its listener (`readinventory`, listener
//! 3.3.0) and kept per endpoint with when it was read.
//!
//! Reads are spread over the status poll rounds: a round asks at most
//! `inventory.reads_per_round` rooms of each listener, those whose last attempt is oldest and
//! at least `inventory.refresh_minutes` old ([`due_for_read`]). A failed read keeps the last
//! good inventory and says why it failed; the next attempt waits a full interval, so an
//! unreachable room costs one attempt per interval, not one per round.

use crate::error::{Error, Result};
use crate::ids::{EndpointId, ListenerServiceId};
use serde::{Deserialize, Serialize};

/// What kind of device a peripheral is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PeripheralKind {
    TouchPanel,
    Camera,
    Microphone,
    Speaker,
    ControlSystem,
    Display,
    Other,
}

impl PeripheralKind {
    pub const ALL: [PeripheralKind; 7] = [
        PeripheralKind::TouchPanel,
        PeripheralKind::Camera,
        PeripheralKind::Microphone,
        PeripheralKind::Speaker,
        PeripheralKind::ControlSystem,
        PeripheralKind::Display,
        PeripheralKind::Other,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            PeripheralKind::TouchPanel => "touchPanel",
            PeripheralKind::Camera => "camera",
            PeripheralKind::Microphone => "microphone",
            PeripheralKind::Speaker => "speaker",
            PeripheralKind::ControlSystem => "controlSystem",
            PeripheralKind::Display => "display",
            PeripheralKind::Other => "other",
        }
    }

    /// The kind in words, for sentences ("touch panel").
    pub const fn words(self) -> &'static str {
        match self {
            PeripheralKind::TouchPanel => "touch panel",
            PeripheralKind::Camera => "camera",
            PeripheralKind::Microphone => "microphone",
            PeripheralKind::Speaker => "speaker",
            PeripheralKind::ControlSystem => "control system",
            PeripheralKind::Display => "display",
            PeripheralKind::Other => "peripheral",
        }
    }

    /// A listener's kind name; one roomlink does not know is `Other` (a later listener may
    /// report kinds this version does not have).
    pub fn from_listener(text: &str) -> PeripheralKind {
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == text)
            .unwrap_or(PeripheralKind::Other)
    }
}

/// What kind of network address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum AddressKind {
    Ipv4,
    Ipv6,
    Mac,
}

impl AddressKind {
    pub fn parse(text: &str) -> Option<AddressKind> {
        match text {
            "ipv4" => Some(AddressKind::Ipv4),
            "ipv6" => Some(AddressKind::Ipv6),
            "mac" => Some(AddressKind::Mac),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NetworkAddress {
    pub kind: AddressKind,
    pub value: String,
}

/// One device connected to the room system, as the room system sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Peripheral {
    pub kind: PeripheralKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub software_version: Option<String>,
    pub connected: bool,
}

/// What a room system said about itself at one read. Absent fields were not said;
/// `not_reported` names those its driver cannot read from this kind of device at all.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Inventory {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub software_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub software_release_date: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uptime_seconds: Option<u64>,
    #[serde(default)]
    pub addresses: Vec<NetworkAddress>,
    #[serde(default)]
    pub peripherals: Vec<Peripheral>,
    #[serde(default)]
    pub not_reported: Vec<String>,
}

impl Inventory {
    /// What a listing's `model` filter matches: the platform, else the product's name.
    pub fn listed_model(&self) -> Option<&str> {
        self.model.as_deref().or(self.product.as_deref())
    }

    /// The peripherals the room system does not see now.
    pub fn disconnected(&self) -> impl Iterator<Item = &Peripheral> {
        self.peripherals.iter().filter(|p| !p.connected)
    }
}

/// Why a read failed (a room's inventory, a room's calendar): the catalog error's name and
/// message (never a credential: the listener client's and calendar readers' errors carry none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadFailure {
    pub error_name: String,
    pub error_message: String,
}

impl ReadFailure {
    pub fn of(error: &Error) -> ReadFailure {
        ReadFailure {
            error_name: error.kind().name().to_owned(),
            error_message: error.message().to_owned(),
        }
    }

    /// The room's listener has no inventory for its kind of room (a Mesh room: the driver
    /// contract has none): a fact about the driver, not a fault of the room.
    pub fn no_inventory_for_this_room(&self) -> bool {
        self.error_name == crate::error::ErrorKind::NoSuchHandler.name()
    }
}

/// One endpoint's inventory record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EndpointInventory {
    pub endpoint_id: EndpointId,
    /// The endpoint's listener when it was listed (for the fleet view).
    pub listener_service_id: Option<ListenerServiceId>,
    /// When the inventory below was read (ms); `None` while no read has succeeded.
    pub read_at: Option<i64>,
    /// When a read was last tried, whatever came of it (ms).
    pub attempted_at: i64,
    pub inventory: Option<Inventory>,
    /// Why the last attempt failed; `None` when it succeeded.
    pub last_failure: Option<ReadFailure>,
}

/// The outcome of one read attempt, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InventoryRead {
    Read(Inventory),
    Failed(ReadFailure),
}

/// Which records a fleet listing keeps: every given field must match exactly.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InventoryFilter {
    pub software_version: Option<String>,
    pub model: Option<String>,
    pub listener: Option<ListenerServiceId>,
}

/// One page of a fleet listing, in endpoint id order; `next` is the last id when more follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InventoryPage {
    pub records: Vec<EndpointInventory>,
    pub next: Option<EndpointId>,
}

impl InventoryPage {
    /// The page of `limit` records out of up to `limit + 1` read (the extra one says that
    /// more follow).
    pub fn of(mut records: Vec<EndpointInventory>, limit: usize) -> InventoryPage {
        let more = records.len() > limit;
        records.truncate(limit);
        let next = more
            .then(|| records.last().map(|r| r.endpoint_id.clone()))
            .flatten();
        InventoryPage { records, next }
    }
}

/// The most records a fleet listing page holds (the API's one page limit), and its default size.
pub const MAX_PAGE: usize = crate::endpoint::page::MAX_PAGE_SIZE;
pub const DEFAULT_PAGE: usize = 100;

/// The longest text kept of a field a device reported, and the most list items: a device's
/// answer is not trusted to be small.
pub const MAX_TEXT: usize = 200;
pub const MAX_ITEMS: usize = 64;

/// Which of `candidates` (each with its last attempt, `None`: never tried) a round should
/// read: those never tried or last tried at least `interval_ms` ago, oldest first, at most
/// `per_round`.
pub fn due_for_read(
    candidates: &[(EndpointId, Option<i64>)],
    now: i64,
    interval_ms: i64,
    per_round: usize,
) -> Vec<EndpointId> {
    let mut due: Vec<&(EndpointId, Option<i64>)> = candidates
        .iter()
        .filter(|(_, attempted)| attempted.is_none_or(|at| now - at >= interval_ms))
        .collect();
    // Never tried first, then the longest waiting; ties by id so rounds are repeatable.
    due.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
    due.into_iter()
        .take(per_round)
        .map(|(id, _)| id.clone())
        .collect()
}

/// A fleet listing's page size: `None` gives [`DEFAULT_PAGE`]; 1..=[`MAX_PAGE`].
pub fn page_size(limit: Option<usize>) -> Result<usize> {
    match limit {
        None => Ok(DEFAULT_PAGE),
        Some(n) if (1..=MAX_PAGE).contains(&n) => Ok(n),
        Some(n) => Err(Error::invalid(format!(
            "limit: {n} is not between 1 and {MAX_PAGE}"
        ))),
    }
}

/// Cuts a device-reported text to [`MAX_TEXT`] characters, without control characters;
/// empty becomes `None`.
pub fn clean_text(text: Option<String>) -> Option<String> {
    let text = text?;
    let cleaned: String = text
        .trim()
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_TEXT)
        .collect();
    (!cleaned.is_empty()).then_some(cleaned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u32) -> EndpointId {
        EndpointId::from_trusted(format!("e{n:02}"))
    }

    #[test]
    fn never_read_rooms_come_first_then_the_longest_waiting_and_at_most_per_round() {
        let candidates = vec![
            (id(1), Some(1_000)),
            (id(2), None),
            (id(3), Some(500)),
            (id(4), Some(9_500)),
            (id(5), None),
        ];
        // Interval 5 s at 10 s: 4 is too recent.
        let due = due_for_read(&candidates, 10_000, 5_000, 10);
        assert_eq!(due, vec![id(2), id(5), id(3), id(1)]);
        assert_eq!(
            due_for_read(&candidates, 10_000, 5_000, 2),
            vec![id(2), id(5)]
        );
        assert!(due_for_read(&candidates[3..4], 10_000, 5_000, 10).is_empty());
        // Exactly one interval later is due.
        assert_eq!(
            due_for_read(&candidates[3..4], 14_500, 5_000, 1),
            vec![id(4)]
        );
    }

    #[test]
    fn page_sizes_are_checked() {
        assert_eq!(page_size(None).unwrap(), DEFAULT_PAGE);
        assert_eq!(page_size(Some(MAX_PAGE)).unwrap(), MAX_PAGE);
        assert!(page_size(Some(0)).is_err());
        assert!(page_size(Some(MAX_PAGE + 1)).is_err());
    }

    #[test]
    fn device_texts_are_cut_and_cleaned() {
        assert_eq!(
            clean_text(Some("  Room Kit \n".into())),
            Some("Room Kit".into())
        );
        assert_eq!(clean_text(Some("   ".into())), None);
        assert_eq!(clean_text(Some("a\u{0}b".into())), Some("ab".into()));
        assert_eq!(
            clean_text(Some("x".repeat(500))).map(|t| t.len()),
            Some(MAX_TEXT)
        );
    }

    #[test]
    fn unknown_peripheral_kinds_are_other_and_the_record_serializes_in_camel_case() {
        assert_eq!(
            PeripheralKind::from_listener("touchPanel"),
            PeripheralKind::TouchPanel
        );
        assert_eq!(
            PeripheralKind::from_listener("hologram"),
            PeripheralKind::Other
        );
        let inventory = Inventory {
            serial_number: Some("FOC123".into()),
            peripherals: vec![Peripheral {
                kind: PeripheralKind::TouchPanel,
                id: None,
                name: Some("Navigator".into()),
                model: None,
                serial_number: None,
                software_version: None,
                connected: false,
            }],
            ..Inventory::default()
        };
        let text = serde_json::to_string(&inventory).unwrap();
        assert!(text.contains("\"serialNumber\":\"FOC123\""), "{text}");
        assert!(text.contains("\"kind\":\"touchPanel\""), "{text}");
        assert_eq!(serde_json::from_str::<Inventory>(&text).unwrap(), inventory);
        assert_eq!(inventory.disconnected().count(), 1);
    }
}

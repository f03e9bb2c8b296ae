//! The bodies of the listener protocol (`docs/listener-protocol.md`), declared once for both
//! sides: roomlink writes the requests and reads the answers (`roomlink-listener-client`), a
//! listener (the simulator or `roomlink-listener`) reads the requests and writes the answers
//! (`roomlink-listener-protocol`).
//!
//! Types holding a credential deliberately have no `Debug`: nothing can print them. This crate
//! depends on serde alone; turning the domain's types into these is the client's business.

use serde::{Deserialize, Serialize};

/// The endpoint as roomlink describes it (no password: that travels as the credential).
/// Fields a listener does not know are ignored; it writes the same shape to a Mesh driver.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WireEndpoint {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_address: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_protocol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signaling_protocol: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dial_style: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub address_style: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Where a `MESH` endpoint's driver server answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mesh_base_uri: Option<String>,
}

impl WireEndpoint {
    /// The room system's address, if one was given.
    pub fn address(&self) -> Option<&str> {
        self.ip_address.as_deref().filter(|a| !a.trim().is_empty())
    }

    /// The address with the port the control protocol uses, for realistic messages.
    pub fn socket_text(&self) -> String {
        let address = self.address().unwrap_or("?");
        match self.port {
            Some(port) => format!("{address}:{port}"),
            None => address.to_owned(),
        }
    }
}

/// How the endpoint's password reaches the listener: `none`, `plain` (opened by roomlink) or
/// `sealed` (only the listener opens it).
#[derive(Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum WireCredential {
    None,
    Plain {
        password: String,
    },
    Sealed {
        /// Which enterprise key sealed it; a listener holds one private key, so it only logs it.
        #[serde(rename = "keyId")]
        key_id: String,
        /// Base64 (standard alphabet, padded) of the sealed box.
        ciphertext: String,
    },
}

/// The parameters of a command; each command reads its own, absent ones are left out.
#[derive(Debug, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WireParams {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meeting_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passcode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meeting_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtmf: Option<String>,
    /// `pushcalendar`: the room's meetings (no passcodes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calendar: Option<WireCalendar>,
    /// `readconfiguration`: the template keys to read (`time_zone`, `standby.delay_minutes`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
    /// `writeconfiguration`: template key → value, each inside its key's value space.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<serde_json::Map<String, serde_json::Value>>,
    /// `writeconfiguration`: `true` when the settings put back what the room held before a
    /// template job (an undo), whose values may lie outside roomlink's spaces.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub restore: Option<bool>,
}

/// The most meetings a `pushcalendar` command may carry.
pub const MAX_PUSHED_MEETINGS: usize = 100;

/// `pushcalendar`'s `params.calendar`: a window and the room's meetings in it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WireCalendar {
    /// Milliseconds since the epoch, `[from, to)`.
    pub from: i64,
    pub to: i64,
    #[serde(default)]
    pub meetings: Vec<WireMeeting>,
}

/// One meeting of a push.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WireMeeting {
    pub uid: String,
    #[serde(default)]
    pub title: Option<String>,
    /// Milliseconds since the epoch.
    pub start: i64,
    pub end: i64,
    /// What the room would join; absent or null when nothing in the event can be dialled.
    #[serde(default)]
    pub dial: Option<WireDial>,
}

/// What a pushed meeting would be joined with (never its passcode).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WireDial {
    pub meeting_id: Option<String>,
    pub cluster: Option<String>,
    pub meeting_type: Option<String>,
}

impl WireCalendar {
    /// `Err` names what is wrong: more than [`MAX_PUSHED_MEETINGS`] meetings, a window or
    /// meeting that ends before it starts, an empty uid.
    pub fn check(&self) -> Result<(), String> {
        if self.to < self.from {
            return Err("params.calendar: to is before from".to_owned());
        }
        if self.meetings.len() > MAX_PUSHED_MEETINGS {
            return Err(format!(
                "params.calendar.meetings: {} meetings; at most {MAX_PUSHED_MEETINGS}",
                self.meetings.len()
            ));
        }
        for (i, m) in self.meetings.iter().enumerate() {
            if m.uid.is_empty() {
                return Err(format!("params.calendar.meetings[{i}].uid: is required"));
            }
            if m.end < m.start {
                return Err(format!(
                    "params.calendar.meetings[{i}]: end is before start"
                ));
            }
        }
        Ok(())
    }
}

/// `POST /v1/commands/{command}`.
#[derive(Deserialize, Serialize)]
pub struct CommandBody {
    pub endpoint: WireEndpoint,
    pub credential: Option<WireCredential>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<WireParams>,
}

/// One entry of `POST /v1/status`.
#[derive(Deserialize, Serialize)]
pub struct StatusEntry {
    pub endpoint: WireEndpoint,
    pub credential: Option<WireCredential>,
}

/// `POST /v1/status`.
#[derive(Deserialize, Serialize)]
pub struct StatusBody {
    pub endpoints: Vec<StatusEntry>,
}

/// A room system's `state`, the answer of every command and of each status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WireState {
    pub call_active: bool,
    pub dialing: bool,
    pub microphone_muted: bool,
    #[serde(default)]
    pub reserved: bool,
    /// When the room last dialled, milliseconds since the epoch (`null`: never).
    #[serde(default)]
    pub last_dial_timestamp_millis: Option<i64>,
}

/// The success answer of a command: `{"state": {...}}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
pub struct StateAnswer {
    pub state: WireState,
}

/// The answer of `POST /v1/status`: one item per endpoint asked about, in that order.
#[derive(Debug, Deserialize)]
pub struct StatusAnswer {
    pub statuses: Vec<StatusItem>,
}

/// One endpoint's entry of a status answer: `state`, or `failure` (a [`Failure`] body, read
/// as JSON so that a reader can be lenient about a listener's extra or odd fields).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusItem {
    #[serde(default)]
    pub endpoint_id: Option<String>,
    #[serde(default)]
    pub state: Option<WireState>,
    #[serde(default)]
    pub failure: Option<serde_json::Value>,
}

/// A failure body, with the HTTP status it is answered with.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    #[serde(skip)]
    pub status: u16,
    pub failure: &'static str,
    pub message: String,
    pub causes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_request: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_response: Option<String>,
}

impl Failure {
    /// A failure of the listener itself (no room system involved).
    pub fn listener(status: u16, failure: &'static str, message: impl Into<String>) -> Self {
        let message = message.into();
        Failure {
            status,
            failure,
            causes: vec![message.clone()],
            message,
            remote_request: None,
            remote_response: None,
        }
    }
}

/// The longest window a `readcalendar` request may ask for (366 days).
pub const MAX_CALENDAR_WINDOW_MS: i64 = 366 * 24 * 3600 * 1000;

/// `readcalendar`'s body (listener 3.2.0): the events of one room calendar in a window.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CalendarQuery {
    /// The calendar system, as roomlink's `calendarType` (`EXCHANGE`).
    pub calendar_type: String,
    /// The room's calendar: for EXCHANGE, the room mailbox's SMTP address.
    pub calendar_id: String,
    /// Milliseconds since the epoch, `[from, to)`: the events overlapping it.
    pub from: i64,
    pub to: i64,
}

impl CalendarQuery {
    /// `Err` names what is wrong: an empty calendarId, a window that ends before it starts or
    /// is longer than [`MAX_CALENDAR_WINDOW_MS`].
    pub fn check(&self) -> Result<(), String> {
        if self.calendar_id.trim().is_empty() {
            return Err("calendarId: is required".to_owned());
        }
        if self.calendar_id.chars().count() > 320 || self.calendar_id.chars().any(char::is_control)
        {
            return Err("calendarId: at most 320 printable characters".to_owned());
        }
        if self.to < self.from {
            return Err("to is before from".to_owned());
        }
        // Checked: the two ends are any i64 the wire carries, and their distance may not fit.
        if self
            .to
            .checked_sub(self.from)
            .is_none_or(|length| length > MAX_CALENDAR_WINDOW_MS)
        {
            return Err("the window is longer than 366 days".to_owned());
        }
        Ok(())
    }
}

/// `readcalendar`'s answer: `{"calendar": {...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CalendarAnswer {
    pub calendar: WireCalendarEvents,
}

/// The events read, with the query they answer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WireCalendarEvents {
    pub calendar_id: String,
    pub from: i64,
    pub to: i64,
    /// In start order; occurrences of recurring meetings one by one.
    pub events: Vec<WireEvent>,
}

/// One event (one occurrence of a recurring meeting) of a room calendar.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WireEvent {
    /// The meeting's iCalendar UID (shared by a recurring meeting's occurrences), else `id`.
    pub uid: String,
    /// The calendar system's id of this item or occurrence (EWS: the ItemId's `Id`).
    pub id: String,
    pub title: Option<String>,
    /// Milliseconds since the epoch, UTC.
    pub start: i64,
    pub end: i64,
    pub location: Option<String>,
    /// The description as plain text.
    pub body: Option<String>,
    pub organizer: Option<WireOrganizer>,
    /// Join links given in structured form (none from EWS so far: links are in the body).
    pub conference_uris: Vec<String>,
    pub cancelled: bool,
    pub all_day: bool,
}

/// Who organizes a meeting.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WireOrganizer {
    pub name: Option<String>,
    pub email: Option<String>,
}

/// `readinventory`'s answer (listener 3.3.0): `{"inventory": {...}}`. The request is a
/// command body (`endpoint`, `credential`, no `params`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct InventoryAnswer {
    pub inventory: WireInventory,
}

/// What a room system says about itself. Every field is what the device reported, absent
/// when it did not say; `notReported` names the fields this driver cannot read from this kind
/// of device at all (so "absent" and "the device has none" can be told apart).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WireInventory {
    /// `Cisco`, `Poly`, or what a Mesh driver server says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// The product as the device names it (Cisco `SystemUnit ProductId`, Poly `Model`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub product: Option<String>,
    /// The hardware platform, for grouping (Cisco `SystemUnit ProductPlatform`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial_number: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub software_version: Option<String>,
    /// `YYYY-MM-DD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub software_release_date: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uptime_seconds: Option<u64>,
    pub addresses: Vec<WireAddress>,
    pub peripherals: Vec<WirePeripheral>,
    /// Field names of this object the driver cannot read (`uptimeSeconds`, `peripherals`, ...).
    pub not_reported: Vec<String>,
}

/// One network address of a room system.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WireAddress {
    /// `ipv4`, `ipv6` or `mac`.
    pub kind: String,
    pub value: String,
}

/// One device connected to the room system.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WirePeripheral {
    /// `touchPanel`, `camera`, `microphone`, `speaker`, `controlSystem`, `display` or `other`.
    pub kind: String,
    /// The device's own id for it (Cisco: the peripheral's `ID`, often its MAC address).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Hardware model (Cisco `HardwareInfo`, camera `Model`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial_number: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub software_version: Option<String>,
    /// Whether the room system sees it now (Cisco `Status` = `Connected`, camera `Connected`).
    pub connected: bool,
}

/// The most addresses and peripherals an inventory answer may list (each).
pub const MAX_INVENTORY_ITEMS: usize = 64;

/// `readconfiguration`'s and `writeconfiguration`'s answer (listener 3.4.0):
/// `{"configuration": {"time_zone": {"value": "Etc/UTC"}, "proximity.mode": {"unsupported":
/// "…"}, "system.name": {"refused": "…"}}}`, one entry per key asked or written.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct ConfigurationAnswer {
    pub configuration: std::collections::BTreeMap<String, WireSetting>,
}

/// What became of one template setting on the room system.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum WireSetting {
    /// The value the device holds (read) or accepted (write), in the template's spelling.
    Value(serde_json::Value),
    /// The driver or the device's firmware has no such setting: why.
    Unsupported(String),
    /// The device refused it: its own message.
    Refused(String),
}

/// The failure names of `readcalendar` (docs/listener-protocol.md).
pub mod calendar_failure {
    /// The calendar system could not be read (refused the account, no such mailbox, no
    /// access, unreachable, timed out, an answer that is not its protocol). Status 502.
    pub const UNREADABLE: &str = "calendar_unreadable";
    /// This listener reads no calendars of the requested type (for EXCHANGE: no
    /// `calendar.exchange.soap_uri` configured). Status 501.
    pub const NOT_CONFIGURED: &str = "calendar_not_configured";
}

impl Failure {
    /// `calendar_unreadable` (502).
    pub fn calendar_unreadable(message: impl Into<String>) -> Self {
        Failure::listener(502, calendar_failure::UNREADABLE, message)
    }

    /// `calendar_not_configured` (501).
    pub fn calendar_not_configured(message: impl Into<String>) -> Self {
        Failure::listener(501, calendar_failure::NOT_CONFIGURED, message)
    }
}

#[cfg(test)]
mod calendar_tests {
    use super::*;

    #[test]
    fn calendar_queries_are_checked() {
        let q = |id: &str, from, to| CalendarQuery {
            calendar_type: "EXCHANGE".into(),
            calendar_id: id.into(),
            from,
            to,
        };
        assert!(q("room@corp.example", 0, 1).check().is_ok());
        assert!(q("room@corp.example", 5, 5).check().is_ok());
        assert!(q(" ", 0, 1).check().unwrap_err().contains("calendarId"));
        assert!(q("a\nb", 0, 1).check().is_err());
        assert!(q("r@c", 2, 1).check().unwrap_err().contains("before"));
        assert!(q("r@c", 0, MAX_CALENDAR_WINDOW_MS + 1).check().is_err());
        // Ends whose distance overflows an i64 are too long, not a wrapped short window.
        assert!(
            q("r@c", i64::MIN, i64::MAX)
                .check()
                .unwrap_err()
                .contains("366 days")
        );
        let body: CalendarQuery = serde_json::from_str(
            r#"{"calendarType":"EXCHANGE","calendarId":"r@c","from":1,"to":2}"#,
        )
        .unwrap();
        assert_eq!(body, q("r@c", 1, 2));
    }

    #[test]
    fn events_round_trip_and_missing_fields_default() {
        let event: WireEvent =
            serde_json::from_str(r#"{"uid":"u","start":1,"end":2,"allDay":true}"#).unwrap();
        assert!(event.all_day && !event.cancelled && event.title.is_none());
        let answer = CalendarAnswer {
            calendar: WireCalendarEvents {
                calendar_id: "r@c".into(),
                from: 0,
                to: 9,
                events: vec![event],
            },
        };
        let text = serde_json::to_string(&answer).unwrap();
        assert!(text.contains("\"calendarId\":\"r@c\""), "{text}");
        assert_eq!(
            serde_json::from_str::<CalendarAnswer>(&text).unwrap(),
            answer
        );
        assert_eq!(Failure::calendar_unreadable("x").status, 502);
        assert_eq!(Failure::calendar_not_configured("x").status, 501);
    }
}

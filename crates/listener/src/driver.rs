//! The driver port: what the listener asks of a room system, whatever protocol reaches it.
//! Pure types and one trait, no I/O; each driver in [`crate::drivers`] implements it for one
//! `controlProtocol`.
//!
//! A driver carries out one action and answers; it does not serialize commands (the listener
//! holds one lock per device, see [`crate::devices`]), wait for IVR prompts (the listener sends
//! a join's [`DialPlan::ivr_steps`] after the call connects) or time out (the listener bounds
//! every call with `commands.timeout_ms`).

use async_trait::async_trait;
use roomlink_domain::enums::SignalingProtocol;
use roomlink_domain::rules::dial_plan::DialPlan;
use roomlink_domain::template::{SettingKey, TemplateSettings};
use roomlink_listener_protocol::failure::{FailureKind, room_failure};
use roomlink_listener_protocol::wire::{Failure, WireEndpoint, WireInventory};
use zeroize::Zeroizing;

/// The room system a command is for.
#[derive(Clone)]
pub struct Device {
    /// The endpoint as roomlink described it (the Mesh driver forwards it).
    pub endpoint: WireEndpoint,
    /// `ipAddress`: host name or IP address of the room system.
    pub address: String,
    /// The endpoint's `port`; `None` means the protocol's default.
    pub port: Option<u16>,
    pub username: Option<String>,
    /// The password opened from the request's credential; wiped when dropped.
    pub password: Option<Zeroizing<String>>,
}

impl Device {
    pub fn username(&self) -> &str {
        self.username.as_deref().unwrap_or("")
    }

    pub fn password(&self) -> &str {
        self.password.as_deref().map(String::as_str).unwrap_or("")
    }

    /// SHA-256 of the password, to tell whether a kept login (an HTTP session, an SSH shell)
    /// was made with it: a login proves nothing about another password. Kept only in memory.
    pub fn password_digest(&self) -> [u8; 32] {
        use sha2::Digest;
        sha2::Sha256::digest(self.password().as_bytes()).into()
    }

    /// The port to use: the endpoint's, else the protocol's default.
    pub fn port_or(&self, default: u16) -> u16 {
        self.port.unwrap_or(default)
    }

    /// `address:port` for messages and connections (IPv6 addresses in brackets).
    pub fn socket_text(&self, default_port: u16) -> String {
        let port = self.port_or(default_port);
        if self.address.contains(':') {
            format!("[{}]:{port}", self.address)
        } else {
            format!("{}:{port}", self.address)
        }
    }
}

// No Debug that could print the password.
impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("address", &self.address)
            .field("port", &self.port)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "[redacted]"))
            .finish()
    }
}

/// One thing a room system is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Dial `plan.dial_string` (the IVR steps are the listener's business, not the driver's).
    Join {
        plan: DialPlan,
        /// The endpoint's `signalingProtocol`, when set (H.323 or SIP).
        signaling: Option<SignalingProtocol>,
        /// The meeting id and passcode as roomlink sent them (a Mesh driver server wants them).
        meeting_id: Option<String>,
        passcode: Option<String>,
    },
    Hangup,
    /// Tones: digits, `#` and `*`, already validated by roomlink.
    Dtmf(String),
    Mute,
    Unmute,
    /// Replace the room's list of bookings with these (`pushcalendar`).
    PushCalendar(Vec<Booking>),
}

/// One meeting for the room system's list of bookings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Booking {
    /// The calendar event's uid.
    pub uid: String,
    pub title: Option<String>,
    /// Milliseconds since the epoch.
    pub start_ms: i64,
    pub end_ms: i64,
    /// What the room would dial (the join's dial plan, without passcode); `None` when the
    /// meeting cannot be dialled.
    pub dial_string: Option<String>,
    /// The endpoint's `signalingProtocol`, when set.
    pub signaling: Option<SignalingProtocol>,
}

impl Action {
    /// The protocol's command name, for logs and failures.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Join { .. } => "join",
            Action::Hangup => "hangup",
            Action::Dtmf(_) => "senddtmf",
            Action::Mute => "mutemicrophone",
            Action::Unmute => "unmutemicrophone",
            Action::PushCalendar(_) => "pushcalendar",
        }
    }
}

/// Where a room system's call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallPhase {
    Idle,
    /// Dialling, ringing or connecting: the call exists but has not connected.
    Dialling,
    Connected,
}

/// What a room system reports about itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceStatus {
    pub call: CallPhase,
    pub microphone_muted: bool,
}

impl DeviceStatus {
    /// The protocol's `callActive`: any call, connected or not.
    pub fn call_active(&self) -> bool {
        self.call != CallPhase::Idle
    }

    pub fn dialing(&self) -> bool {
        self.call == CallPhase::Dialling
    }
}

/// The Relay capability names a driver reports (`/v1/info` and the Mesh contract).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    Join,
    Hangup,
    Status,
    MuteMicrophone,
    Dtmf,
    /// Takes `pushcalendar` (the room shows the pushed meetings).
    CalendarPush,
    /// Takes `readinventory` (the room says what it is and what is connected to it).
    Inventory,
    /// Reads and writes template settings ([`Driver::read_configuration`],
    /// [`Driver::write_configuration`]; `readconfiguration`, `writeconfiguration`). Without it
    /// every key is answered unsupported.
    Configuration,
}

pub use roomlink_domain::template::{SettingOutcome, SettingOutcomes, all_unsupported};

/// Why a room system did not do what it was asked, with what was said on the wire. Texts in
/// `remote_request`/`remote_response` must already have every credential replaced by
/// `[redacted]` (see [`redact_authorization`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverFailure {
    pub kind: FailureKind,
    pub message: String,
    pub causes: Vec<String>,
    pub remote_request: Option<String>,
    pub remote_response: Option<String>,
}

impl DriverFailure {
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Self {
        DriverFailure {
            kind,
            message: message.into(),
            causes: Vec::new(),
            remote_request: None,
            remote_response: None,
        }
    }

    /// This failure in the middle of a write, saying which keys of `done` were written
    /// before it (every driver that writes settings one by one reports the same way).
    pub fn written_before(mut self, done: &SettingOutcomes) -> Self {
        let applied: Vec<&str> = done
            .iter()
            .filter(|(_, o)| matches!(o, SettingOutcome::Value(_)))
            .map(|(k, _)| k.name())
            .collect();
        if !applied.is_empty() {
            self.causes.push(format!(
                "applied before the failure: {}",
                applied.join(", ")
            ));
        }
        self
    }

    pub fn cause(mut self, cause: impl Into<String>) -> Self {
        self.causes.push(cause.into());
        self
    }

    pub fn exchange(mut self, request: Option<String>, response: Option<String>) -> Self {
        self.remote_request = request;
        self.remote_response = response;
        self
    }

    /// The protocol's failure body.
    pub fn into_wire(self) -> Failure {
        room_failure(
            self.kind,
            self.message,
            self.causes,
            self.remote_request,
            self.remote_response,
        )
    }
}

/// One `controlProtocol`'s way of reaching room systems.
#[async_trait]
pub trait Driver: Send + Sync {
    /// The `controlProtocol` it serves (`TANDBERG_HTTP`, ...).
    fn protocol(&self) -> &'static str;

    /// What it can do for every device of its protocol.
    fn capabilities(&self) -> &'static [Capability];

    /// Carries out `action` on the device.
    async fn perform(&self, device: &Device, action: &Action) -> Result<(), DriverFailure>;

    /// Reads the device's call and microphone state.
    async fn status(&self, device: &Device) -> Result<DeviceStatus, DriverFailure>;

    /// Reads what the device says about itself (`readinventory`). Only drivers that report
    /// [`Capability::Inventory`] override it; the listener never calls the others.
    async fn inventory(&self, device: &Device) -> Result<WireInventory, DriverFailure> {
        Err(DriverFailure::new(
            FailureKind::Misprovisioned,
            format!(
                "{} reads no inventory from {}",
                self.protocol(),
                device.address
            ),
        ))
    }

    /// Reads the device's values of template settings. A device's refusal of one key is that
    /// key's outcome; `Err` only when the device cannot be asked at all. Drivers without
    /// [`Capability::Configuration`] answer every key unsupported.
    async fn read_configuration(
        &self,
        _device: &Device,
        keys: &[SettingKey],
    ) -> Result<SettingOutcomes, DriverFailure> {
        let why = format!("{} reads no configuration", self.protocol());
        Ok(all_unsupported(keys.iter().copied(), &why))
    }

    /// Writes template settings, each on its own: a key the device refuses does not keep the
    /// others from being applied. Values are inside their domain spaces already
    /// ([`TemplateSettings`] refused the others). Drivers without
    /// [`Capability::Configuration`] answer every key unsupported.
    async fn write_configuration(
        &self,
        _device: &Device,
        settings: &TemplateSettings,
    ) -> Result<SettingOutcomes, DriverFailure> {
        let why = format!("{} writes no configuration", self.protocol());
        Ok(all_unsupported(settings.iter().map(|(k, _)| k), &why))
    }

    /// Called once when the listener stops: close what must be closed (Cisco HTTP sessions
    /// do not time out on the codec).
    async fn shutdown(&self) {}
}

/// Replaces the value of every `Authorization:` header line in a request text by `[redacted]`
/// (keeping the scheme), for `remoteRequest`.
pub fn redact_authorization(text: &str) -> String {
    text.lines()
        .map(|line| match line.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("authorization") => {
                let scheme = value.split_whitespace().next().unwrap_or("");
                format!("{name}: {scheme} [redacted]")
            }
            Some((name, _)) if name.trim().eq_ignore_ascii_case("cookie") => {
                format!("{name}: [redacted]")
            }
            _ => line.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorization_and_cookies_are_redacted_and_the_rest_kept() {
        let text = "POST /putxml HTTP/1.1\nAuthorization: Basic YWRtaW46cHc=\nCookie: SessionId=abc\nContent-Type: text/xml";
        let out = redact_authorization(text);
        assert!(out.contains("Authorization: Basic [redacted]"));
        assert!(out.contains("Cookie: [redacted]"));
        assert!(!out.contains("YWRtaW46cHc=") && !out.contains("abc"));
        assert!(out.contains("Content-Type: text/xml"));
    }

    #[test]
    fn status_maps_onto_the_protocol_state() {
        let s = DeviceStatus {
            call: CallPhase::Dialling,
            microphone_muted: false,
        };
        assert!(s.call_active() && s.dialing());
        let s = DeviceStatus {
            call: CallPhase::Connected,
            microphone_muted: true,
        };
        assert!(s.call_active() && !s.dialing());
    }

    #[test]
    fn a_device_never_prints_its_password() {
        let d = Device {
            endpoint: WireEndpoint::default(),
            address: "127.77.0.1".into(),
            port: None,
            username: Some("admin".into()),
            password: Some(Zeroizing::new("room-secret".into())),
        };
        assert!(!format!("{d:?}").contains("room-secret"));
        assert_eq!(d.socket_text(22), "127.77.0.1:22");
    }
}

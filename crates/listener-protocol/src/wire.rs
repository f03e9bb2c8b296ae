//! The bodies of the listener protocol, as a listener (the simulator or `roomlink-listener`)
//! reads and writes them.
//!
//! Types holding a credential deliberately have no `Debug`: nothing can print them.

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

/// How the endpoint's password reached the listener.
#[derive(Deserialize)]
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
        ciphertext: String,
    },
}

/// The parameters of a command; each command reads its own.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct WireParams {
    pub meeting_id: Option<String>,
    pub passcode: Option<String>,
    pub cluster: Option<String>,
    pub meeting_type: Option<String>,
    pub dtmf: Option<String>,
    /// `pushcalendar`: the room's meetings.
    pub calendar: Option<WireCalendar>,
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
#[derive(Deserialize)]
pub struct CommandBody {
    pub endpoint: WireEndpoint,
    pub credential: Option<WireCredential>,
    #[serde(default)]
    pub params: Option<WireParams>,
}

/// One entry of `POST /v1/status`.
#[derive(Deserialize)]
pub struct StatusEntry {
    pub endpoint: WireEndpoint,
    pub credential: Option<WireCredential>,
}

/// `POST /v1/status`.
#[derive(Deserialize)]
pub struct StatusBody {
    pub endpoints: Vec<StatusEntry>,
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

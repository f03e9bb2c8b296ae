//! The bodies of the listener protocol, as roomlink writes and reads them.
//!
//! Request types borrow the endpoint's password; they derive no `Debug` so nothing prints them.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use roomlink_domain::calendar::push::CalendarPush;
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::ports::{Command, EndpointCredential, ObservedState};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The endpoint as a listener needs it to reach the room system.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WireEndpoint<'a> {
    id: &'a str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ip_address: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    port: Option<u16>,
    #[serde(skip_serializing_if = "Option::is_none")]
    control_protocol: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signaling_protocol: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dial_style: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    address_style: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    username: Option<&'a str>,
    /// A `MESH` endpoint's driver server, which the listener calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    mesh_base_uri: Option<&'a str>,
}

impl<'a> WireEndpoint<'a> {
    pub fn of(endpoint: &'a Endpoint) -> Self {
        let p = endpoint.profile();
        WireEndpoint {
            id: endpoint.id().as_str(),
            name: endpoint.name(),
            ip_address: p.ip_address().map(|a| a.as_str()),
            port: p.port().map(|port| port.get()),
            control_protocol: p.control_protocol().map(|c| c.as_str()),
            signaling_protocol: p.signaling_protocol().map(|s| s.as_str()),
            dial_style: p.dial_style().map(|d| d.as_str()),
            address_style: p.address_style().map(|a| a.as_str()),
            username: p.username().map(|u| u.as_str()),
            mesh_base_uri: p.mesh_base_uri().map(|u| u.as_str()),
        }
    }
}

/// `credential`: `none`, `plain` (opened by roomlink) or `sealed` (only the listener opens it).
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum WireCredential<'a> {
    None,
    Plain {
        password: &'a str,
    },
    Sealed {
        #[serde(rename = "keyId")]
        key_id: &'a str,
        ciphertext: String,
    },
}

impl<'a> WireCredential<'a> {
    pub fn of(credential: &'a EndpointCredential) -> Self {
        match credential {
            EndpointCredential::None => WireCredential::None,
            EndpointCredential::Plain(password) => WireCredential::Plain {
                password: password.expose(),
            },
            EndpointCredential::SealedForListener(sealed) => WireCredential::Sealed {
                key_id: &sealed.key_id,
                ciphertext: BASE64.encode(&sealed.ciphertext),
            },
        }
    }
}

/// `params` of a command; absent fields are left out.
#[derive(Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct WireParams<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    meeting_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    passcode: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cluster: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    meeting_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dtmf: Option<&'a str>,
    /// `pushcalendar`: the window and its meetings (no passcodes).
    #[serde(skip_serializing_if = "Option::is_none")]
    calendar: Option<&'a CalendarPush>,
}

impl<'a> WireParams<'a> {
    pub fn of(command: &'a Command) -> Option<Self> {
        match command {
            Command::Join(join) => Some(WireParams {
                meeting_id: join.meeting_id.as_deref(),
                passcode: join.passcode.as_deref(),
                cluster: Some(join.cluster.as_str()),
                meeting_type: join.meeting_type.map(|t| t.as_str()),
                ..WireParams::default()
            }),
            Command::PushCalendar(push) => Some(WireParams {
                calendar: Some(push),
                ..WireParams::default()
            }),
            Command::SendDtmf(dtmf) => Some(WireParams {
                dtmf: Some(dtmf.as_str()),
                ..WireParams::default()
            }),
            Command::HangUp | Command::MuteMicrophone | Command::UnmuteMicrophone => None,
        }
    }
}

/// `POST /v1/commands/{command}`.
#[derive(Serialize)]
pub struct CommandRequest<'a> {
    pub endpoint: WireEndpoint<'a>,
    pub credential: WireCredential<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<WireParams<'a>>,
}

/// One endpoint of `POST /v1/status`.
#[derive(Serialize)]
pub struct StatusEntry<'a> {
    pub endpoint: WireEndpoint<'a>,
    pub credential: WireCredential<'a>,
}

/// `POST /v1/status`.
#[derive(Serialize)]
pub struct StatusRequest<'a> {
    pub endpoints: Vec<StatusEntry<'a>>,
}

/// A room system's `state`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WireState {
    call_active: bool,
    dialing: bool,
    microphone_muted: bool,
    #[serde(default)]
    reserved: bool,
    #[serde(default)]
    last_dial_timestamp_millis: Option<i64>,
}

impl From<WireState> for ObservedState {
    fn from(s: WireState) -> Self {
        ObservedState {
            call_active: s.call_active,
            reserved: s.reserved,
            dialing: s.dialing,
            microphone_muted: s.microphone_muted,
            last_dial_timestamp_millis: s.last_dial_timestamp_millis,
        }
    }
}

/// The success answer of a command.
#[derive(Debug, Deserialize)]
pub struct StateAnswer {
    pub state: WireState,
}

/// The answer of `POST /v1/status`.
#[derive(Debug, Deserialize)]
pub struct StatusAnswer {
    pub statuses: Vec<StatusItem>,
}

/// One endpoint's entry: `state` or `failure`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusItem {
    #[serde(default)]
    pub endpoint_id: Option<String>,
    #[serde(default)]
    pub state: Option<WireState>,
    #[serde(default)]
    pub failure: Option<Value>,
}

/// A failure body, read leniently: only `failure` is required; `causes` becomes strings
/// whatever a listener put there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailureBody {
    pub failure: String,
    pub message: String,
    pub causes: Vec<String>,
    pub remote_request: Option<String>,
    pub remote_response: Option<String>,
}

impl FailureBody {
    pub fn from_value(value: &Value) -> Option<FailureBody> {
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        let causes = match value.get("causes") {
            Some(Value::Array(items)) => items
                .iter()
                .map(|c| match c {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect(),
            Some(Value::String(s)) => vec![s.clone()],
            _ => Vec::new(),
        };
        Some(FailureBody {
            failure: text("failure")?,
            message: text("message").unwrap_or_default(),
            causes,
            remote_request: text("remoteRequest"),
            remote_response: text("remoteResponse"),
        })
    }

    pub fn from_bytes(body: &[u8]) -> Option<FailureBody> {
        serde_json::from_slice::<Value>(body)
            .ok()
            .as_ref()
            .and_then(FailureBody::from_value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roomlink_domain::ids::{EndpointId, EnterpriseId};
    use roomlink_domain::rules::dtmf::Dtmf;
    use roomlink_domain::rules::join::{JoinParams, JoinRequest};
    use roomlink_domain::secret::{SealedSecret, Secret};
    use serde_json::json;

    fn endpoint() -> Endpoint {
        let body = json!({"name": "Boardroom", "ipAddress": "127.77.0.1", "port": 22,
            "controlProtocol": "TANDBERG_SSH", "username": "admin", "location": "3rd floor"});
        let draft = roomlink_domain::rules::put::insert(body.as_object().unwrap()).unwrap();
        Endpoint::new(
            EndpointId::from_trusted("e1".into()),
            EnterpriseId::from_trusted("x".into()),
            draft.profile,
            None,
        )
        .unwrap()
    }

    #[test]
    fn command_bodies_follow_the_protocol() {
        let e = endpoint();
        let join = Command::Join(
            JoinRequest::from_params(&JoinParams {
                meeting_id: Some("123456789"),
                passcode: Some("4321"),
                ..JoinParams::default()
            })
            .unwrap(),
        );
        let credential = EndpointCredential::Plain(Secret::new("pw"));
        let body = CommandRequest {
            endpoint: WireEndpoint::of(&e),
            credential: WireCredential::of(&credential),
            params: WireParams::of(&join),
        };
        assert_eq!(
            serde_json::to_value(&body).unwrap(),
            json!({
                "endpoint": {"id": "e1", "name": "Boardroom", "ipAddress": "127.77.0.1", "port": 22,
                             "controlProtocol": "TANDBERG_SSH", "username": "admin"},
                "credential": {"kind": "plain", "password": "pw"},
                "params": {"meetingId": "123456789", "passcode": "4321", "cluster": "PROD",
                           "meetingType": "MEETME"}
            })
        );
        let dtmf = Command::SendDtmf(Dtmf::parse(Some("12#")).unwrap());
        assert_eq!(
            serde_json::to_value(WireParams::of(&dtmf)).unwrap(),
            json!({"dtmf": "12#"})
        );
        assert!(WireParams::of(&Command::HangUp).is_none());
    }

    #[test]
    fn readcalendar_bodies_and_answers_follow_the_protocol() {
        let query = CalendarQuery {
            calendar_type: "EXCHANGE",
            calendar_id: "board@corp.example",
            from: 1,
            to: 2,
        };
        assert_eq!(
            serde_json::to_value(&query).unwrap(),
            json!({"calendarType": "EXCHANGE", "calendarId": "board@corp.example",
                   "from": 1, "to": 2})
        );
        let answer: CalendarAnswer = serde_json::from_value(json!({"calendar": {
        "calendarId": "board@corp.example", "from": 1, "to": 2, "events": [
            {"uid": "u1", "id": "i1", "title": "Review", "start": 10, "end": 20,
             "body": "https://bjn.vc/1", "organizer": {"email": "a@b"}, "later": true},
            {"uid": "u2", "start": 0, "end": 86_400_000, "allDay": true},
            {"uid": "", "start": 0, "end": 1}
        ]}}))
        .unwrap();
        let events: Vec<_> = answer
            .calendar
            .events
            .into_iter()
            .filter_map(WireEvent::into_event)
            .collect();
        assert_eq!(events.len(), 1, "all-day and uid-less events are left out");
        assert_eq!(events[0].description.as_deref(), Some("https://bjn.vc/1"));
        assert!(!events[0].cancelled);
        // The two calendar failures become CalendarServerException, scrubbed; others do not.
        let id = roomlink_domain::ids::ListenerServiceId::from_trusted("l1".into());
        let call = crate::errors::Call::new(&id, "readcalendar", "the-listener-secret");
        let failure = |name: &str| FailureBody {
            failure: name.into(),
            message: "Exchange mail: refused (the-listener-secret)".into(),
            causes: Vec::new(),
            remote_request: None,
            remote_response: None,
        };
        let e = call
            .calendar_failure("board@corp.example", &failure("calendar_unreadable"))
            .unwrap();
        assert_eq!(
            e.kind(),
            roomlink_domain::ErrorKind::CalendarServerException
        );
        assert_eq!(e.details()["calendarId"], "board@corp.example");
        assert!(
            !e.message().contains("the-listener-secret"),
            "{}",
            e.message()
        );
        let e = call
            .calendar_failure("board@corp.example", &failure("calendar_not_configured"))
            .unwrap();
        assert!(e.message().contains("The listener service l1 cannot read"));
        assert!(
            call.calendar_failure("x", &failure("unreachable"))
                .is_none()
        );
    }

    #[test]
    fn credentials_serialize_by_kind() {
        let sealed = EndpointCredential::SealedForListener(SealedSecret {
            key_id: "pk-1234abcd".into(),
            ciphertext: vec![1, 2, 3],
        });
        assert_eq!(
            serde_json::to_value(WireCredential::of(&sealed)).unwrap(),
            json!({"kind": "sealed", "keyId": "pk-1234abcd", "ciphertext": "AQID"})
        );
        assert_eq!(
            serde_json::to_value(WireCredential::of(&EndpointCredential::None)).unwrap(),
            json!({"kind": "none"})
        );
    }

    #[test]
    fn failure_bodies_are_read_leniently() {
        let f =
            FailureBody::from_value(&json!({"failure": "timeout", "causes": ["a", 3, {"b": 1}]}))
                .unwrap();
        assert_eq!(f.causes, ["a", "3", r#"{"b":1}"#]);
        assert_eq!(f.message, "");
        let f = FailureBody::from_value(&json!({"failure": "x", "causes": "one"})).unwrap();
        assert_eq!(f.causes, ["one"]);
        assert!(FailureBody::from_value(&json!({"message": "no name"})).is_none());
        assert!(FailureBody::from_bytes(b"<html>").is_none());
    }
}

/// `readcalendar`'s body (listener 3.2.0).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CalendarQuery<'a> {
    pub calendar_type: &'static str,
    pub calendar_id: &'a str,
    pub from: i64,
    pub to: i64,
}

/// `readcalendar`'s answer.
#[derive(Debug, Deserialize)]
pub struct CalendarAnswer {
    pub calendar: WireCalendarEvents,
}

#[derive(Debug, Deserialize)]
pub struct WireCalendarEvents {
    pub events: Vec<WireEvent>,
}

/// One event as a listener reports it; fields roomlink does not use (`id`, `organizer`) are
/// ignored.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WireEvent {
    pub uid: String,
    #[serde(default)]
    pub title: Option<String>,
    pub start: i64,
    pub end: i64,
    #[serde(default)]
    pub location: Option<String>,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub conference_uris: Vec<String>,
    #[serde(default)]
    pub cancelled: bool,
    #[serde(default)]
    pub all_day: bool,
}

impl WireEvent {
    /// The domain's event; `None` for an all-day event (not a meeting a room joins, as for
    /// Microsoft 365 and Google) or one without a uid.
    pub fn into_event(self) -> Option<roomlink_domain::calendar::CalendarEvent> {
        if self.all_day || self.uid.is_empty() {
            return None;
        }
        Some(roomlink_domain::calendar::CalendarEvent {
            uid: self.uid,
            title: self.title,
            start_ms: self.start,
            end_ms: self.end.max(self.start),
            location: self.location,
            description: self.body,
            conference_uris: self.conference_uris,
            cancelled: self.cancelled,
        })
    }
}

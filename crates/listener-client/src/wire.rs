//! The listener protocol's bodies (declared once, in `roomlink-listener-wire`) from the
//! domain's types, and back.
//!
//! The request bodies carry the endpoint's password; they derive no `Debug` so nothing prints
//! them.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use roomlink_domain::calendar::CalendarEvent;
use roomlink_domain::calendar::push::CalendarPush;
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::inventory::{
    AddressKind, Inventory, MAX_ITEMS, NetworkAddress, Peripheral, PeripheralKind, clean_text,
};
use roomlink_domain::ports::{Command, EndpointCredential, ObservedState};
use roomlink_domain::template::{
    SettingKey, SettingOutcome, SettingOutcomes, TemplateSettings, WriteMode,
};
pub use roomlink_listener_wire::{
    CalendarAnswer, CalendarQuery, CommandBody, ConfigurationAnswer, InventoryAnswer, StateAnswer,
    StatusAnswer, StatusBody, StatusEntry, WireCalendar, WireCredential, WireDial, WireEndpoint,
    WireEvent, WireInventory, WireMeeting, WireParams, WireSetting, WireState,
};
use serde_json::Value;

/// `readconfiguration`'s parameters: the keys by name.
pub fn configuration_keys(keys: &[SettingKey]) -> WireParams {
    WireParams {
        keys: Some(keys.iter().map(|k| k.name().to_owned()).collect()),
        ..WireParams::default()
    }
}

/// `writeconfiguration`'s parameters: the settings as the template writes them.
pub fn configuration_settings(settings: &TemplateSettings, mode: WriteMode) -> WireParams {
    let settings = match settings.to_json() {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    WireParams {
        settings: Some(settings),
        restore: (mode == WriteMode::Restore).then_some(true),
        ..WireParams::default()
    }
}

/// A configuration answer as outcomes of exactly the `asked` keys. `Err` says why the answer
/// is not the protocol: a key that is not a template setting, one not asked, one missing.
pub fn configuration(
    answer: ConfigurationAnswer,
    asked: impl IntoIterator<Item = SettingKey>,
) -> Result<SettingOutcomes, String> {
    let mut outcomes = SettingOutcomes::new();
    for (name, setting) in answer.configuration {
        let key = SettingKey::parse(&name)
            .ok_or_else(|| format!("the answer names '{name}', which is not a template setting"))?;
        let outcome = match setting {
            WireSetting::Value(value) => SettingOutcome::Value(value),
            WireSetting::Unsupported(why) => SettingOutcome::Unsupported(why),
            WireSetting::Refused(message) => SettingOutcome::Refused(message),
        };
        outcomes.insert(key, outcome);
    }
    let asked: Vec<SettingKey> = asked.into_iter().collect();
    if let Some(extra) = outcomes.keys().find(|k| !asked.contains(k)) {
        return Err(format!("the answer names {extra}, which was not asked"));
    }
    if let Some(missing) = asked.iter().find(|k| !outcomes.contains_key(k)) {
        return Err(format!("the answer says nothing of {missing}"));
    }
    Ok(outcomes)
}

/// A listener's inventory answer as the domain keeps it: texts cleaned and cut, lists capped,
/// addresses of a kind roomlink does not know left out, peripheral kinds it does not know
/// kept as `other`.
pub fn inventory(w: WireInventory) -> Inventory {
    Inventory {
        vendor: clean_text(w.vendor),
        product: clean_text(w.product),
        model: clean_text(w.model),
        serial_number: clean_text(w.serial_number),
        software_version: clean_text(w.software_version),
        software_release_date: clean_text(w.software_release_date),
        uptime_seconds: w.uptime_seconds,
        addresses: w
            .addresses
            .into_iter()
            .filter_map(|a| {
                Some(NetworkAddress {
                    kind: AddressKind::parse(&a.kind)?,
                    value: clean_text(Some(a.value))?,
                })
            })
            .take(MAX_ITEMS)
            .collect(),
        peripherals: w
            .peripherals
            .into_iter()
            .take(MAX_ITEMS)
            .map(|p| Peripheral {
                kind: PeripheralKind::from_listener(&p.kind),
                id: clean_text(p.id),
                name: clean_text(p.name),
                model: clean_text(p.model),
                serial_number: clean_text(p.serial_number),
                software_version: clean_text(p.software_version),
                connected: p.connected,
            })
            .collect(),
        not_reported: w
            .not_reported
            .into_iter()
            .filter_map(|f| clean_text(Some(f)))
            .take(MAX_ITEMS)
            .collect(),
    }
}

/// The endpoint as a listener needs it to reach the room system (never its password).
pub fn endpoint(endpoint: &Endpoint) -> WireEndpoint {
    let p = endpoint.profile();
    WireEndpoint {
        id: Some(endpoint.id().as_str().to_owned()),
        name: Some(endpoint.name().to_owned()),
        ip_address: p.ip_address().map(|a| a.as_str().to_owned()),
        port: p.port().map(|port| port.get()),
        control_protocol: p.control_protocol().map(|c| c.as_str().to_owned()),
        signaling_protocol: p.signaling_protocol().map(|s| s.as_str().to_owned()),
        dial_style: p.dial_style().map(|d| d.as_str().to_owned()),
        address_style: p.address_style().map(|a| a.as_str().to_owned()),
        username: p.username().map(|u| u.as_str().to_owned()),
        mesh_base_uri: p.mesh_base_uri().map(|u| u.as_str().to_owned()),
    }
}

/// How the listener gets the endpoint's password.
pub fn credential(credential: &EndpointCredential) -> WireCredential {
    match credential {
        EndpointCredential::None => WireCredential::None,
        EndpointCredential::Plain(password) => WireCredential::Plain {
            password: password.expose().to_owned(),
        },
        EndpointCredential::SealedForListener(sealed) => WireCredential::Sealed {
            key_id: sealed.key_id.clone(),
            ciphertext: BASE64.encode(&sealed.ciphertext),
        },
    }
}

/// A command's `params`; `None` for the commands that take none.
pub fn params(command: &Command) -> Option<WireParams> {
    match command {
        Command::Join(join) => Some(WireParams {
            meeting_id: join.meeting_id.clone(),
            passcode: join.passcode.clone(),
            cluster: Some(join.cluster.as_str().to_owned()),
            meeting_type: join.meeting_type.map(|t| t.as_str().to_owned()),
            ..WireParams::default()
        }),
        Command::PushCalendar(push) => Some(WireParams {
            calendar: Some(calendar(push)),
            ..WireParams::default()
        }),
        Command::SendDtmf(dtmf) => Some(WireParams {
            dtmf: Some(dtmf.as_str().to_owned()),
            ..WireParams::default()
        }),
        Command::HangUp | Command::MuteMicrophone | Command::UnmuteMicrophone => None,
    }
}

/// `pushcalendar`'s `params.calendar`: the window and its meetings, passcodes left out.
fn calendar(push: &CalendarPush) -> WireCalendar {
    WireCalendar {
        from: push.from,
        to: push.to,
        meetings: push
            .meetings
            .iter()
            .map(|m| WireMeeting {
                uid: m.uid.clone(),
                title: m.title.clone(),
                start: m.start,
                end: m.end,
                dial: m.dial.as_ref().map(|d| WireDial {
                    meeting_id: d.meeting_id.clone(),
                    cluster: Some(d.cluster.as_str().to_owned()),
                    meeting_type: d.meeting_type.map(|t| t.as_str().to_owned()),
                }),
            })
            .collect(),
    }
}

/// What a listener observed of a room system.
pub fn observed(s: WireState) -> ObservedState {
    ObservedState {
        call_active: s.call_active,
        reserved: s.reserved,
        dialing: s.dialing,
        microphone_muted: s.microphone_muted,
        last_dial_timestamp_millis: s.last_dial_timestamp_millis,
    }
}

/// The domain's event; `None` for an all-day event (not a meeting a room joins, as for
/// Microsoft 365 and Google) or one without a uid.
pub fn event(e: WireEvent) -> Option<CalendarEvent> {
    if e.all_day || e.uid.is_empty() {
        return None;
    }
    Some(CalendarEvent {
        uid: e.uid,
        title: e.title,
        start_ms: e.start,
        end_ms: e.end.max(e.start),
        location: e.location,
        description: e.body,
        conference_uris: e.conference_uris,
        cancelled: e.cancelled,
    })
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

    fn room() -> Endpoint {
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
        let e = room();
        let join = Command::Join(
            JoinRequest::from_params(&JoinParams {
                meeting_id: Some("123456789"),
                passcode: Some("4321"),
                ..JoinParams::default()
            })
            .unwrap(),
        );
        let credential = EndpointCredential::Plain(Secret::new("pw"));
        let body = CommandBody {
            endpoint: endpoint(&e),
            credential: Some(self::credential(&credential)),
            params: params(&join),
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
            serde_json::to_value(params(&dtmf)).unwrap(),
            json!({"dtmf": "12#"})
        );
        assert!(params(&Command::HangUp).is_none());
    }

    #[test]
    fn readcalendar_bodies_and_answers_follow_the_protocol() {
        let query = CalendarQuery {
            calendar_type: "EXCHANGE".into(),
            calendar_id: "board@corp.example".into(),
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
            .filter_map(event)
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
            serde_json::to_value(credential(&sealed)).unwrap(),
            json!({"kind": "sealed", "keyId": "pk-1234abcd", "ciphertext": "AQID"})
        );
        assert_eq!(
            serde_json::to_value(credential(&EndpointCredential::None)).unwrap(),
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

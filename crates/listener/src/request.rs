//! From a protocol request to what the drivers work with: the device (with its password opened)
//! and the action (with the join's dial plan), refusing what cannot be carried out.

use crate::driver::{Action, Booking, Device};
use crate::settings::Settings;
use roomlink_domain::enums::{AddressStyle, DialStyle, SignalingProtocol};
use roomlink_domain::rules::dial_plan::DialPlan;
use roomlink_domain::rules::dtmf::Dtmf;
use roomlink_domain::rules::join::{JoinParams, JoinRequest};
use roomlink_listener_protocol::failure::{FailureKind, room_failure};
use roomlink_listener_protocol::secrets::password;
use roomlink_listener_protocol::wire::{Failure, WireCredential, WireEndpoint, WireParams};

/// The device named by a request.
pub fn device(
    endpoint: &WireEndpoint,
    credential: Option<&WireCredential>,
    key: Option<&crypto_box::SecretKey>,
) -> Result<Device, Failure> {
    let Some(address) = endpoint
        .ip_address
        .as_deref()
        .map(str::trim)
        .filter(|a| !a.is_empty())
    else {
        return Err(room_failure(
            FailureKind::Misprovisioned,
            "the endpoint has no ipAddress",
            vec![],
            None,
            None,
        ));
    };
    let password = password(credential, key).map_err(|problem| {
        room_failure(
            FailureKind::Misprovisioned,
            problem.to_string(),
            vec![],
            None,
            None,
        )
    })?;
    Ok(Device {
        endpoint: endpoint.clone(),
        address: address.to_owned(),
        port: endpoint.port,
        username: endpoint.username.clone(),
        password,
    })
}

fn bad_request(message: impl Into<String>) -> Failure {
    Failure::listener(400, "bad_request", message)
}

/// The action of command `name` with its parameters. The parameters were validated by
/// roomlink; they are checked again here with the same domain rules, as any client may call.
pub fn action(
    name: &str,
    params: &WireParams,
    endpoint: &WireEndpoint,
    settings: &Settings,
) -> Result<Action, Failure> {
    match name {
        "join" => {
            let join = JoinRequest::from_params(&JoinParams {
                meeting_id: params.meeting_id.as_deref(),
                passcode: params.passcode.as_deref(),
                cluster: params.cluster.as_deref(),
                meeting_type: params.meeting_type.as_deref(),
            })
            .map_err(|e| bad_request(e.message().to_owned()))?;
            let bridge = settings.bridge(join.cluster).ok_or_else(|| {
                let cluster = join.cluster.as_str().to_ascii_lowercase();
                room_failure(
                    FailureKind::Misprovisioned,
                    format!(
                        "this listener knows no meeting bridge for cluster {}: set bridges.{cluster}.hostname and bridges.{cluster}.ip_address",
                        join.cluster
                    ),
                    vec![],
                    None,
                    None,
                )
            })?;
            let dial_style = parse_optional(endpoint.dial_style.as_deref(), DialStyle::parse)?;
            let address_style =
                parse_optional(endpoint.address_style.as_deref(), AddressStyle::parse)?;
            let signaling = parse_optional(
                endpoint.signaling_protocol.as_deref(),
                SignalingProtocol::parse,
            )?;
            Ok(Action::Join {
                plan: DialPlan::new(&join, dial_style, address_style, &bridge),
                signaling,
                meeting_id: join.meeting_id,
                passcode: join.passcode,
            })
        }
        "hangup" => Ok(Action::Hangup),
        "senddtmf" => {
            let dtmf = Dtmf::parse(params.dtmf.as_deref())
                .map_err(|e| bad_request(e.message().to_owned()))?;
            Ok(Action::Dtmf(dtmf.as_str().to_owned()))
        }
        "pushcalendar" => bookings(params, endpoint, settings).map(Action::PushCalendar),
        "mutemicrophone" => Ok(Action::Mute),
        "unmutemicrophone" => Ok(Action::Unmute),
        other => Err(Failure::listener(
            404,
            "no_such_command",
            format!("no command {other}"),
        )),
    }
}

/// `pushcalendar`'s meetings as bookings: each dialable one with what the room would dial, by
/// the same dial plan as a join (without passcode). A meeting whose cluster has no bridge in
/// this listener's settings is kept, without a number: the list is still worth showing.
fn bookings(
    params: &WireParams,
    endpoint: &WireEndpoint,
    settings: &Settings,
) -> Result<Vec<Booking>, Failure> {
    let calendar = params
        .calendar
        .as_ref()
        .ok_or_else(|| bad_request("params.calendar: is required"))?;
    calendar.check().map_err(bad_request)?;
    let dial_style = parse_optional(endpoint.dial_style.as_deref(), DialStyle::parse)?;
    let address_style = parse_optional(endpoint.address_style.as_deref(), AddressStyle::parse)?;
    let signaling = parse_optional(
        endpoint.signaling_protocol.as_deref(),
        SignalingProtocol::parse,
    )?;
    let mut out = Vec::with_capacity(calendar.meetings.len());
    for meeting in &calendar.meetings {
        let dial_string = match &meeting.dial {
            None => None,
            Some(dial) => {
                let join = JoinRequest::from_params(&JoinParams {
                    meeting_id: dial.meeting_id.as_deref(),
                    passcode: None,
                    cluster: dial.cluster.as_deref(),
                    meeting_type: dial.meeting_type.as_deref(),
                })
                .map_err(|e| bad_request(format!("{}: {}", meeting.uid, e.message())))?;
                settings.bridge(join.cluster).map(|bridge| {
                    DialPlan::new(&join, dial_style, address_style, &bridge).dial_string
                })
            }
        };
        out.push(Booking {
            uid: meeting.uid.clone(),
            title: meeting.title.clone(),
            start_ms: meeting.start,
            end_ms: meeting.end,
            dial_string,
            signaling,
        });
    }
    Ok(out)
}

fn parse_optional<T>(
    text: Option<&str>,
    parse: impl Fn(&str) -> Result<T, roomlink_domain::error::Error>,
) -> Result<Option<T>, Failure> {
    text.filter(|t| !t.is_empty())
        .map(|t| parse(t).map_err(|e| bad_request(e.message().to_owned())))
        .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn settings() -> Settings {
        let mut bridges = BTreeMap::new();
        bridges.insert(
            "prod".to_owned(),
            crate::settings::BridgeSettings {
                hostname: "bridge.example".into(),
                ip_address: "192.0.2.1".into(),
            },
        );
        Settings {
            bridges,
            ..Settings::default()
        }
    }

    #[test]
    fn a_join_gets_its_dial_plan_from_the_domain_rule() {
        let endpoint = WireEndpoint {
            dial_style: Some("IP_HASH".into()),
            address_style: Some("IP_ADDRESS".into()),
            signaling_protocol: Some("H323".into()),
            ..WireEndpoint::default()
        };
        let params = WireParams {
            meeting_id: Some("123".into()),
            passcode: Some("42".into()),
            ..WireParams::default()
        };
        match action("join", &params, &endpoint, &settings()).unwrap() {
            Action::Join {
                plan, signaling, ..
            } => {
                assert_eq!(plan.dial_string, "192.0.2.1##123");
                assert_eq!(plan.ivr_steps, ["42#"]);
                assert_eq!(signaling, Some(SignalingProtocol::H323));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_push_dials_by_the_join_plan_without_passcodes() {
        let endpoint = WireEndpoint {
            dial_style: Some("IP_HASH".into()),
            address_style: Some("IP_ADDRESS".into()),
            ..WireEndpoint::default()
        };
        let params: WireParams = serde_json::from_value(serde_json::json!({"calendar": {
            "from": 0, "to": 100, "meetings": [
                {"uid": "a", "title": "Review", "start": 10, "end": 20,
                 "dial": {"meetingId": "123", "cluster": "PROD"}},
                {"uid": "b", "start": 30, "end": 40, "dial": {"meetingId": "9", "cluster": "QA"}},
                {"uid": "c", "start": 50, "end": 60}]}}))
        .unwrap();
        let Action::PushCalendar(bookings) =
            action("pushcalendar", &params, &endpoint, &settings()).unwrap()
        else {
            panic!("a push")
        };
        assert_eq!(bookings[0].dial_string.as_deref(), Some("192.0.2.1##123"));
        assert_eq!(bookings[1].dial_string, None, "no bridge for QA here");
        assert_eq!(bookings[2].dial_string, None);
        assert_eq!(
            action(
                "pushcalendar",
                &WireParams::default(),
                &endpoint,
                &settings()
            )
            .unwrap_err()
            .status,
            400
        );
    }

    #[test]
    fn refusals_are_clear() {
        let e = WireEndpoint::default();
        let qa = WireParams {
            meeting_id: Some("1".into()),
            cluster: Some("QA".into()),
            ..WireParams::default()
        };
        let f = action("join", &qa, &e, &settings()).unwrap_err();
        assert_eq!(f.failure, "misprovisioned");
        assert!(f.message.contains("bridges.qa"));
        let bad = WireParams {
            dtmf: Some("12a".into()),
            ..WireParams::default()
        };
        assert_eq!(
            action("senddtmf", &bad, &e, &settings())
                .unwrap_err()
                .status,
            400
        );
        assert_eq!(
            action("reboot", &bad, &e, &settings()).unwrap_err().status,
            404
        );
        let f = device(&e, None, None).unwrap_err();
        assert_eq!(f.failure, "misprovisioned");
    }

    #[test]
    fn a_sealed_password_without_a_key_is_a_clear_failure_without_the_ciphertext() {
        let e = WireEndpoint {
            ip_address: Some("127.77.0.1".into()),
            ..WireEndpoint::default()
        };
        let sealed = WireCredential::Sealed {
            key_id: "pk-1".into(),
            ciphertext: "c2VhbGVk".into(),
        };
        let f = device(&e, Some(&sealed), None).unwrap_err();
        assert!(f.message.contains("no private key"), "{}", f.message);
        assert!(!serde_json::to_string(&f).unwrap().contains("c2VhbGVk"));
    }
}

//! What a room system dials to join a meeting: the dial string, and the tones it sends once the
//! call is connected when its dial style cannot carry the whole meeting address.
//!
//! The shapes are decisions (the predecessor's facts show only ANNEX_O); docs/drivers.md lists
//! them. `addressStyle` picks the bridge's host name (the default) or its IP address.
//!
//! | dialStyle | dial string | tones after connecting |
//! |---|---|---|
//! | `ANNEX_O` (default) | `id.passcode@bridge` (`id@bridge` without a passcode) | none |
//! | `SIP_URI` | `id*passcode@bridge` (`id@bridge`), for systems that reject `.` | none |
//! | `IP_HASH` | `bridge##id` (H.323 address + alias) | `passcode#` |
//! | `E164` | `bridge` (the bridge's IVR) | `id#`, then `passcode#` |
//!
//! Without a meeting id every style dials `bridge` alone: the caller lands in the IVR.

use super::join::JoinRequest;
use crate::enums::{AddressStyle, DialStyle};

/// The meeting bridge of one cluster, as the listener is configured with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bridge {
    pub hostname: String,
    pub ip_address: String,
}

/// What to dial and what to send after the call connects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DialPlan {
    pub dial_string: String,
    /// DTMF strings sent one after another once the call is connected; empty for most styles.
    pub ivr_steps: Vec<String>,
}

impl DialPlan {
    pub fn new(
        join: &JoinRequest,
        dial_style: Option<DialStyle>,
        address_style: Option<AddressStyle>,
        bridge: &Bridge,
    ) -> Self {
        let address = match address_style.unwrap_or(AddressStyle::Hostname) {
            AddressStyle::Hostname => bridge.hostname.as_str(),
            AddressStyle::IpAddress => bridge.ip_address.as_str(),
        };
        let Some(id) = join.meeting_id.as_deref() else {
            return DialPlan {
                dial_string: address.to_owned(),
                ivr_steps: Vec::new(),
            };
        };
        let passcode = join.passcode.as_deref();
        let (dial_string, ivr_steps) = match dial_style.unwrap_or(DialStyle::AnnexO) {
            DialStyle::AnnexO => match passcode {
                Some(p) => (format!("{id}.{p}@{address}"), vec![]),
                None => (format!("{id}@{address}"), vec![]),
            },
            DialStyle::SipUri => match passcode {
                Some(p) => (format!("{id}*{p}@{address}"), vec![]),
                None => (format!("{id}@{address}"), vec![]),
            },
            DialStyle::IpHash => (
                format!("{address}##{id}"),
                passcode.map(|p| format!("{p}#")).into_iter().collect(),
            ),
            DialStyle::E164 => (
                address.to_owned(),
                std::iter::once(format!("{id}#"))
                    .chain(passcode.map(|p| format!("{p}#")))
                    .collect(),
            ),
        };
        DialPlan {
            dial_string,
            ivr_steps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::join::JoinParams;

    fn bridge() -> Bridge {
        Bridge {
            hostname: "bridge.example".into(),
            ip_address: "192.0.2.10".into(),
        }
    }

    fn join(id: Option<&str>, passcode: Option<&str>) -> JoinRequest {
        JoinRequest::from_params(&JoinParams {
            meeting_id: id,
            passcode,
            ..Default::default()
        })
        .unwrap()
    }

    fn plan(style: DialStyle, id: Option<&str>, passcode: Option<&str>) -> (String, Vec<String>) {
        let p = DialPlan::new(&join(id, passcode), Some(style), None, &bridge());
        (p.dial_string, p.ivr_steps)
    }

    #[test]
    fn each_style_has_its_shape() {
        let none: Vec<String> = vec![];
        assert_eq!(
            plan(DialStyle::AnnexO, Some("123"), Some("42")),
            ("123.42@bridge.example".into(), none.clone())
        );
        assert_eq!(
            plan(DialStyle::AnnexO, Some("123"), None),
            ("123@bridge.example".into(), none.clone())
        );
        assert_eq!(
            plan(DialStyle::SipUri, Some("123"), Some("42")),
            ("123*42@bridge.example".into(), none.clone())
        );
        assert_eq!(
            plan(DialStyle::IpHash, Some("123"), Some("42")),
            ("bridge.example##123".into(), vec!["42#".to_owned()])
        );
        assert_eq!(
            plan(DialStyle::IpHash, Some("123"), None),
            ("bridge.example##123".into(), none.clone())
        );
        assert_eq!(
            plan(DialStyle::E164, Some("123"), Some("42")),
            (
                "bridge.example".into(),
                vec!["123#".to_owned(), "42#".to_owned()]
            )
        );
    }

    #[test]
    fn no_meeting_id_dials_the_bridge_alone() {
        for style in DialStyle::ALL {
            assert_eq!(plan(*style, None, None), ("bridge.example".into(), vec![]));
        }
    }

    #[test]
    fn defaults_are_annex_o_and_the_host_name_and_ip_address_style_uses_the_ip() {
        let j = join(Some("9"), None);
        assert_eq!(
            DialPlan::new(&j, None, None, &bridge()).dial_string,
            "9@bridge.example"
        );
        assert_eq!(
            DialPlan::new(&j, None, Some(AddressStyle::IpAddress), &bridge()).dial_string,
            "9@192.0.2.10"
        );
    }
}

//! The XML documents the driver posts (`putxml`), the `getxml` query, and what it reads of
//! `/Status/Call`.

use super::Firmware;
use super::xml::Node;
use crate::driver::CallPhase;
use quick_xml::escape::escape;
use roomlink_domain::enums::SignalingProtocol;

pub(super) fn firmware_of(version: &str) -> Firmware {
    if crate::drivers::cisco::is_tc(version) {
        Firmware::Tc
    } else {
        Firmware::Ce
    }
}

pub(super) fn dtmf_body(firmware: Firmware, tones: &str) -> String {
    let send = format!(
        "<DTMFSend command=\"True\"><DTMFString>{}</DTMFString></DTMFSend>",
        escape(tones)
    );
    match firmware {
        Firmware::Ce => format!("<Command><Call>{send}</Call></Command>"),
        Firmware::Tc => format!("<Command>{send}</Command>"),
    }
}

/// `Bookings Put` (a multiline command: its payload is the `<body>` parameter, RoomOS
/// HttpApi.md), which replaces the codec's stored bookings.
pub(super) fn bookings_body(bookings: &[crate::driver::Booking]) -> String {
    format!(
        "<Command><Bookings><Put command=\"True\"><body>{}</body></Put></Bookings></Command>",
        escape(crate::drivers::cisco::bookings_payload(bookings).as_str())
    )
}

pub(super) fn dial_body(number: &str, signaling: Option<SignalingProtocol>) -> String {
    let protocol = crate::drivers::cisco::dial_protocol(signaling)
        .map(|p| format!("<Protocol>{p}</Protocol>"))
        .unwrap_or_default();
    format!(
        "<Command><Dial command=\"True\"><Number>{}</Number>{protocol}</Dial></Command>",
        escape(number)
    )
}

pub fn call_phase(calls: &Node) -> CallPhase {
    crate::drivers::cisco::overall(calls.find_all(&["Call"]).into_iter().map(|call| {
        let status = call
            .child_named("Status")
            .map(|s| s.text.as_str())
            .or_else(|| call.attr("status"))
            .unwrap_or("");
        crate::drivers::cisco::call_phase(status)
    }))
}

/// Percent-encodes a query value (the XPath's `/` and `[]` included).
pub(super) fn form_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

//! What both Cisco drivers (HTTP and SSH) know of the xAPI, whatever the transport.

use crate::driver::{Booking, CallPhase};
use roomlink_domain::civil::UtcParts;
use roomlink_domain::enums::SignalingProtocol;
use serde_json::json;

/// Titles and meeting ids longer than this are cut for `Bookings Put` (the `Bookings Book`
/// command's `Title` takes at most 128 characters; `Put` states no limit).
pub const BOOKING_TEXT_MAX: usize = 128;

/// What `Bookings Put` is told organised the meetings (the field is required; a push carries
/// no organiser).
pub const ORGANIZER: &str = "roomlink";

/// `Bookings Put`'s JSON payload (RoomOS schema 9.15.17.4 and 26.4.1): the required `Id`,
/// `Title`, `Number`, `Protocol`, `Organizer.Name`, `Time.StartTime` and `Time.Duration`
/// (minutes, at least 1, at most 1440), and the event's uid as `MeetingId`. A meeting that
/// cannot be dialled has an empty `Number` and `Protocol` `None`.
/// The xAPI's `Dial Protocol` value for the endpoint's `signalingProtocol` (`None`: the
/// codec's default), written the same over HTTP and SSH.
pub fn dial_protocol(signaling: Option<SignalingProtocol>) -> Option<&'static str> {
    match signaling? {
        SignalingProtocol::H323 => Some("H323"),
        SignalingProtocol::Sip => Some("Sip"),
    }
}

pub fn bookings_payload(bookings: &[Booking]) -> String {
    let cut = |text: &str| -> String { text.chars().take(BOOKING_TEXT_MAX).collect() };
    let list: Vec<_> = bookings
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let minutes = ((b.end_ms - b.start_ms).max(0) + 59_999) / 60_000;
            let (number, protocol) = match &b.dial_string {
                Some(number) => (
                    number.as_str(),
                    match b.signaling {
                        Some(SignalingProtocol::H323) => "H323",
                        _ => "SIP",
                    },
                ),
                None => ("", "None"),
            };
            json!({
                "Id": (i + 1).to_string(),
                "MeetingId": cut(&b.uid),
                "Title": cut(b.title.as_deref().unwrap_or_default()),
                "Number": number,
                "Protocol": protocol,
                "Organizer": { "Name": ORGANIZER },
                "Time": { "StartTime": format_utc(b.start_ms), "Duration": minutes.clamp(1, 1440) },
            })
        })
        .collect();
    json!({ "Bookings": list }).to_string()
}

/// Milliseconds since the epoch as `YYYY-MM-DDThh:mm:ssZ` (UTC).
pub fn format_utc(ms: i64) -> String {
    UtcParts::of(ms).rfc3339()
}

/// `Call DTMFSend`'s `DTMFString` takes at most 32 characters (RoomOS schema).
pub const DTMF_CHUNK: usize = 32;

/// The phase of one call's `Status` value: `Connected` (and the held/preserved states, and the
/// TANDBERG-era `Synced`) is connected; `Dialling`/`Connecting`/`Ringing`/`EarlyMedia` is not
/// yet; anything else (`Idle`, `Disconnecting`) is no call.
pub fn call_phase(status: &str) -> CallPhase {
    match status.to_ascii_lowercase().as_str() {
        "connected" | "synced" | "onhold" | "preserved" | "remotepreserved" => CallPhase::Connected,
        "dialling" | "dialing" | "connecting" | "ringing" | "earlymedia" => CallPhase::Dialling,
        _ => CallPhase::Idle,
    }
}

/// The most advanced phase among several calls.
pub fn overall(phases: impl IntoIterator<Item = CallPhase>) -> CallPhase {
    phases
        .into_iter()
        .fold(CallPhase::Idle, |acc, p| match (acc, p) {
            (CallPhase::Connected, _) | (_, CallPhase::Connected) => CallPhase::Connected,
            (CallPhase::Dialling, _) | (_, CallPhase::Dialling) => CallPhase::Dialling,
            _ => CallPhase::Idle,
        })
}

/// Whether a software version (`TC7.3.21…`, `ce9.15…`, `RoomOS 11…`) is TC-era: top-level
/// `DTMFSend`, no XML API sessions.
pub fn is_tc(version: &str) -> bool {
    let v = version.trim().to_ascii_uppercase();
    v.starts_with("TC") || v.starts_with("TE")
}

/// DTMF tones in chunks the codec accepts.
pub fn dtmf_chunks(tones: &str) -> Vec<String> {
    tones
        .chars()
        .collect::<Vec<_>>()
        .chunks(DTMF_CHUNK)
        .map(|c| c.iter().collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_states_map_onto_phases() {
        assert_eq!(call_phase("Connected"), CallPhase::Connected);
        assert_eq!(call_phase("Synced"), CallPhase::Connected);
        assert_eq!(call_phase("Ringing"), CallPhase::Dialling);
        assert_eq!(call_phase("Disconnecting"), CallPhase::Idle);
        assert_eq!(
            overall([CallPhase::Dialling, CallPhase::Connected]),
            CallPhase::Connected
        );
        assert_eq!(overall([]), CallPhase::Idle);
    }

    #[test]
    fn bookings_payload_has_the_required_fields() {
        let bookings = [
            Booking {
                uid: "review@corp.example".into(),
                title: Some("x".repeat(200)),
                start_ms: 1_800_007_200_000,
                end_ms: 1_800_007_200_000 + 90 * 60_000 + 1,
                dial_string: Some("123456789@bjn.vc".into()),
                signaling: None,
            },
            Booking {
                uid: "lunch".into(),
                title: None,
                start_ms: 951_782_400_000,
                end_ms: 951_782_400_000,
                dial_string: None,
                signaling: Some(SignalingProtocol::H323),
            },
        ];
        let doc: serde_json::Value = serde_json::from_str(&bookings_payload(&bookings)).unwrap();
        let first = &doc["Bookings"][0];
        assert_eq!(first["Id"], "1");
        assert_eq!(first["Number"], "123456789@bjn.vc");
        assert_eq!(first["Protocol"], "SIP");
        assert_eq!(first["Organizer"]["Name"], ORGANIZER);
        assert_eq!(first["Time"]["StartTime"], "2027-01-15T10:00:00Z");
        assert_eq!(first["Time"]["Duration"], 91);
        assert_eq!(first["Title"].as_str().unwrap().len(), BOOKING_TEXT_MAX);
        let second = &doc["Bookings"][1];
        assert_eq!(
            (&second["Number"], &second["Protocol"]),
            (&json!(""), &json!("None"))
        );
        assert_eq!(second["Title"], "");
        assert_eq!(second["Time"]["StartTime"], "2000-02-29T00:00:00Z");
        assert_eq!(second["Time"]["Duration"], 1);
    }

    #[test]
    fn versions_and_chunks() {
        assert!(is_tc("TC7.3.21.d4d8b4c"));
        assert!(!is_tc("ce9.15.17.4"));
        let chunks = dtmf_chunks(&"1".repeat(70));
        assert_eq!(
            chunks.iter().map(String::len).collect::<Vec<_>>(),
            [32, 32, 6]
        );
    }
}

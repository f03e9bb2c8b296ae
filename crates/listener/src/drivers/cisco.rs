//! What both Cisco drivers (HTTP and SSH) know of the xAPI, whatever the transport.

use crate::driver::CallPhase;

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

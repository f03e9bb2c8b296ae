//! Faults a simulated room system (or the listener answering for it) can be told to have.

use crate::wire::{Failure, WireEndpoint};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    // Room-system faults: the listener answers a failure body.
    Unreachable,
    Timeout,
    BadCredentials,
    Misprovisioned,
    ServerError,
    Ignore,
    // Listener faults: the listener itself misbehaves on any request naming the address.
    ListenerHang,
    ListenerGarbage,
    ListenerReset,
}

/// What the listener does about a request that meets a fault.
#[derive(Debug, Clone)]
pub enum Effect {
    /// Answer this failure body.
    Fail(Failure),
    /// Never answer.
    Hang,
    /// Answer 200 with a body that is not JSON.
    Garbage,
    /// Close the connection without answering.
    Reset,
}

impl Fault {
    pub const ALL: &'static [Fault] = &[
        Fault::Unreachable,
        Fault::Timeout,
        Fault::BadCredentials,
        Fault::Misprovisioned,
        Fault::ServerError,
        Fault::Ignore,
        Fault::ListenerHang,
        Fault::ListenerGarbage,
        Fault::ListenerReset,
    ];

    /// The name used by `PUT /sim/endpoints/{ipAddress}/fault`.
    pub const fn name(self) -> &'static str {
        match self {
            Fault::Unreachable => "unreachable",
            Fault::Timeout => "timeout",
            Fault::BadCredentials => "bad_credentials",
            Fault::Misprovisioned => "misprovisioned",
            Fault::ServerError => "server_error",
            Fault::Ignore => "ignore",
            Fault::ListenerHang => "listener_hang",
            Fault::ListenerGarbage => "listener_garbage",
            Fault::ListenerReset => "listener_reset",
        }
    }

    /// The fault with this exact name.
    pub fn parse(name: &str) -> Option<Fault> {
        Fault::ALL.iter().copied().find(|f| f.name() == name)
    }

    /// The listener's answer to `command` sent to `endpoint` while this fault is set.
    pub fn effect(self, command: &str, endpoint: &WireEndpoint) -> Effect {
        let at = endpoint.socket_text();
        let protocol = endpoint
            .control_protocol
            .as_deref()
            .unwrap_or("its control protocol");
        // What the listener sent the room system; credentials are written `[redacted]`, as
        // the protocol requires of every listener.
        let request = format!(
            "POST /putxml HTTP/1.1\nHost: {at}\nAuthorization: Basic [redacted]\nContent-Type: text/xml\n\n<Command><{command}/></Command>"
        );
        let fail = |status, failure, message: String, causes: Vec<String>, response: &str| {
            Effect::Fail(Failure {
                status,
                failure,
                message,
                causes,
                remote_request: Some(request.clone()),
                remote_response: Some(response.to_owned()),
            })
        };
        match self {
            Fault::Unreachable => fail(
                502,
                "unreachable",
                format!("the room system at {at} cannot be reached"),
                vec![format!(
                    "connect to {at} failed: No route to host (os error 113)"
                )],
                "(no response)",
            ),
            Fault::Timeout => fail(
                504,
                "timeout",
                format!("the room system at {at} did not answer in time"),
                vec![format!("no answer from {at} within 5000 ms")],
                "(no response)",
            ),
            Fault::BadCredentials => fail(
                502,
                "bad_credentials",
                "the room system refused the login".to_owned(),
                vec!["HTTP 401 Unauthorized".to_owned()],
                "HTTP/1.1 401 Unauthorized\nWWW-Authenticate: Basic realm=\"codec\"",
            ),
            Fault::Misprovisioned => fail(
                502,
                "misprovisioned",
                format!("the room system at {at} does not speak {protocol}"),
                vec![format!("protocol mismatch talking {protocol} to {at}")],
                "HTTP/1.1 400 Bad Request\n\n<html><body>Bad Request</body></html>",
            ),
            Fault::ServerError => fail(
                502,
                "server_error",
                "the room system answered with a server error".to_owned(),
                vec!["HTTP 500 Internal Server Error".to_owned()],
                "HTTP/1.1 500 Internal Server Error\n\n<Status>Error</Status>",
            ),
            Fault::Ignore => fail(
                502,
                "ignored",
                format!("the room system accepted {command} but nothing changed"),
                vec![format!("{command} acknowledged; state unchanged after 3 s")],
                "HTTP/1.1 200 OK\n\n<Status>OK</Status>",
            ),
            Fault::ListenerHang => Effect::Hang,
            Fault::ListenerGarbage => Effect::Garbage,
            Fault::ListenerReset => Effect::Reset,
        }
    }

    /// Whether the fault is the listener's own (it breaks a whole request, not one endpoint).
    pub fn is_listener_fault(self) -> bool {
        matches!(
            self,
            Fault::ListenerHang | Fault::ListenerGarbage | Fault::ListenerReset
        )
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Every fault name, for error messages.
pub fn names() -> String {
    Fault::ALL
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint() -> WireEndpoint {
        WireEndpoint {
            ip_address: Some("127.77.0.1".into()),
            port: Some(22),
            control_protocol: Some("TANDBERG_SSH".into()),
            ..WireEndpoint::default()
        }
    }

    #[test]
    fn every_name_parses_back_and_nothing_else_does() {
        for f in Fault::ALL {
            assert_eq!(Fault::parse(f.name()), Some(*f));
        }
        for bad in [
            "",
            "Timeout",
            "ignored",
            "listener-hang",
            "unreachable ",
            "hang",
        ] {
            assert_eq!(Fault::parse(bad), None, "{bad}");
        }
        assert!(names().contains("listener_reset"));
    }

    #[test]
    fn room_faults_answer_protocol_failures_with_redacted_requests() {
        let expected = [
            (Fault::Unreachable, "unreachable"),
            (Fault::Timeout, "timeout"),
            (Fault::BadCredentials, "bad_credentials"),
            (Fault::Misprovisioned, "misprovisioned"),
            (Fault::ServerError, "server_error"),
            (Fault::Ignore, "ignored"),
        ];
        for (fault, failure) in expected {
            assert!(!fault.is_listener_fault());
            let Effect::Fail(body) = fault.effect("join", &endpoint()) else {
                panic!("{fault} must answer a failure body");
            };
            assert_eq!(body.failure, failure);
            assert!(!(200..300).contains(&body.status));
            assert!(!body.causes.is_empty());
            let request = body.remote_request.unwrap_or_default();
            assert!(
                request.contains("Authorization: Basic [redacted]"),
                "{request}"
            );
        }
    }

    #[test]
    fn listener_faults_break_the_request_itself() {
        for (fault, check) in [
            (
                Fault::ListenerHang,
                matches!(
                    Fault::ListenerHang.effect("join", &endpoint()),
                    Effect::Hang
                ),
            ),
            (
                Fault::ListenerGarbage,
                matches!(
                    Fault::ListenerGarbage.effect("join", &endpoint()),
                    Effect::Garbage
                ),
            ),
            (
                Fault::ListenerReset,
                matches!(
                    Fault::ListenerReset.effect("join", &endpoint()),
                    Effect::Reset
                ),
            ),
        ] {
            assert!(fault.is_listener_fault());
            assert!(check, "{fault}");
        }
    }
}

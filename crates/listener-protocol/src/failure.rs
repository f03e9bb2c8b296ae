//! The room-system failure kinds of the protocol (docs/listener-protocol.md, "Failures"): the
//! names roomlink maps onto its catalog, and the HTTP status a listener answers them with.

use crate::wire::Failure;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// The room system cannot be reached (refused, no route, reset before any answer).
    Unreachable,
    /// The room system did not answer in time.
    Timeout,
    /// The room system refused the stored credentials.
    BadCredentials,
    /// The room system is provisioned wrongly (wrong protocol, port, role, address).
    Misprovisioned,
    /// The room system answered with a server error.
    ServerError,
    /// The room system accepted the command and nothing happened.
    Ignored,
    /// This listener has no driver for the endpoint's `controlProtocol`.
    UnsupportedProtocol,
}

impl FailureKind {
    /// The `failure` name on the wire.
    pub const fn name(self) -> &'static str {
        match self {
            FailureKind::Unreachable => "unreachable",
            FailureKind::Timeout => "timeout",
            FailureKind::BadCredentials => "bad_credentials",
            FailureKind::Misprovisioned => "misprovisioned",
            FailureKind::ServerError => "server_error",
            FailureKind::Ignored => "ignored",
            FailureKind::UnsupportedProtocol => "unsupported_protocol",
        }
    }

    /// The HTTP status the listener answers with: 504 for a room system's silence, 501 for a
    /// protocol it lacks, 502 for everything the room system said or failed to say.
    pub const fn status(self) -> u16 {
        match self {
            FailureKind::Timeout => 504,
            FailureKind::UnsupportedProtocol => 501,
            _ => 502,
        }
    }
}

/// A room system's failure, ready for the wire.
pub fn room_failure(
    kind: FailureKind,
    message: impl Into<String>,
    causes: Vec<String>,
    remote_request: Option<String>,
    remote_response: Option<String>,
) -> Failure {
    let message = message.into();
    Failure {
        status: kind.status(),
        failure: kind.name(),
        causes: if causes.is_empty() {
            vec![message.clone()]
        } else {
            causes
        },
        message,
        remote_request,
        remote_response,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_statuses_are_the_protocols() {
        assert_eq!(FailureKind::BadCredentials.name(), "bad_credentials");
        assert_eq!(FailureKind::Ignored.name(), "ignored");
        assert_eq!(FailureKind::Timeout.status(), 504);
        assert_eq!(FailureKind::UnsupportedProtocol.status(), 501);
        assert_eq!(FailureKind::Unreachable.status(), 502);
        let f = room_failure(FailureKind::ServerError, "boom", vec![], None, None);
        assert_eq!(f.causes, ["boom"]);
        assert_eq!(f.status, 502);
    }
}

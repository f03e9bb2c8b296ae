//! From what went wrong to the catalog (docs/listener-protocol.md, "From failures to the
//! catalog"). Every error carries exactly the errorDetails keys of its table row; every text
//! that came from a listener is scrubbed first.

use crate::redact::scrub;
use crate::wire::FailureBody;
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::error::{Error, ErrorKind};
use roomlink_domain::ids::ListenerServiceId;
use serde_json::Value;
use std::time::Duration;

/// A listener's causes beyond this many are dropped: a chain, not a log.
const MAX_CAUSES: usize = 20;

/// One exchange with a listener: what every error about it names.
#[derive(Clone)]
pub struct Call<'a> {
    pub listener_id: &'a ListenerServiceId,
    /// `commandName` / `command`: the protocol's name (`status` for a poll).
    pub command: &'static str,
    /// The listener's version once known (`listenerServiceVersion`).
    pub version: Option<String>,
    /// Values no listener text may carry into an error: the listener secret, the password.
    secrets: Vec<&'a str>,
}

impl<'a> Call<'a> {
    pub fn new(listener_id: &'a ListenerServiceId, command: &'static str, secret: &'a str) -> Self {
        Call {
            listener_id,
            command,
            version: None,
            secrets: vec![secret],
        }
    }

    /// The same call, also scrubbing `password` out of listener texts.
    pub fn with_password(&self, password: Option<&'a str>) -> Self {
        let mut call = self.clone();
        call.secrets.extend(password);
        call
    }

    fn id(&self) -> &str {
        self.listener_id.as_str()
    }

    fn version_text(&self) -> String {
        self.version.clone().unwrap_or_else(|| "unknown".to_owned())
    }

    fn scrub(&self, text: &str) -> String {
        scrub(text, &self.secrets)
    }

    fn causes(&self, causes: &[String]) -> Value {
        Value::from(
            causes
                .iter()
                .take(MAX_CAUSES)
                .map(|c| self.scrub(c))
                .collect::<Vec<_>>(),
        )
    }

    /// `ListenerOffline`: no answer could be had at all.
    pub fn offline(&self, cause: String) -> Error {
        Error::new(
            ErrorKind::ListenerOffline,
            format!(
                "The listener service {} is offline or unreachable.",
                self.id()
            ),
        )
        .with("listenerServiceId", self.id())
        .caused_by(cause)
    }

    /// `CommandTimedOut`: the listener took longer than the command timeout.
    pub fn timed_out(&self, timeout: Duration) -> Error {
        let cause = format!(
            "no answer from the listener within {} ms",
            timeout.as_millis()
        );
        Error::new(
            ErrorKind::CommandTimedOut,
            format!(
                "The listener service {} did not answer {} in time.",
                self.id(),
                self.command
            ),
        )
        .with("commandName", self.command)
        .with("causes", vec![cause])
        .with("listenerServiceId", self.id())
    }

    fn gate_error(&self, kind: ErrorKind, message: String) -> Error {
        Error::new(kind, message)
            .with("listenerServiceVersion", self.version_text())
            .with("commandName", self.command)
            .with("listenerServiceId", self.id())
    }

    /// `ForwardsCompatibility`: the listener is older than the command.
    pub fn too_old(&self, minimum: &str) -> Error {
        self.gate_error(
            ErrorKind::ForwardsCompatibility,
            format!(
                "The listener service {} runs version {}; {} needs {minimum} or later.",
                self.id(),
                self.version_text(),
                self.command
            ),
        )
    }

    /// `NoSuchHandler`: the listener does not have the command.
    pub fn no_handler(&self) -> Error {
        self.gate_error(
            ErrorKind::NoSuchHandler,
            format!(
                "The listener service {} has no handler for {}.",
                self.id(),
                self.command
            ),
        )
    }

    /// `UnknownControlProtocol`: the listener cannot talk to this kind of room system.
    pub fn unknown_protocol(&self, protocol: Option<&str>) -> Error {
        let message = match protocol {
            Some(p) => format!(
                "The listener service {} does not support controlProtocol {p}.",
                self.id()
            ),
            None => "The endpoint has no controlProtocol, so no listener can control it.".into(),
        };
        self.gate_error(ErrorKind::UnknownControlProtocol, message)
    }

    fn listener_error(&self, kind: ErrorKind, message: String, causes: &[String]) -> Error {
        Error::new(kind, message)
            .with("commandName", self.command)
            .with("causes", self.causes(causes))
            .with("listenerServiceId", self.id())
    }

    /// `ListenerServiceException`: the listener failed itself, or refused roomlink's secret.
    pub fn listener_failed(&self, causes: &[String]) -> Error {
        self.listener_error(
            ErrorKind::ListenerServiceException,
            format!(
                "The listener service {} failed to handle {}.",
                self.id(),
                self.command
            ),
            causes,
        )
    }

    /// `MessagingException`: the answer is not the protocol.
    pub fn not_protocol(&self, cause: String) -> Error {
        self.listener_error(
            ErrorKind::MessagingException,
            format!(
                "The listener service {} answered {} with something other than the listener protocol.",
                self.id(),
                self.command
            ),
            &[cause],
        )
    }

    /// The error of a non-2xx answer. `endpoint` is the room system the request was about;
    /// without one (info, a whole status batch) a room-system failure is the listener's.
    pub fn from_status(&self, status: u16, body: &[u8], endpoint: Option<&Endpoint>) -> Error {
        let failure = FailureBody::from_bytes(body);
        let listener_said = failure
            .as_ref()
            .map(|f| format!("{}: {}", f.failure, f.message))
            .into_iter();
        match (status, failure, endpoint) {
            (401, ..) => self.listener_failed(
                &std::iter::once(
                    "HTTP 401 Unauthorized: the listener refused roomlink's secret".to_owned(),
                )
                .chain(listener_said)
                .collect::<Vec<_>>(),
            ),
            (404, ..) => self.no_handler(),
            (_, Some(f), Some(endpoint)) => self.from_failure(endpoint, f),
            (_, Some(f), None) if f.failure == "unsupported_protocol" => {
                self.unknown_protocol(None)
            }
            (_, Some(_), None) => self.listener_failed(
                &std::iter::once(format!("HTTP {status}"))
                    .chain(listener_said)
                    .collect::<Vec<_>>(),
            ),
            (_, None, _) => {
                self.listener_failed(&[format!("HTTP {status} without a failure body")])
            }
        }
    }

    /// `readcalendar`'s own failures (`calendar_unreadable`, `calendar_not_configured`) as
    /// `CalendarServerException` naming the calendar; `None` for any other failure.
    pub fn calendar_failure(&self, calendar_id: &str, f: &FailureBody) -> Option<Error> {
        let said = self.scrub(&f.message);
        let message = match f.failure.as_str() {
            "calendar_unreadable" => said,
            "calendar_not_configured" => format!(
                "The listener service {} cannot read calendar {calendar_id}: {said}",
                self.id()
            ),
            _ => return None,
        };
        Some(Error::calendar_server(calendar_id, message))
    }

    /// The error of a failure body about `endpoint`.
    pub fn from_failure(&self, endpoint: &Endpoint, f: FailureBody) -> Error {
        let mut causes = f.causes.clone();
        if causes.is_empty() && !f.message.is_empty() {
            causes.push(f.message.clone());
        }
        let remote = RemoteSystem::of(endpoint);
        let who = format!("The endpoint {} ({})", remote.name, remote.address);
        let kind_and_message = match f.failure.as_str() {
            "unreachable" => (
                ErrorKind::ExternalSystemUnreachable,
                format!("{who} cannot be reached by its listener service."),
            ),
            "timeout" => (
                ErrorKind::ExternalSystemTimedOut,
                format!("{who} did not answer {} in time.", self.command),
            ),
            "bad_credentials" => (
                ErrorKind::AuthenticationFailed,
                format!("{who} refused its stored credentials."),
            ),
            "misprovisioned" => (
                ErrorKind::IncorrectlyProvisioned,
                format!(
                    "{who} is provisioned incorrectly: {}",
                    self.scrub(&f.message)
                ),
            ),
            "server_error" => (
                ErrorKind::Unavailable,
                format!("{who} answered {} with a server error.", self.command),
            ),
            "ignored" => {
                return self.listener_error(
                    ErrorKind::BadCommand,
                    format!("{who} ignored the {} command.", self.command),
                    &causes,
                );
            }
            "unsupported_protocol" => {
                let protocol = endpoint.profile().control_protocol().map(|p| p.as_str());
                return self.unknown_protocol(protocol);
            }
            other => {
                causes.insert(0, format!("unknown failure '{other}'"));
                return self.listener_failed(&causes);
            }
        };
        let (kind, message) = kind_and_message;
        // The keys present depend on the row: only those the catalog lists for `kind`.
        let keys = kind.detail_keys();
        let mut error = Error::new(kind, message)
            .with("causes", self.causes(&causes))
            .with("listenerServiceId", self.id())
            .with("remoteAddress", remote.address)
            .with("command", self.command)
            .with("remoteId", remote.id)
            .with("remoteName", remote.name);
        if keys.contains(&"remoteRequest") {
            let request = self.scrub(f.remote_request.as_deref().unwrap_or(""));
            let response = self.scrub(f.remote_response.as_deref().unwrap_or(""));
            error = error
                .with("remoteRequest", request)
                .with("remoteResponse", response);
        }
        if keys.contains(&"message") {
            error = error.with("message", self.scrub(&f.message));
        }
        error
    }

    /// The error of a transport failure (no complete answer).
    pub fn from_transport(&self, e: reqwest::Error, timeout: Duration) -> Error {
        // Connect errors first: a connect timeout means unreachable, not slow.
        if e.is_timeout() && !e.is_connect() {
            return self.timed_out(timeout);
        }
        // Everything else (refused, DNS, reset or closed before a whole answer, a base URL
        // that cannot be used) means no answer could be had.
        self.offline(describe(&e.without_url()))
    }
}

/// The room system named in remote errors.
struct RemoteSystem {
    id: String,
    name: String,
    address: String,
}

impl RemoteSystem {
    fn of(endpoint: &Endpoint) -> Self {
        RemoteSystem {
            id: endpoint.id().as_str().to_owned(),
            name: endpoint.name().to_owned(),
            address: endpoint
                .profile()
                .ip_address()
                .map(|a| a.as_str().to_owned())
                .unwrap_or_default(),
        }
    }
}

/// An error and its sources on one line (reqwest's own text says little).
fn describe(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

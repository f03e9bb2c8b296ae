//! The error catalog: every failure roomlink reports, from ONE table.
//!
//! Each row gives the wire name, the HTTP status, the numeric `errorCode` and the `errorDetails`
//! keys the error may carry. Rows marked `spec` are the 38 entries of the interface specification,
//! copied exactly; rows marked `extension` are ours, documented in `docs/error-catalog.md`.
//! The HTTP adapter renders any [`Error`] from this table alone.

use serde_json::{Map, Value};
use std::fmt;

/// Whether a catalog row comes from the specification or is one of roomlink's extensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Spec,
    Extension,
}

macro_rules! catalog {
    ($( $name:ident = $origin:ident, $status:literal, $code:literal, [$($key:literal),*]; )*) => {
        /// One entry of the error catalog.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorKind { $($name),* }

        impl ErrorKind {
            /// Every entry, in table order.
            pub const ALL: &'static [ErrorKind] = &[$(ErrorKind::$name),*];

            /// The `errorName` on the wire.
            pub const fn name(self) -> &'static str {
                match self { $(ErrorKind::$name => stringify!($name)),* }
            }
            /// The HTTP status this error is answered with.
            pub const fn status(self) -> u16 {
                match self { $(ErrorKind::$name => $status),* }
            }
            /// The numeric `errorCode` on the wire.
            pub const fn code(self) -> i64 {
                match self { $(ErrorKind::$name => $code),* }
            }
            /// The keys `errorDetails` may carry.
            pub const fn detail_keys(self) -> &'static [&'static str] {
                match self { $(ErrorKind::$name => &[$($key),*]),* }
            }
            pub const fn origin(self) -> Origin {
                match self { $(ErrorKind::$name => Origin::$origin),* }
            }
        }
    };
}

catalog! {
    AuthenticationFailed = Spec, 502, 1780355652, ["causes", "remoteResponse", "listenerServiceId", "remoteAddress", "remoteRequest", "command", "remoteId", "remoteName"];
    BadCommand = Spec, 500, 47328961, ["commandName", "causes", "listenerServiceId"];
    BadCredentialsException = Spec, 401, 1285563821, ["errorMessage", "errorCode"];
    CalendarServerException = Spec, 502, 187263818, ["calendarId", "message"];
    CommandTimedOut = Spec, 504, 1331991805, ["commandName", "causes", "listenerServiceId"];
    DuplicateCalendarId = Spec, 400, 1782937294, ["message", "causeMessage"];
    EncryptionUpdated = Spec, 500, 1065375345, ["message"];
    EndpointHasNoListenerService = Spec, 500, 1881171133, ["commandName", "endpointName", "listenerServiceId"];
    ExternalSystemException = Spec, 500, 837158652, ["commandName", "causes", "message", "remoteAddress", "remoteId", "remoteName"];
    ExternalSystemResponseException = Spec, 500, 1417554097, ["commandName", "causes", "remoteResponse", "remoteAddress", "remoteRequest", "remoteId", "remoteName"];
    ExternalSystemTimedOut = Spec, 504, 594923066, ["causes", "listenerServiceId", "remoteAddress", "command", "remoteId", "remoteName"];
    ExternalSystemUnreachable = Spec, 504, 1436062998, ["causes", "listenerServiceId", "remoteAddress", "command", "remoteId", "remoteName"];
    ForwardsCompatibility = Spec, 501, 2123224504, ["listenerServiceVersion", "commandName", "listenerServiceId"];
    IncorrectlyProvisioned = Spec, 502, 1917844536, ["causes", "message", "remoteResponse", "listenerServiceId", "remoteAddress", "remoteRequest", "command", "remoteId", "remoteName"];
    Invalid = Spec, 400, 1782937293, ["message", "causeMessage"];
    InvalidDtmf = Spec, 400, 1782937295, ["message", "causeMessage"];
    InvalidListSize = Spec, 403, 1782937296, ["message", "causeMessage"];
    JsonMappingException = Spec, 500, 12789219, ["pathReference", "message"];
    JsonParseException = Spec, 500, 12789218, [];
    LimitReached = Spec, 403, 1881171140, ["entityClass"];
    ListenerOffline = Spec, 503, 208581637, ["listenerServiceId"];
    ListenerServiceException = Spec, 500, 1296998295, ["commandName", "causes", "listenerServiceId"];
    MessagingException = Spec, 502, 72013363, ["commandName", "causes", "listenerServiceId"];
    NoSuchHandler = Spec, 501, 424016482, ["listenerServiceVersion", "commandName", "listenerServiceId"];
    NotAuthenticated = Spec, 401, 1285563822, ["errorMessage", "errorCode"];
    NotFound = Spec, 404, 1217481661, ["entityClass", "entityId"];
    BroadcastApiException = Spec, 500, 123834739, [];
    BroadcastEventNotStarted = Spec, 405, 748396429, [];
    BroadcastNotAuthorized = Spec, 403, 598238723, [];
    BroadcastNotFound = Spec, 404, 38393928, [];
    RecordingAuthException = Spec, 502, 502203690, ["action", "meetingId", "platformResponseCode"];
    RecordingException = Spec, 502, 1843016393, ["action", "meetingId", "platformResponseCode"];
    RecordingProhibited = Spec, 405, 1143094451, ["action", "meetingId", "platformResponseCode"];
    RecordingQuotaExceeded = Spec, 502, 1843016394, ["action", "meetingId", "platformResponseCode"];
    RemoteCommandException = Spec, 500, 1296998294, [];
    Unavailable = Spec, 503, 2042734031, ["causes", "remoteResponse", "listenerServiceId", "remoteAddress", "remoteRequest", "command", "remoteId", "remoteName"];
    UnknownControlProtocol = Spec, 501, 941644305, ["listenerServiceVersion", "commandName", "listenerServiceId"];
    Unmodifiable = Spec, 405, 1867716210, ["entityClass", "entityId"];
    // roomlink's extensions (docs/error-catalog.md): codes 19000000xx, never reused.
    Forbidden = Extension, 403, 1900000001, ["operation", "roles"];
    MethodNotAllowed = Extension, 405, 1900000002, ["method", "allowed"];
    UnsupportedMediaType = Extension, 415, 1900000003, ["contentType", "supported"];
    PayloadTooLarge = Extension, 413, 1900000004, ["limitBytes"];
    TooManyRequests = Extension, 429, 1900000005, ["retryAfterSeconds", "limit"];
    InternalError = Extension, 500, 1900000006, [];
    StorageUnavailable = Extension, 503, 1900000007, [];
    RequestHeaderFieldsTooLarge = Extension, 431, 1900000008, ["limitBytes"];
    Conflict = Extension, 409, 1900000009, ["entityClass", "name"];
}

impl ErrorKind {
    /// The entry whose wire name is `name`.
    pub fn parse(name: &str) -> Option<ErrorKind> {
        Self::ALL.iter().copied().find(|k| k.name() == name)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A failure from the catalog: what the client is told, plus an internal cause for the logs.
///
/// `message` and `details` reach clients, so they never hold a password or a token.
/// `cause` is logged only, never rendered.
pub struct Error {
    kind: ErrorKind,
    message: String,
    details: Map<String, Value>,
    cause: Option<Cause>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            details: Map::new(),
            cause: None,
        }
    }

    /// Adds one `errorDetails` entry. The key must be one the catalog lists for this kind.
    pub fn with(mut self, key: &'static str, value: impl Into<Value>) -> Self {
        debug_assert!(
            self.kind.detail_keys().contains(&key),
            "{key} is not an errorDetails key of {}",
            self.kind
        );
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// Attaches the internal cause (logged, never sent to clients).
    pub fn caused_by(mut self, cause: impl Into<Cause>) -> Self {
        self.cause = Some(cause.into());
        self
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    pub fn message(&self) -> &str {
        &self.message
    }
    pub fn details(&self) -> &Map<String, Value> {
        &self.details
    }
    pub fn cause(&self) -> Option<&(dyn std::error::Error + Send + Sync + 'static)> {
        self.cause.as_deref()
    }

    // Constructors for the errors raised in many places. Their messages are the client's text.

    /// `NotFound` naming the entity exactly as if it did not exist (also used for other tenants' rows).
    pub fn not_found(entity_class: &str, entity_id: &str) -> Self {
        Error::new(
            ErrorKind::NotFound,
            format!("No {entity_class} exists with id {entity_id}."),
        )
        .with("entityClass", entity_class)
        .with("entityId", entity_id)
    }

    /// `Invalid` with a message that names the offending field or value.
    pub fn invalid(message: impl Into<String>) -> Self {
        let message = message.into();
        Error::new(ErrorKind::Invalid, message.clone())
            .with("message", message.clone())
            .with("causeMessage", message)
    }

    /// `JsonMappingException`: the JSON was well-formed but of the wrong shape at `path`.
    pub fn json_mapping(path: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        Error::new(
            ErrorKind::JsonMappingException,
            format!("{path}: {message}"),
        )
        .with("pathReference", path)
        .with("message", message)
    }

    pub fn unmodifiable(entity_class: &str, entity_id: &str, what: &str) -> Self {
        Error::new(
            ErrorKind::Unmodifiable,
            format!("{what} of {entity_class} {entity_id} cannot be modified."),
        )
        .with("entityClass", entity_class)
        .with("entityId", entity_id)
    }

    pub fn limit_reached(entity_class: &str, limit: u32) -> Self {
        Error::new(
            ErrorKind::LimitReached,
            format!("The enterprise has reached its limit of {limit} {entity_class} records."),
        )
        .with("entityClass", entity_class)
    }

    /// `Conflict`: the enterprise already holds an `entity_class` record named `name` (names
    /// that must be unique, compared without regard to case).
    pub fn conflict(entity_class: &str, name: &str) -> Self {
        Error::new(
            ErrorKind::Conflict,
            format!("The enterprise already has a {entity_class} named '{name}'."),
        )
        .with("entityClass", entity_class)
        .with("name", name)
    }

    pub fn duplicate_calendar_id(calendar_id: &str) -> Self {
        let message = "Duplicate calendarID!".to_owned();
        Error::new(ErrorKind::DuplicateCalendarId, message.clone())
            .with("message", message)
            .with(
                "causeMessage",
                format!("calendarId {calendar_id} is already used by another endpoint"),
            )
    }

    /// A room's calendar could not be read. `message` must say what failed without quoting
    /// credentials (adapters build it from the status and the server's host, never the URL's
    /// userinfo or a response body).
    pub fn calendar_server(calendar_id: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        Error::new(ErrorKind::CalendarServerException, message.clone())
            .with("calendarId", calendar_id)
            .with("message", message)
    }

    pub fn not_authenticated() -> Self {
        let message = "Full authentication is required to access this resource.";
        Error::new(ErrorKind::NotAuthenticated, message)
            .with("errorMessage", message)
            .with("errorCode", ErrorKind::NotAuthenticated.code())
    }

    pub fn bad_credentials() -> Self {
        let message = "Not Authorized.";
        Error::new(ErrorKind::BadCredentialsException, message)
            .with("errorMessage", message)
            .with("errorCode", ErrorKind::BadCredentialsException.code())
    }

    /// The key that sealed a stored password is gone: the password must be entered again.
    pub fn encryption_updated() -> Self {
        let message = "The key that encrypted this endpoint's password has changed; enter the password again.";
        Error::new(ErrorKind::EncryptionUpdated, message).with("message", message)
    }

    /// A control command for an endpoint that names no (existing) listener service.
    pub fn endpoint_has_no_listener(
        command: &str,
        endpoint_name: &str,
        listener: Option<&str>,
    ) -> Self {
        Error::new(
            ErrorKind::EndpointHasNoListenerService,
            format!("Endpoint {endpoint_name} has no listener service to send {command} through."),
        )
        .with("commandName", command)
        .with("endpointName", endpoint_name)
        .with(
            "listenerServiceId",
            listener.map_or(serde_json::Value::Null, |l| l.into()),
        )
    }

    /// A failure the client cannot act on (a bug, a driver error): opaque on the wire, logged whole.
    pub fn internal(cause: impl Into<Cause>) -> Self {
        Error::new(
            ErrorKind::InternalError,
            "An internal error occurred; it has been logged.",
        )
        .caused_by(cause)
    }

    /// The database could not be reached or was too busy to answer in time.
    pub fn storage_unavailable(cause: impl Into<Cause>) -> Self {
        Error::new(
            ErrorKind::StorageUnavailable,
            "The database is unavailable; try again shortly.",
        )
        .caused_by(cause)
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Error");
        s.field("kind", &self.kind)
            .field("message", &self.message)
            .field("details", &self.details);
        if let Some(cause) = &self.cause {
            s.field("cause", &format_args!("{cause}"));
        }
        s.finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)?;
        if let Some(cause) = &self.cause {
            write!(f, " (cause: {cause})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_deref()
            .map(|c| c as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// The specification's table, restated independently of the macro above:
    /// (name, status, code, detail keys).
    #[rustfmt::skip]
    const SPEC: &[(&str, u16, i64, &[&str])] = &[
        ("AuthenticationFailed", 502, 1780355652, &["causes", "remoteResponse", "listenerServiceId", "remoteAddress", "remoteRequest", "command", "remoteId", "remoteName"]),
        ("BadCommand", 500, 47328961, &["commandName", "causes", "listenerServiceId"]),
        ("BadCredentialsException", 401, 1285563821, &["errorMessage", "errorCode"]),
        ("CalendarServerException", 502, 187263818, &["calendarId", "message"]),
        ("CommandTimedOut", 504, 1331991805, &["commandName", "causes", "listenerServiceId"]),
        ("DuplicateCalendarId", 400, 1782937294, &["message", "causeMessage"]),
        ("EncryptionUpdated", 500, 1065375345, &["message"]),
        ("EndpointHasNoListenerService", 500, 1881171133, &["commandName", "endpointName", "listenerServiceId"]),
        ("ExternalSystemException", 500, 837158652, &["commandName", "causes", "message", "remoteAddress", "remoteId", "remoteName"]),
        ("ExternalSystemResponseException", 500, 1417554097, &["commandName", "causes", "remoteResponse", "remoteAddress", "remoteRequest", "remoteId", "remoteName"]),
        ("ExternalSystemTimedOut", 504, 594923066, &["causes", "listenerServiceId", "remoteAddress", "command", "remoteId", "remoteName"]),
        ("ExternalSystemUnreachable", 504, 1436062998, &["causes", "listenerServiceId", "remoteAddress", "command", "remoteId", "remoteName"]),
        ("ForwardsCompatibility", 501, 2123224504, &["listenerServiceVersion", "commandName", "listenerServiceId"]),
        ("IncorrectlyProvisioned", 502, 1917844536, &["causes", "message", "remoteResponse", "listenerServiceId", "remoteAddress", "remoteRequest", "command", "remoteId", "remoteName"]),
        ("Invalid", 400, 1782937293, &["message", "causeMessage"]),
        ("InvalidDtmf", 400, 1782937295, &["message", "causeMessage"]),
        ("InvalidListSize", 403, 1782937296, &["message", "causeMessage"]),
        ("JsonMappingException", 500, 12789219, &["pathReference", "message"]),
        ("JsonParseException", 500, 12789218, &[]),
        ("LimitReached", 403, 1881171140, &["entityClass"]),
        ("ListenerOffline", 503, 208581637, &["listenerServiceId"]),
        ("ListenerServiceException", 500, 1296998295, &["commandName", "causes", "listenerServiceId"]),
        ("MessagingException", 502, 72013363, &["commandName", "causes", "listenerServiceId"]),
        ("NoSuchHandler", 501, 424016482, &["listenerServiceVersion", "commandName", "listenerServiceId"]),
        ("NotAuthenticated", 401, 1285563822, &["errorMessage", "errorCode"]),
        ("NotFound", 404, 1217481661, &["entityClass", "entityId"]),
        ("BroadcastApiException", 500, 123834739, &[]),
        ("BroadcastEventNotStarted", 405, 748396429, &[]),
        ("BroadcastNotAuthorized", 403, 598238723, &[]),
        ("BroadcastNotFound", 404, 38393928, &[]),
        ("RecordingAuthException", 502, 502203690, &["action", "meetingId", "platformResponseCode"]),
        ("RecordingException", 502, 1843016393, &["action", "meetingId", "platformResponseCode"]),
        ("RecordingProhibited", 405, 1143094451, &["action", "meetingId", "platformResponseCode"]),
        ("RecordingQuotaExceeded", 502, 1843016394, &["action", "meetingId", "platformResponseCode"]),
        ("RemoteCommandException", 500, 1296998294, &[]),
        ("Unavailable", 503, 2042734031, &["causes", "remoteResponse", "listenerServiceId", "remoteAddress", "remoteRequest", "command", "remoteId", "remoteName"]),
        ("UnknownControlProtocol", 501, 941644305, &["listenerServiceVersion", "commandName", "listenerServiceId"]),
        ("Unmodifiable", 405, 1867716210, &["entityClass", "entityId"]),
    ];

    #[test]
    fn every_spec_entry_is_in_the_catalog_exactly() {
        assert_eq!(SPEC.len(), 38);
        for (name, status, code, keys) in SPEC {
            let kind = ErrorKind::ALL
                .iter()
                .find(|k| k.name() == *name)
                .unwrap_or_else(|| panic!("{name} missing from the catalog"));
            assert_eq!(kind.status(), *status, "{name} status");
            assert_eq!(kind.code(), *code, "{name} code");
            assert_eq!(kind.detail_keys(), *keys, "{name} detail keys");
            assert_eq!(kind.origin(), Origin::Spec, "{name} origin");
        }
        let spec_rows = ErrorKind::ALL
            .iter()
            .filter(|k| k.origin() == Origin::Spec)
            .count();
        assert_eq!(spec_rows, 38, "the catalog has spec rows the spec does not");
    }

    #[test]
    fn names_and_codes_are_unique_and_statuses_are_errors() {
        let names: HashSet<_> = ErrorKind::ALL.iter().map(|k| k.name()).collect();
        let codes: HashSet<_> = ErrorKind::ALL.iter().map(|k| k.code()).collect();
        assert_eq!(names.len(), ErrorKind::ALL.len());
        assert_eq!(codes.len(), ErrorKind::ALL.len());
        for kind in ErrorKind::ALL {
            assert!((400..600).contains(&kind.status()), "{kind}");
            assert!(
                kind.code() > 0 && kind.code() <= i64::from(i32::MAX),
                "{kind}"
            );
        }
    }

    #[test]
    fn extensions_use_their_own_code_block() {
        for kind in ErrorKind::ALL
            .iter()
            .filter(|k| k.origin() == Origin::Extension)
        {
            assert!(
                (1_900_000_000..1_900_000_100).contains(&kind.code()),
                "{kind}"
            );
        }
    }

    #[test]
    fn constructors_fill_only_catalog_keys() {
        let samples = [
            Error::not_found("Endpoint", "abc"),
            Error::invalid("name: must not be blank"),
            Error::json_mapping("port", "expected a number"),
            Error::unmodifiable("Endpoint", "abc", "dialStyle"),
            Error::limit_reached("Endpoint", 3),
            Error::duplicate_calendar_id("room@corp.example"),
            Error::not_authenticated(),
            Error::bad_credentials(),
            Error::internal("boom"),
            Error::storage_unavailable("down"),
            Error::encryption_updated(),
            Error::endpoint_has_no_listener("join", "Room", None),
        ];
        for e in samples {
            for key in e.details().keys() {
                assert!(e.kind().detail_keys().contains(&key.as_str()), "{e:?}");
            }
        }
    }

    #[test]
    fn internal_causes_stay_out_of_the_client_message() {
        let e = Error::internal("password=hunter2 rejected by driver");
        assert!(!e.message().contains("hunter2"));
        assert!(e.details().is_empty());
        assert!(
            format!("{e}").contains("hunter2"),
            "the cause is kept for logs"
        );
    }
}

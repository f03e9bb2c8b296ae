//! Listener services: the programs inside a customer's network that reach room systems.

use crate::endpoint::value::{FieldValue, HttpUrl};
use crate::endpoint::{EmailText, LongText, ShortText};
use crate::enums::shorten;
use crate::error::Error;
use crate::ids::{EnterpriseId, ListenerServiceId};
use crate::secret::{SealedSecret, Secret, SecretChange};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value, json};

/// How roomlink reaches a listener service (docs/listener-protocol.md, "Transports").
#[derive(Debug, Clone, PartialEq)]
pub enum ListenerConnection {
    /// roomlink sends HTTP requests to the listener at this base URL.
    Inbound(HttpUrl),
    /// The listener connects out to roomlink and takes requests over its own WebSocket.
    Outbound,
}

impl ListenerConnection {
    /// The `connection` value of the API.
    pub fn as_str(&self) -> &'static str {
        match self {
            ListenerConnection::Inbound(_) => "inbound",
            ListenerConnection::Outbound => "outbound",
        }
    }

    pub fn base_url(&self) -> Option<&HttpUrl> {
        match self {
            ListenerConnection::Inbound(url) => Some(url),
            ListenerConnection::Outbound => None,
        }
    }
}

/// The fields a client provides for a listener service.
#[derive(Debug, Clone, PartialEq)]
pub struct ListenerProfile {
    pub name: ShortText,
    pub connection: ListenerConnection,
    pub asset_id: Option<ShortText>,
    pub external_id: Option<ShortText>,
    pub location: Option<LongText>,
    pub point_of_contact: Option<EmailText>,
}

/// A registered listener service. The shared `secret` authenticates roomlink to it; it is
/// sealed at rest and never listed.
#[derive(Debug, Clone, PartialEq)]
pub struct ListenerService {
    pub id: ListenerServiceId,
    pub enterprise_id: EnterpriseId,
    pub profile: ListenerProfile,
    pub secret: SealedSecret,
}

impl ListenerService {
    /// Where requests for this listener go.
    pub fn route(&self) -> ListenerRoute {
        match &self.profile.connection {
            ListenerConnection::Inbound(url) => ListenerRoute::Http(url.as_str().to_owned()),
            ListenerConnection::Outbound => ListenerRoute::Link,
        }
    }
}

/// Where a request for a listener travels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListenerRoute {
    /// HTTP to this base URL.
    Http(String),
    /// The listener's own connection to roomlink (on this instance or another).
    Link,
}

/// An outbound listener's open connection, as every instance sees it: which instance holds
/// it, since when, and the listener's version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkPresence {
    pub listener_id: ListenerServiceId,
    /// The holding instance's id (random per process).
    pub instance: String,
    pub since_ms: i64,
    pub version: Option<String>,
    /// The holder's last heartbeat; a presence not seen for [`LINK_STALE_MS`] is gone (its
    /// instance died without closing it).
    pub seen_ms: i64,
}

/// How often a holding instance confirms its connections.
pub const LINK_HEARTBEAT_MS: i64 = 15_000;
/// A connection not confirmed for this long is not shown as connected.
pub const LINK_STALE_MS: i64 = 3 * LINK_HEARTBEAT_MS;

impl LinkPresence {
    pub fn is_live(&self, now_ms: i64) -> bool {
        now_ms.saturating_sub(self.seen_ms) < LINK_STALE_MS
    }
}

/// The last time the poll lease holder asked an inbound listener what it is (`GET /v1/info`,
/// once per status poll round): whether it answered, and what it said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerCheck {
    pub listener_id: ListenerServiceId,
    pub checked_ms: i64,
    /// The last check that was answered (this one, or an earlier one).
    pub answered_ms: Option<i64>,
    /// The version the last answer reported.
    pub version: Option<String>,
    /// This check's error, `None` when it was answered.
    pub error: Option<CheckError>,
}

/// Why a check failed: the catalog error's name and message (as `GET /api/failures` shows
/// them; neither ever holds a secret).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckError {
    pub error_name: String,
    pub message: String,
}

impl CheckError {
    /// The message ends with the error's `causes` detail (what the listener or the network
    /// said, already scrubbed by the transport), so one line says why.
    fn of(error: &Error) -> Self {
        let causes: Vec<&str> = error
            .details()
            .get("causes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let message = error.message().trim_end_matches('.');
        CheckError {
            error_name: error.kind().name().to_owned(),
            message: if causes.is_empty() {
                error.message().to_owned()
            } else {
                format!("{message}: {}", causes.join("; "))
            },
        }
    }
}

impl ListenerCheck {
    /// A check that was answered with `version`.
    pub fn answered(listener_id: ListenerServiceId, now_ms: i64, version: String) -> Self {
        ListenerCheck {
            listener_id,
            checked_ms: now_ms,
            answered_ms: Some(now_ms),
            version: Some(version),
            error: None,
        }
    }

    /// A check that failed with `error`; the store keeps the last answer's time and version.
    pub fn failed(listener_id: ListenerServiceId, now_ms: i64, error: &Error) -> Self {
        ListenerCheck {
            listener_id,
            checked_ms: now_ms,
            answered_ms: None,
            version: None,
            error: Some(CheckError::of(error)),
        }
    }
}

/// How a listener is doing, in one word (the API's `health`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListenerHealth {
    /// Inbound: the last check was answered. Outbound: a connection is open.
    Online,
    /// Inbound: the last check failed. Outbound: no connection is open.
    Offline,
    /// Inbound, never checked yet (no instance has polled since it was registered).
    Unknown,
}

impl ListenerHealth {
    pub fn parse(text: &str) -> Option<Self> {
        [Self::Online, Self::Offline, Self::Unknown]
            .into_iter()
            .find(|h| h.as_str() == text)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ListenerHealth::Online => "online",
            ListenerHealth::Offline => "offline",
            ListenerHealth::Unknown => "unknown",
        }
    }
}

/// A listener as the API shows it: its record and what roomlink knows of its reachability.
pub struct ListenerView {
    pub listener: ListenerService,
    pub contact: ListenerContact,
}

/// What roomlink knows of a listener's reachability, by its connection kind.
#[derive(Debug, Clone, PartialEq)]
pub enum ListenerContact {
    /// Inbound: the last check, if any.
    Checked(Option<ListenerCheck>),
    /// Outbound: the open connection, if any.
    Linked(Option<LinkPresence>),
}

impl ListenerContact {
    pub fn health(&self) -> ListenerHealth {
        match self {
            ListenerContact::Checked(None) => ListenerHealth::Unknown,
            ListenerContact::Checked(Some(c)) if c.error.is_none() => ListenerHealth::Online,
            ListenerContact::Linked(Some(_)) => ListenerHealth::Online,
            ListenerContact::Checked(Some(_)) | ListenerContact::Linked(None) => {
                ListenerHealth::Offline
            }
        }
    }

    /// When roomlink last heard from the listener: its last answered check, or the open
    /// connection's last heartbeat.
    pub fn last_contact_ms(&self) -> Option<i64> {
        match self {
            ListenerContact::Checked(check) => check.as_ref().and_then(|c| c.answered_ms),
            ListenerContact::Linked(link) => link.as_ref().map(|l| l.seen_ms),
        }
    }

    fn version(&self) -> Option<&str> {
        match self {
            ListenerContact::Checked(check) => check.as_ref().and_then(|c| c.version.as_deref()),
            ListenerContact::Linked(link) => link.as_ref().and_then(|l| l.version.as_deref()),
        }
    }
}

/// Listener secrets: 16 to 256 characters when a client chooses one.
pub const SECRET_MIN_CHARS: usize = 16;
pub const SECRET_MAX_CHARS: usize = 256;

/// `Invalid`: a listener service cannot be deleted while endpoints name it. Every storage
/// adapter refuses the deletion with this error, inside the transaction that counts them.
pub fn in_use(id: &ListenerServiceId, endpoints: usize) -> Error {
    Error::invalid(format!(
        "listener service {id} is still used by {endpoints} endpoint(s); move or delete them first"
    ))
}

/// Decodes a listener body (POST or PUT: omitted optional fields become null). Returns the
/// profile and what to do with the secret (`Keep` when the body has none).
pub fn decode_listener(
    body: &Map<String, Value>,
) -> Result<(ListenerProfile, SecretChange), Error> {
    fn opt<T: FieldValue>(body: &Map<String, Value>, key: &str) -> Result<Option<T>, Error> {
        match body.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => T::from_json(key, v),
        }
    }
    const KNOWN: [&str; 9] = [
        "id",
        "name",
        "connection",
        "baseUrl",
        "secret",
        "assetId",
        "externalId",
        "location",
        "pointOfContact",
    ];
    if let Some(unknown) = body.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(Error::json_mapping(
            unknown,
            "unknown property of ListenerService",
        ));
    }
    let name =
        opt::<ShortText>(body, "name")?.ok_or_else(|| Error::invalid("name: is required"))?;
    let base_url = opt::<HttpUrl>(body, "baseUrl")?;
    let connection = match body.get("connection") {
        None | Some(Value::Null) => "inbound",
        Some(Value::String(c)) => c.as_str(),
        Some(_) => return Err(Error::json_mapping("connection", "expected a string")),
    };
    let connection = match (connection.to_ascii_lowercase().as_str(), base_url) {
        ("inbound", Some(url)) => ListenerConnection::Inbound(url),
        ("inbound", None) => {
            return Err(Error::invalid(
                "baseUrl: is required for an inbound listener (or set \"connection\": \"outbound\")",
            ));
        }
        ("outbound", None) => ListenerConnection::Outbound,
        ("outbound", Some(_)) => {
            return Err(Error::invalid(
                "baseUrl: must be null for an outbound listener (it connects to roomlink)",
            ));
        }
        _ => {
            return Err(Error::invalid(format!(
                "connection: '{}' is not one of inbound, outbound",
                shorten(connection)
            )));
        }
    };
    let secret = match body.get("secret") {
        None | Some(Value::Null) => SecretChange::Keep,
        Some(Value::String(s)) => {
            let n = s.chars().count();
            if !(SECRET_MIN_CHARS..=SECRET_MAX_CHARS).contains(&n)
                || s.chars().any(char::is_control)
            {
                return Err(Error::invalid(format!(
                    "secret: must be {SECRET_MIN_CHARS} to {SECRET_MAX_CHARS} printable characters"
                )));
            }
            SecretChange::Set(Secret::new(s.clone()))
        }
        Some(_) => return Err(Error::json_mapping("secret", "expected a string")),
    };
    if let Some(Value::String(id)) = body.get("id") {
        // Checked against the path by the service; here only its shape.
        ListenerServiceId::parse(id)
            .map_err(|_| Error::invalid(format!("id: '{}' is not an id", shorten(id))))?;
    }
    let profile = ListenerProfile {
        name,
        connection,
        asset_id: opt(body, "assetId")?,
        external_id: opt(body, "externalId")?,
        location: opt(body, "location")?,
        point_of_contact: opt(body, "pointOfContact")?,
    };
    Ok((profile, secret))
}

/// The record's response fields; the secret is never included.
fn record_entries<M: SerializeMap>(l: &ListenerService, map: &mut M) -> Result<(), M::Error> {
    let p = &l.profile;
    map.serialize_entry("id", &l.id)?;
    map.serialize_entry("name", p.name.as_str())?;
    map.serialize_entry("connection", p.connection.as_str())?;
    map.serialize_entry("baseUrl", &p.connection.base_url().map(HttpUrl::as_str))?;
    map.serialize_entry("assetId", &p.asset_id.as_ref().map(|v| v.as_str()))?;
    map.serialize_entry("externalId", &p.external_id.as_ref().map(|v| v.as_str()))?;
    map.serialize_entry("location", &p.location.as_ref().map(|v| v.as_str()))?;
    map.serialize_entry(
        "pointOfContact",
        &p.point_of_contact.as_ref().map(|v| v.as_str()),
    )
}

/// The creation response's shape (no connection yet).
impl Serialize for ListenerService {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(8))?;
        record_entries(self, &mut map)?;
        map.end()
    }
}

/// The record and its reachability: `health`, `listenerVersion` and `lastContact` for every
/// listener; `connected` and `connectedSince` for outbound ones (null for inbound);
/// `checkedAt` and `checkError` for inbound ones (null for outbound).
impl Serialize for ListenerView {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(15))?;
        record_entries(&self.listener, &mut map)?;
        let contact = &self.contact;
        map.serialize_entry("health", contact.health().as_str())?;
        map.serialize_entry("listenerVersion", &contact.version())?;
        map.serialize_entry("lastContact", &contact.last_contact_ms())?;
        let (link, check) = match contact {
            ListenerContact::Linked(link) => (Some(link.as_ref()), None),
            ListenerContact::Checked(check) => (None, check.as_ref()),
        };
        map.serialize_entry("connected", &link.map(|p| p.is_some()))?;
        map.serialize_entry("connectedSince", &link.flatten().map(|p| p.since_ms))?;
        map.serialize_entry("checkedAt", &check.map(|c| c.checked_ms))?;
        let error = check.and_then(|c| c.error.as_ref());
        map.serialize_entry(
            "checkError",
            &error.map(|e| json!({"errorName": e.error_name, "message": e.message})),
        )?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use serde_json::json;

    #[test]
    fn decodes_and_requires_name_and_url() {
        let body = json!({"name": "HQ", "baseUrl": "http://127.0.0.1:9001", "location": "DC1"});
        let (p, s) = decode_listener(body.as_object().unwrap()).unwrap();
        assert_eq!(p.name.as_str(), "HQ");
        assert_eq!(s, SecretChange::Keep);
        for bad in [
            json!({"name": "HQ"}),
            json!({"baseUrl": "http://x"}),
            json!({"name": "HQ", "baseUrl": "gopher://x"}),
        ] {
            assert_eq!(
                decode_listener(bad.as_object().unwrap())
                    .unwrap_err()
                    .kind(),
                ErrorKind::Invalid
            );
        }
        let e = decode_listener(
            json!({"name": "a", "baseUrl": "http://x", "x": 1})
                .as_object()
                .unwrap(),
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::JsonMappingException);
        let short = json!({"name": "a", "baseUrl": "http://x", "secret": "short"});
        assert!(decode_listener(short.as_object().unwrap()).is_err());
    }

    #[test]
    fn outbound_listeners_have_no_base_url_and_inbound_ones_need_one() {
        let out = json!({"name": "Site", "connection": "outbound"});
        let (p, _) = decode_listener(out.as_object().unwrap()).unwrap();
        assert_eq!(p.connection, ListenerConnection::Outbound);
        let inbound = json!({"name": "HQ", "connection": "INBOUND", "baseUrl": "http://x"});
        let (p, _) = decode_listener(inbound.as_object().unwrap()).unwrap();
        assert_eq!(p.connection.as_str(), "inbound");
        for bad in [
            json!({"name": "a", "connection": "outbound", "baseUrl": "http://x"}),
            json!({"name": "a", "connection": "sideways"}),
            json!({"name": "a", "connection": "inbound"}),
        ] {
            let e = decode_listener(bad.as_object().unwrap()).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Invalid, "{bad}");
        }
        let e = decode_listener(json!({"name": "a", "connection": 1}).as_object().unwrap());
        assert_eq!(e.unwrap_err().kind(), ErrorKind::JsonMappingException);
    }
}

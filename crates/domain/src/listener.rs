//! Listener services: the programs inside a customer's network that reach room systems.

use crate::endpoint::value::{FieldValue, HttpUrl};
use crate::endpoint::{EmailText, LongText, ShortText};
use crate::enums::shorten;
use crate::error::Error;
use crate::ids::{EnterpriseId, ListenerServiceId};
use crate::secret::{SealedSecret, Secret, SecretChange};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

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

/// A listener as the API shows it: its record and, for outbound listeners, its connection.
pub struct ListenerView {
    pub listener: ListenerService,
    /// `None` for inbound listeners; `Some(None)` for an outbound one not connected.
    pub link: Option<Option<LinkPresence>>,
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

/// The record and its connection: `connected`, `connectedSince`, `listenerVersion` (all null
/// for an inbound listener).
impl Serialize for ListenerView {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(11))?;
        record_entries(&self.listener, &mut map)?;
        let presence = self.link.as_ref().map(Option::as_ref);
        map.serialize_entry("connected", &presence.map(|p| p.is_some()))?;
        map.serialize_entry("connectedSince", &presence.flatten().map(|p| p.since_ms))?;
        map.serialize_entry(
            "listenerVersion",
            &presence.flatten().and_then(|p| p.version.as_deref()),
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

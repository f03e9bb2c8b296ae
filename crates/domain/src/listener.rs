//! Listener services: the programs inside a customer's network that reach room systems.

use crate::endpoint::value::{FieldValue, HttpUrl};
use crate::endpoint::{EmailText, LongText, ShortText};
use crate::enums::shorten;
use crate::error::Error;
use crate::ids::{EnterpriseId, ListenerServiceId};
use crate::secret::{SealedSecret, Secret, SecretChange};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

/// The fields a client provides for a listener service.
#[derive(Debug, Clone, PartialEq)]
pub struct ListenerProfile {
    pub name: ShortText,
    pub base_url: HttpUrl,
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
    const KNOWN: [&str; 8] = [
        "id",
        "name",
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
    let base_url =
        opt::<HttpUrl>(body, "baseUrl")?.ok_or_else(|| Error::invalid("baseUrl: is required"))?;
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
        base_url,
        asset_id: opt(body, "assetId")?,
        external_id: opt(body, "externalId")?,
        location: opt(body, "location")?,
        point_of_contact: opt(body, "pointOfContact")?,
    };
    Ok((profile, secret))
}

/// The response shape; the secret is never included.
impl Serialize for ListenerService {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let p = &self.profile;
        let mut map = s.serialize_map(Some(7))?;
        map.serialize_entry("id", &self.id)?;
        map.serialize_entry("name", p.name.as_str())?;
        map.serialize_entry("baseUrl", p.base_url.as_str())?;
        map.serialize_entry("assetId", &p.asset_id.as_ref().map(|v| v.as_str()))?;
        map.serialize_entry("externalId", &p.external_id.as_ref().map(|v| v.as_str()))?;
        map.serialize_entry("location", &p.location.as_ref().map(|v| v.as_str()))?;
        map.serialize_entry(
            "pointOfContact",
            &p.point_of_contact.as_ref().map(|v| v.as_str()),
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
}

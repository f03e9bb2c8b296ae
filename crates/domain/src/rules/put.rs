//! Insert (POST) and replacement (PUT) of an endpoint: the body decoded once ([`EndpointBody`]),
//! then the rule.
//!
//! Replacement sets every field to the body's value: a field that is omitted or null becomes
//! null, the password included (a client that read the endpoint got `password: null`, so a
//! read-modify-PUT clears it; send the password again, or use PATCH). `id` may be omitted or
//! repeated, never changed.

use super::{EndpointDraft, dial_style, password_from_json};
use crate::endpoint::{Endpoint, EndpointProfile, Field};
use crate::error::Error;
use crate::ids::EndpointId;
use crate::secret::SecretChange;
use serde_json::{Map, Value};

/// A whole endpoint as a POST or PUT body gives it, decoded: every field it omits is null.
/// The HTTP adapter decodes it; the use cases take it and never see JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointBody {
    /// The body's `id`, if it names one (checked against the endpoint it writes).
    id: Option<Value>,
    draft: EndpointDraft,
}

impl EndpointBody {
    /// Decodes a body: unknown properties are mapping errors, a missing name is `Invalid`.
    pub fn from_json(body: &Map<String, Value>) -> Result<EndpointBody, Error> {
        let mut profile = EndpointProfile::default();
        let mut password = SecretChange::Clear;
        let mut id = None;
        for (key, value) in body {
            match key.as_str() {
                "id" if !value.is_null() => id = Some(value.clone()),
                "id" => {}
                "password" => password = password_from_json(value)?,
                _ => match Field::from_json_name(key) {
                    Some(field) => profile.set_json(field, value)?,
                    None => {
                        return Err(Error::json_mapping(key, "unknown property of Endpoint"));
                    }
                },
            }
        }
        profile.check_complete()?;
        Ok(EndpointBody {
            id,
            draft: EndpointDraft { profile, password },
        })
    }

    /// The draft of a new endpoint. The service assigns the id, so a body that names one is
    /// `Invalid`.
    pub fn into_new(self) -> Result<EndpointDraft, Error> {
        if self.id.is_some() {
            return Err(Error::invalid("id: is assigned by the service; omit it"));
        }
        Ok(self.draft)
    }

    /// The draft that replaces `current` (PUT).
    pub fn replacing(&self, current: &Endpoint) -> Result<EndpointDraft, Error> {
        if let Some(id) = &self.id {
            check_same_id(current, id)?;
        }
        dial_style::check_unchanged(current, &self.draft.profile)?;
        Ok(self.draft.clone())
    }
}

/// The draft of a new endpoint from a JSON body: [`EndpointBody::from_json`], then
/// [`EndpointBody::into_new`]. For callers that hold JSON (clients, tests).
pub fn insert(body: &Map<String, Value>) -> Result<EndpointDraft, Error> {
    EndpointBody::from_json(body)?.into_new()
}

/// `Unmodifiable` unless `id` is the endpoint's own id.
pub(crate) fn check_same_id(current: &Endpoint, id: &Value) -> Result<(), Error> {
    match id {
        Value::Null => Ok(()),
        Value::String(s) if s == current.id().as_str() => Ok(()),
        Value::String(_) => Err(Error::unmodifiable(
            EndpointId::ENTITY_CLASS,
            current.id().as_str(),
            "The id",
        )),
        _ => Err(Error::json_mapping("id", "expected a string")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::ids::EnterpriseId;
    use serde_json::json;

    fn replace(current: &Endpoint, body: Map<String, Value>) -> Result<EndpointDraft, Error> {
        EndpointBody::from_json(&body)?.replacing(current)
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn stored(v: Value) -> Endpoint {
        let d = insert(&obj(v)).unwrap();
        Endpoint::new(
            EndpointId::from_trusted("e1".into()),
            EnterpriseId::from_trusted("ent".into()),
            d.profile,
            None,
        )
        .unwrap()
    }

    #[test]
    fn insert_requires_a_name_and_refuses_an_id() {
        assert!(insert(&obj(json!({"name": "Room"}))).is_ok());
        assert_eq!(
            insert(&obj(json!({"ipAddress": "127.0.0.1"})))
                .unwrap_err()
                .kind(),
            ErrorKind::Invalid
        );
        assert_eq!(
            insert(&obj(json!({"id": "x", "name": "Room"})))
                .unwrap_err()
                .kind(),
            ErrorKind::Invalid
        );
        assert!(insert(&obj(json!({"id": null, "name": "Room"}))).is_ok());
    }

    #[test]
    fn insert_of_an_unknown_property_is_a_mapping_error_with_its_path() {
        let e = insert(&obj(json!({"name": "Room", "colour": "red"}))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::JsonMappingException);
        assert_eq!(e.details()["pathReference"], "colour");
    }

    #[test]
    fn put_sets_omitted_and_null_fields_to_null() {
        let current =
            stored(json!({"name": "Room", "ipAddress": "127.0.0.1", "port": 22, "location": "HQ"}));
        let d = replace(&current, obj(json!({"name": "Room 2", "port": null}))).unwrap();
        assert_eq!(d.profile.name().unwrap().as_str(), "Room 2");
        assert_eq!(d.profile.ip_address(), None, "omitted becomes null");
        assert_eq!(d.profile.port(), None, "null becomes null");
        assert_eq!(d.profile.location(), None);
    }

    #[test]
    fn put_omitting_or_nulling_the_password_clears_it() {
        let current = stored(json!({"name": "Room"}));
        assert_eq!(
            replace(&current, obj(json!({"name": "R"})))
                .unwrap()
                .password,
            SecretChange::Clear
        );
        assert_eq!(
            replace(&current, obj(json!({"name": "R", "password": null})))
                .unwrap()
                .password,
            SecretChange::Clear
        );
        let d = replace(&current, obj(json!({"name": "R", "password": "pw"}))).unwrap();
        assert!(matches!(d.password, SecretChange::Set(s) if s.expose() == "pw"));
    }

    #[test]
    fn put_keeps_the_id_immutable() {
        let current = stored(json!({"name": "Room"}));
        assert!(replace(&current, obj(json!({"id": "e1", "name": "R"}))).is_ok());
        let e = replace(&current, obj(json!({"id": "e2", "name": "R"}))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unmodifiable);
        assert_eq!(e.details()["entityId"], "e1");
        assert_eq!(e.details()["entityClass"], "Endpoint");
    }

    #[test]
    fn put_cannot_change_or_drop_annex_o() {
        let current = stored(json!({"name": "Room", "dialStyle": "ANNEX_O"}));
        assert!(replace(&current, obj(json!({"name": "R", "dialStyle": "ANNEX_O"}))).is_ok());
        for body in [
            json!({"name": "R"}),
            json!({"name": "R", "dialStyle": "SIP_URI"}),
        ] {
            let e = replace(&current, obj(body)).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Unmodifiable);
            assert_eq!(e.details()["entityId"], "e1");
        }
        // Another endpoint may become ANNEX_O.
        let other = stored(json!({"name": "Room", "dialStyle": "SIP_URI"}));
        assert!(replace(&other, obj(json!({"name": "R", "dialStyle": "ANNEX_O"}))).is_ok());
    }
}

//! The PATCH merge: `modifiedFields` is a map of field name to new value; every field it does
//! not name stays as it is. The body is the map itself; `{"modifiedFields": {...}}` is accepted
//! too. An empty map changes nothing. An unknown field name is `Invalid`.

use super::put::check_same_id;
use super::{EndpointDraft, dial_style, password_from_json};
use crate::endpoint::{Endpoint, EndpointProfile, Field};
use crate::enums::shorten;
use crate::error::Error;
use crate::secret::SecretChange;
use serde_json::{Map, Value};

/// The field map of a PATCH body, unwrapped from `{"modifiedFields": {...}}` if it is wrapped.
fn modified_fields(body: Value) -> Result<Map<String, Value>, Error> {
    match body {
        Value::Object(mut map) => {
            if map.len() == 1
                && matches!(map.get("modifiedFields"), Some(Value::Object(_)))
                && let Some(Value::Object(inner)) = map.remove("modifiedFields")
            {
                return Ok(inner);
            }
            Ok(map)
        }
        _ => Err(Error::json_mapping(
            "modifiedFields",
            "expected an object mapping field names to values",
        )),
    }
}

/// The fields a PATCH body names, decoded; every other field stays as it is. The HTTP adapter
/// decodes it; the use cases take it and never see JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointPatch {
    /// The body's `id`, if it names one (checked against the endpoint it writes).
    id: Option<Value>,
    /// The named fields.
    named: Vec<Field>,
    /// Every property the body names, in its order (for the audit trail).
    names: Vec<&'static str>,
    /// Their new values (the other fields of this profile mean nothing).
    values: EndpointProfile,
    password: Option<SecretChange>,
}

impl EndpointPatch {
    /// Decodes a PATCH body: an unknown field name is `Invalid`, a value outside its field's
    /// bounds too.
    pub fn from_json(body: Value) -> Result<EndpointPatch, Error> {
        let mut patch = EndpointPatch {
            id: None,
            named: Vec::new(),
            names: Vec::new(),
            values: EndpointProfile::default(),
            password: None,
        };
        for (key, value) in modified_fields(body)? {
            match key.as_str() {
                "id" => {
                    patch.id = Some(value);
                    patch.names.push("id");
                }
                "password" => {
                    patch.password = Some(password_from_json(&value)?);
                    patch.names.push("password");
                }
                _ => match Field::from_json_name(&key) {
                    Some(field) => {
                        patch.values.set_json(field, &value)?;
                        patch.named.push(field);
                        patch.names.push(field.json_name());
                    }
                    None => {
                        return Err(Error::invalid(format!(
                            "modifiedFields: '{}' is not a field of Endpoint",
                            shorten(&key)
                        )));
                    }
                },
            }
        }
        Ok(patch)
    }

    /// The properties the body names, in its order, for the audit trail (never values).
    pub fn property_names(&self) -> &[&'static str] {
        &self.names
    }

    /// The draft after applying the patch to `current`.
    pub fn merge_into(&self, current: &Endpoint) -> Result<EndpointDraft, Error> {
        if let Some(id) = &self.id {
            check_same_id(current, id)?;
        }
        let mut profile = current.profile().clone();
        for &field in &self.named {
            profile.copy_field(&self.values, field);
        }
        profile.check_complete()?;
        dial_style::check_unchanged(current, &profile)?;
        Ok(EndpointDraft {
            profile,
            password: self.password.clone().unwrap_or(SecretChange::Keep),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::ids::{EndpointId, EnterpriseId};
    use crate::rules::put;
    use serde_json::json;

    fn stored(v: Value) -> Endpoint {
        let d = put::insert(v.as_object().unwrap()).unwrap();
        Endpoint::new(
            EndpointId::from_trusted("e1".into()),
            EnterpriseId::from_trusted("ent".into()),
            d.profile,
            None,
        )
        .unwrap()
    }

    fn patch(v: Value) -> EndpointPatch {
        EndpointPatch::from_json(v).unwrap()
    }

    fn merge(current: &Endpoint, patch: &EndpointPatch) -> Result<EndpointDraft, Error> {
        patch.merge_into(current)
    }

    #[test]
    fn unwraps_modified_fields_or_takes_the_map_itself() {
        let bare = modified_fields(json!({"name": "A"})).unwrap();
        let wrapped = modified_fields(json!({"modifiedFields": {"name": "A"}})).unwrap();
        assert_eq!(bare, wrapped);
        assert_eq!(
            modified_fields(json!({"modifiedFields": {}}))
                .unwrap()
                .len(),
            0
        );
        assert_eq!(
            modified_fields(json!([1])).unwrap_err().kind(),
            ErrorKind::JsonMappingException
        );
    }

    #[test]
    fn omitted_fields_stay_and_named_ones_change() {
        let current = stored(json!({"name": "Room", "ipAddress": "127.0.0.1", "port": 22}));
        let d = merge(&current, &patch(json!({"port": 443, "location": "HQ"}))).unwrap();
        assert_eq!(d.profile.name().unwrap().as_str(), "Room");
        assert_eq!(d.profile.ip_address().unwrap().as_str(), "127.0.0.1");
        assert_eq!(d.profile.port().unwrap().get(), 443);
        assert_eq!(d.profile.location().unwrap().as_str(), "HQ");
        assert_eq!(d.password, SecretChange::Keep);
    }

    #[test]
    fn null_clears_a_field_but_not_the_required_name() {
        let current = stored(json!({"name": "Room", "port": 22}));
        let d = merge(&current, &patch(json!({"port": null}))).unwrap();
        assert_eq!(d.profile.port(), None);
        let e = merge(&current, &patch(json!({"name": null}))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid);
    }

    #[test]
    fn empty_modified_fields_changes_nothing() {
        let current = stored(json!({"name": "Room", "port": 22}));
        let d = merge(&current, &patch(json!({}))).unwrap();
        assert_eq!(&d.profile, current.profile());
        assert_eq!(d.password, SecretChange::Keep);
    }

    #[test]
    fn unknown_field_names_are_invalid() {
        let e = EndpointPatch::from_json(json!({"colour": "red"})).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid);
        assert!(e.message().contains("colour"));
    }

    #[test]
    fn id_is_immutable_and_annex_o_fixed() {
        let current = stored(json!({"name": "Room", "dialStyle": "ANNEX_O"}));
        assert!(merge(&current, &patch(json!({"id": "e1"}))).is_ok());
        let e = merge(&current, &patch(json!({"id": "zz"}))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unmodifiable);
        let e = merge(&current, &patch(json!({"dialStyle": "E164"}))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unmodifiable);
        let e = merge(&current, &patch(json!({"dialStyle": null}))).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unmodifiable);
        assert!(merge(&current, &patch(json!({"location": "x"}))).is_ok());
    }

    #[test]
    fn password_can_be_set_or_cleared() {
        let current = stored(json!({"name": "Room"}));
        let d = merge(&current, &patch(json!({"password": "pw"}))).unwrap();
        assert!(matches!(d.password, SecretChange::Set(_)));
        let d = merge(&current, &patch(json!({"password": null}))).unwrap();
        assert_eq!(d.password, SecretChange::Clear);
    }
}

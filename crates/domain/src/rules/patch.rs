//! The PATCH merge: `modifiedFields` is a map of field name to new value; every field it does
//! not name stays as it is. The body is the map itself; `{"modifiedFields": {...}}` is accepted
//! too. An empty map changes nothing. An unknown field name is `Invalid`.

use super::put::check_same_id;
use super::{EndpointDraft, dial_style, password_from_json};
use crate::endpoint::{Endpoint, Field};
use crate::enums::shorten;
use crate::error::Error;
use crate::secret::SecretChange;
use serde_json::{Map, Value};

/// The field map of a PATCH body, unwrapped from `{"modifiedFields": {...}}` if it is wrapped.
pub fn modified_fields(body: Value) -> Result<Map<String, Value>, Error> {
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

/// The draft after applying `fields` to `current`.
pub fn merge(current: &Endpoint, fields: &Map<String, Value>) -> Result<EndpointDraft, Error> {
    let mut profile = current.profile().clone();
    let mut password = SecretChange::Keep;
    for (key, value) in fields {
        match key.as_str() {
            "id" => check_same_id(current, value)?,
            "password" => password = password_from_json(value)?,
            _ => match Field::from_json_name(key) {
                Some(field) => profile.set_json(field, value)?,
                None => {
                    return Err(Error::invalid(format!(
                        "modifiedFields: '{}' is not a field of Endpoint",
                        shorten(key)
                    )));
                }
            },
        }
    }
    profile.check_complete()?;
    dial_style::check_unchanged(current, &profile)?;
    Ok(EndpointDraft { profile, password })
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
        let fields = modified_fields(json!({"port": 443, "location": "HQ"})).unwrap();
        let d = merge(&current, &fields).unwrap();
        assert_eq!(d.profile.name().unwrap().as_str(), "Room");
        assert_eq!(d.profile.ip_address().unwrap().as_str(), "127.0.0.1");
        assert_eq!(d.profile.port().unwrap().get(), 443);
        assert_eq!(d.profile.location().unwrap().as_str(), "HQ");
        assert_eq!(d.password, SecretChange::Keep);
    }

    #[test]
    fn null_clears_a_field_but_not_the_required_name() {
        let current = stored(json!({"name": "Room", "port": 22}));
        let d = merge(&current, &modified_fields(json!({"port": null})).unwrap()).unwrap();
        assert_eq!(d.profile.port(), None);
        let e = merge(&current, &modified_fields(json!({"name": null})).unwrap()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid);
    }

    #[test]
    fn empty_modified_fields_changes_nothing() {
        let current = stored(json!({"name": "Room", "port": 22}));
        let d = merge(&current, &Map::new()).unwrap();
        assert_eq!(&d.profile, current.profile());
        assert_eq!(d.password, SecretChange::Keep);
    }

    #[test]
    fn unknown_field_names_are_invalid() {
        let current = stored(json!({"name": "Room"}));
        let e = merge(
            &current,
            &modified_fields(json!({"colour": "red"})).unwrap(),
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid);
        assert!(e.message().contains("colour"));
    }

    #[test]
    fn id_is_immutable_and_annex_o_fixed() {
        let current = stored(json!({"name": "Room", "dialStyle": "ANNEX_O"}));
        assert!(merge(&current, &modified_fields(json!({"id": "e1"})).unwrap()).is_ok());
        let e = merge(&current, &modified_fields(json!({"id": "zz"})).unwrap()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unmodifiable);
        let e = merge(
            &current,
            &modified_fields(json!({"dialStyle": "E164"})).unwrap(),
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unmodifiable);
        let e = merge(
            &current,
            &modified_fields(json!({"dialStyle": null})).unwrap(),
        )
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unmodifiable);
        assert!(
            merge(
                &current,
                &modified_fields(json!({"location": "x"})).unwrap()
            )
            .is_ok()
        );
    }

    #[test]
    fn password_can_be_set_or_cleared() {
        let current = stored(json!({"name": "Room"}));
        let d = merge(
            &current,
            &modified_fields(json!({"password": "pw"})).unwrap(),
        )
        .unwrap();
        assert!(matches!(d.password, SecretChange::Set(_)));
        let d = merge(
            &current,
            &modified_fields(json!({"password": null})).unwrap(),
        )
        .unwrap();
        assert_eq!(d.password, SecretChange::Clear);
    }
}

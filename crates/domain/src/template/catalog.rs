//! The settings catalog as the API answers it (`GET /api/templates/settings`): every key with
//! its value space, so a console or `roomlinkctl` can build a form. Read from
//! [`SettingKey::ALL`] and [`ValueSpace`]: there is no second table to keep in step.

use super::key::SettingKey;
use super::space::ValueSpace;
use super::time_zones;
use serde_json::{Value, json};

/// `[{key, type, ..., description}]` in catalog order. `type` is `integer` (with `min` and
/// `max`, or `values`), `literal` (`values`), `text` (`minChars`, `maxChars`) or `timeZone`
/// (`values`: every name); `description` is the space in words, as refusals word it.
pub fn settings_catalog() -> Value {
    let entries: Vec<Value> = SettingKey::ALL
        .iter()
        .map(|&key| {
            let space = key.space();
            let mut entry = describe(space);
            if let Value::Object(map) = &mut entry {
                map.insert("key".to_owned(), Value::from(key.name()));
                map.insert("description".to_owned(), Value::from(space.to_string()));
            }
            entry
        })
        .collect();
    Value::Array(entries)
}

fn describe(space: ValueSpace) -> Value {
    match space {
        ValueSpace::IntegerRange { min, max } => json!({"type": "integer", "min": min, "max": max}),
        ValueSpace::IntegerSet(values) => json!({"type": "integer", "values": values}),
        ValueSpace::Literal(values) => json!({"type": "literal", "values": values}),
        ValueSpace::Text {
            min_chars,
            max_chars,
        } => json!({"type": "text", "minChars": min_chars, "maxChars": max_chars}),
        ValueSpace::TimeZone => {
            json!({"type": "timeZone", "values": time_zones::all().collect::<Vec<_>>()})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::TemplateSettings;

    #[test]
    fn every_key_is_listed_with_its_space() {
        let catalog = settings_catalog();
        let entries = catalog.as_array().unwrap();
        assert_eq!(entries.len(), SettingKey::ALL.len());
        let volume = &entries[3];
        assert_eq!(
            volume,
            &json!({"key": "audio.default_volume", "type": "integer", "min": 0, "max": 100,
                    "description": "a whole number from 0 to 100"})
        );
        assert_eq!(entries[0]["type"], "timeZone");
        assert!(entries[0]["values"].as_array().unwrap().len() > 500);
        assert_eq!(entries[1]["maxChars"], 50);
        assert_eq!(entries[5]["values"], json!(["off", "on"]));
    }

    #[test]
    fn every_listed_value_is_accepted_by_its_key() {
        for entry in settings_catalog().as_array().unwrap() {
            let key = entry["key"].as_str().unwrap();
            let sample = match entry["type"].as_str().unwrap() {
                "integer" => entry
                    .get("values")
                    .map_or(entry["min"].clone(), |v| v[0].clone()),
                "text" => Value::from("x".repeat(entry["maxChars"].as_u64().unwrap() as usize)),
                _ => entry["values"][0].clone(),
            };
            let mut body = serde_json::Map::new();
            body.insert(key.to_owned(), sample);
            assert!(
                TemplateSettings::from_json(&Value::Object(body)).is_ok(),
                "{key}"
            );
        }
    }
}

//! The templates' schemas: a template, what a caller sends (whole or as a merge patch), and the
//! settings catalog. The settings' properties are read from the domain's catalog
//! (`SettingKey::ALL`, `ValueSpace`), so the document cannot drift from the rules.

use crate::openapi::primitives::{enumeration, epoch_ms, integer, object, prop, string, text};
use roomlink_domain::template::record::{MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS};
use roomlink_domain::template::{SettingKey, ValueSpace, cisco_paths, time_zones};
use serde_json::Value;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{AdditionalProperties, ArrayBuilder, ObjectBuilder, Schema, Type};

/// No control character (C0, DEL, C1: what `char::is_control` names) and no `"`.
const TEXT_PATTERN: &str = "^[^\\u0000-\\u001f\\u007f-\\u009f\"]*$";

/// A name: no control character, and something besides white space (names are trimmed).
const NAME_PATTERN: &str = "^[^\\u0000-\\u001f\\u007f-\\u009f]*[^\\s\\u0000-\\u001f\\u007f-\\u009f][^\\u0000-\\u001f\\u007f-\\u009f]*$";

/// One key's values (or null, in a patch: the key is removed).
fn space_schema(key: SettingKey, nullable: bool) -> ObjectBuilder {
    let space = key.space();
    let words = Some(format!("{}.", space));
    match space {
        ValueSpace::IntegerRange { min, max } => integer(nullable)
            .minimum(Some(min as f64))
            .maximum(Some(max as f64)),
        ValueSpace::IntegerSet(values) => {
            let mut all: Vec<Value> = values.iter().map(|v| Value::from(*v)).collect();
            if nullable {
                all.push(Value::Null);
            }
            integer(nullable).enum_values(Some(all))
        }
        ValueSpace::Literal(values) => enumeration(values, nullable),
        ValueSpace::Text {
            min_chars,
            max_chars,
        } => text(nullable)
            .min_length(Some(min_chars))
            .max_length(Some(max_chars))
            .pattern(Some(TEXT_PATTERN)),
        ValueSpace::TimeZone => {
            let names: Vec<&str> = time_zones::all().collect();
            enumeration(&names, nullable)
        }
    }
    .description(words)
}

/// A setting key: a neutral one, or a raw Cisco path (`cisco:` and the path's words).
pub(super) fn key_pattern() -> String {
    let neutral: Vec<String> = SettingKey::ALL
        .iter()
        .map(|k| k.name().replace('.', "\\."))
        .collect();
    format!("^(?:{}|{}.+)$", neutral.join("|"), cisco_paths::PREFIX)
}

/// The neutral keys with their spaces, and raw Cisco paths as further properties: which path
/// exists and what it takes is Cisco's published schemas' (docs/drivers.md, "Raw Cisco
/// paths"), 527 paths, too many for this document to list.
fn settings_schema(description: &str, nullable: bool) -> Schema {
    let mut builder = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(format!(
            "{description} Besides the keys below, a raw Cisco configuration path as \
             'cisco:Path Words' (for example 'cisco:Audio Ultrasound MaxVolume'), its value \
             inside the space Cisco's published schemas give the path."
        )))
        .property_names(Some(string().pattern(Some(key_pattern()))))
        .additional_properties(Some(AdditionalProperties::RefOr(RefOr::T(
            value_schema(nullable)
                .description(Some("A raw Cisco path's value: a whole number or a text."))
                .into(),
        ))));
    for &key in SettingKey::ALL {
        builder = builder.property(key.name(), space_schema(key, nullable));
    }
    builder.into()
}

/// A raw path's value: a whole number or a text (null too in a patch).
fn value_schema(nullable: bool) -> ObjectBuilder {
    let mut types = vec![Type::Integer, Type::String];
    if nullable {
        types.push(Type::Null);
    }
    ObjectBuilder::new().schema_type(utoipa::openapi::schema::SchemaType::Array(types))
}

pub(super) fn template_schemas() -> Vec<(&'static str, RefOr<Schema>)> {
    let name = || {
        string()
            .min_length(Some(1))
            .max_length(Some(MAX_NAME_CHARS))
            .pattern(Some(NAME_PATTERN))
            .description(Some(
                "Unique in the enterprise without regard to case; spaces around it are dropped.",
            ))
    };
    let description = || text(true).max_length(Some(MAX_DESCRIPTION_CHARS));
    let settings = || settings_schema("Setting keys with values inside their spaces.", false);
    vec![
        (
            "Template",
            object(
                "A configuration template.",
                vec![
                    prop("id", string(), true),
                    prop("name", name(), true),
                    prop("description", description(), true),
                    prop("settings", settings(), true),
                    prop("createdAt", epoch_ms(), true),
                    prop("updatedAt", epoch_ms(), true),
                ],
            )
            .into(),
        ),
        (
            "TemplateInput",
            object(
                "A template as a caller creates or replaces it.",
                vec![
                    prop("name", name(), true),
                    prop("description", description(), false),
                    prop("settings", settings(), true),
                ],
            )
            .into(),
        ),
        (
            "TemplatePatch",
            object(
                "A JSON merge patch of a template: fields present are set, a setting's null \
                 removes it.",
                vec![
                    prop("name", name(), false),
                    prop("description", description(), false),
                    prop(
                        "settings",
                        settings_schema(
                            "The settings to set, or (null) to remove; the others stay.",
                            true,
                        ),
                        false,
                    ),
                ],
            )
            .into(),
        ),
        (
            "TemplateSettingSpace",
            object(
                "One setting key and the values it takes.",
                vec![
                    prop(
                        "key",
                        enumeration(
                            &SettingKey::ALL.iter().map(|k| k.name()).collect::<Vec<_>>(),
                            false,
                        ),
                        true,
                    ),
                    prop(
                        "type",
                        enumeration(&["integer", "literal", "text", "timeZone"], false),
                        true,
                    ),
                    prop("min", integer(false), false),
                    prop("max", integer(false), false),
                    prop("minChars", integer(false).minimum(Some(0.0)), false),
                    prop("maxChars", integer(false).minimum(Some(0.0)), false),
                    prop(
                        "values",
                        ArrayBuilder::new().items(ObjectBuilder::new().schema_type(
                            utoipa::openapi::schema::SchemaType::Array(vec![
                                Type::Integer,
                                Type::String,
                            ]),
                        )),
                        false,
                    ),
                    prop(
                        "description",
                        string().description(Some("The space in words, as refusals word it.")),
                        true,
                    ),
                ],
            )
            .into(),
        ),
    ]
}

//! The endpoint schemas, from the domain's field table (`Field::ALL` and each field's
//! `shape()`), and the schema of each value shape, which listener services reuse.

use crate::openapi::primitives::{
    anchored, digits_in_range, enumeration, no_space_body, object, prop, reference, string, text,
    text_body, type_of,
};
use roomlink_domain::endpoint::Field;
use roomlink_domain::endpoint::value::Shape;
use roomlink_domain::rules::PASSWORD_MAX_CHARS;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{
    AdditionalProperties, AllOfBuilder, AnyOfBuilder, ObjectBuilder, Schema, SchemaType, Type,
};

/// `Endpoint` is the response; `EndpointInput` the POST/PUT body; `EndpointFields` the PATCH
/// map and `EndpointPatch` the PATCH body.
pub(super) fn endpoint_schemas() -> Vec<(&'static str, RefOr<Schema>)> {
    let password = || {
        text(true)
            .max_length(Some(PASSWORD_MAX_CHARS))
            .write_only(Some(true))
            .description(Some(
                "Write-only: the room system's password. null or \"\" clears it.",
            ))
    };
    let mut response = vec![prop("id", string(), true)];
    let mut input = Vec::new();
    let mut fields = Vec::new();
    for field in Field::ALL {
        let name = field.json_name();
        // `name` is required: it can be set but never cleared.
        let required = *field == Field::Name;
        let schema = |usage| shape_schema(field.shape(), !required, usage);
        response.push(prop(name, schema(Use::Response), true));
        input.push(prop(name, schema(Use::Input), required));
        fields.push(prop(name, schema(Use::Input), false));
    }
    response.push(prop(
        "password",
        ObjectBuilder::new()
            .schema_type(Type::Null)
            .description(Some("Always null: passwords are write-only.")),
        true,
    ));
    input.push(prop("password", password(), false));
    fields.push(prop("password", password(), false));
    let patch = AnyOfBuilder::new()
        .item(reference("EndpointFields"))
        .item(object(
            "The fields, wrapped.",
            vec![prop("modifiedFields", reference("EndpointFields"), true)],
        ))
        .description(Some(
            "A map of field name to new value (`modifiedFields`), bare or wrapped as \
             `{\"modifiedFields\": {...}}`. Fields it does not name are unchanged.",
        ))
        .build();
    vec![
        (
            "Endpoint",
            object(
                "A provisioned room system. Every field is present, null when unset.",
                response,
            )
            .into(),
        ),
        (
            "EndpointInput",
            object(
                "An endpoint to create or the replacement of one (PUT: omitted fields become \
                 null). An `id` is accepted on PUT only, equal to the path's.",
                input,
            )
            .into(),
        ),
        (
            "EndpointFields",
            object("Endpoint fields to change.", fields).into(),
        ),
        ("EndpointPatch", Schema::from(patch).into()),
    ]
}

/// Whether a schema describes a value the service answers or one it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Use {
    Response,
    /// A request body: an optional field also takes "" for "no value", as the service does.
    Input,
}

/// IPv4 as `Ipv4Addr::from_str` reads it: four decimal octets, no leading zeros.
const IPV4: &str = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}";

/// IPv6 as `Ipv6Addr::from_str` reads it: RFC 4291's text forms (`::` once, an embedded IPv4
/// address in the last 32 bits), without a zone.
fn ipv6() -> String {
    let h16 = "[0-9A-Fa-f]{1,4}";
    let ls32 = format!("(?:{h16}:{h16}|{IPV4})");
    // Groups before `::` (at most `before`), and the fixed tail after it: RFC 3986's grammar.
    let compressed = |before: usize, tail: String| {
        if before == 0 {
            format!("::{tail}")
        } else {
            format!("(?:(?:{h16}:){{0,{}}}{h16})?::{tail}", before - 1)
        }
    };
    [
        format!("(?:{h16}:){{6}}{ls32}"),
        compressed(0, format!("(?:{h16}:){{5}}{ls32}")),
        compressed(1, format!("(?:{h16}:){{4}}{ls32}")),
        compressed(2, format!("(?:{h16}:){{3}}{ls32}")),
        compressed(3, format!("(?:{h16}:){{2}}{ls32}")),
        compressed(4, format!("{h16}:{ls32}")),
        compressed(5, ls32.clone()),
        compressed(6, h16.to_owned()),
        compressed(7, String::new()),
    ]
    .join("|")
}

/// A DNS host name as `value::is_hostname` reads it: labels of letters, digits and `-` (not at
/// either end), 1 to 63 characters, an optional final dot. Not all-numeric is a second pattern.
const HOSTNAME: &str = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\\.?";

/// A schema without a type of its own: a branch of an `anyOf` that only narrows strings.
fn untyped() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(SchemaType::AnyValue)
}

/// The schema of a value of `shape` (`nullable`: the field can be unset).
pub(super) fn shape_schema(shape: Shape, nullable: bool, usage: Use) -> RefOr<Schema> {
    // "" is an optional field's "no value" on input (docs/decisions.md, Endpoints).
    let empty = nullable && usage == Use::Input;
    let string = || text(nullable);
    let builder = match shape {
        Shape::Text { max_chars } => string()
            .max_length(Some(max_chars))
            .pattern(Some(anchored(&text_body(), empty))),
        Shape::Address { max_chars } => {
            let mut any = AnyOfBuilder::new()
                .schema_type(type_of(Type::String, nullable))
                .description(Some(
                    "An IPv4 or IPv6 address, or a DNS host name (not all-numeric).",
                ))
                .item(
                    untyped()
                        .max_length(Some(max_chars))
                        .pattern(Some(anchored(&format!("{IPV4}|{}", ipv6()), false))),
                )
                .item(
                    AllOfBuilder::new()
                        .item(
                            untyped()
                                .max_length(Some(max_chars))
                                .pattern(Some(anchored(HOSTNAME, false))),
                        )
                        .item(untyped().pattern(Some("[A-Za-z-]"))),
                );
            if empty {
                any = any.item(untyped().max_length(Some(0)));
            }
            return Schema::from(any.build()).into();
        }
        Shape::HttpUrl { max_chars } => string()
            .max_length(Some(max_chars))
            .pattern(Some(anchored(
                &format!("[Hh][Tt][Tt][Pp][Ss]?://{}", no_space_body()),
                empty,
            )))
            .description(Some("An http:// or https:// URL.")),
        Shape::Reference { max_chars } => string()
            .pattern(Some(anchored(
                &format!("[A-Za-z0-9_-]{{1,{max_chars}}}"),
                empty,
            )))
            .description(Some("The id of another record.")),
        Shape::Enum(values) => {
            let mut all: Vec<&str> = values.to_vec();
            if empty {
                all.push("");
            }
            enumeration(&all, nullable)
                .description(Some("Matched case-insensitively; answered in upper case."))
        }
        Shape::Integer { min, max } => {
            let number = ObjectBuilder::new()
                .schema_type(type_of(Type::Integer, nullable))
                .minimum(Some(min as f64))
                .maximum(Some(max as f64));
            if usage == Use::Response {
                number
            } else {
                // The numeric strings `value::Port` reads: decimal digits, nothing else.
                let digits = digits_in_range(min.max(0) as u64, max.max(0) as u64);
                let any = AnyOfBuilder::new()
                    .item(number)
                    .item(string_of(anchored(&digits, empty)))
                    .description(Some("A number, or the same number as a string of digits."));
                return Schema::from(any.build()).into();
            }
        }
        Shape::Number { min, max } => {
            let number = ObjectBuilder::new()
                .schema_type(type_of(Type::Number, nullable))
                .minimum(Some(min))
                .maximum(Some(max));
            if empty {
                let any = AnyOfBuilder::new()
                    .item(number)
                    .item(string_of("^$".to_owned()))
                    .description(Some("A number; \"\" like null."));
                return Schema::from(any.build()).into();
            }
            number
        }
        Shape::Geolocation => {
            let coordinate = |bound: f64| {
                ObjectBuilder::new()
                    .schema_type(Type::Number)
                    .minimum(Some(-bound))
                    .maximum(Some(bound))
            };
            ObjectBuilder::new()
                .schema_type(type_of(Type::Object, nullable))
                .property("latitude", coordinate(90.0))
                .property("longitude", coordinate(180.0))
                .required("latitude")
                .required("longitude")
                .additional_properties(Some(AdditionalProperties::FreeForm(false)))
        }
        Shape::Object { max_bytes } => ObjectBuilder::new()
            .schema_type(type_of(Type::Object, nullable))
            .description(Some(format!(
                "Any JSON object of at most {max_bytes} bytes once serialized."
            ))),
    };
    Schema::from(builder).into()
}

fn string_of(pattern: String) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(pattern))
}

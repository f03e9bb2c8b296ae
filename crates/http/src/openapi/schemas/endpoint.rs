//! The endpoint schemas, from the domain's field table (`Field::ALL` and each field's
//! `shape()`), and the schema of each value shape, which listener services reuse.

use crate::openapi::primitives::{
    TEXT_PATTERN, enumeration, object, prop, reference, string, text, type_of,
};
use roomlink_domain::endpoint::Field;
use roomlink_domain::endpoint::value::Shape;
use roomlink_domain::rules::PASSWORD_MAX_CHARS;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{AdditionalProperties, AnyOfBuilder, ObjectBuilder, Schema, Type};

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
        response.push(prop(name, shape_schema(field.shape(), !required), true));
        input.push(prop(name, shape_schema(field.shape(), !required), required));
        fields.push(prop(name, shape_schema(field.shape(), !required), false));
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

/// The schema of a value of `shape`.
pub(super) fn shape_schema(shape: Shape, nullable: bool) -> Schema {
    let string = || text(nullable);
    let builder = match shape {
        Shape::Text { max_chars } => string()
            .max_length(Some(max_chars))
            .pattern(Some(TEXT_PATTERN)),
        Shape::Address { max_chars } => string()
            .max_length(Some(max_chars))
            .description(Some("An IPv4 or IPv6 address, or a DNS host name.")),
        Shape::HttpUrl { max_chars } => string()
            .max_length(Some(max_chars))
            .pattern(Some(
                "^[Hh][Tt][Tt][Pp][Ss]?://[^\\s\\u0000-\\u001f\\u007f-\\u009f]+$",
            ))
            .description(Some("An http:// or https:// URL.")),
        Shape::Reference { max_chars } => string()
            .pattern(Some(format!("^[A-Za-z0-9_-]{{1,{max_chars}}}$")))
            .description(Some("The id of another record.")),
        Shape::Enum(values) => enumeration(values, nullable)
            .description(Some("Matched case-insensitively; answered in upper case.")),
        Shape::Integer { min, max } => ObjectBuilder::new()
            .schema_type(type_of(Type::Integer, nullable))
            .minimum(Some(min as f64))
            .maximum(Some(max as f64))
            .description(Some("A numeric string is accepted too.")),
        Shape::Number { min, max } => ObjectBuilder::new()
            .schema_type(type_of(Type::Number, nullable))
            .minimum(Some(min))
            .maximum(Some(max))
            .description(Some("A numeric string is accepted too.")),
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
    builder.into()
}

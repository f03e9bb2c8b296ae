//! Schema building blocks shared by the parameters, bodies and components.

use serde_json::Value;
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::{ContentBuilder, KnownFormat, Ref, RefOr, SchemaFormat};

/// Text without control characters.
pub(super) const NO_CONTROL_PATTERN: &str = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$";

/// Free text as the domain checks it: not blank, no control characters.
pub(super) const TEXT_PATTERN: &str = "^[^\\u0000-\\u001f\\u007f-\\u009f]*[^\\s\\u0000-\\u001f\\u007f-\\u009f][^\\u0000-\\u001f\\u007f-\\u009f]*$";

pub(super) fn string() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String)
}

/// A string, or null when `nullable`.
pub(super) fn text(nullable: bool) -> ObjectBuilder {
    ObjectBuilder::new().schema_type(type_of(Type::String, nullable))
}

/// A string of one of `values` (or null).
pub(super) fn enumeration(values: &[&str], nullable: bool) -> ObjectBuilder {
    let mut all: Vec<Value> = values.iter().map(|v| Value::from(*v)).collect();
    if nullable {
        all.push(Value::Null);
    }
    ObjectBuilder::new()
        .schema_type(type_of(Type::String, nullable))
        .enum_values(Some(all))
}

pub(super) fn integer(nullable: bool) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(type_of(Type::Integer, nullable))
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
}

pub(super) fn boolean() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::Boolean)
}

pub(super) fn epoch_ms() -> ObjectBuilder {
    integer(false).description(Some("Milliseconds since the Unix epoch."))
}

pub(super) fn type_of(t: Type, nullable: bool) -> SchemaType {
    if nullable {
        SchemaType::Array(vec![t, Type::Null])
    } else {
        SchemaType::Type(t)
    }
}

/// A property: name, schema, required.
pub(super) type Prop = (&'static str, RefOr<Schema>, bool);

pub(super) fn prop(name: &'static str, schema: impl Into<RefOr<Schema>>, required: bool) -> Prop {
    (name, schema.into(), required)
}

/// An object with exactly these properties.
pub(super) fn object(description: &str, props: Vec<Prop>) -> Schema {
    let mut builder = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(description))
        .additional_properties(Some(AdditionalProperties::FreeForm(false)));
    for (name, schema, required) in props {
        builder = builder.property(name, schema);
        if required {
            builder = builder.required(name);
        }
    }
    builder.into()
}

/// A reference to the component schema `schema`.
pub(super) fn reference(schema: &str) -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(schema))
}

pub(super) fn json_content(schema: RefOr<Schema>) -> utoipa::openapi::Content {
    ContentBuilder::new().schema(Some(schema)).build()
}

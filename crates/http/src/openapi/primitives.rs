//! Schema building blocks shared by the parameters, bodies and components.

use serde_json::Value;
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::{ContentBuilder, KnownFormat, Ref, RefOr, SchemaFormat};

/// Control characters (`char::is_control`: Unicode Cc), as a regex class body.
const CONTROL: &str = "\\u0000-\\u001f\\u007f-\\u009f";
/// White space as Rust's `char::is_whitespace` sees it, as a regex class body. Written out:
/// `\s` differs between regex dialects (ECMA counts U+FEFF, Python U+001C..U+001F).
pub(super) const SPACE: &str =
    "\\t-\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
/// [`SPACE`] without the line ends (`\n`, `\r`).
pub(super) const SPACE_IN_LINE: &str =
    "\\t\\u000b\\u000c \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";

/// Text without control characters.
pub(super) const NO_CONTROL_PATTERN: &str = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$";

/// Free text as the domain checks it, unanchored: not blank, no control characters.
pub(super) fn text_body() -> String {
    format!("[^{CONTROL}]*[^{SPACE}{CONTROL}][^{CONTROL}]*")
}

/// One run of characters that are neither white space nor control characters.
pub(super) fn no_space_body() -> String {
    format!("[^{SPACE}{CONTROL}]+")
}

/// `body` as a whole-string pattern; with `empty`, "" matches too (an optional field's "no
/// value").
pub(super) fn anchored(body: &str, empty: bool) -> String {
    if empty {
        format!("^(?:{body})?$")
    } else {
        format!("^(?:{body})$")
    }
}

/// A whole number from `min` to `max` (both at least 0) in decimal digits, leading zeros
/// allowed: the numeric strings `value::Port`
/// reads, the amounts of a token's `duration`.
pub(super) fn digits_in_range(min: u64, max: u64) -> String {
    let mut alternatives = Vec::new();
    let mut low = min;
    // One run of alternatives per digit count, each covering [low, the last number of that
    // many digits or max].
    while low <= max {
        let digits = low.to_string().len();
        let top = 10u64.pow(digits as u32) - 1;
        let high = top.min(max);
        same_length(&low.to_string(), &high.to_string(), &mut alternatives);
        low = high + 1;
    }
    format!("0*(?:{})", alternatives.join("|"))
}

/// Alternatives matching the numbers from `low` to `high`, written with as many digits.
fn same_length(low: &str, high: &str, out: &mut Vec<String>) {
    let class = |a: u8, b: u8| {
        if a == b {
            (a as char).to_string()
        } else {
            format!("[{}-{}]", a as char, b as char)
        }
    };
    let (l, h) = (low.as_bytes()[0], high.as_bytes()[0]);
    let rest = low.len() - 1;
    if rest == 0 {
        out.push(class(l, h));
        return;
    }
    let (low_rest, high_rest) = (&low[1..], &high[1..]);
    let any_rest = format!("[0-9]{{{rest}}}");
    let all = |c: char, text: &str| text.chars().all(|x| x == c);
    if l == h {
        let mut inner = Vec::new();
        same_length(low_rest, high_rest, &mut inner);
        out.extend(inner.into_iter().map(|p| format!("{}{p}", l as char)));
        return;
    }
    let (mut first, mut last) = (l, h);
    if !all('0', low_rest) {
        let mut inner = Vec::new();
        same_length(low_rest, &"9".repeat(rest), &mut inner);
        out.extend(inner.into_iter().map(|p| format!("{}{p}", l as char)));
        first += 1;
    }
    if !all('9', high_rest) {
        last -= 1;
    }
    if first <= last {
        out.push(format!("{}{any_rest}", class(first, last)));
    }
    if !all('9', high_rest) {
        let mut inner = Vec::new();
        same_length(&"0".repeat(rest), high_rest, &mut inner);
        out.extend(inner.into_iter().map(|p| format!("{}{p}", h as char)));
    }
}

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

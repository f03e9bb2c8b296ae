//! The value types of endpoint fields, each with its bounds (documented in `docs/endpoint-fields.md`).
//!
//! Every type reads from JSON and from CSV text and writes back to both, and has a plain
//! `Stored` form for the storage adapters. An empty string means "no value" (null) everywhere.

use crate::enums::{
    AddressStyle, CalendarType, ControlProtocol, DialStyle, MeetingPrivacyMode, RegisterToSipProxy,
    SignalingProtocol, Toggle, ZeroTouchType, shorten,
};
use crate::error::Error;
use serde_json::{Map, Value};
use std::net::IpAddr;

/// A field value in a response: its JSON form, or null when unset.
pub(crate) struct JsonOf<'a, T>(pub Option<&'a T>);

impl<T: FieldValue> serde::Serialize for JsonOf<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Some(v) => v.serialize_json(serializer),
            None => serializer.serialize_none(),
        }
    }
}

/// What a field's values look like, for API descriptions (the HTTP adapter's OpenAPI schema).
/// Each value type states it beside its own checks, so a description cannot drift from them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// Free text of at most `max_chars` characters: not blank, no control characters.
    Text { max_chars: usize },
    /// An IPv4 or IPv6 literal or a DNS host name.
    Address { max_chars: usize },
    /// An `http://` or `https://` URL.
    HttpUrl { max_chars: usize },
    /// An id of another entity: 1 to `max_chars` of `[A-Za-z0-9_-]`.
    Reference { max_chars: usize },
    /// One of these values (matched case-insensitively on input).
    Enum(&'static [&'static str]),
    /// A whole number (in JSON also a string of decimal digits).
    Integer { min: i64, max: i64 },
    /// A finite number (numeric text in CSV only).
    Number { min: f64, max: f64 },
    /// `{"latitude": -90..90, "longitude": -180..180}`.
    Geolocation,
    /// Any JSON object of at most `max_bytes` once serialized.
    Object { max_bytes: usize },
}

/// A field value: parsed from JSON or CSV text, written back to JSON, text and storage.
pub trait FieldValue: Sized + Clone + PartialEq {
    /// The plain type a storage adapter keeps (String, i32 or f64).
    type Stored;
    /// What the values look like (for API descriptions).
    const SHAPE: Shape;

    /// Parses a non-null JSON value. `Ok(None)` means "no value" (an empty string).
    /// A value of the wrong JSON type is `JsonMappingException` at `field`; a value of the
    /// right type out of bounds is `Invalid`.
    fn from_json(field: &str, value: &Value) -> Result<Option<Self>, Error>;
    /// Parses CSV text. An empty text is handled by the caller as "no value".
    fn from_text(field: &str, text: &str) -> Result<Self, Error>;
    fn to_json(&self) -> Value;
    /// Writes the JSON form straight to a serializer (responses: no `Value` in between).
    fn serialize_json<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(&self.to_json(), serializer)
    }
    fn to_text(&self) -> String;
    fn to_stored(&self) -> Self::Stored;
    /// Rebuilds a value a storage adapter kept; it was validated on the way in.
    fn from_stored(field: &str, stored: Self::Stored) -> Result<Self, Error>;
}

/// A value whose every form is its text: free text, addresses, URLs, ids, enumerations.
/// [`FieldValue`] follows from it: JSON strings, CSV text and storage are all the text.
pub trait TextValue: Sized + Clone + PartialEq {
    const SHAPE: Shape;
    /// Checks a non-empty text.
    fn parse_text(field: &str, text: &str) -> Result<Self, Error>;
    fn text(&self) -> &str;
    /// Rebuilds a stored value; by default it is checked again.
    fn from_stored_text(field: &str, stored: String) -> Result<Self, Error> {
        Self::parse_text(field, &stored)
    }
}

impl<T: TextValue> FieldValue for T {
    type Stored = String;
    const SHAPE: Shape = T::SHAPE;
    fn from_json(field: &str, value: &Value) -> Result<Option<Self>, Error> {
        let text = expect_str(field, value)?;
        if text.is_empty() {
            return Ok(None);
        }
        T::parse_text(field, text).map(Some)
    }
    fn from_text(field: &str, text: &str) -> Result<Self, Error> {
        T::parse_text(field, text)
    }
    fn to_json(&self) -> Value {
        Value::String(self.text().to_owned())
    }
    fn serialize_json<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.text())
    }
    fn to_text(&self) -> String {
        self.text().to_owned()
    }
    fn to_stored(&self) -> String {
        self.text().to_owned()
    }
    fn from_stored(field: &str, stored: String) -> Result<Self, Error> {
        T::from_stored_text(field, stored)
    }
}

fn expect_str<'v>(field: &str, value: &'v Value) -> Result<&'v str, Error> {
    value.as_str().ok_or_else(|| {
        Error::json_mapping(field, format!("expected a string, got {}", kind_of(value)))
    })
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn no_control_chars(field: &str, text: &str) -> Result<(), Error> {
    if text.chars().any(char::is_control) {
        return Err(Error::invalid(format!(
            "{field}: control characters are not allowed"
        )));
    }
    Ok(())
}

/// Free text of 1 to `MAX` characters without control characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text<const MAX: usize>(String);

impl<const MAX: usize> Text<MAX> {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<const MAX: usize> TextValue for Text<MAX> {
    const SHAPE: Shape = Shape::Text { max_chars: MAX };
    fn parse_text(field: &str, text: &str) -> Result<Self, Error> {
        if text.chars().count() > MAX {
            return Err(Error::invalid(format!(
                "{field}: at most {MAX} characters are allowed"
            )));
        }
        if text.trim().is_empty() {
            return Err(Error::invalid(format!("{field}: must not be blank")));
        }
        no_control_chars(field, text)?;
        Ok(Text(text.to_owned()))
    }
    fn text(&self) -> &str {
        &self.0
    }
    fn from_stored_text(_: &str, stored: String) -> Result<Self, Error> {
        Ok(Text(stored))
    }
}

/// The room system's address: an IPv4 or IPv6 literal, or a DNS host name (RFC 1123).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address(String);

impl Address {
    pub const MAX: usize = 253;
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn is_hostname(text: &str) -> bool {
    // The bound counts a final dot too: it is the field's length, as the API document says.
    let whole = text.len();
    let text = text.strip_suffix('.').unwrap_or(text);
    !text.is_empty()
        && whole <= Address::MAX
        && text.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
        // An all-numeric dotted name is a malformed IPv4 address, not a host name.
        && !text.split('.').all(|l| l.bytes().all(|b| b.is_ascii_digit()))
}

impl TextValue for Address {
    const SHAPE: Shape = Shape::Address {
        max_chars: Address::MAX,
    };
    fn parse_text(field: &str, text: &str) -> Result<Self, Error> {
        if text.parse::<IpAddr>().is_ok() || is_hostname(text) {
            Ok(Address(text.to_owned()))
        } else {
            Err(Error::invalid(format!(
                "{field}: '{}' is neither an IP address nor a host name",
                shorten(text)
            )))
        }
    }
    fn text(&self) -> &str {
        &self.0
    }
    fn from_stored_text(_: &str, stored: String) -> Result<Self, Error> {
        Ok(Address(stored))
    }
}

/// A TCP port, 1 to 65535. JSON takes a number (`22.0` is 22, as JSON Schema's `integer`
/// has it) or a string of decimal digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Port(u16);

impl Port {
    pub fn get(self) -> u16 {
        self.0
    }
}

impl FieldValue for Port {
    type Stored = i32;
    const SHAPE: Shape = Shape::Integer { min: 1, max: 65535 };
    fn from_json(field: &str, value: &Value) -> Result<Option<Self>, Error> {
        match value {
            Value::Number(n) => {
                let whole = n.as_i64().or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && f.abs() <= i64::MAX as f64)
                        .map(|f| f as i64)
                });
                match whole {
                    Some(n) => Self::from_number(field, n).map(Some),
                    None => Err(Error::invalid(format!("{field}: must be a whole number"))),
                }
            }
            Value::String(s) if s.is_empty() => Ok(None),
            // Digits only: the API document can say exactly that, unlike "what parses".
            Value::String(s) if !s.bytes().all(|b| b.is_ascii_digit()) => Err(Error::invalid(
                format!("{field}: '{}' is not a string of digits", shorten(s)),
            )),
            Value::String(s) => Self::from_text(field, s).map(Some),
            other => Err(Error::json_mapping(
                field,
                format!("expected a number, got {}", kind_of(other)),
            )),
        }
    }
    fn from_text(field: &str, text: &str) -> Result<Self, Error> {
        let n: i64 = text
            .trim()
            .parse()
            .map_err(|_| Error::invalid(format!("{field}: '{}' is not a number", shorten(text))))?;
        Self::from_number(field, n)
    }
    fn to_json(&self) -> Value {
        Value::from(self.0)
    }
    fn to_text(&self) -> String {
        self.0.to_string()
    }
    fn to_stored(&self) -> i32 {
        i32::from(self.0)
    }
    fn from_stored(field: &str, stored: i32) -> Result<Self, Error> {
        Self::from_number(field, i64::from(stored))
    }
}

impl Port {
    fn from_number(field: &str, n: i64) -> Result<Self, Error> {
        match u16::try_from(n) {
            Ok(p) if p >= 1 => Ok(Port(p)),
            _ => Err(Error::invalid(format!("{field}: {n} is outside 1..65535"))),
        }
    }
}

/// A finite number within the bounds of its field (elevation: metres, -500..10000).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Elevation(f64);

impl Elevation {
    const RANGE: std::ops::RangeInclusive<f64> = -500.0..=10_000.0;
    pub fn get(self) -> f64 {
        self.0
    }
    fn check(field: &str, n: f64) -> Result<Self, Error> {
        if n.is_finite() && Self::RANGE.contains(&n) {
            Ok(Elevation(n))
        } else {
            Err(Error::invalid(format!(
                "{field}: {n} is outside -500..10000"
            )))
        }
    }
}

impl FieldValue for Elevation {
    type Stored = f64;
    const SHAPE: Shape = Shape::Number {
        min: *Elevation::RANGE.start(),
        max: *Elevation::RANGE.end(),
    };
    /// A JSON number ("" like null). Numeric strings are CSV's: in JSON the range of a
    /// decimal text could not be described, so a string is the wrong JSON type.
    fn from_json(field: &str, value: &Value) -> Result<Option<Self>, Error> {
        match value {
            Value::Number(n) => Self::check(field, n.as_f64().unwrap_or(f64::NAN)).map(Some),
            Value::String(s) if s.is_empty() => Ok(None),
            other => Err(Error::json_mapping(
                field,
                format!("expected a number, got {}", kind_of(other)),
            )),
        }
    }
    fn from_text(field: &str, text: &str) -> Result<Self, Error> {
        let n: f64 = text
            .trim()
            .parse()
            .map_err(|_| Error::invalid(format!("{field}: '{}' is not a number", shorten(text))))?;
        Self::check(field, n)
    }
    fn to_json(&self) -> Value {
        Value::from(self.0)
    }
    fn to_text(&self) -> String {
        self.0.to_string()
    }
    fn to_stored(&self) -> f64 {
        self.0
    }
    fn from_stored(field: &str, stored: f64) -> Result<Self, Error> {
        Self::check(field, stored)
    }
}

/// `{"latitude": -90..90, "longitude": -180..180}`; in CSV, the same JSON object as text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geolocation {
    latitude: f64,
    longitude: f64,
}

impl Geolocation {
    pub fn latitude(&self) -> f64 {
        self.latitude
    }
    pub fn longitude(&self) -> f64 {
        self.longitude
    }
}

impl FieldValue for Geolocation {
    type Stored = String;
    const SHAPE: Shape = Shape::Geolocation;
    fn from_json(field: &str, value: &Value) -> Result<Option<Self>, Error> {
        let Value::Object(map) = value else {
            return Err(Error::json_mapping(
                field,
                format!("expected an object, got {}", kind_of(value)),
            ));
        };
        let coordinate = |name: &str, bound: f64| -> Result<f64, Error> {
            let path = format!("{field}.{name}");
            match map.get(name) {
                Some(Value::Number(n)) => {
                    let n = n.as_f64().unwrap_or(f64::NAN);
                    if n.is_finite() && n.abs() <= bound {
                        Ok(n)
                    } else {
                        Err(Error::invalid(format!("{path}: {n} is outside ±{bound}")))
                    }
                }
                Some(other) => Err(Error::json_mapping(
                    &path,
                    format!("expected a number, got {}", kind_of(other)),
                )),
                None => Err(Error::invalid(format!("{path}: is required"))),
            }
        };
        if let Some(extra) = map.keys().find(|k| *k != "latitude" && *k != "longitude") {
            return Err(Error::json_mapping(
                &format!("{field}.{extra}"),
                "unknown property; expected latitude and longitude",
            ));
        }
        Ok(Some(Geolocation {
            latitude: coordinate("latitude", 90.0)?,
            longitude: coordinate("longitude", 180.0)?,
        }))
    }
    fn from_text(field: &str, text: &str) -> Result<Self, Error> {
        let value: Value = serde_json::from_str(text)
            .map_err(|_| Error::invalid(format!("{field}: is not a JSON object")))?;
        Self::from_json(field, &value)?
            .ok_or_else(|| Error::invalid(format!("{field}: is not a JSON object")))
    }
    fn to_json(&self) -> Value {
        serde_json::json!({ "latitude": self.latitude, "longitude": self.longitude })
    }
    fn to_text(&self) -> String {
        self.to_json().to_string()
    }
    fn to_stored(&self) -> String {
        self.to_text()
    }
    fn from_stored(field: &str, stored: String) -> Result<Self, Error> {
        Self::from_text(field, &stored)
    }
}

/// Free-form client data: a JSON object of at most 8 KiB once serialized.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomData(Map<String, Value>);

impl CustomData {
    pub const MAX_BYTES: usize = 8 * 1024;
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0
    }
    fn check(field: &str, map: Map<String, Value>) -> Result<Self, Error> {
        let size = Value::Object(map.clone()).to_string().len();
        if size > Self::MAX_BYTES {
            return Err(Error::invalid(format!(
                "{field}: {size} bytes exceed the limit of {} bytes",
                Self::MAX_BYTES
            )));
        }
        Ok(CustomData(map))
    }
}

impl FieldValue for CustomData {
    type Stored = String;
    const SHAPE: Shape = Shape::Object {
        max_bytes: CustomData::MAX_BYTES,
    };
    fn from_json(field: &str, value: &Value) -> Result<Option<Self>, Error> {
        match value {
            Value::Object(map) => Self::check(field, map.clone()).map(Some),
            other => Err(Error::json_mapping(
                field,
                format!("expected an object, got {}", kind_of(other)),
            )),
        }
    }
    fn from_text(field: &str, text: &str) -> Result<Self, Error> {
        match serde_json::from_str(text) {
            Ok(Value::Object(map)) => Self::check(field, map),
            _ => Err(Error::invalid(format!("{field}: is not a JSON object"))),
        }
    }
    fn to_json(&self) -> Value {
        Value::Object(self.0.clone())
    }
    fn to_text(&self) -> String {
        self.to_json().to_string()
    }
    fn to_stored(&self) -> String {
        self.to_text()
    }
    fn from_stored(field: &str, stored: String) -> Result<Self, Error> {
        Self::from_text(field, &stored)
    }
}

/// An `http://` or `https://` URL of at most 2048 characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpUrl(String);

impl HttpUrl {
    pub const MAX: usize = 2048;
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TextValue for HttpUrl {
    const SHAPE: Shape = Shape::HttpUrl {
        max_chars: HttpUrl::MAX,
    };
    fn parse_text(field: &str, text: &str) -> Result<Self, Error> {
        let lower = text.to_ascii_lowercase();
        let rest = lower
            .strip_prefix("http://")
            .or_else(|| lower.strip_prefix("https://"));
        match rest {
            Some(rest)
                if !rest.is_empty()
                    && text.chars().count() <= Self::MAX
                    && !text.chars().any(|c| c.is_control() || c.is_whitespace()) =>
            {
                Ok(HttpUrl(text.to_owned()))
            }
            _ => Err(Error::invalid(format!(
                "{field}: must be an http:// or https:// URL of at most {} characters",
                Self::MAX
            ))),
        }
    }
    fn text(&self) -> &str {
        &self.0
    }
    fn from_stored_text(_: &str, stored: String) -> Result<Self, Error> {
        Ok(HttpUrl(stored))
    }
}

/// A reference to another entity: 1 to 64 of `[A-Za-z0-9_-]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Reference(String);

impl Reference {
    pub const MAX: usize = crate::ids::MAX_CHARS;
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TextValue for Reference {
    const SHAPE: Shape = Shape::Reference {
        max_chars: Reference::MAX,
    };
    fn parse_text(field: &str, text: &str) -> Result<Self, Error> {
        if crate::ids::is_well_formed(text) {
            Ok(Reference(text.to_owned()))
        } else {
            Err(Error::invalid(format!(
                "{field}: '{}' is not a valid id (1 to 64 letters, digits, '_' or '-')",
                shorten(text)
            )))
        }
    }
    fn text(&self) -> &str {
        &self.0
    }
    fn from_stored_text(_: &str, stored: String) -> Result<Self, Error> {
        Ok(Reference(stored))
    }
}

macro_rules! enum_field_value {
    ($($ty:ty),*) => {$(
        impl TextValue for $ty {
            const SHAPE: Shape = Shape::Enum(<$ty>::NAMES);
            fn parse_text(field: &str, text: &str) -> Result<Self, Error> {
                // Re-phrase the error with the endpoint field's own name (Toggle serves several).
                <$ty>::parse(text.trim()).map_err(|_| {
                    let allowed: Vec<_> = <$ty>::ALL.iter().map(|v| v.as_str()).collect();
                    Error::invalid(format!(
                        "{field}: '{}' is not one of {}",
                        shorten(text),
                        allowed.join(", ")
                    ))
                })
            }
            fn text(&self) -> &str {
                self.as_str()
            }
        }
    )*};
}

enum_field_value!(
    ControlProtocol,
    SignalingProtocol,
    DialStyle,
    AddressStyle,
    CalendarType,
    Toggle,
    RegisterToSipProxy,
    MeetingPrivacyMode,
    ZeroTouchType
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use serde_json::json;

    #[test]
    fn port_bounds() {
        assert_eq!(
            Port::from_json("port", &json!(443)).unwrap(),
            Some(Port(443))
        );
        assert_eq!(
            Port::from_json("port", &json!("80")).unwrap(),
            Some(Port(80))
        );
        assert_eq!(Port::from_json("port", &json!("")).unwrap(), None);
        assert_eq!(
            Port::from_json("port", &json!(65535)).unwrap(),
            Some(Port(65535))
        );
        // JSON Schema's `integer` includes 22.0; so does the port.
        assert_eq!(
            Port::from_json("port", &json!(22.0)).unwrap(),
            Some(Port(22))
        );
        assert_eq!(
            Port::from_json("port", &json!("0080")).unwrap(),
            Some(Port(80))
        );
        for bad in [
            json!(0),
            json!(65536),
            json!(-1),
            json!(1.5),
            json!(1e300),
            json!(" 80"),
            json!("+80"),
            json!("80.0"),
        ] {
            assert_eq!(
                Port::from_json("port", &bad).unwrap_err().kind(),
                ErrorKind::Invalid,
                "{bad}"
            );
        }
        // CSV cells keep their blanks around the number.
        assert_eq!(Port::from_text("port", " 80 ").unwrap(), Port(80));
        let e = Port::from_json("port", &json!(true)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::JsonMappingException);
        assert_eq!(e.details()["pathReference"], "port");
    }

    #[test]
    fn addresses() {
        for ok in [
            "10.1.2.3",
            "127.77.0.1",
            "::1",
            "fe80::1",
            "room-1.corp.example",
            "bjn.vc",
        ] {
            assert!(Address::from_text("ipAddress", ok).is_ok(), "{ok}");
        }
        for bad in [
            "300.1.1.1",
            "1.2.3",
            "-bad.example",
            "a b",
            "x..y",
            "",
            "http://x",
        ] {
            assert!(Address::from_text("ipAddress", bad).is_err(), "{bad}");
        }
        assert!(Address::from_text("ipAddress", &"a".repeat(64)).is_err());
        // 253 characters at most, a final dot included.
        let name = format!("{0}.{0}.{0}.{1}", "a".repeat(63), "b".repeat(61));
        assert_eq!(name.len(), 253);
        assert!(Address::from_text("ipAddress", &name).is_ok());
        assert!(Address::from_text("ipAddress", &format!("{name}.")).is_err());
    }

    #[test]
    fn elevation_takes_json_numbers_and_csv_text() {
        assert_eq!(
            Elevation::from_json("elevation", &json!(102.5)).unwrap(),
            Some(Elevation(102.5))
        );
        assert_eq!(Elevation::from_json("elevation", &json!("")).unwrap(), None);
        let e = Elevation::from_json("elevation", &json!("102.5")).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::JsonMappingException);
        assert_eq!(
            Elevation::from_text("elevation", "102.5").unwrap(),
            Elevation(102.5)
        );
        assert!(Elevation::from_json("elevation", &json!(10_000.5)).is_err());
    }

    #[test]
    fn text_bounds() {
        type Name = Text<5>;
        assert!(Name::from_text("name", "abcde").is_ok());
        assert!(Name::from_text("name", "abcdef").is_err());
        assert!(Name::from_text("name", "   ").is_err());
        assert!(Name::from_text("name", "a\u{7}b").is_err());
        assert_eq!(Name::from_json("name", &json!("")).unwrap(), None);
        assert_eq!(
            Name::from_json("name", &json!(5)).unwrap_err().kind(),
            ErrorKind::JsonMappingException
        );
    }

    #[test]
    fn structured_values_round_trip_through_text() {
        let g =
            Geolocation::from_json("geolocation", &json!({"latitude": 52.5, "longitude": 13.4}))
                .unwrap()
                .unwrap();
        assert_eq!(
            Geolocation::from_text("geolocation", &g.to_text()).unwrap(),
            g
        );
        assert!(
            Geolocation::from_json("geolocation", &json!({"latitude": 91, "longitude": 0}))
                .is_err()
        );
        assert!(Geolocation::from_json("geolocation", &json!({"latitude": 1})).is_err());

        let c = CustomData::from_text("customData", r#"{"correlationId":"a,b"}"#).unwrap();
        assert_eq!(c.as_map()["correlationId"], "a,b");
        assert!(CustomData::from_text("customData", "[1]").is_err());
        let big = json!({ "k": "x".repeat(CustomData::MAX_BYTES) });
        assert!(CustomData::from_json("customData", &big).is_err());
    }

    /// Found by the `patch_merge` fuzz target: a float written as its shortest text must read
    /// back as the same float, or every save through the text form (storage, CSV) drifts by
    /// an ulp. serde_json parses exactly only with its `float_roundtrip` feature.
    #[test]
    fn floats_survive_the_stored_text_exactly() {
        for x in [2.590278570220788e-144, 0.1 + 0.2, -89.99999999999997, 1e308] {
            let c = CustomData::from_json("customData", &json!({ "x": x }))
                .unwrap()
                .unwrap();
            let back = CustomData::from_stored("customData", c.to_stored()).unwrap();
            assert_eq!(back, c, "{x:e}");
            assert_eq!(back.as_map()["x"].as_f64(), Some(x));
        }
        let g = Geolocation::from_json(
            "geolocation",
            &json!({"latitude": -89.99999999999997, "longitude": 2.590278570220788e-144}),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            Geolocation::from_stored("geolocation", g.to_stored()).unwrap(),
            g
        );
    }

    #[test]
    fn enum_errors_name_the_endpoint_field() {
        let e = Toggle::from_text("autoJoinMode", "SOMETIMES").unwrap_err();
        assert!(e.message().starts_with("autoJoinMode:"), "{}", e.message());
        assert!(e.message().contains("ENABLED, DISABLED"));
    }

    #[test]
    fn urls_and_references() {
        assert!(HttpUrl::from_text("meshBaseUri", "https://mesh.example/api").is_ok());
        assert!(HttpUrl::from_text("meshBaseUri", "ftp://x").is_err());
        assert!(HttpUrl::from_text("meshBaseUri", "http://").is_err());
        // The bound counts characters, as every text bound does.
        let wide = format!("http://{}", "é".repeat(HttpUrl::MAX - 7));
        assert!(HttpUrl::from_text("meshBaseUri", &wide).is_ok());
        assert!(HttpUrl::from_text("meshBaseUri", &format!("{wide}é")).is_err());
        assert!(Reference::from_text("listenerServiceId", "550c9289e4b0c0c6485f4cfa").is_ok());
        assert!(Reference::from_text("listenerServiceId", "../etc").is_err());
    }
}

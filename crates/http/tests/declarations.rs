//! The document declares what the service enforces: for each schema that narrows values
//! (patterns, bounds, one-of bodies), the values it accepts are exactly those the domain's own
//! decoder accepts. schemathesis (`cargo xtask conformance`) checks the same from outside with
//! generated data; these cases pin the edges.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use regex::Regex;
use roomlink_domain::endpoint::page::ListPosition;
use roomlink_domain::endpoint::value::{Address, Elevation, FieldValue, HttpUrl, Port};
use roomlink_domain::endpoint::{LongText, ShortText};
use roomlink_domain::listener::decode_listener;
use roomlink_domain::rules::csv::CsvUpload;
use roomlink_domain::token::lifetime_ms;
use serde_json::{Value, json};
use std::cell::RefCell;
use std::collections::HashMap;

/// A JSON Schema check for the keywords the document uses on request values: `$ref`, `type`,
/// `enum`, `pattern`, `minLength`/`maxLength`, `minimum`/`maximum`, `anyOf`/`allOf`/`oneOf`
/// and object properties.
struct Validator {
    doc: Value,
    regexes: RefCell<HashMap<String, Regex>>,
}

impl Validator {
    fn new() -> Validator {
        Validator {
            doc: serde_json::from_str(&roomlink_http::openapi_json()).expect("JSON"),
            regexes: RefCell::new(HashMap::new()),
        }
    }

    fn component(&self, name: &str) -> Value {
        self.doc["components"]["schemas"][name].clone()
    }

    fn property(&self, component: &str, property: &str) -> Value {
        self.component(component)["properties"][property].clone()
    }

    /// The schema of a query parameter of the operation at `path` and `method`.
    fn query(&self, path: &str, method: &str, name: &str) -> Value {
        let params = self.doc["paths"][path][method]["parameters"]
            .as_array()
            .expect("parameters");
        params
            .iter()
            .find(|p| p["name"] == name)
            .map(|p| p["schema"].clone())
            .expect("the parameter")
    }

    fn matches(&self, pattern: &str, text: &str) -> bool {
        let mut regexes = self.regexes.borrow_mut();
        let regex = regexes
            .entry(pattern.to_owned())
            .or_insert_with(|| Regex::new(pattern).expect("a pattern the regex crate reads"));
        regex.is_match(text)
    }

    fn accepts(&self, schema: &Value, value: &Value) -> bool {
        if let Some(target) = schema["$ref"].as_str() {
            let name = target.trim_start_matches("#/components/schemas/");
            return self.accepts(&self.component(name), value);
        }
        let of_type = |t: &str| match (t, value) {
            ("string", Value::String(_)) | ("null", Value::Null) => true,
            ("boolean", Value::Bool(_)) | ("object", Value::Object(_)) => true,
            ("array", Value::Array(_)) | ("number", Value::Number(_)) => true,
            ("integer", Value::Number(n)) => n.as_f64().is_some_and(|f| f.fract() == 0.0),
            _ => false,
        };
        let typed = match &schema["type"] {
            Value::String(t) => of_type(t),
            Value::Array(types) => types.iter().filter_map(Value::as_str).any(of_type),
            _ => true,
        };
        if !typed {
            return false;
        }
        if let Some(values) = schema["enum"].as_array()
            && !values.contains(value)
        {
            return false;
        }
        let every = |key: &str| schema[key].as_array().cloned().unwrap_or_default();
        if !every("allOf").iter().all(|s| self.accepts(s, value)) {
            return false;
        }
        let any = every("anyOf");
        if !any.is_empty() && !any.iter().any(|s| self.accepts(s, value)) {
            return false;
        }
        let one = every("oneOf");
        if !one.is_empty() && one.iter().filter(|s| self.accepts(s, value)).count() != 1 {
            return false;
        }
        match value {
            Value::String(text) => {
                let chars = text.chars().count() as u64;
                schema["pattern"]
                    .as_str()
                    .is_none_or(|p| self.matches(p, text))
                    && schema["maxLength"].as_u64().is_none_or(|m| chars <= m)
                    && schema["minLength"].as_u64().is_none_or(|m| chars >= m)
            }
            Value::Number(n) => {
                let n = n.as_f64().unwrap_or(f64::NAN);
                schema["minimum"].as_f64().is_none_or(|m| n >= m)
                    && schema["maximum"].as_f64().is_none_or(|m| n <= m)
            }
            Value::Object(map) => {
                let properties = schema["properties"].as_object();
                let required = every("required");
                required
                    .iter()
                    .filter_map(Value::as_str)
                    .all(|r| map.contains_key(r))
                    && map
                        .iter()
                        .all(|(key, v)| match properties.and_then(|p| p.get(key)) {
                            Some(s) => self.accepts(s, v),
                            None => schema["additionalProperties"] != Value::Bool(false),
                        })
            }
            _ => true,
        }
    }
}

/// `schema` accepts each value exactly when `decode` does.
fn agree(v: &Validator, schema: &Value, values: &[Value], decode: impl Fn(&Value) -> bool) {
    for value in values {
        assert_eq!(
            v.accepts(schema, value),
            decode(value),
            "{value} (schema accepts, decoder accepts)"
        );
    }
}

fn strings(values: &[&str]) -> Vec<Value> {
    values.iter().map(|s| json!(s)).collect()
}

#[test]
fn ip_addresses_as_the_domain_reads_them() {
    let v = Validator::new();
    let long_label = "a".repeat(63);
    let long_name = format!("{long_label}.{long_label}.{long_label}.{}", "b".repeat(61));
    let cases = strings(&[
        "10.1.2.3",
        "0.0.0.0",
        "255.255.255.255",
        "256.1.1.1",
        "01.2.3.4",
        "1.2.3",
        "1.2.3.4.5",
        "::",
        "::1",
        "fe80::1",
        "2001:db8::8a2e:370:7334",
        "2001:0db8:0000:0000:0000:ff00:0042:8329",
        "::ffff:192.0.2.1",
        "1:2:3:4:5:6:7:8",
        "1:2:3:4:5:6:7:8:9",
        "1::2::3",
        "12345::1",
        "fe80::1%eth0",
        "1:2:3:4:5:6:1.2.3.4",
        "room-1.corp.example",
        "room-1.corp.example.",
        "bjn.vc",
        "localhost",
        "1-2",
        "123.example",
        "-bad.example",
        "bad-.example",
        "x..y",
        "a b",
        "http://x",
        "",
        &long_label,
        &"a".repeat(64),
        &long_name,
        &format!("{long_name}."),
    ]);
    let schema = v.property("EndpointInput", "ipAddress");
    agree(&v, &schema, &cases, |s| {
        Address::from_json("ipAddress", s).is_ok()
    });
    assert!(v.accepts(&schema, &Value::Null));
}

#[test]
fn ports_as_the_domain_reads_them() {
    let v = Validator::new();
    let schema = v.property("EndpointInput", "port");
    let mut cases = vec![
        json!(1),
        json!(65535),
        json!(0),
        json!(65536),
        json!(-1),
        json!(22.0),
        json!(22.5),
        json!(true),
    ];
    cases.extend(strings(&[
        "", "80", "0080", "0", "00", "65535", "65536", " 80", "+80", "8 0", "0x50",
    ]));
    cases.extend((0..=70_000).step_by(7).map(|n| json!(n.to_string())));
    agree(&v, &schema, &cases, |s| Port::from_json("port", s).is_ok());
    assert!(v.accepts(&schema, &Value::Null));
}

#[test]
fn texts_numbers_and_urls_as_the_domain_reads_them() {
    let v = Validator::new();
    let texts = strings(&[
        "",
        " ",
        "a",
        " a ",
        "a\u{7}b",
        "\u{85}",
        "\u{feff}",
        "\u{3000}",
        "\u{a0}x",
        &"x".repeat(1024),
        &"x".repeat(1025),
    ]);
    agree(&v, &v.property("EndpointInput", "location"), &texts, |s| {
        LongText::from_json("location", s).is_ok()
    });
    // `name` is required and cannot be cleared: "" is not a value for it.
    agree(&v, &v.property("EndpointInput", "name"), &texts, |s| {
        ShortText::from_json("name", s).is_ok_and(|t| t.is_some())
    });
    let urls = strings(&[
        "http://x",
        "HTTPS://mesh.example/api",
        "http://",
        "http://a b",
        "http://a\u{3000}b",
        "ftp://x",
        "",
        &format!("http://{}", "é".repeat(2041)),
        &format!("http://{}", "é".repeat(2042)),
    ]);
    agree(
        &v,
        &v.property("EndpointInput", "meshBaseUri"),
        &urls,
        |s| HttpUrl::from_json("meshBaseUri", s).is_ok(),
    );
    let elevations = [
        json!(102.0),
        json!(-500),
        json!(10000),
        json!(10000.5),
        json!("5"),
        json!(""),
        json!("x"),
    ];
    agree(
        &v,
        &v.property("EndpointInput", "elevation"),
        &elevations,
        |s| Elevation::from_json("elevation", s).is_ok(),
    );
}

#[test]
fn csv_uploads_as_the_parser_reads_them() {
    let v = Validator::new();
    let schema = &v.doc["paths"]["/api/endpoints/csv"]["put"]["requestBody"]["content"]["text/csv"]
        ["schema"];
    let cases = strings(&[
        "name",
        "ID, Name ,IpAddress\n",
        "\"name\",\"port\"\r\n\"\",\"x\"\r\n",
        "\" name \",PASSWORD\nrow,\"unclosed\n",
        "\u{feff}name",
        "name\rx",
        "listenerServiceId,customData,zeroTouchType",
        "",
        "colour",
        "name,",
        " \"name\"",
        "\"name",
        "\"name\n",
        "\"name\nid",
        "\"name\" ,id",
        "\"name\"x",
        "name,\"id",
        "name\u{3000}",
        "\u{3000}Name\t",
        "\"\nname\u{a0}\"",
        "\nname",
        "\r\n\r\nname,id",
        "  \nname",
    ]);
    agree(&v, schema, &cases, |s| {
        CsvUpload::parse(s.as_str().unwrap_or("").as_bytes()).is_ok()
    });
    // The one refusal a pattern cannot state (hooks.py lists it as NOT_EXPRESSIBLE).
    assert!(v.accepts(schema, &json!("id,name,ID")));
    let twice = CsvUpload::parse(b"id,name,ID").unwrap_err();
    assert!(
        twice
            .message()
            .starts_with("CSV header: column 'ID' appears twice")
    );
}

#[test]
fn durations_as_token_creation_reads_them() {
    let v = Validator::new();
    let schema = v.query("/api/auth/accesstokens", "post", "duration");
    let mut cases = strings(&[
        "", "59", "60", "060", "60s", "60S", "1m", "90m", "12H", "7d", "2w", "52w", "53w", "365d",
        "366d", "8760h", "8761h", "525600m", "525601m", "31536000", "31536001", "0", "1.5h", " 5m",
        "5m ", "+5m", "-5m", "5y", "m",
    ]);
    for unit in ["", "s", "m", "h", "d", "w"] {
        cases.extend((0..400).map(|n| json!(format!("{n}{unit}"))));
    }
    agree(&v, &schema, &cases, |s| {
        lifetime_ms(s.as_str(), false).is_ok()
    });
}

#[test]
fn cursors_as_the_lists_read_them() {
    let v = Validator::new();
    let cases = strings(&[
        "0",
        "f",
        "7fffffffffffffff",
        "8000000000000000",
        "ffffffffffffffff",
        "0000000000000000",
        "00000000000000000",
        "",
        "A",
        "0x1",
        "-1",
    ]);
    for path in ["/api/endpoints", "/api/auditlog"] {
        agree(&v, &v.query(path, "get", "cursor"), &cases, |s| {
            ListPosition::from_cursor(s.as_str().unwrap_or("")).is_ok()
        });
    }
}

#[test]
fn listener_bodies_are_inbound_or_outbound() {
    let v = Validator::new();
    let schema = v.component("ListenerServiceInput");
    let cases = [
        json!({"name": "HQ", "baseUrl": "http://x"}),
        json!({"name": "HQ", "connection": "inbound", "baseUrl": "http://x"}),
        json!({"name": "HQ", "connection": null, "baseUrl": "http://x", "location": ""}),
        json!({"name": "HQ", "connection": "inbound"}),
        json!({"name": "HQ", "baseUrl": ""}),
        json!({"name": "HQ", "baseUrl": null}),
        json!({"name": "Site", "connection": "outbound"}),
        json!({"name": "Site", "connection": "outbound", "baseUrl": null}),
        json!({"name": "Site", "connection": "outbound", "baseUrl": ""}),
        json!({"name": "Site", "connection": "outbound", "baseUrl": "http://x"}),
        json!({"name": "Site", "connection": "sideways"}),
        json!({"name": "Site", "connection": ""}),
        json!({"connection": "outbound"}),
        json!({"name": "Site", "connection": "outbound", "secret": "s".repeat(16)}),
        json!({"name": "Site", "connection": "outbound", "secret": "short"}),
        json!({"name": "Site", "connection": "outbound", "secret": ""}),
        json!({"name": "Site", "connection": "outbound", "secret": null}),
    ];
    agree(&v, &schema, &cases, |body| {
        decode_listener(body.as_object().expect("an object")).is_ok()
    });
}

#[test]
fn public_keys_are_32_bytes_of_canonical_base64() {
    let v = Validator::new();
    let schema = v.property("EnterpriseUpdate", "publicKey");
    let key = STANDARD.encode([7u8; 32]);
    let mut trailing_bits = key.clone();
    trailing_bits.replace_range(42..43, "d");
    let cases = strings(&[
        &key,
        &STANDARD.encode([0xffu8; 32]),
        &trailing_bits,
        key.trim_end_matches('='),
        &STANDARD.encode([7u8; 31]),
        &STANDARD.encode([7u8; 33]),
        &format!(" {key}"),
        &key.replace('+', "-"),
        "not a key",
    ]);
    // The service's rule (crypto's `parse_public_key` on the untrimmed text): standard padded
    // base64 of exactly 32 bytes.
    agree(&v, &schema, &cases, |s| {
        let text = s.as_str().unwrap_or("");
        text.trim() == text && STANDARD.decode(text).is_ok_and(|b| b.len() == 32)
    });
    assert!(v.accepts(&schema, &json!("")), "\"\" removes the key");
    assert!(v.accepts(&schema, &Value::Null));
}

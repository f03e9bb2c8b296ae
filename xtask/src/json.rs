//! The one JSON reader of xtask (std only): answers of our own services, their JSON log lines
//! and `cargo metadata`.
//!
//! Strict syntax (RFC 8259), escapes decoded, nesting limited so that hostile input is an error
//! rather than a stack overflow. Numbers are checked but not kept: nothing here computes with
//! them.

/// A parsed JSON value.
#[derive(Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number,
    String(String),
    Array(Vec<Value>),
    /// Members in document order; [`Value::get`] takes the first of a repeated key.
    Object(Vec<(String, Value)>),
}

impl Value {
    /// The member `key` of an object; `None` for a missing key or a non-object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }
}

/// Deeper nesting than this is refused (the reader recurses once per level).
const MAX_DEPTH: usize = 128;

/// Parses one JSON document (surrounding whitespace allowed, nothing else).
pub fn parse(text: &str) -> Result<Value, String> {
    let mut reader = Reader::new(text);
    let value = reader.value(0)?;
    reader.end()?;
    Ok(value)
}

/// The string member `key` at the top level of the object `text` (nested members with the same
/// name do not count).
pub fn string_field(text: &str, key: &str) -> Result<String, String> {
    let value = parse(text).map_err(|e| format!("{e}: {}", excerpt(text)))?;
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("no string \"{key}\" in {}", excerpt(text)))
}

/// The number of items of the top-level array `text`, checking its syntax, with only one item
/// in memory at a time (for lists of many megabytes).
pub fn array_len(text: &str) -> Result<usize, String> {
    let mut reader = Reader::new(text);
    reader.expect(b'[')?;
    let mut count = 0;
    if reader.peek() == Some(b']') {
        reader.at += 1;
    } else {
        loop {
            reader.value(1)?;
            count += 1;
            if reader.list_continues(b']')? {
                continue;
            }
            break;
        }
    }
    reader.end()?;
    Ok(count)
}

/// The start of `text`, for error messages about answers that may be long.
fn excerpt(text: &str) -> String {
    const MAX: usize = 300;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_owned(),
    }
}

struct Reader<'a> {
    text: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Reader<'a> {
        Reader {
            text: text.as_bytes(),
            at: 0,
        }
    }

    fn error(&self, what: &str) -> String {
        format!("invalid JSON at byte {}: {what}", self.at)
    }

    /// The next byte that is not whitespace, not consumed.
    fn peek(&mut self) -> Option<u8> {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.text.get(self.at) {
            self.at += 1;
        }
        self.text.get(self.at).copied()
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected '{}'", char::from(byte))))
        }
    }

    /// After an item: `true` on a comma, `false` on `close`.
    fn list_continues(&mut self, close: u8) -> Result<bool, String> {
        match self.peek() {
            Some(b',') => {
                self.at += 1;
                Ok(true)
            }
            Some(b) if b == close => {
                self.at += 1;
                Ok(false)
            }
            _ => Err(self.error(&format!("expected ',' or '{}'", char::from(close)))),
        }
    }

    fn end(&mut self) -> Result<(), String> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.error("text after the value")),
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Value::String),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.word("true", Value::Bool(true)),
            Some(b'f') => self.word("false", Value::Bool(false)),
            Some(b'n') => self.word("null", Value::Null),
            Some(_) => Err(self.error("expected a value")),
            None => Err(self.error("the text ends where a value should be")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, String> {
        self.expect(b'{')?;
        let mut members = Vec::new();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Value::Object(members));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a member name"));
            }
            let key = self.string()?;
            self.expect(b':')?;
            members.push((key, self.value(depth + 1)?));
            if !self.list_continues(b'}')? {
                return Ok(Value::Object(members));
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, String> {
        self.expect(b'[')?;
        let mut items = Vec::new();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            if !self.list_continues(b']')? {
                return Ok(Value::Array(items));
            }
        }
    }

    fn word(&mut self, word: &str, value: Value) -> Result<Value, String> {
        if self.text[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(value)
        } else {
            Err(self.error("expected a value"))
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Result<Value, String> {
        let digits = |r: &mut Reader| {
            let start = r.at;
            while r.text.get(r.at).is_some_and(u8::is_ascii_digit) {
                r.at += 1;
            }
            r.at - start
        };
        if self.text.get(self.at) == Some(&b'-') {
            self.at += 1;
        }
        let leading_zero = self.text.get(self.at) == Some(&b'0');
        match digits(self) {
            0 => return Err(self.error("a number needs digits")),
            n if leading_zero && n > 1 => return Err(self.error("a number has a leading zero")),
            _ => {}
        }
        if self.text.get(self.at) == Some(&b'.') {
            self.at += 1;
            if digits(self) == 0 {
                return Err(self.error("a fraction needs digits"));
            }
        }
        if let Some(b'e' | b'E') = self.text.get(self.at) {
            self.at += 1;
            if let Some(b'+' | b'-') = self.text.get(self.at) {
                self.at += 1;
            }
            if digits(self) == 0 {
                return Err(self.error("an exponent needs digits"));
            }
        }
        Ok(Value::Number)
    }

    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out = String::new();
        loop {
            // Copy the run up to the next quote, backslash or control character at once.
            let start = self.at;
            while let Some(&b) = self.text.get(self.at) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.at += 1;
            }
            // The input is a `str` and the run stops at ASCII bytes, so this cannot fail.
            out.push_str(
                std::str::from_utf8(&self.text[start..self.at])
                    .map_err(|_| self.error("invalid UTF-8"))?,
            );
            match self.text.get(self.at) {
                Some(b'"') => {
                    self.at += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.at += 1;
                    out.push(self.escape()?);
                }
                Some(_) => return Err(self.error("a control character inside a string")),
                None => return Err(self.error("the text ends inside a string")),
            }
        }
    }

    /// The character of the escape after a backslash.
    fn escape(&mut self) -> Result<char, String> {
        let byte = self.text.get(self.at).copied();
        self.at += 1;
        Ok(match byte {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                let first = self.hex4()?;
                let code = if (0xD800..0xDC00).contains(&first) {
                    // A high surrogate: only valid followed by `\u` and a low one.
                    if !self.text[self.at..].starts_with(b"\\u") {
                        return Err(self.error("a lone surrogate"));
                    }
                    self.at += 2;
                    let second = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&second) {
                        return Err(self.error("a lone surrogate"));
                    }
                    0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                } else {
                    first
                };
                char::from_u32(code).ok_or_else(|| self.error("a lone surrogate"))?
            }
            _ => return Err(self.error("an unknown escape")),
        })
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self
            .text
            .get(self.at..self.at + 4)
            .filter(|d| d.iter().all(u8::is_ascii_hexdigit))
            .ok_or_else(|| self.error("\\u needs four hex digits"))?;
        let code = digits
            .iter()
            .fold(0, |n, d| n * 16 + char::from(*d).to_digit(16).unwrap_or(0));
        self.at += 4;
        Ok(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_top_level_strings_only() {
        let json = r#"{"nested": {"id": "inner"}, "list": [1, {"id": "x"}, "a\"b"],
                       "n": -1.5e3, "ok": true, "none": null, "id": "outer\u0041"}"#;
        assert_eq!(string_field(json, "id").as_deref(), Ok("outerA"));
        assert!(string_field(json, "n").is_err(), "not a string");
        assert!(string_field(json, "missing").is_err());
        assert!(string_field("[]", "id").is_err());
        assert!(string_field("{}", "id").is_err());
    }

    #[test]
    fn a_nested_member_of_the_same_name_is_not_taken() {
        // The nested "id" comes first in the text: a text search would find it.
        let json = r#"{"owner": {"id": "nested"}, "id": "top"}"#;
        assert_eq!(string_field(json, "id").as_deref(), Ok("top"));
        assert!(string_field(r#"{"owner": {"id": "nested"}}"#, "id").is_err());
    }

    #[test]
    fn decodes_escapes() {
        let json = r#"{"k": "q\" b\\ s\/ \b\f\n\r\t \u00e9 \ud83d\ude00 \"id\": \"no\""}"#;
        assert_eq!(
            string_field(json, "k").as_deref(),
            Ok("q\" b\\ s/ \u{8}\u{c}\n\r\t é 😀 \"id\": \"no\"")
        );
        // An escaped key is the same key.
        assert_eq!(
            string_field(r#"{"\u0069d": "x"}"#, "id").as_deref(),
            Ok("x")
        );
        // Raw non-ASCII text passes through.
        assert_eq!(
            string_field(r#"{"k": "Zürich ✓"}"#, "k").as_deref(),
            Ok("Zürich ✓")
        );
    }

    #[test]
    fn refuses_bad_escapes_and_strings() {
        for bad in [
            r#"{"k": "\x"}"#,
            r#"{"k": "\u12"}"#,
            r#"{"k": "\ud83d"}"#,
            r#"{"k": "\ud83d\u0041"}"#,
            r#"{"k": "\ude00"}"#,
            "{\"k\": \"tab\there\"}",
            r#"{"k": "open"#,
            r#"{"k": "\"#,
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn parses_every_kind_of_value() {
        let value = parse(r#" {"a": [true, false, null, 0, -1.25e+3, "s", {}, []]} "#).unwrap();
        assert_eq!(
            value.get("a").and_then(Value::as_array),
            Some(
                &[
                    Value::Bool(true),
                    Value::Bool(false),
                    Value::Null,
                    Value::Number,
                    Value::Number,
                    Value::String("s".into()),
                    Value::Object(Vec::new()),
                    Value::Array(Vec::new()),
                ][..]
            )
        );
        assert_eq!(value.get("missing"), None);
        assert_eq!(Value::Null.get("a"), None);
    }

    #[test]
    fn refuses_malformed_documents() {
        for bad in [
            "",
            "   ",
            "{",
            "{\"a\" 1}",
            "{\"a\": 1,}",
            "[1,]",
            "[1 2]",
            "{a: 1}",
            "01",
            "1.",
            "-",
            "1e",
            "tru",
            "nul",
            "{} {}",
            "[]x",
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let deep = "[".repeat(100_000);
        assert!(parse(&deep).unwrap_err().contains("nested too deeply"));
        let fine = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&fine).is_ok());
    }

    #[test]
    fn counts_a_top_level_array() {
        assert_eq!(array_len("[]"), Ok(0));
        assert_eq!(
            array_len(r#" [{"id": "a", "x": [1, 2]}, {"id": "b"}, "c"] "#),
            Ok(3)
        );
        assert!(array_len("{}").is_err());
        assert!(
            array_len(r#"[{"id": "a"}, {"id": "b""#).is_err(),
            "truncated"
        );
        assert!(array_len("[1] 2").is_err());
    }

    #[test]
    fn long_answers_are_shortened_in_errors() {
        let long = format!("{{\"pad\": \"{}\"}}", "x".repeat(10_000));
        let error = string_field(&long, "id").unwrap_err();
        assert!(error.len() < 400 && error.ends_with("..."), "{error}");
    }
}

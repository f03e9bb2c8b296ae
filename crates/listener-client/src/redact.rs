//! Scrubbing of text a listener sends back (messages, causes, remote requests and responses)
//! before it reaches an error, a client or a log. Listeners are asked to write `[redacted]`
//! themselves; this is the second line of defence for those that forget.

pub const REDACTED: &str = "[redacted]";

/// Header-like names whose whole value is a credential (`Name: value` up to the line end).
const HEADERS: &[&str] = &[
    "proxy-authorization",
    "authorization",
    "set-cookie",
    "cookie",
    "x-api-key",
    "x-auth-token",
];

/// Parameter names whose value is a credential: `name=v`, `name: v`, `"name": "v"`,
/// `<Name>v</Name>`. Matched inside longer names too (`adminPassword=`): over-redacting
/// a log line costs nothing, under-redacting leaks a password.
const PARAMS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "pwd",
    "secret",
    "access_token",
    "token",
    "api_key",
    "apikey",
];

/// At most this many characters of any one listener-provided text are kept.
pub const MAX_TEXT_CHARS: usize = 4000;

/// Scrubs `text`: credential-like values, then any of `known` (the endpoint password and the
/// listener secret, should a listener echo them verbatim), then trims it to a sane length.
pub fn scrub(text: &str, known: &[&str]) -> String {
    let mut out = redact(text);
    for secret in known.iter().filter(|s| s.chars().count() >= 4) {
        if out.contains(secret) {
            out = out.replace(secret, REDACTED);
        }
    }
    shorten(&out, MAX_TEXT_CHARS)
}

/// Keeps at most `max` characters, marking a cut with `…`.
pub fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

/// Replaces credential-like values with `[redacted]`.
pub fn redact(text: &str) -> String {
    // ASCII lower-casing keeps byte offsets, and every delimiter below is ASCII, so the spans
    // found in `lower` cut `text` on character boundaries.
    let lower = text.to_ascii_lowercase();
    let mut spans = Vec::new();
    for name in HEADERS {
        let pattern = format!("{name}:");
        for (at, _) in lower.match_indices(&pattern) {
            spans.extend(header_value(
                &lower,
                at + pattern.len(),
                name.ends_with("authorization"),
            ));
        }
    }
    for name in PARAMS {
        for (at, _) in lower.match_indices(name) {
            spans.extend(param_value(&lower, at, name.len()));
        }
    }
    replace_spans(text, spans)
}

fn skip_blanks(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
        i += 1;
    }
    i
}

fn find_from(bytes: &[u8], from: usize, stop: impl Fn(u8) -> bool) -> usize {
    bytes[from..]
        .iter()
        .position(|b| stop(*b))
        .map_or(bytes.len(), |p| from + p)
}

/// The value of a header after `Name:` up to the end of the line; an authorization scheme
/// (`Basic`, `Bearer`, ...) is kept so the text stays useful.
fn header_value(lower: &str, after_colon: usize, has_scheme: bool) -> Option<(usize, usize)> {
    let bytes = lower.as_bytes();
    let mut start = skip_blanks(bytes, after_colon);
    let end = find_from(bytes, start, |b| b == b'\n' || b == b'\r');
    if has_scheme {
        let word_end = find_from(bytes, start, |b| !b.is_ascii_alphabetic());
        if word_end > start && word_end < end && bytes[word_end] == b' ' {
            let rest = skip_blanks(bytes, word_end);
            if rest < end {
                start = rest;
            }
        }
    }
    (start < end).then_some((start, end))
}

/// The value of a parameter whose name starts at `at`.
fn param_value(lower: &str, at: usize, len: usize) -> Option<(usize, usize)> {
    let bytes = lower.as_bytes();
    if at > 0 && bytes[at - 1] == b'/' {
        return None; // a closing XML tag: what follows is not its value
    }
    let mut i = at + len;
    if i < bytes.len() && (bytes[i] == b'"' || bytes[i] == b'\'') {
        i += 1;
    }
    i = skip_blanks(bytes, i);
    let separator = *bytes.get(i)?;
    let (start, end) = match separator {
        b'=' | b':' => {
            let j = skip_blanks(bytes, i + 1);
            match bytes.get(j) {
                Some(&quote @ (b'"' | b'\'')) => {
                    let mut k = j + 1;
                    while k < bytes.len() && !(bytes[k] == quote && bytes[k - 1] != b'\\') {
                        k += 1;
                    }
                    (j + 1, k)
                }
                _ => (
                    j,
                    find_from(bytes, j, |b| {
                        b.is_ascii_whitespace()
                            || matches!(
                                b,
                                b'&' | b';' | b',' | b'"' | b'\'' | b'<' | b'>' | b'}' | b')'
                            )
                    }),
                ),
            }
        }
        b'>' => (i + 1, find_from(bytes, i + 1, |b| b == b'<' || b == b'\n')),
        _ => return None,
    };
    (start < end).then_some((start, end))
}

/// Replaces the (possibly overlapping) byte spans of `text` with `[redacted]`.
fn replace_spans(text: &str, mut spans: Vec<(usize, usize)>) -> String {
    if spans.is_empty() {
        return text.to_owned();
    }
    spans.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for (start, end) in spans {
        if end <= copied {
            continue;
        }
        let start = start.max(copied);
        out.push_str(&text[copied..start]);
        out.push_str(REDACTED);
        copied = end;
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorization_values_are_redacted_but_schemes_kept() {
        let r = redact("POST /putxml HTTP/1.1\nAuthorization: Basic YWRtaW46aHVudGVyMg==\nHost: x");
        assert_eq!(
            r,
            "POST /putxml HTTP/1.1\nAuthorization: Basic [redacted]\nHost: x"
        );
        assert_eq!(
            redact("authorization:Bearer abc def"),
            "authorization:Bearer [redacted]"
        );
        assert_eq!(redact("Authorization: abc"), "Authorization: [redacted]");
        assert_eq!(
            redact("Cookie: session=abc; other=1\r\nX"),
            "Cookie: [redacted]\r\nX"
        );
        let already = "Authorization: Basic [redacted]";
        assert_eq!(redact(already), already);
    }

    #[test]
    fn password_parameters_in_any_shape_are_redacted() {
        assert_eq!(
            redact("GET /login?user=admin&password=hunter2&x=1"),
            "GET /login?user=admin&password=[redacted]&x=1"
        );
        assert_eq!(
            redact("adminPassword = hunter2 next"),
            "adminPassword = [redacted] next"
        );
        assert_eq!(
            redact(r#"{"username":"a","password": "hun\"ter2"}"#),
            r#"{"username":"a","password": "[redacted]"}"#
        );
        assert_eq!(
            redact("<Login><Password>hunter2</Password></Login>"),
            "<Login><Password>[redacted]</Password></Login>"
        );
        assert_eq!(
            redact("token=abc&secret=xyz"),
            "token=[redacted]&secret=[redacted]"
        );
        assert_eq!(redact("password="), "password=");
    }

    #[test]
    fn ordinary_text_is_untouched_including_non_ascii() {
        for text in [
            "HTTP/1.1 401 Unauthorized",
            "connect to 127.77.0.1:22 failed: No route to host",
            "Salle de réunion « Boardroom » – ümlaut ✓",
            "the passwords differ",
            "",
        ] {
            assert_eq!(redact(text), text);
        }
        assert_eq!(
            redact("mot de passe é password=é✓ fin"),
            "mot de passe é password=[redacted] fin"
        );
    }

    #[test]
    fn scrub_removes_known_secrets_and_bounds_length() {
        let s = scrub(
            "echo of s3cr3t-value and hunter2",
            &["s3cr3t-value", "hunter2", "ab"],
        );
        assert_eq!(s, "echo of [redacted] and [redacted]");
        assert_eq!(
            scrub("a b ab", &["ab"]),
            "a b ab",
            "too short to scrub safely"
        );
        let long = "x".repeat(MAX_TEXT_CHARS + 10);
        assert_eq!(scrub(&long, &[]).chars().count(), MAX_TEXT_CHARS + 1);
    }
}

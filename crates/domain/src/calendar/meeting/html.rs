//! Description text: HTML bodies reduced to their words and links, spaces normalized.

/// Line breaks as `\n`; no-break and thin spaces as spaces; zero-width characters removed.
pub(super) fn normalize(text: &str) -> String {
    text.replace("\r\n", "\n")
        .chars()
        .filter_map(|c| match c {
            '\r' => Some('\n'),
            '\u{a0}' | '\u{2007}' | '\u{2009}' | '\u{202f}' => Some(' '),
            '\u{200b}' | '\u{feff}' => None,
            c => Some(c),
        })
        .collect()
}

const BREAKS: &[&str] = &[
    "br",
    "p",
    "div",
    "tr",
    "li",
    "ul",
    "ol",
    "table",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "blockquote",
    "pre",
    "section",
    "header",
    "footer",
    "dt",
    "dd",
];
const DROPPED: &[&str] = &["style", "script", "head"];

/// The text of an HTML description: tags removed (`<br>` and block tags become line breaks,
/// table cells spaces), `<style>`, `<script>` and `<head>` dropped with their content, comments
/// dropped, the `href` of an `http(s):` or `sip(s):` link kept as text before the link's words,
/// then entities decoded (`&amp;`, `&nbsp;`, `&#58;`, `&#x3a;`, …; unknown ones stay as
/// written). Only well-formed tags count: `a < b` and `<https://…>` are text.
pub(super) fn strip_html(html: &str) -> String {
    let low = html.to_ascii_lowercase();
    let last_gt = low.rfind('>');
    let mut out = String::with_capacity(html.len());
    let (mut i, mut copied) = (0, 0);
    while let Some(lt) = low[i..].find('<').map(|k| i + k) {
        if last_gt.is_none_or(|gt| gt < lt) {
            break; // no tag can close any more
        }
        i = lt + 1;
        if let Some((end, insert)) = tag(html, &low, lt) {
            out.push_str(&html[copied..lt]);
            out.push_str(&insert);
            (copied, i) = (end, end);
        }
    }
    out.push_str(&html[copied..]);
    normalize(&decode_entities(&out))
}

/// The tag at `lt` (a `>` follows somewhere): where it ends and the text that replaces it.
fn tag(html: &str, low: &str, lt: usize) -> Option<(usize, String)> {
    let b = low.as_bytes();
    let gt = |from: usize| low[from..].find('>').map_or(low.len(), |k| from + k);
    if low[lt..].starts_with("<!--") {
        let end = low[lt + 4..]
            .find("-->")
            .map_or(low.len(), |k| lt + 4 + k + 3);
        return Some((end, String::new()));
    }
    if matches!(b.get(lt + 1), Some(b'!' | b'?')) {
        return Some(((gt(lt) + 1).min(low.len()), String::new()));
    }
    let closing = b.get(lt + 1) == Some(&b'/');
    let name_start = lt + 1 + usize::from(closing);
    let name_len = b[name_start..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b':' | b'-'))
        .count();
    let name = &low[name_start..name_start + name_len];
    let after = b.get(name_start + name_len);
    // `o:p` is a tag; `<https://…>` and `<sip:1@x>` are text.
    if !name.starts_with(|c: char| c.is_ascii_alphabetic())
        || name.ends_with(':')
        || !after.is_some_and(|c| c.is_ascii_whitespace() || matches!(c, b'/' | b'>'))
    {
        return None; // text
    }
    let close = gt(name_start);
    let end = (close + 1).min(low.len());
    if !closing && DROPPED.contains(&name) {
        let end = low[close..]
            .find(&format!("</{name}"))
            .map_or(low.len(), |k| (gt(close + k) + 1).min(low.len()));
        return Some((end, String::new()));
    }
    let insert = if BREAKS.contains(&name) {
        "\n".to_owned()
    } else if matches!(name, "td" | "th") {
        " ".to_owned()
    } else if name == "a" && !closing {
        href(html, low, name_start + name_len, close).map_or_else(String::new, |h| format!(" {h} "))
    } else {
        String::new()
    };
    Some((end, insert))
}

/// The `href` of a tag's attributes `from..to`, when it is an `http(s):` or `sip(s):` link.
fn href<'a>(html: &'a str, low: &str, from: usize, to: usize) -> Option<&'a str> {
    let attrs = &low.as_bytes()[from..to];
    let mut k = 0;
    while let Some(found) = low[from + k..to].find("href").map(|f| k + f) {
        k = found + 4;
        if found == 0 || !attrs[found - 1].is_ascii_whitespace() {
            continue;
        }
        let mut m = k;
        while attrs.get(m).is_some_and(u8::is_ascii_whitespace) {
            m += 1;
        }
        if attrs.get(m) != Some(&b'=') {
            continue;
        }
        m += 1;
        while attrs.get(m).is_some_and(u8::is_ascii_whitespace) {
            m += 1;
        }
        let (start, stop): (usize, &[u8]) = match attrs.get(m) {
            Some(b'"') => (m + 1, b"\""),
            Some(b'\'') => (m + 1, b"'"),
            _ => (m, b" \t\n\x0c"),
        };
        let len = attrs[start..]
            .iter()
            .take_while(|c| !stop.contains(c))
            .count();
        let value = &html[from + start..from + start + len];
        let lower = &low[from + start..from + start + len];
        let linked = ["http://", "https://", "sip:", "sips:"]
            .iter()
            .any(|s| lower.starts_with(s));
        return linked.then_some(value);
    }
    None
}

fn decode_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        match entity(&rest.as_bytes()[amp + 1..]) {
            Some((c, len)) => {
                out.push(c);
                rest = &rest[amp + 1 + len..];
            }
            None => {
                out.push('&');
                rest = &rest[amp + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The character of the entity `b` starts with (after the `&`) and its length with the `;`.
fn entity(b: &[u8]) -> Option<(char, usize)> {
    let semi = b.iter().take(12).position(|c| *c == b';')?;
    let name = std::str::from_utf8(&b[..semi]).ok()?;
    let c = match name.strip_prefix('#') {
        Some(number) => {
            let (digits, radix) = match number.strip_prefix(['x', 'X']) {
                Some(hex) => (hex, 16),
                None => (number, 10),
            };
            if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
                return None;
            }
            char::from_u32(u32::from_str_radix(digits, radix).ok()?)?
        }
        None => match name.to_ascii_lowercase().as_str() {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            "nbsp" | "ensp" | "emsp" | "thinsp" => ' ',
            _ => return None,
        },
    };
    Some((c, semi + 1))
}

//! iCalendar's content lines (RFC 5545 §3.1): folding, properties with their parameters,
//! TEXT escapes, and the components they make.

/// Components nested deeper than this are skipped whole (no VEVENT is).
const MAX_DEPTH: usize = 8;

/// A component (`BEGIN:NAME` … `END:NAME`) with its properties and the components in it.
#[derive(Default)]
pub(crate) struct Component {
    pub name: String,
    pub properties: Vec<Property>,
    pub children: Vec<Component>,
}

impl Component {
    pub(crate) fn property(&self, name: &str) -> Option<&Property> {
        self.properties.iter().find(|p| p.name == name)
    }
}

/// The components of a text; an END closes the innermost open component of its name (those
/// opened inside it and never closed are dropped), and a component never closed is dropped.
pub(crate) fn components(text: &str) -> Vec<Component> {
    let mut stack = vec![Component::default()];
    let mut skipped = 0usize;
    for line in unfold(text) {
        let Some(p) = Property::parse(&line) else {
            continue;
        };
        let name = p.value.trim().to_ascii_uppercase();
        match p.name.as_str() {
            "BEGIN" if skipped > 0 || stack.len() > MAX_DEPTH => skipped += 1,
            "END" if skipped > 0 => skipped -= 1,
            _ if skipped > 0 => {}
            "BEGIN" => stack.push(Component {
                name,
                ..Component::default()
            }),
            "END" => {
                if let Some(depth) = stack
                    .iter()
                    .rposition(|c| c.name == name && !name.is_empty())
                {
                    stack.truncate(depth + 1);
                    if let Some(done) = stack.pop()
                        && let Some(parent) = stack.last_mut()
                    {
                        parent.children.push(done);
                    }
                }
            }
            _ => {
                if let Some(c) = stack.last_mut() {
                    c.properties.push(p);
                }
            }
        }
    }
    stack.truncate(1);
    stack.pop().map(|root| root.children).unwrap_or_default()
}

/// Content lines with folding undone (a line starting with a space or tab continues the last).
fn unfold(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for raw in text.split('\n') {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        match (raw.strip_prefix([' ', '\t']), lines.last_mut()) {
            (Some(rest), Some(last)) => last.push_str(rest),
            _ if raw.is_empty() => {}
            _ => lines.push(raw.to_owned()),
        }
    }
    lines
}

pub(crate) struct Property {
    pub name: String,
    /// Parameter names upper-cased, values without their quotes.
    pub params: Vec<(String, String)>,
    pub value: String,
}

impl Property {
    /// `NAME;PARAM=value;PARAM="quoted:value":value`; `None` for a line that is not one.
    pub(crate) fn parse(line: &str) -> Option<Property> {
        let mut in_quotes = false;
        let mut value_at = None;
        for (i, c) in line.char_indices() {
            match c {
                '"' => in_quotes = !in_quotes,
                ':' if !in_quotes => {
                    value_at = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let value_at = value_at?;
        let (head, value) = (&line[..value_at], &line[value_at + 1..]);
        let mut parts = split_unquoted(head, ';').into_iter();
        let name = parts.next()?.trim().to_ascii_uppercase();
        if name.is_empty() {
            return None;
        }
        let params = parts
            .filter_map(|p| {
                let (k, v) = p.split_once('=')?;
                Some((
                    k.trim().to_ascii_uppercase(),
                    v.trim_matches('"').to_owned(),
                ))
            })
            .collect();
        Some(Property {
            name,
            params,
            value: value.to_owned(),
        })
    }

    pub(crate) fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn split_unquoted(text: &str, separator: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut in_quotes) = (0, false);
    for (i, c) in text.char_indices() {
        if c == '"' {
            in_quotes = !in_quotes;
        } else if c == separator && !in_quotes {
            parts.push(&text[start..i]);
            start = i + c.len_utf8();
        }
    }
    parts.push(&text[start..]);
    parts
}

/// A TEXT value with its escapes (`\n`, `\,`, `\;`, `\\`) undone.
pub(crate) fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n' | 'N') => out.push('\n'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

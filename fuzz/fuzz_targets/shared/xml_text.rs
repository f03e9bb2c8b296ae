//! Text written into XML so that the listener's reader (`roomlink_listener::xml`) reads it
//! back as it was (shared by `cisco_xml` and `ews_soap`).

/// `text` escaped for element content, or for a double-quoted attribute value (where tabs and
/// line ends are character references, so that attribute-value normalization keeps them). A
/// CR is always a reference: XML reads a literal one as a line end.
pub fn escape(text: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\'' if attribute => out.push_str("&apos;"),
            '\r' => out.push_str("&#13;"),
            '\t' | '\n' if attribute => out.push_str(&format!("&#{};", c as u32)),
            c => out.push(c),
        }
    }
    out
}

//! A small XML element tree: what the emulated Cisco codec reads from `putxml` bodies and writes
//! in its answers. Text and attribute values are escaped on output and unescaped on input.

use quick_xml::escape::{escape, resolve_predefined_entity};
use quick_xml::events::{BytesStart, Event};
use quick_xml::{Reader, XmlVersion};

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Element {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Element>,
    /// The element's text (concatenated, trimmed); empty for elements with children.
    pub text: String,
}

impl Element {
    pub fn new(name: &str) -> Element {
        Element {
            name: name.to_owned(),
            ..Element::default()
        }
    }

    /// `<name>text</name>`.
    pub fn leaf(name: &str, text: impl Into<String>) -> Element {
        Element {
            name: name.to_owned(),
            text: text.into(),
            ..Element::default()
        }
    }

    pub fn attr(mut self, name: &str, value: impl Into<String>) -> Element {
        self.attrs.push((name.to_owned(), value.into()));
        self
    }

    pub fn child(mut self, child: Element) -> Element {
        self.children.push(child);
        self
    }

    pub fn get_attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Parses a document with one root element (declaration, comments and whitespace allowed).
    pub fn parse(xml: &str) -> Result<Element, String> {
        // Text is trimmed per element when it closes, not per event: an entity splits it.
        let mut reader = Reader::from_str(xml);
        // Open elements, innermost last.
        let mut open: Vec<Element> = Vec::new();
        let mut root: Option<Element> = None;
        loop {
            let event = reader
                .read_event()
                .map_err(|e| format!("at byte {}: {e}", reader.buffer_position()))?;
            match event {
                Event::Start(start) => open.push(start_element(&start)?),
                Event::Empty(start) => close(start_element(&start)?, &mut open, &mut root)?,
                Event::End(_) => {
                    let done = open.pop().ok_or("closing tag without an opening one")?;
                    close(done, &mut open, &mut root)?;
                }
                Event::Text(text) => append_text(&mut open, &text.xml10_content())?,
                Event::CData(data) => {
                    let data = data.xml10_content().into_owned();
                    append_text(&mut open, &data)?;
                }
                Event::GeneralRef(reference) => {
                    let resolved = match reference.resolve_char_ref() {
                        Ok(Some(c)) => c.to_string(),
                        Ok(None) => resolve_predefined_entity(&reference)
                            .ok_or_else(|| format!("unknown entity &{};", &*reference))?
                            .to_owned(),
                        Err(e) => return Err(e.to_string()),
                    };
                    append_text(&mut open, &resolved)?;
                }
                Event::Eof => break,
                Event::Decl(_) | Event::Comment(_) | Event::PI(_) | Event::DocType(_) => {}
            }
        }
        if !open.is_empty() {
            return Err(format!("unclosed element <{}>", open[open.len() - 1].name));
        }
        root.ok_or_else(|| "no element".to_owned())
    }

    /// The element as XML text, without declaration.
    pub fn to_xml(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        out.push('<');
        out.push_str(&self.name);
        for (k, v) in &self.attrs {
            out.push_str(&format!(" {k}=\"{}\"", escape(v.as_str())));
        }
        if self.children.is_empty() && self.text.is_empty() {
            out.push_str("/>");
            return;
        }
        out.push('>');
        out.push_str(&escape(self.text.as_str()));
        for child in &self.children {
            child.write(out);
        }
        out.push_str(&format!("</{}>", self.name));
    }
}

fn start_element(start: &BytesStart<'_>) -> Result<Element, String> {
    let name = start.name().as_ref().to_owned();
    let mut element = Element::new(&name);
    for attr in start.attributes() {
        let attr = attr.map_err(|e| e.to_string())?;
        let key = attr.key.as_ref().to_owned();
        let value = attr
            .normalized_value(XmlVersion::Implicit1_0)
            .map_err(|e| e.to_string())?;
        element.attrs.push((key, value.into_owned()));
    }
    Ok(element)
}

fn close(
    mut done: Element,
    open: &mut [Element],
    root: &mut Option<Element>,
) -> Result<(), String> {
    let trimmed = done.text.trim();
    if trimmed.len() != done.text.len() {
        done.text = trimmed.to_owned();
    }
    match open.last_mut() {
        Some(parent) => parent.children.push(done),
        None if root.is_none() => *root = Some(done),
        None => return Err("more than one root element".into()),
    }
    Ok(())
}

fn append_text(open: &mut [Element], text: &str) -> Result<(), String> {
    match open.last_mut() {
        Some(element) => {
            element.text.push_str(text);
            Ok(())
        }
        None if text.trim().is_empty() => Ok(()),
        None => Err("text outside the root element".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_elements_attributes_and_entities() {
        let doc = Element::parse(
            "<?xml version=\"1.0\"?>\n<Command>\n  <Dial command=\"True\"><Number>a&amp;b&#x40;c</Number><Protocol>Sip</Protocol></Dial>\n</Command>",
        )
        .expect("parses");
        assert_eq!(doc.name, "Command");
        let dial = &doc.children[0];
        assert_eq!(dial.get_attr("command"), Some("True"));
        assert_eq!(dial.children[0].text, "a&b@c");
        assert_eq!(dial.children[1].text, "Sip");
    }

    #[test]
    fn writes_escaped_text_and_empty_elements() {
        let e = Element::new("Command")
            .child(Element::new("CallDisconnectResult").attr("status", "OK"))
            .child(Element::leaf("Reason", "<a & b>"));
        assert_eq!(
            e.to_xml(),
            "<Command><CallDisconnectResult status=\"OK\"/><Reason>&lt;a &amp; b&gt;</Reason></Command>"
        );
        assert_eq!(Element::parse(&e.to_xml()).expect("round trip"), e);
    }

    #[test]
    fn refuses_broken_documents() {
        for bad in ["", "<a>", "<a></b>", "<a/><b/>", "text", "<a>&bogus;</a>"] {
            assert!(Element::parse(bad).is_err(), "{bad:?} should not parse");
        }
    }
}

//! The listener's XML reader: a small element tree with namespaces resolved, for the Cisco
//! codecs' XML API answers (`drivers::cisco_http`) and Exchange's SOAP answers
//! (`calendar::soap`).
//!
//! Elements and attributes are known by local name (and an element by its namespace, empty for
//! none), so whatever prefixes a server chooses read the same. Text is trimmed; CDATA and
//! character or predefined entity references are resolved.

use quick_xml::NsReader;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;

/// An element: its namespace, local name, attributes (by local name, namespace declarations
/// left out), children and text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Element {
    pub ns: String,
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Element>,
    pub text: String,
}

impl Element {
    pub fn is(&self, ns: &str, name: &str) -> bool {
        self.ns == ns && self.name == name
    }

    /// The attribute `name` (case-insensitive).
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The first child `name` in namespace `ns`.
    pub fn child(&self, ns: &str, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.is(ns, name))
    }

    /// Every child `name` in namespace `ns`.
    pub fn children_named(&self, ns: &str, name: &str) -> Vec<&Element> {
        self.children.iter().filter(|c| c.is(ns, name)).collect()
    }

    /// The first child `name` (case-insensitive, any namespace): for documents without
    /// namespaces, such as the Cisco XML API's.
    pub fn child_named(&self, name: &str) -> Option<&Element> {
        self.children
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// The elements at the end of `path` (local names, case-insensitive) below this one.
    pub fn find_all<'a>(&'a self, path: &[&str]) -> Vec<&'a Element> {
        let Some((first, rest)) = path.split_first() else {
            return vec![self];
        };
        self.children
            .iter()
            .filter(|c| c.name.eq_ignore_ascii_case(first))
            .flat_map(|c| c.find_all(rest))
            .collect()
    }

    /// The text at the end of `path`, when there is one such element.
    pub fn text_at(&self, path: &[&str]) -> Option<&str> {
        self.find_all(path).first().map(|n| n.text.as_str())
    }
}

/// Parses one XML document into its root element, namespaces resolved.
pub fn parse(xml: &str) -> Result<Element, String> {
    let mut reader = NsReader::from_str(xml);
    let mut open: Vec<Element> = Vec::new();
    let mut root = None;
    loop {
        let (resolved, event) = reader.read_resolved_event().map_err(|e| e.to_string())?;
        match event {
            Event::Start(start) => open.push(element(&resolved, &start)?),
            Event::Empty(start) => finish(element(&resolved, &start)?, &mut open, &mut root)?,
            Event::End(_) => {
                let done = open.pop().ok_or("unbalanced closing tag")?;
                finish(done, &mut open, &mut root)?;
            }
            Event::Text(text) => push_text(&mut open, &text.xml10_content()),
            Event::CData(data) => push_text(&mut open, &data.xml10_content()),
            Event::GeneralRef(reference) => {
                let text = match reference.resolve_char_ref().map_err(|e| e.to_string())? {
                    Some(c) => c.to_string(),
                    None => resolve_predefined_entity(&reference)
                        .ok_or("unknown entity")?
                        .to_owned(),
                };
                push_text(&mut open, &text);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !open.is_empty() {
        return Err("unclosed element".into());
    }
    root.ok_or_else(|| "no element".into())
}

fn element(resolved: &ResolveResult<'_>, start: &BytesStart<'_>) -> Result<Element, String> {
    let ns = match resolved {
        ResolveResult::Bound(ns) => ns.as_ref().to_owned(),
        ResolveResult::Unbound => String::new(),
        ResolveResult::Unknown(prefix) => {
            return Err(format!("undeclared namespace prefix {}", prefix));
        }
    };
    let mut element = Element {
        ns,
        name: start.local_name().as_ref().to_owned(),
        ..Element::default()
    };
    for attr in start.attributes() {
        let attr = attr.map_err(|e| e.to_string())?;
        if attr.key.as_ref().starts_with("xmlns") {
            continue;
        }
        let value = attr
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|e| e.to_string())?;
        let name = attr.key.local_name().as_ref().to_owned();
        element.attrs.push((name, value.into_owned()));
    }
    Ok(element)
}

fn push_text(open: &mut [Element], text: &str) {
    if let Some(element) = open.last_mut() {
        element.text.push_str(text);
    }
}

fn finish(
    mut done: Element,
    open: &mut [Element],
    root: &mut Option<Element>,
) -> Result<(), String> {
    done.text = done.text.trim().to_owned();
    match open.last_mut() {
        Some(parent) => parent.children.push(done),
        None if root.is_none() => *root = Some(done),
        None => return Err("more than one root element".into()),
    }
    Ok(())
}

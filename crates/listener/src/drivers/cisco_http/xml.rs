//! Reading the codec's XML answers: a small element tree, and what the driver looks for in it
//! (`<Command><XxxResult status=…>`, `<Status>…`, `<Fault>`).

use quick_xml::Reader;
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesStart, Event};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    pub attrs: Vec<(String, String)>,
    pub children: Vec<Node>,
    pub text: String,
}

impl Node {
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn child(&self, name: &str) -> Option<&Node> {
        self.children
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// The nodes at the end of `path` (element names, case-insensitive) below this one.
    pub fn find_all<'a>(&'a self, path: &[&str]) -> Vec<&'a Node> {
        let Some((first, rest)) = path.split_first() else {
            return vec![self];
        };
        self.children
            .iter()
            .filter(|c| c.name.eq_ignore_ascii_case(first))
            .flat_map(|c| c.find_all(rest))
            .collect()
    }

    /// The text at the end of `path`, when there is one such node.
    pub fn text_at(&self, path: &[&str]) -> Option<&str> {
        self.find_all(path).first().map(|n| n.text.as_str())
    }
}

/// Parses one XML document into its root node.
pub fn parse(xml: &str) -> Result<Node, String> {
    let mut reader = Reader::from_str(xml);
    let mut open: Vec<Node> = Vec::new();
    let mut root = None;
    loop {
        match reader.read_event().map_err(|e| e.to_string())? {
            Event::Start(start) => open.push(node(&start)?),
            Event::Empty(start) => finish(node(&start)?, &mut open, &mut root)?,
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

fn node(start: &BytesStart<'_>) -> Result<Node, String> {
    let mut node = Node {
        name: start.name().as_ref().to_owned(),
        ..Node::default()
    };
    for attr in start.attributes() {
        let attr = attr.map_err(|e| e.to_string())?;
        let value = attr
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|e| e.to_string())?;
        node.attrs
            .push((attr.key.as_ref().to_owned(), value.into_owned()));
    }
    Ok(node)
}

fn push_text(open: &mut [Node], text: &str) {
    if let Some(node) = open.last_mut() {
        node.text.push_str(text);
    }
}

fn finish(mut done: Node, open: &mut [Node], root: &mut Option<Node>) -> Result<(), String> {
    done.text = done.text.trim().to_owned();
    match open.last_mut() {
        Some(parent) => parent.children.push(done),
        None if root.is_none() => *root = Some(done),
        None => return Err("more than one root element".into()),
    }
    Ok(())
}

/// A `putxml` answer: the first `*Result` under `<Command>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandResult {
    pub name: String,
    pub status: String,
    pub reason: Option<String>,
    pub node: Node,
}

impl CommandResult {
    pub fn ok(&self) -> bool {
        self.status.eq_ignore_ascii_case("OK")
    }

    /// An error that says the user's role or the firmware lacks the command.
    pub fn not_permitted(&self) -> bool {
        let reason = self.reason.as_deref().unwrap_or("").to_ascii_lowercase();
        [
            "permission",
            "access denied",
            "not allowed",
            "unknown command",
        ]
        .iter()
        .any(|w| reason.contains(w))
    }
}

/// Reads `<Command><XxxResult status="…">…` (`None`: not a command answer).
pub fn command_result(root: &Node) -> Option<CommandResult> {
    if !root.name.eq_ignore_ascii_case("Command") {
        return None;
    }
    let result = root.children.iter().find(|c| c.name.ends_with("Result"))?;
    Some(CommandResult {
        name: result.name.clone(),
        status: result.attr("status").unwrap_or("").to_owned(),
        reason: result.child("Reason").map(|r| r.text.clone()),
        node: result.clone(),
    })
}

/// A `getxml` answer: the `<Status>` document, or why there is none.
pub fn status_document(root: Node) -> Result<Node, String> {
    if root.name.eq_ignore_ascii_case("Status") && root.attr("status").is_none() {
        return Ok(root);
    }
    // `<Fault><XPathError>…`, `<Command><Status status="Error">…`, `<Result status="Error">`.
    let reason = find_reason(&root).unwrap_or_else(|| format!("<{}> answer", root.name));
    Err(reason)
}

fn find_reason(node: &Node) -> Option<String> {
    if let Some(reason) = node.child("Reason") {
        return Some(reason.text.clone());
    }
    node.children.iter().find_map(find_reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_results_faults_and_status_documents() {
        let ok = parse("<?xml version=\"1.0\"?>\n<Command><DialResult status=\"OK\"><CallId>2</CallId></DialResult></Command>").expect("xml");
        let r = command_result(&ok).expect("result");
        assert!(r.ok() && r.name == "DialResult");
        assert_eq!(r.node.text_at(&["CallId"]), Some("2"));

        let denied = parse("<Command><Result status=\"Error\"><Reason>Permission denied</Reason><XPath>/Call/DTMFSend</XPath></Result></Command>").expect("xml");
        let r = command_result(&denied).expect("result");
        assert!(!r.ok() && r.not_permitted());

        let no_call = parse("<Command><CallDisconnectResult status=\"Error\"><Reason>No active call</Reason></CallDisconnectResult></Command>").expect("xml");
        let r = command_result(&no_call).expect("result");
        assert!(!r.ok() && !r.not_permitted());
        assert_eq!(r.reason.as_deref(), Some("No active call"));

        let fault = parse("<Fault><XPathError><Reason>No match on address expression.</Reason><XPath>/Status/X</XPath></XPathError></Fault>").expect("xml");
        assert_eq!(
            status_document(fault),
            Err("No match on address expression.".into())
        );
        let status = parse("<Status product=\"Cisco Codec\"><Audio><Microphones><Mute>On</Mute></Microphones></Audio></Status>").expect("xml");
        let status = status_document(status).expect("status");
        assert_eq!(
            status.text_at(&["Audio", "Microphones", "Mute"]),
            Some("On")
        );
        assert!(parse("<a><b></a>").is_err() && parse("not xml").is_err());
        assert_eq!(parse("<a>x &amp; y</a>").expect("xml").text, "x & y");
    }
}

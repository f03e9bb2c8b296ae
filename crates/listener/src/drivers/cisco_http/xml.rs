//! Reading the codec's XML answers: what the driver looks for (`<Command><XxxResult status=…>`,
//! `<Status>…`, `<Fault>`) in the listener's element tree (`crate::xml`).

/// A node of a codec's answer (the listener's one element tree; the XML API has no namespaces).
pub type Node = crate::xml::Element;

pub use crate::xml::parse;

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
        reason: result.child_named("Reason").map(|r| r.text.clone()),
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
    if let Some(reason) = node.child_named("Reason") {
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

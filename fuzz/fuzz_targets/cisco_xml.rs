//! The Cisco codecs' XML API answers on arbitrary text, as `TANDBERG_HTTP` reads them
//! (`roomlink-listener`: `xml::parse`, `drivers::cisco_http::xml`, `bodies::call_phase`,
//! `drivers::cisco_inventory`).
//!
//! Never a panic, and:
//! - a parsed element tree has trimmed texts; written out again as XML (when its names can be:
//!   no prefixes left in local names, no attribute named twice) it parses to the same tree;
//! - a `putxml` answer's result is the first `*Result` under `<Command>`, `OK` exactly when
//!   its status says so, with the `Reason` it carries;
//! - a `getxml` answer is a `<Status>` document exactly when its root is `Status` without a
//!   `status` attribute; otherwise the reason given is a `Reason` of the answer or names its
//!   root;
//! - the call phase is the most advanced of the `Call` entries' states, as documented
//!   (connected, held and preserved states connected; dialling, connecting, ringing, early
//!   media dialling; anything else no call);
//! - the inventory built from the answer (each part read, refused parts `notReported`) holds
//!   the wire's promises (shared/inventory.rs) and reads back as itself.

#![no_main]

use libfuzzer_sys::fuzz_target;
use roomlink_listener::driver::CallPhase;
use roomlink_listener::drivers::cisco_http::bodies::call_phase;
use roomlink_listener::drivers::cisco_http::xml::{Node, command_result, parse, status_document};
use roomlink_listener::drivers::cisco_inventory::{Part, inventory};

#[path = "shared/inventory.rs"]
mod shared_inventory;
#[path = "shared/xml_text.rs"]
mod xml_text;

use xml_text::escape;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(root) = parse(&text) else {
        return;
    };
    check_tree(&root);
    round_trip(&root);
    command_answer(&root);
    status_answer(&root);
    check_call_phase(&root);
    check_inventory(&root);
});

fn check_tree(node: &Node) {
    assert_eq!(node.text.trim(), node.text, "a text is trimmed");
    for child in &node.children {
        check_tree(child);
    }
}

// ---- Written out again -----------------------------------------------------------------

/// Whether the tree can be written as plain XML: names without a prefix separator,
/// attributes that are neither namespace declarations nor named twice, namespaces that need
/// no escaping.
fn writable(node: &Node) -> bool {
    let plain = |name: &str| {
        !name.is_empty()
            && !name.contains([':', '<', '>', '/', '=', '"', '\''])
            && !name.chars().any(char::is_whitespace)
    };
    plain(&node.name)
        && node.attrs.iter().enumerate().all(|(i, (name, _))| {
            plain(name)
                && !name.starts_with("xmlns")
                && !node.attrs[..i].iter().any(|(other, _)| other == name)
        })
        // A namespace is known by its declaration's raw text (references are not resolved).
        && !node.ns.contains(['&', '<', '>', '"', '\'', '\r', '\n', '\t'])
        && node.children.iter().all(writable)
}

fn write(node: &Node, parent_ns: &str, out: &mut String) {
    out.push('<');
    out.push_str(&node.name);
    if node.ns != parent_ns {
        out.push_str(&format!(" xmlns=\"{}\"", escape(&node.ns, true)));
    }
    for (name, value) in &node.attrs {
        out.push_str(&format!(" {name}=\"{}\"", escape(value, true)));
    }
    out.push('>');
    out.push_str(&escape(&node.text, false));
    for child in &node.children {
        write(child, &node.ns, out);
    }
    out.push_str(&format!("</{}>", node.name));
}

fn round_trip(root: &Node) {
    if !writable(root) {
        return;
    }
    let mut xml = String::new();
    write(root, "", &mut xml);
    match parse(&xml) {
        Ok(again) => assert_eq!(&again, root, "{xml}"),
        Err(e) => panic!("the tree written out does not parse: {e}\n{xml}"),
    }
}

// ---- What the driver reads of it -------------------------------------------------------

fn command_answer(root: &Node) {
    let first_result = root.children.iter().find(|c| c.name.ends_with("Result"));
    match command_result(root) {
        Some(result) => {
            assert!(root.name.eq_ignore_ascii_case("Command"));
            assert_eq!(Some(&result.node), first_result);
            assert_eq!(result.name, result.node.name);
            assert_eq!(result.status, result.node.attr("status").unwrap_or(""));
            assert_eq!(result.ok(), result.status.eq_ignore_ascii_case("OK"));
            assert_eq!(
                result.reason.as_deref(),
                result.node.child_named("Reason").map(|r| r.text.as_str())
            );
        }
        None => assert!(!root.name.eq_ignore_ascii_case("Command") || first_result.is_none()),
    }
}

fn reasons(node: &Node, out: &mut Vec<String>) {
    for child in &node.children {
        if child.name.eq_ignore_ascii_case("Reason") {
            out.push(child.text.clone());
        }
        reasons(child, out);
    }
}

fn status_answer(root: &Node) {
    let is_status = root.name.eq_ignore_ascii_case("Status") && root.attr("status").is_none();
    match status_document(root.clone()) {
        Ok(document) => {
            assert!(is_status);
            assert_eq!(&document, root);
        }
        Err(reason) => {
            assert!(!is_status);
            let mut found = Vec::new();
            reasons(root, &mut found);
            assert!(
                found.contains(&reason) || reason == format!("<{}> answer", root.name),
                "{reason:?}"
            );
        }
    }
}

/// The documented phase of one call's state.
fn phase_of(status: &str) -> CallPhase {
    let status = status.to_ascii_lowercase();
    if [
        "connected",
        "synced",
        "onhold",
        "preserved",
        "remotepreserved",
    ]
    .contains(&status.as_str())
    {
        CallPhase::Connected
    } else if ["dialling", "dialing", "connecting", "ringing", "earlymedia"]
        .contains(&status.as_str())
    {
        CallPhase::Dialling
    } else {
        CallPhase::Idle
    }
}

fn rank(phase: CallPhase) -> u8 {
    match phase {
        CallPhase::Idle => 0,
        CallPhase::Dialling => 1,
        CallPhase::Connected => 2,
    }
}

fn check_call_phase(root: &Node) {
    let calls: Vec<&Node> = root
        .children
        .iter()
        .filter(|c| c.name.eq_ignore_ascii_case("Call"))
        .collect();
    let most = calls
        .iter()
        .map(|call| {
            let status = call
                .child_named("Status")
                .map(|s| s.text.as_str())
                .or_else(|| call.attr("status"))
                .unwrap_or("");
            phase_of(status)
        })
        .max_by_key(|p| rank(*p))
        .unwrap_or(CallPhase::Idle);
    assert_eq!(call_phase(root), most);
}

fn check_inventory(root: &Node) {
    // Every part answered with this document, as read, and as the driver takes it.
    let as_read: Vec<_> = Part::ALL.iter().map(|p| (*p, Ok(root.clone()))).collect();
    shared_inventory::check(&inventory(&as_read), "Cisco");
    let document = status_document(root.clone());
    let taken: Vec<_> = Part::ALL.iter().map(|p| (*p, document.clone())).collect();
    let read = inventory(&taken);
    shared_inventory::check(&read, "Cisco");
    if document.is_err() {
        // A refused part reports nothing of its own fields.
        assert_eq!(read.product, None);
        assert!(read.addresses.is_empty() && read.peripherals.is_empty());
        for field in ["product", "serialNumber", "addresses", "peripherals"] {
            assert!(read.not_reported.iter().any(|f| f == field), "{field}");
        }
    } else {
        assert!(read.not_reported.is_empty());
    }
}

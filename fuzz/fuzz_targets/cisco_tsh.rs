//! The Cisco codecs' SSH shell (TSH, JSON output mode) on arbitrary bytes, as `TANDBERG_SSH`
//! reads it (`roomlink-listener`: `drivers::cisco_ssh::answers`, `status_value`,
//! `status_refused`, `drivers::cisco_inventory::status_node`).
//!
//! The first byte says where the stream is cut in two reads; the rest is the stream.
//!
//! Never a panic, and:
//! - the login wait's `OK` line: when one is taken, exactly the bytes up to and including it
//!   are gone, and they end in a line that is `OK`; when none is, nothing is taken;
//! - answers are taken out of the stream whole: the same objects in the same order whether
//!   the stream comes in one read or two; each is a JSON object; written out again between
//!   prompts and `OK` lines they are taken back the same;
//! - a command's outcome is `OK` exactly when its result's status says so, and a failure
//!   always names a status;
//! - a status read's value is the `Value` at its path; a refusal comes with a reason;
//! - the `Status` tree of an answer has `Status` at its root, and the inventory built from it
//!   holds the wire's promises (shared/inventory.rs).

#![no_main]

use libfuzzer_sys::fuzz_target;
use roomlink_listener::drivers::cisco_inventory::{Part, inventory, status_node};
use roomlink_listener::drivers::cisco_ssh::answers::{Outcome, outcome, take_object, take_ok};
use roomlink_listener::drivers::cisco_ssh::{status_refused, status_value};
use roomlink_listener::xml::Element as Node;
use serde_json::Value;

#[path = "shared/inventory.rs"]
mod shared_inventory;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, stream)) = data.split_first() else {
        return;
    };
    login_wait(stream);
    let whole = answers(&[stream]);
    let cut = usize::from(cut).min(stream.len());
    let (first, second) = stream.split_at(cut);
    assert_eq!(answers(&[first, second]), whole, "cut at {cut}");
    let objects: Vec<&Value> = whole.iter().flatten().collect();
    written_again(&objects);
    for answer in objects {
        assert!(answer.is_object());
        read(answer);
    }
});

fn login_wait(stream: &[u8]) {
    let mut buffer = stream.to_vec();
    if take_ok(&mut buffer) {
        assert!(stream.ends_with(&buffer), "only a prefix is taken");
        let taken = &stream[..stream.len() - buffer.len()];
        assert!(taken.ends_with(b"\n"));
        let last = taken[..taken.len() - 1]
            .rsplit(|b| *b == b'\n')
            .next()
            .unwrap_or_default();
        assert_eq!(String::from_utf8_lossy(last).trim(), "OK", "{taken:?}");
    } else {
        assert_eq!(buffer, stream, "nothing is taken without an OK line");
    }
}

/// What the driver takes out of the stream read by read: each answer, or `None` for a
/// balanced object that is not JSON (dropped).
fn answers(reads: &[&[u8]]) -> Vec<Option<Value>> {
    let mut buffer = Vec::new();
    let mut taken = Vec::new();
    for read in reads {
        buffer.extend_from_slice(read);
        loop {
            let before = buffer.len();
            match take_object(&mut buffer) {
                Some(object) => taken.push(Some(object)),
                None if buffer.len() < before => taken.push(None),
                None => break,
            }
        }
    }
    taken
}

fn written_again(objects: &[&Value]) {
    let mut stream = b"*r Login successful\r\n\r\nOK\r\n".to_vec();
    for object in objects {
        stream.extend_from_slice(
            serde_json::to_string_pretty(object)
                .expect("writes")
                .as_bytes(),
        );
        stream.extend_from_slice(b"\r\nOK\r\n");
    }
    let again: Vec<Value> = answers(&[&stream])
        .into_iter()
        .map(|o| o.expect("JSON"))
        .collect();
    let objects: Vec<Value> = objects.iter().map(|o| (*o).clone()).collect();
    assert_eq!(again, objects);
}

fn read(answer: &Value) {
    let result = answer
        .get("CommandResponse")
        .and_then(Value::as_object)
        .and_then(|o| o.values().next());
    let status = result.and_then(|r| r.get("status")).and_then(Value::as_str);
    match outcome(answer) {
        Outcome::Ok => assert!(status.is_some_and(|s| s.eq_ignore_ascii_case("OK"))),
        Outcome::Failed { status: named, .. } => {
            assert!(!status.is_some_and(|s| s.eq_ignore_ascii_case("OK")));
            assert!(!named.is_empty());
            assert_eq!(named, status.filter(|s| !s.is_empty()).unwrap_or("(none)"));
        }
    }
    for path in [
        &["Audio", "Microphones", "Mute"][..],
        &["SystemUnit", "State", "NumberOfActiveCalls"],
    ] {
        if let Some(value) = status_value(answer, path) {
            let mut node = &answer["Status"];
            for word in path {
                node = &node[*word];
            }
            assert_eq!(node["Value"].as_str(), Some(value));
        }
    }
    match status_refused(answer) {
        None => {
            // What the driver reads when the codec did not refuse.
            if let Some(tree) = status_node(answer) {
                assert_eq!(tree.name, "Status");
                let readings: Vec<_> = Part::ALL.iter().map(|p| (*p, Ok(tree.clone()))).collect();
                shared_inventory::check(&inventory(&readings), "Cisco");
            } else {
                assert!(answer.get("Status").is_none_or(Value::is_array));
            }
        }
        Some(reason) => {
            let readings: Vec<_> = Part::ALL
                .iter()
                .map(|p| (*p, Err::<Node, _>(reason.clone())))
                .collect();
            let read = inventory(&readings);
            shared_inventory::check(&read, "Cisco");
            assert!(read.peripherals.is_empty() && read.addresses.is_empty());
        }
    }
}

//! The Poly Telnet API's byte stream on arbitrary bytes, as `POLYCOM_TELNET` reads it
//! (`roomlink-listener`: `drivers::poly_telnet::fuzzing`, the session's Telnet command
//! skipping and line splitting, the call phase of `callinfo:` lines, the inventory of
//! `whoami` and `status` lines).
//!
//! The first byte says where the stream is cut in two reads; the rest is what the codec sent.
//!
//! Never a panic, and:
//! - Telnet commands are taken out: bytes without `IAC` are data as they are, and data with
//!   every `IAC` doubled reads back as itself;
//! - lines are the same whether the stream comes in one read or two; a line is trimmed, has
//!   no line end and no leading `->` prompt, uses at least one byte, and ends in CR and LF bytes
//!   only; an echo ends LF CR; once the byte after a line end has come, more bytes do not
//!   change the line;
//! - the call phase is connected when a `callinfo:` line's state (4th field from the end) is
//!   `connected`, no call when there is no line or every state is `disconnecting` or
//!   `disconnected`, else dialling (the driver's documented reading);
//! - the inventory of the lines holds the wire's promises (shared/inventory.rs), always reports
//!   model, release date and uptime as not readable, and a command the codec lacks leaves its
//!   fields `notReported`.

#![no_main]

use libfuzzer_sys::fuzz_target;
use roomlink_listener::driver::CallPhase;
use roomlink_listener::drivers::poly_telnet::fuzzing::{
    call_phase, inventory, split_line, telnet_data,
};

#[path = "shared/inventory.rs"]
mod shared_inventory;

const IAC: u8 = 255;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, received)) = data.split_first() else {
        return;
    };
    telnet(received);
    let text = telnet_data(received);
    let whole = lines(&[&text]);
    let cut = usize::from(cut).min(text.len());
    let (first, second) = text.split_at(cut);
    assert_eq!(lines(&[first, second]), whole, "cut at {cut}");
    check_lines(&text);
    let answers: Vec<String> = whole
        .into_iter()
        .filter(|(line, echo)| !echo && !line.is_empty())
        .map(|(line, _)| line)
        .collect();
    check_call_phase(&answers);
    check_inventory(&answers);
});

fn telnet(received: &[u8]) {
    if !received.contains(&IAC) {
        assert_eq!(telnet_data(received), received);
    }
    let escaped: Vec<u8> = received
        .iter()
        .flat_map(|b| if *b == IAC { vec![IAC, IAC] } else { vec![*b] })
        .collect();
    assert_eq!(telnet_data(&escaped), received);
}

/// Every line of the stream read by read, as the session takes them.
fn lines(reads: &[&[u8]]) -> Vec<(String, bool)> {
    let mut buffer: Vec<u8> = Vec::new();
    let mut taken = Vec::new();
    for read in reads {
        buffer.extend_from_slice(read);
        while let Some((line, echo, used)) = split_line(&buffer) {
            buffer.drain(..used);
            taken.push((line, echo));
        }
    }
    taken
}

fn check_lines(mut text: &[u8]) {
    while let Some((line, echo, used)) = split_line(text) {
        assert!(used > 0 && used <= text.len());
        assert!(!line.contains(['\r', '\n']));
        assert_eq!(line.trim(), line);
        assert!(!line.starts_with("->"), "{line:?}");
        let consumed = &text[..used];
        let end = consumed
            .iter()
            .position(|b| *b == b'\r' || *b == b'\n')
            .expect("a line has an end");
        assert!(consumed[end..].iter().all(|b| *b == b'\r' || *b == b'\n'));
        if echo {
            assert!(consumed.ends_with(b"\n\r"));
        }
        // Once the byte after the line end is there, more bytes change nothing.
        if used < text.len() {
            let known = &text[..used + 1];
            assert_eq!(split_line(known), Some((line.clone(), echo, used)));
        }
        text = &text[used..];
    }
}

fn check_call_phase(answers: &[String]) {
    let calls: Vec<String> = answers
        .iter()
        .filter(|l| l.starts_with("callinfo:"))
        .cloned()
        .collect();
    let states: Vec<String> = calls
        .iter()
        .map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            if fields.len() >= 7 {
                fields[fields.len() - 4].trim().to_ascii_lowercase()
            } else {
                String::new()
            }
        })
        .collect();
    let want = if states.iter().any(|s| s == "connected") {
        CallPhase::Connected
    } else if states
        .iter()
        .all(|s| s == "disconnecting" || s == "disconnected")
    {
        CallPhase::Idle
    } else {
        CallPhase::Dialling
    };
    assert_eq!(call_phase(&calls), want, "{calls:?}");
}

fn check_inventory(answers: &[String]) {
    let trimmed: Vec<String> = answers.iter().map(|l| l.trim().to_owned()).collect();
    let (whoami, status): (Vec<String>, Vec<String>) =
        trimmed.into_iter().partition(|l| l.contains(':'));
    for (w, s) in [
        (Some(&whoami[..]), Some(&status[..])),
        (None, Some(&status[..])),
        (Some(&whoami[..]), None),
        (None, None),
    ] {
        let read = inventory(w, s);
        shared_inventory::check(&read, "Poly");
        for field in ["model", "softwareReleaseDate", "uptimeSeconds"] {
            assert!(read.not_reported.iter().any(|f| f == field), "{field}");
        }
        assert_eq!(read.model, None);
        assert_eq!(read.software_release_date, None);
        assert_eq!(read.uptime_seconds, None);
        if w.is_none() {
            assert_eq!(read.product, None);
            assert_eq!(read.serial_number, None);
            assert!(read.addresses.is_empty());
            assert!(read.not_reported.iter().any(|f| f == "product"));
        }
        if s.is_none() {
            assert!(read.peripherals.is_empty());
            assert!(read.not_reported.iter().any(|f| f == "peripherals"));
        }
    }
}

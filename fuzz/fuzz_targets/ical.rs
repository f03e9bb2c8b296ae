//! iCalendar (RFC 5545) objects on arbitrary text, as the CalDAV reader reads each
//! `calendar-data` (`roomlink-calendar`: `fuzzing::ical`, the crate's `ical::events`, then the
//! readers' window, `fuzzing::in_window`).
//!
//! Never a panic, and:
//! - every event's texts are absent or not blank, its join links not blank and listed once;
//! - what the reader answers of them overlaps the window, is ordered by start then uid, and
//!   no event ends before it starts;
//! - the events written out again as an iCalendar object (texts escaped, long lines folded,
//!   UTC times, an explicit DTEND) read back as the same events.

#![no_main]

use libfuzzer_sys::fuzz_target;
use roomlink_calendar::fuzzing::{ical, in_window};
use roomlink_domain::calendar::CalendarEvent;

#[path = "shared/events.rs"]
mod shared_events;

/// 2026-11-25T00:00:00Z and a day later: a room's day.
const DAY: (i64, i64) = (1_795_564_800_000, 1_795_651_200_000);
/// Every time an iCalendar date-time can say.
const ALL: (i64, i64) = (i64::MIN / 2, i64::MAX / 2);

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(events) = ical(&text) else {
        return;
    };
    for event in &events {
        shared_events::texts(event);
    }
    for (from, to) in [DAY, ALL] {
        let kept = in_window(events.clone(), from, to);
        shared_events::answered(&kept, from, to);
    }
    if let Some(written) = write(&events) {
        assert_eq!(ical(&written).as_ref(), Ok(&events), "{written}");
    }
});

fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            ',' => out.push_str("\\,"),
            ';' => out.push_str("\\;"),
            c => out.push(c),
        }
    }
    out
}

fn time(ms: i64) -> Option<String> {
    let t = shared_events::parts(ms)?;
    (ms.rem_euclid(1000) == 0).then(|| {
        format!(
            "{:04}{:02}{:02}T{:02}{:02}{:02}Z",
            t.year, t.month, t.day, t.hour, t.minute, t.second
        )
    })
}

/// A content line folded after 75 bytes (RFC 5545 §3.1), CR LF ended.
fn line(out: &mut String, content: &str) {
    let mut rest = content;
    let mut first = true;
    while !rest.is_empty() {
        let mut cut = rest.len().min(if first { 75 } else { 74 });
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        if !first {
            out.push(' ');
        }
        out.push_str(&rest[..cut]);
        out.push_str("\r\n");
        rest = &rest[cut..];
        first = false;
    }
}

fn write(events: &[CalendarEvent]) -> Option<String> {
    let mut out = String::new();
    line(&mut out, "BEGIN:VCALENDAR");
    line(&mut out, "VERSION:2.0");
    line(&mut out, "PRODID:-//roomlink//fuzz//EN");
    for event in events {
        // A line end inside a value cannot be written but as the TEXT escape.
        if event.uid.contains(['\r', '\n'])
            || event
                .conference_uris
                .iter()
                .any(|u| u.contains(['\r', '\n']))
        {
            return None;
        }
        line(&mut out, "BEGIN:VEVENT");
        line(&mut out, &format!("UID:{}", event.uid));
        line(&mut out, &format!("DTSTART:{}", time(event.start_ms)?));
        line(&mut out, &format!("DTEND:{}", time(event.end_ms)?));
        for (name, text) in [
            ("SUMMARY", &event.title),
            ("LOCATION", &event.location),
            ("DESCRIPTION", &event.description),
        ] {
            if let Some(text) = text {
                if text.contains('\r') {
                    return None;
                }
                line(&mut out, &format!("{name}:{}", escaped(text)));
            }
        }
        for uri in &event.conference_uris {
            line(&mut out, &format!("URL:{uri}"));
        }
        if event.cancelled {
            line(&mut out, "STATUS:CANCELLED");
        }
        line(&mut out, "END:VEVENT");
    }
    line(&mut out, "END:VCALENDAR");
    Some(out)
}

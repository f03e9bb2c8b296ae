//! Microsoft Graph `calendarView` pages and Google Calendar `events.list` pages on arbitrary
//! text, as the Graph and Google readers read them (`roomlink-calendar`: `fuzzing::graph_page`,
//! `fuzzing::google_page`: the page's deserialization, each event's conversion, the readers'
//! window; `fuzzing::graph_next_page`: which next-page links are followed).
//!
//! Never a panic, and, for both:
//! - the events answered overlap the window, are ordered by start then uid, none ends before
//!   it starts; their texts are absent or not blank, their join links not blank and listed
//!   once (Graph: at most one, the online meeting's);
//! - a refused page says why without quoting the answer: a secret planted anywhere in it never
//!   shows in the reason;
//! - the events written out again as a page of the same API read back as the same events;
//! - Graph's next page is followed only on Graph's own server (scheme, host and port), never
//!   with userinfo in the link.

#![no_main]

use libfuzzer_sys::fuzz_target;
use roomlink_calendar::fuzzing::{Page, google_page, graph_next_page, graph_page};
use roomlink_domain::calendar::CalendarEvent;
use serde_json::{Value, json};

#[path = "shared/events.rs"]
mod shared_events;

/// Planted in the seeds' values; no refusal may carry it.
const SECRET: &str = "tok-S3cr3t-Q9x";
/// 2026-11-25T00:00:00Z and a day later: a room's day.
const DAY: (i64, i64) = (1_795_564_800_000, 1_795_651_200_000);
/// Every time the APIs' date-times can say.
const ALL: (i64, i64) = (i64::MIN / 2, i64::MAX / 2);
const GRAPH: &str = "https://graph.microsoft.com/v1.0/users/room%40corp.example/calendarView";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for (from, to) in [DAY, ALL] {
        if let Some(page) = graph_page(&text, from, to) {
            check(&page, from, to);
            if let Ok(events) = &page.events {
                for event in events {
                    assert!(event.conference_uris.len() <= 1, "{event:?}");
                }
                if writable(events) {
                    let again = graph_page(&graph_written(events).to_string(), from, to)
                        .expect("a page written as Graph writes it reads");
                    assert_eq!(again.events.as_ref(), Ok(events));
                }
            }
            if let Some(link) = &page.next {
                next_link(link);
            }
        }
        if let Some(page) = google_page(&text, from, to) {
            check(&page, from, to);
            if let Ok(events) = &page.events {
                if writable(events) {
                    let again = google_page(&google_written(events).to_string(), from, to)
                        .expect("a page written as Google writes it reads");
                    assert_eq!(again.events.as_ref(), Ok(events));
                }
            }
            assert!(page.next.as_ref().is_none_or(|t| !t.is_empty()));
        }
    }
    if text.len() <= 200 {
        next_link(&text);
    }
});

fn check(page: &Page, from: i64, to: i64) {
    match &page.events {
        Ok(events) => shared_events::answered(events, from, to),
        Err(why) => {
            assert!(!why.is_empty());
            assert!(!why.contains(SECRET), "a refusal quotes the answer: {why}");
        }
    }
}

fn next_link(link: &str) {
    if let Some(followed) = graph_next_page(link, GRAPH) {
        // Same scheme, host and (default) port, no userinfo: the origin is spelled exactly so.
        assert!(
            followed.starts_with("https://graph.microsoft.com/"),
            "{link:?} -> {followed}"
        );
    }
}

/// Whether every time has a four-digit year (an offset can move one out of them).
fn writable(events: &[CalendarEvent]) -> bool {
    events.iter().all(|e| {
        shared_events::parts(e.start_ms).is_some() && shared_events::parts(e.end_ms).is_some()
    })
}

/// `ms` as RFC 3339 in UTC with milliseconds; `zone`: with the `Z`.
fn time(ms: i64, zone: bool) -> Value {
    let Some(t) = shared_events::parts(ms) else {
        return Value::Null;
    };
    Value::String(format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}{}",
        t.year,
        t.month,
        t.day,
        t.hour,
        t.minute,
        t.second,
        ms.rem_euclid(1000),
        if zone { "Z" } else { "" }
    ))
}

fn graph_written(events: &[CalendarEvent]) -> Value {
    let value: Vec<Value> = events
        .iter()
        .map(|e| {
            json!({
                "id": "AAMkAG-fuzz",
                "iCalUId": e.uid,
                "subject": e.title,
                "start": {"dateTime": time(e.start_ms, false), "timeZone": "UTC"},
                "end": {"dateTime": time(e.end_ms, false), "timeZone": "UTC"},
                "isAllDay": false,
                "location": {"displayName": e.location},
                "body": {"contentType": "text", "content": e.description},
                "onlineMeeting": e.conference_uris.first().map(|u| json!({"joinUrl": u})),
                "isCancelled": e.cancelled,
            })
        })
        .collect();
    json!({ "value": value })
}

fn google_written(events: &[CalendarEvent]) -> Value {
    let items: Vec<Value> = events
        .iter()
        .map(|e| {
            let entry_points: Vec<Value> = e
                .conference_uris
                .iter()
                .map(|u| json!({"entryPointType": "video", "uri": u}))
                .collect();
            json!({
                "id": "fuzz",
                "iCalUID": e.uid,
                "status": if e.cancelled { "cancelled" } else { "confirmed" },
                "summary": e.title,
                "description": e.description,
                "location": e.location,
                "start": {"dateTime": time(e.start_ms, true)},
                "end": {"dateTime": time(e.end_ms, true)},
                "conferenceData": {"entryPoints": entry_points},
            })
        })
        .collect();
    json!({ "kind": "calendar#events", "items": items })
}

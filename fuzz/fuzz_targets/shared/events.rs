//! What every calendar reader promises of the events it answers (shared by `ical` and
//! `calendar_json`).

use roomlink_domain::calendar::CalendarEvent;
use roomlink_domain::civil::UtcParts;

/// A text an event carries is absent or not blank.
pub fn texts(event: &CalendarEvent) {
    for text in [&event.title, &event.location, &event.description] {
        assert!(
            text.as_ref().is_none_or(|t| !t.trim().is_empty()),
            "{event:?}"
        );
    }
    for (i, uri) in event.conference_uris.iter().enumerate() {
        assert!(!uri.trim().is_empty(), "{event:?}");
        assert!(!event.conference_uris[..i].contains(uri), "{uri} twice");
    }
}

/// What a reader answers for the window `[from_ms, to_ms)`: events that overlap it (one
/// without duration counts as a millisecond), by start then uid, none ending before it starts.
pub fn answered(events: &[CalendarEvent], from_ms: i64, to_ms: i64) {
    for event in events {
        assert!(
            event.end_ms >= event.start_ms,
            "ends before it starts: {event:?}"
        );
        assert!(event.start_ms < to_ms && event.end_ms.max(event.start_ms + 1) > from_ms);
        texts(event);
    }
    for pair in events.windows(2) {
        assert!((pair[0].start_ms, &pair[0].uid) <= (pair[1].start_ms, &pair[1].uid));
    }
}

/// `ms` as UTC parts, when its year has four digits (what every reader's times can say).
pub fn parts(ms: i64) -> Option<UtcParts> {
    let t = UtcParts::of(ms);
    (0..=9999).contains(&t.year).then_some(t)
}

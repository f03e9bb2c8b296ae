//! A room's upcoming meetings as `GET /api/endpoints/{id}/meetings` shows them: each event of
//! the window with what the room would dial.

use super::CalendarEvent;
use super::meeting::{Detection, MeetingRules, MeetingToDial, detect};
use crate::enums::MeetingPrivacyMode;
use crate::error::Error;
use serde::Serialize;

/// The longest window one request may ask for.
pub const MAX_WINDOW_MS: i64 = 31 * 86_400_000;
/// The window when `to` is omitted.
pub const DEFAULT_WINDOW_MS: i64 = 86_400_000;

/// `[from, to)` in milliseconds since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeetingWindow {
    pub from_ms: i64,
    pub to_ms: i64,
}

impl MeetingWindow {
    /// Whether `inner` lies within this window.
    pub fn covers(&self, inner: &MeetingWindow) -> bool {
        self.from_ms <= inner.from_ms && inner.to_ms <= self.to_ms
    }

    /// From the query's `from` and `to` (milliseconds since the epoch): `from` defaults to
    /// `now`, `to` to a day after `from`.
    pub fn from_query(from: Option<&str>, to: Option<&str>, now_ms: i64) -> Result<Self, Error> {
        let parse = |name: &str, text: &str| {
            text.parse::<i64>()
                .ok()
                .filter(|ms| *ms >= 0)
                .ok_or_else(|| {
                    Error::invalid(format!(
                        "{name}: must be a time in milliseconds since 1970-01-01T00:00:00Z"
                    ))
                })
        };
        let from_ms = from
            .map(|f| parse("from", f))
            .transpose()?
            .unwrap_or(now_ms);
        let to_ms = match to {
            Some(t) => parse("to", t)?,
            None => from_ms.saturating_add(DEFAULT_WINDOW_MS),
        };
        if to_ms <= from_ms {
            return Err(Error::invalid("to: must be after from"));
        }
        if to_ms - from_ms > MAX_WINDOW_MS {
            return Err(Error::invalid("to: at most 31 days after from"));
        }
        Ok(MeetingWindow { from_ms, to_ms })
    }
}

/// One event of the room's calendar and what the room would do with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpcomingMeeting {
    pub uid: String,
    pub title: Option<String>,
    /// Milliseconds since the epoch.
    pub start: i64,
    pub end: i64,
    /// What the room would dial (the parameters of `join`, and where they were found); null
    /// when nothing in the event is dialable.
    pub dial: Option<MeetingToDial>,
    /// Why the event's meeting link cannot be dialled, when it has one.
    pub not_dialable: Option<String>,
}

/// The meetings as a room with `privacy` may show them, in the API, the console and on its
/// panel: `REDACTED` leaves every title out; `VISIBLE` or unset keeps them. Only titles: the
/// times and what the room would dial are the room's to act on.
pub fn as_shown(
    mut meetings: Vec<UpcomingMeeting>,
    privacy: Option<&MeetingPrivacyMode>,
) -> Vec<UpcomingMeeting> {
    if privacy == Some(&MeetingPrivacyMode::Redacted) {
        for meeting in &mut meetings {
            meeting.title = None;
        }
    }
    meetings
}

/// The window's events, cancelled ones left out, each with its detected meeting.
pub fn upcoming(events: Vec<CalendarEvent>, rules: &MeetingRules) -> Vec<UpcomingMeeting> {
    events
        .into_iter()
        .filter(|e| !e.cancelled)
        .map(|event| {
            let (dial, not_dialable) = match detect(&event, rules) {
                Detection::Dial(m) => (Some(m), None),
                Detection::NotDialable(why) => (None, Some(why)),
                Detection::Nothing => (None, None),
            };
            UpcomingMeeting {
                uid: event.uid,
                title: event.title,
                start: event.start_ms,
                end: event.end_ms,
                dial,
                not_dialable,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::meeting::FoundIn;

    const NOW: i64 = 1_795_564_800_000;

    fn event(uid: &str, location: &str, cancelled: bool) -> CalendarEvent {
        CalendarEvent {
            uid: uid.to_owned(),
            title: Some(format!("event {uid}")),
            start_ms: NOW,
            end_ms: NOW + 3_600_000,
            location: Some(location.to_owned()),
            description: None,
            conference_uris: Vec::new(),
            cancelled,
        }
    }

    #[test]
    fn each_event_with_its_dial_or_why_not() {
        let meetings = upcoming(
            vec![
                event("a", "https://bluejeans.com/123456789/4321", false),
                event("b", "https://meet.google.com/abc-defg-hij", false),
                event("c", "Room 4", false),
                event("d", "https://bluejeans.com/987654321", true),
            ],
            &MeetingRules::default(),
        );
        assert_eq!(meetings.len(), 3, "the cancelled event is left out");
        let dial = meetings[0].dial.as_ref().unwrap();
        assert_eq!(dial.join.meeting_id.as_deref(), Some("123456789"));
        assert_eq!(dial.join.passcode.as_deref(), Some("4321"));
        assert_eq!(dial.found_in, FoundIn::Location);
        assert!(meetings[1].dial.is_none() && meetings[1].not_dialable.is_some());
        assert_eq!(
            (meetings[2].dial.as_ref(), meetings[2].not_dialable.as_ref()),
            (None, None)
        );
        let json = serde_json::to_value(&meetings[0]).unwrap();
        assert_eq!(json["dial"]["meetingType"], "MEETME");
        assert_eq!(json["start"], NOW);
    }

    #[test]
    fn a_redacted_room_shows_no_title_and_everything_else() {
        let read = || {
            upcoming(
                vec![event("a", "https://bluejeans.com/123456789/4321", false)],
                &MeetingRules::default(),
            )
        };
        let redacted = as_shown(read(), Some(&MeetingPrivacyMode::Redacted));
        assert_eq!(redacted[0].title, None);
        assert_eq!(
            redacted[0].dial,
            read()[0].dial,
            "the room still knows what to dial"
        );
        assert_eq!(
            (redacted[0].start, redacted[0].end),
            (read()[0].start, read()[0].end)
        );
        for kept in [Some(&MeetingPrivacyMode::Visible), None] {
            assert_eq!(as_shown(read(), kept), read());
        }
    }

    #[test]
    fn windows() {
        let w = MeetingWindow::from_query(None, None, NOW).unwrap();
        assert_eq!((w.from_ms, w.to_ms), (NOW, NOW + DEFAULT_WINDOW_MS));
        let w = MeetingWindow::from_query(Some("1000"), Some("2000"), NOW).unwrap();
        assert_eq!((w.from_ms, w.to_ms), (1000, 2000));
        for (from, to, text) in [
            (Some("2000"), Some("1000"), "after from"),
            (Some("0"), Some("2678400001"), "31 days"),
            (Some("x"), None, "from: must be"),
            (Some("-5"), None, "from: must be"),
            (None, Some("99999999999999999999"), "to: must be"),
        ] {
            let e = MeetingWindow::from_query(from, to, NOW).unwrap_err();
            assert!(
                e.message().contains(text),
                "{from:?} {to:?}: {}",
                e.message()
            );
        }
    }
}

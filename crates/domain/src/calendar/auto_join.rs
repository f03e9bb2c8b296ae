//! Auto-join: which of a room's meetings it is to join now.
//!
//! A meeting is due from `lead` before its start until `grace` after it (or its end, if that
//! comes first): a room whose instance was down at the start still joins a few minutes late,
//! but never walks into a meeting long under way. When two due meetings overlap, the one that
//! starts last wins: it is the one the people now in the room came for, and joining the
//! earlier one afterwards would hang up the later one.

use super::upcoming::UpcomingMeeting;

/// When rooms join, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AutoJoinTiming {
    /// How long before a meeting's start the room dials (room systems take seconds to connect).
    pub lead_ms: i64,
    /// How long after the start a room still joins (an instance that was down, a calendar read
    /// that failed once).
    pub grace_ms: i64,
}

impl Default for AutoJoinTiming {
    fn default() -> Self {
        AutoJoinTiming {
            lead_ms: 30_000,
            grace_ms: 300_000,
        }
    }
}

impl AutoJoinTiming {
    /// The calendar window to read at `now`: every meeting that can be due now starts in it.
    pub fn window(&self, now_ms: i64) -> (i64, i64) {
        (now_ms - self.grace_ms, now_ms + self.lead_ms + 1)
    }

    /// Whether `meeting` is due at `now`: dialable, and `now` within its join window.
    pub fn is_due(&self, meeting: &UpcomingMeeting, now_ms: i64) -> bool {
        let opens = meeting.start.saturating_sub(self.lead_ms);
        let closes = meeting.start.saturating_add(self.grace_ms).min(meeting.end);
        meeting.dial.is_some() && opens <= now_ms && now_ms < closes
    }

    /// The meeting the room is to be in at `now`, if any (the latest-starting due one).
    pub fn due<'m>(
        &self,
        meetings: &'m [UpcomingMeeting],
        now_ms: i64,
    ) -> Option<&'m UpcomingMeeting> {
        meetings
            .iter()
            .filter(|m| self.is_due(m, now_ms))
            .max_by(|a, b| a.start.cmp(&b.start).then_with(|| b.uid.cmp(&a.uid)))
    }
}

/// One occurrence of a calendar event in one room: what an auto-join claim is about. A
/// recurring event's occurrences share the uid and differ in start; a moved meeting is a new
/// occurrence (the room joins at the new time).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Occurrence {
    pub uid: String,
    pub start_ms: i64,
}

/// How an auto-join ended, as its claim records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinOutcome {
    Joined,
    /// The join was sent and failed (recorded in failures); it is not tried again.
    Failed,
}

impl JoinOutcome {
    pub const fn as_str(self) -> &'static str {
        match self {
            JoinOutcome::Joined => "JOINED",
            JoinOutcome::Failed => "FAILED",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::CalendarEvent;
    use crate::calendar::meeting::MeetingRules;
    use crate::calendar::upcoming::upcoming;

    const T: i64 = 1_795_600_000_000;
    const MIN: i64 = 60_000;

    fn meeting(uid: &str, start: i64, end: i64, location: &str) -> UpcomingMeeting {
        let event = CalendarEvent {
            uid: uid.to_owned(),
            title: None,
            start_ms: start,
            end_ms: end,
            location: Some(location.to_owned()),
            description: None,
            conference_uris: Vec::new(),
            cancelled: false,
        };
        upcoming(vec![event], &MeetingRules::default()).remove(0)
    }

    const LINK: &str = "https://bluejeans.com/123456789";

    #[test]
    fn due_from_lead_before_start_until_grace_after_it_or_the_end() {
        let timing = AutoJoinTiming {
            lead_ms: 30_000,
            grace_ms: 5 * MIN,
        };
        let m = meeting("a", T, T + 60 * MIN, LINK);
        for (now, due) in [
            (T - 30_001, false),
            (T - 30_000, true),
            (T, true),
            (T + 5 * MIN - 1, true),
            (T + 5 * MIN, false),
            (T + 30 * MIN, false),
        ] {
            assert_eq!(timing.is_due(&m, now), due, "at start{:+}", now - T);
        }
        let short = meeting("b", T, T + 2 * MIN, LINK);
        assert!(timing.is_due(&short, T + 2 * MIN - 1));
        assert!(!timing.is_due(&short, T + 2 * MIN), "the meeting is over");
    }

    #[test]
    fn nothing_dialable_is_never_due() {
        let timing = AutoJoinTiming::default();
        let m = meeting("a", T, T + 60 * MIN, "Room 4");
        assert!(m.dial.is_none());
        assert!(!timing.is_due(&m, T));
        let meet = meeting("b", T, T + 60 * MIN, "https://meet.google.com/abc-defg-hij");
        assert!(timing.due(&[meet], T).is_none());
    }

    #[test]
    fn of_overlapping_due_meetings_the_latest_start_wins() {
        let timing = AutoJoinTiming::default();
        let early = meeting("early", T - 2 * MIN, T + 60 * MIN, LINK);
        let late = meeting("late", T, T + 30 * MIN, LINK);
        let meetings = [late.clone(), early.clone()];
        assert_eq!(
            timing.due(&meetings, T).map(|m| m.uid.as_str()),
            Some("late")
        );
        assert_eq!(
            timing.due(&meetings, T - MIN).map(|m| m.uid.as_str()),
            Some("early"),
            "before the later one opens"
        );
    }

    #[test]
    fn the_window_holds_every_start_that_can_be_due() {
        let timing = AutoJoinTiming::default();
        let (from, to) = timing.window(T);
        assert_eq!(from, T - timing.grace_ms);
        assert!(to > T + timing.lead_ms, "a start exactly lead ahead is due");
    }
}

//! Calendar push: what a room system is sent so it can show its meetings (the listener's
//! `pushcalendar` command), and when a push is due. No I/O; the round is `roomlink_app::calendar_push`.
//!
//! - The window: from the start of the current UTC day to 24 hours after now
//!   ([`push_window`]): the day's earlier meetings stay on the room's list, and the next 24
//!   hours are on it whatever the room's time zone.
//! - Each meeting carries its uid, title, start, end and, when it is dialable, the meeting
//!   number with its cluster and type. Never its passcode: a room's list of bookings is
//!   shown on its panels, and a passcode is a secret of the meeting (the bridge asks for it,
//!   as for a join without one).
//! - At most [`MAX_PUSHED_MEETINGS`] meetings (the first by start), titles cut to
//!   [`MAX_TITLE_CHARS`] characters.
//! - A push is sent when its [`PushFingerprint`] differs from the last one sent to the room.
//!   The fingerprint covers the meetings and where they go (address, port, protocol,
//!   listener), not the window's bounds: the window moving alone sends nothing.

use super::upcoming::{MeetingWindow, UpcomingMeeting};
use crate::enums::{Cluster, MeetingType};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// A day in milliseconds.
pub const DAY_MS: i64 = 86_400_000;

/// The most meetings one push carries (the first ones by start).
pub const MAX_PUSHED_MEETINGS: usize = 100;

/// Titles longer than this are cut (in characters).
pub const MAX_TITLE_CHARS: usize = 255;

/// The part of the calendar a push carries at `now_ms`: from the start of the UTC day to 24
/// hours after now.
pub fn push_window(now_ms: i64) -> MeetingWindow {
    MeetingWindow {
        from_ms: now_ms - now_ms.rem_euclid(DAY_MS),
        to_ms: now_ms + DAY_MS,
    }
}

/// What a dialable meeting would be joined with, the passcode left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PushedDial {
    /// Absent: the meeting is dialled through the IVR.
    pub meeting_id: Option<String>,
    pub cluster: Cluster,
    pub meeting_type: Option<MeetingType>,
}

/// One meeting as the room system is sent it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PushedMeeting {
    pub uid: String,
    pub title: Option<String>,
    /// Milliseconds since the epoch.
    pub start: i64,
    pub end: i64,
    /// `None` when nothing in the event can be dialled (the room shows it, without a join).
    pub dial: Option<PushedDial>,
}

impl PushedMeeting {
    pub fn of(meeting: &UpcomingMeeting) -> PushedMeeting {
        PushedMeeting {
            uid: meeting.uid.clone(),
            title: meeting
                .title
                .as_ref()
                .map(|t| t.chars().take(MAX_TITLE_CHARS).collect()),
            start: meeting.start,
            end: meeting.end,
            dial: meeting.dial.as_ref().map(|d| PushedDial {
                meeting_id: d.join.meeting_id.clone(),
                cluster: d.join.cluster,
                meeting_type: d.join.meeting_type,
            }),
        }
    }
}

/// A room's meetings for the window, as the `pushcalendar` command carries them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CalendarPush {
    /// The window, milliseconds since the epoch: `[from, to)`.
    pub from: i64,
    pub to: i64,
    /// In start order.
    pub meetings: Vec<PushedMeeting>,
}

impl CalendarPush {
    /// The push of `meetings` (as read for `window`): sorted by start, at most
    /// [`MAX_PUSHED_MEETINGS`].
    pub fn of(window: MeetingWindow, meetings: &[UpcomingMeeting]) -> CalendarPush {
        let mut pushed: Vec<PushedMeeting> = meetings.iter().map(PushedMeeting::of).collect();
        pushed.sort_by(|a, b| (a.start, a.end, &a.uid).cmp(&(b.start, b.end, &b.uid)));
        pushed.truncate(MAX_PUSHED_MEETINGS);
        CalendarPush {
            from: window.from_ms,
            to: window.to_ms,
            meetings: pushed,
        }
    }

    /// The fingerprint of this push to a room reached as `destination` describes.
    pub fn fingerprint(&self, destination: &str) -> PushFingerprint {
        let mut hash = Sha256::new();
        hash.update(destination.as_bytes());
        hash.update([0]);
        // Serializing plain data cannot fail; an empty text would only cost one extra push.
        hash.update(serde_json::to_vec(&self.meetings).unwrap_or_default());
        PushFingerprint(hash.finalize().into())
    }
}

/// What was last pushed to a room, as a hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PushFingerprint([u8; 32]);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::meeting::{FoundIn, MeetingToDial};
    use crate::rules::join::{JoinParams, JoinRequest};

    /// 2027-01-15T10:00:00Z.
    const NOW: i64 = 1_800_007_200_000;

    fn meeting(uid: &str, start: i64, dialable: bool) -> UpcomingMeeting {
        let join = JoinRequest::from_params(&JoinParams {
            meeting_id: Some("123456789"),
            passcode: Some("4321"),
            ..JoinParams::default()
        })
        .unwrap();
        UpcomingMeeting {
            uid: uid.to_owned(),
            title: Some(format!("Meeting {uid}")),
            start,
            end: start + 3_600_000,
            dial: dialable.then_some(MeetingToDial {
                join,
                found_in: FoundIn::Location,
            }),
            not_dialable: None,
        }
    }

    #[test]
    fn the_window_is_the_utc_day_so_far_and_the_next_24_hours() {
        let w = push_window(NOW);
        assert_eq!(w.from_ms, 1_799_971_200_000, "2027-01-15T00:00:00Z");
        assert_eq!(w.to_ms, NOW + DAY_MS);
        assert_eq!(push_window(w.from_ms).from_ms, w.from_ms);
    }

    #[test]
    fn meetings_are_sorted_and_carry_no_passcode() {
        let window = push_window(NOW);
        let push = CalendarPush::of(
            window,
            &[
                meeting("b", NOW + 7_200_000, false),
                meeting("a", NOW, true),
            ],
        );
        assert_eq!(push.meetings[0].uid, "a");
        let json = serde_json::to_value(&push).unwrap();
        assert_eq!(json["meetings"][0]["dial"]["meetingId"], "123456789");
        assert_eq!(json["meetings"][0]["dial"]["cluster"], "PROD");
        assert!(json["meetings"][1]["dial"].is_null());
        assert!(!json.to_string().contains("4321"), "{json}");
        assert_eq!(json["from"], window.from_ms);
    }

    #[test]
    fn at_most_the_first_hundred_and_titles_are_cut() {
        let mut many: Vec<_> = (0..150)
            .map(|n| meeting(&format!("m{n:03}"), NOW + n * 60_000, true))
            .collect();
        many[0].title = Some("x".repeat(1000));
        let push = CalendarPush::of(push_window(NOW), &many);
        assert_eq!(push.meetings.len(), MAX_PUSHED_MEETINGS);
        assert_eq!(push.meetings[99].uid, "m099");
        assert_eq!(
            push.meetings[0].title.as_ref().map(String::len),
            Some(MAX_TITLE_CHARS)
        );
    }

    #[test]
    fn the_fingerprint_follows_the_meetings_and_the_destination_not_the_window() {
        let meetings = [meeting("a", NOW, true)];
        let now = CalendarPush::of(push_window(NOW), &meetings);
        let later = CalendarPush::of(push_window(NOW + 60_000), &meetings);
        assert_eq!(now.fingerprint("room"), later.fingerprint("room"));
        assert_ne!(now.fingerprint("room"), now.fingerprint("other room"));
        let moved = CalendarPush::of(push_window(NOW), &[meeting("a", NOW + 60_000, true)]);
        assert_ne!(now.fingerprint("room"), moved.fingerprint("room"));
        let empty = CalendarPush::of(push_window(NOW), &[]);
        assert_ne!(now.fingerprint("room"), empty.fingerprint("room"));
    }
}

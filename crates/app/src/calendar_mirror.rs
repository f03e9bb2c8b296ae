//! The room calendars read lately, kept in memory so that rounds over many rooms ask each
//! calendar system only whether something changed.
//!
//! Every read covers a [`mirror_window`] (not the caller's window), so one copy of a calendar
//! answers auto-join, push and the meetings list alike. A copy is used:
//! - as it is, while it is younger than the caller's `max_age` (auto-join: the poll interval);
//! - otherwise with its change mark: the calendar system answers "unchanged" to one small
//!   request (CalDAV's sync token or ctag), or the window is read again in full.
//!
//! A copy belongs to one enterprise and one version of its calendar account (`stamp`, the
//! account's `updated_at`): another enterprise naming the same calendar, or the same one after
//! its account changed, never sees it. Copies not read for [`IDLE_ROUNDS`] of their `max_age`
//! (at least ten minutes) are dropped, which bounds the memory by the rooms in use: a room's
//! copy is its events of at most 49 hours, a few kilobytes.

use roomlink_domain::calendar::CalendarEvent;
use roomlink_domain::calendar::upcoming::MeetingWindow;
use roomlink_domain::enums::CalendarType;
use roomlink_domain::ids::EnterpriseId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Mirrored windows start on multiples of this (UTC), so a copy is read in full again at most
/// this often when nothing changes.
const ANCHOR_MS: i64 = 6 * 3_600_000;
/// How far before its anchor a mirrored window starts (meetings that began lately still count).
const BEFORE_MS: i64 = 3_600_000;
/// How far after its anchor a mirrored window ends: always at least a day ahead of now.
const AFTER_MS: i64 = 30 * 3_600_000;
const DAY_MS: i64 = 86_400_000;
/// A copy unread for this many of its readers' `max_age` (at least a minute) is dropped.
pub const IDLE_ROUNDS: i64 = 10;

/// The window mirrored at `now_ms`: from the start of the UTC day, or an hour before the last
/// 6-hour mark (UTC) if that is earlier, to 30 hours after that mark. It holds the day so far
/// (calendar push), the hour before now and the day after (auto-join), and stays the same for
/// six hours.
pub fn mirror_window(now_ms: i64) -> MeetingWindow {
    let anchor = now_ms - now_ms.rem_euclid(ANCHOR_MS);
    let day = now_ms - now_ms.rem_euclid(DAY_MS);
    MeetingWindow {
        from_ms: (anchor - BEFORE_MS).min(day),
        to_ms: anchor + AFTER_MS,
    }
}

/// Which calendar a copy is of, for whom.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MirrorKey {
    pub enterprise_id: EnterpriseId,
    pub calendar_type: CalendarType,
    pub calendar_id: String,
}

/// One calendar's copy.
struct Copy {
    /// The account version it was read with.
    stamp: i64,
    window: MeetingWindow,
    mark: Option<String>,
    /// In start order, as readers give them.
    events: Arc<Vec<CalendarEvent>>,
    /// When the calendar system last confirmed it.
    checked_at_ms: i64,
    /// The longest `max_age` its readers asked for (how long it stays kept).
    max_age_ms: i64,
}

/// The copies, shared by every reader of one instance.
#[derive(Default)]
pub struct CalendarMirror {
    copies: Mutex<Copies>,
}

#[derive(Default)]
struct Copies {
    by_key: HashMap<MirrorKey, Copy>,
    /// When idle copies were last dropped (a sweep looks at every copy: not at every keep).
    swept_at_ms: i64,
}

/// How often idle copies are looked for.
const SWEEP_EVERY_MS: i64 = 60_000;

/// What the mirror can offer a read.
pub enum Mirrored {
    /// A copy young enough: its events in the asked window.
    Fresh(Vec<CalendarEvent>),
    /// A copy to confirm: ask the calendar system whether anything changed since this mark.
    Stale { mark: String },
    /// Nothing usable: read in full.
    Missing,
}

impl CalendarMirror {
    /// What there is for `key` read with account version `stamp`, covering `window` within
    /// mirrored window `mirrored`, no older than `max_age_ms` at `now_ms`.
    pub fn lookup(
        &self,
        key: &MirrorKey,
        stamp: i64,
        mirrored: &MeetingWindow,
        window: &MeetingWindow,
        now_ms: i64,
        max_age_ms: i64,
    ) -> Mirrored {
        let copies = self.copies.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(copy) = copies.by_key.get(key) else {
            return Mirrored::Missing;
        };
        if copy.stamp != stamp || copy.window != *mirrored {
            return Mirrored::Missing;
        }
        if now_ms.saturating_sub(copy.checked_at_ms) < max_age_ms {
            return Mirrored::Fresh(in_window(&copy.events, window));
        }
        match &copy.mark {
            Some(mark) => Mirrored::Stale { mark: mark.clone() },
            None => Mirrored::Missing,
        }
    }

    /// The calendar system said the copy is current (and gave the mark to keep from now on,
    /// if `newer_mark`): its events in `window`, or `None` when the copy went meanwhile (then
    /// read in full).
    pub fn confirm(
        &self,
        key: &MirrorKey,
        window: &MeetingWindow,
        now_ms: i64,
        max_age_ms: i64,
        newer_mark: Option<String>,
    ) -> Option<Vec<CalendarEvent>> {
        let mut copies = self.copies.lock().unwrap_or_else(PoisonError::into_inner);
        let copy = copies.by_key.get_mut(key)?;
        if let Some(mark) = newer_mark {
            copy.mark = Some(mark);
        }
        copy.checked_at_ms = copy.checked_at_ms.max(now_ms);
        copy.max_age_ms = copy.max_age_ms.max(max_age_ms);
        Some(in_window(&copy.events, window))
    }

    /// Keeps what a full read of `mirrored` found, and drops copies idle too long.
    pub fn keep(
        &self,
        key: MirrorKey,
        stamp: i64,
        mirrored: MeetingWindow,
        read: MirroredRead,
        now_ms: i64,
    ) {
        let mut copies = self.copies.lock().unwrap_or_else(PoisonError::into_inner);
        if now_ms.saturating_sub(copies.swept_at_ms) >= SWEEP_EVERY_MS {
            copies.swept_at_ms = now_ms;
            copies.by_key.retain(|_, copy| {
                now_ms.saturating_sub(copy.checked_at_ms)
                    < copy
                        .max_age_ms
                        .max(SWEEP_EVERY_MS)
                        .saturating_mul(IDLE_ROUNDS)
            });
        }
        // Kept as long as its most patient reader needs it.
        let max_age_ms = copies
            .by_key
            .get(&key)
            .map_or(read.max_age_ms, |old| old.max_age_ms.max(read.max_age_ms));
        copies.by_key.insert(
            key,
            Copy {
                stamp,
                window: mirrored,
                mark: read.mark,
                events: Arc::new(read.events),
                checked_at_ms: now_ms,
                max_age_ms,
            },
        );
    }
}

/// A full read to keep.
pub struct MirroredRead {
    pub events: Vec<CalendarEvent>,
    pub mark: Option<String>,
    pub max_age_ms: i64,
}

/// The events of `events` that overlap `window`, in their order.
pub fn in_window(events: &[CalendarEvent], window: &MeetingWindow) -> Vec<CalendarEvent> {
    events
        .iter()
        .filter(|e| e.overlaps(window))
        .cloned()
        .collect()
}

#[cfg(test)]
impl CalendarMirror {
    /// How many calendars are mirrored.
    fn len(&self) -> usize {
        self.copies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .by_key
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i64 = 3_600_000;

    fn event(uid: &str, start_ms: i64) -> CalendarEvent {
        CalendarEvent {
            uid: uid.to_owned(),
            title: None,
            start_ms,
            end_ms: start_ms + HOUR,
            location: None,
            description: None,
            conference_uris: Vec::new(),
            cancelled: false,
        }
    }

    fn key(enterprise: &str) -> MirrorKey {
        MirrorKey {
            enterprise_id: EnterpriseId::from_trusted(enterprise.to_owned()),
            calendar_type: CalendarType::CalDav,
            calendar_id: "board".to_owned(),
        }
    }

    fn read(mark: Option<&str>, max_age_ms: i64) -> MirroredRead {
        MirroredRead {
            events: vec![event("a", 2 * HOUR), event("b", 20 * HOUR)],
            mark: mark.map(str::to_owned),
            max_age_ms,
        }
    }

    #[test]
    fn the_mirrored_window_holds_the_hour_before_and_the_day_after() {
        for now in [0, 1, ANCHOR_MS - 1, 5 * ANCHOR_MS + 17, 1_764_000_000_000] {
            let w = mirror_window(now);
            assert!(w.from_ms <= now - HOUR, "{now}");
            assert!(
                w.from_ms <= now - now.rem_euclid(DAY_MS),
                "the day so far: {now}"
            );
            assert!(w.to_ms >= now + 24 * HOUR, "{now}");
            let anchor = now - now.rem_euclid(ANCHOR_MS);
            assert_eq!(mirror_window(anchor), w, "one window per anchor");
            assert_eq!(mirror_window(anchor + ANCHOR_MS - 1), w);
        }
        assert_ne!(mirror_window(0), mirror_window(ANCHOR_MS));
    }

    #[test]
    fn a_copy_is_fresh_then_stale_then_gone() {
        let mirror = CalendarMirror::default();
        let mirrored = mirror_window(0);
        let asked = MeetingWindow {
            from_ms: 0,
            to_ms: 3 * HOUR,
        };
        assert!(matches!(
            mirror.lookup(&key("e"), 1, &mirrored, &asked, 0, 1000),
            Mirrored::Missing
        ));
        mirror.keep(key("e"), 1, mirrored, read(Some("sync:1"), 1000), 0);
        match mirror.lookup(&key("e"), 1, &mirrored, &asked, 999, 1000) {
            Mirrored::Fresh(events) => {
                assert_eq!(events.len(), 1, "only the asked window");
                assert_eq!(events[0].uid, "a");
            }
            _ => panic!("young copies are used as they are"),
        }
        match mirror.lookup(&key("e"), 1, &mirrored, &asked, 1000, 1000) {
            Mirrored::Stale { mark } => assert_eq!(mark, "sync:1"),
            _ => panic!("old copies are confirmed with their mark"),
        }
        // Confirmed: young again.
        assert_eq!(
            mirror
                .confirm(&key("e"), &asked, 1500, 1000, None)
                .unwrap()
                .len(),
            1
        );
        assert!(matches!(
            mirror.lookup(&key("e"), 1, &mirrored, &asked, 2000, 1000),
            Mirrored::Fresh(_)
        ));
        match mirror.lookup(&key("e"), 1, &mirrored, &asked, 2500, 1000) {
            Mirrored::Stale { mark } => assert_eq!(mark, "sync:1", "kept when no newer one"),
            _ => panic!("old copies are confirmed with their mark"),
        }
        // Confirmed with a newer mark: the next confirmation asks with it.
        mirror.confirm(&key("e"), &asked, 2500, 1000, Some("delta:2".to_owned()));
        match mirror.lookup(&key("e"), 1, &mirrored, &asked, 3500, 1000) {
            Mirrored::Stale { mark } => assert_eq!(mark, "delta:2"),
            _ => panic!("old copies are confirmed with their newest mark"),
        }
        assert!(matches!(
            mirror.lookup(&key("e"), 1, &mirrored, &asked, 3000, 1000),
            Mirrored::Fresh(_)
        ));
        // Another enterprise, another account version, another window: nothing.
        for (k, stamp, window) in [
            (key("other"), 1, mirrored),
            (key("e"), 2, mirrored),
            (key("e"), 1, mirror_window(ANCHOR_MS)),
        ] {
            assert!(matches!(
                mirror.lookup(&k, stamp, &window, &asked, 2000, 1000),
                Mirrored::Missing
            ));
        }
    }

    #[test]
    fn a_copy_without_a_mark_is_read_again_and_idle_copies_go() {
        let mirror = CalendarMirror::default();
        let mirrored = mirror_window(0);
        mirror.keep(key("e"), 1, mirrored, read(None, 1000), 0);
        assert!(matches!(
            mirror.lookup(&key("e"), 1, &mirrored, &mirrored, 5000, 1000),
            Mirrored::Missing
        ));
        let idle = IDLE_ROUNDS * SWEEP_EVERY_MS;
        mirror.keep(key("f"), 1, mirrored, read(None, 1000), idle - 1);
        assert_eq!(mirror.len(), 2);
        // Sweeps come a minute apart; the next drops e, unread for more than ten minutes.
        mirror.keep(key("g"), 1, mirrored, read(None, 1000), idle);
        assert_eq!(mirror.len(), 3);
        mirror.keep(
            key("g"),
            1,
            mirrored,
            read(None, 1000),
            idle - 1 + SWEEP_EVERY_MS,
        );
        assert_eq!(mirror.len(), 2);
        assert!(matches!(
            mirror.lookup(&key("e"), 1, &mirrored, &mirrored, idle, 1000),
            Mirrored::Missing
        ));
    }
}

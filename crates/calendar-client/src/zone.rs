//! Time zones as an iCalendar object defines them (VTIMEZONE, RFC 5545 §3.6.5): local times of
//! the zone turned into UTC with the object's own observances, so no time-zone database is
//! needed and the answer agrees with the calendar that wrote the object.
//!
//! Decisions:
//! - A local time that occurs twice (clocks set back) is the first of the two, and one that
//!   does not occur (clocks set forward) is read with the offset before the gap, as §3.3.5 says:
//!   02:30 on the spring-forward night in New York is 03:30 EDT.
//! - A local time before the zone's first observance is refused: the VTIMEZONE does not say
//!   what offset held then.

use crate::recurrence::{Rule, Until};
use roomlink_domain::civil::MS_PER_DAY;
use std::cell::RefCell;

/// One STANDARD or DAYLIGHT of a VTIMEZONE.
#[derive(Debug, Clone)]
pub(crate) struct Observance {
    /// DTSTART: its first onset, local time in the offset before it.
    pub start: i64,
    pub offset_from: i64,
    pub offset_to: i64,
    pub rule: Option<Rule>,
    /// RDATEs: further onsets, local times as DTSTART (or UTC, marked `true`).
    pub rdates: Vec<(i64, bool)>,
}

#[derive(Debug, Clone, Default)]
pub(crate) struct Zone {
    pub observances: Vec<Observance>,
    /// The transitions last worked out, and the local time they reach: a series' occurrences
    /// ask for the same years again and again.
    known: RefCell<Option<(i64, Vec<Transition>)>>,
}

/// When the offset changes: the instant (UTC), and the offsets before and after.
#[derive(Debug, Clone, Copy)]
struct Transition {
    at: i64,
    from: i64,
    to: i64,
}

/// A UTC offset, `+0100`, `-0500`, `+115544`, as milliseconds.
pub(crate) fn parse_offset(text: &str) -> Option<i64> {
    let text = text.trim();
    let (sign, digits) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    if !matches!(digits.len(), 4 | 6) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let part = |i: usize| digits.get(i..i + 2).and_then(|p| p.parse::<i64>().ok());
    let (h, m) = (part(0)?, part(2)?);
    let s = if digits.len() == 6 { part(4)? } else { 0 };
    if h > 23 || m > 59 || s > 59 {
        return None;
    }
    Some(sign * ((h * 60 + m) * 60 + s) * 1000)
}

impl Zone {
    /// The offset changes whose local onset is before `limit` (local naive ms).
    fn transitions(&self, limit: i64) -> Result<Vec<Transition>, String> {
        let mut all = Vec::new();
        for o in &self.observances {
            let mut onsets = match &o.rule {
                Some(rule) => {
                    let until = rule.until;
                    let from = o.offset_from;
                    rule.occurrences(o.start, limit, &move |local| {
                        Ok(match until {
                            None => true,
                            Some(Until::Utc(u)) => local - from <= u,
                            Some(Until::Local(u)) => local <= u,
                            Some(Until::Date(d)) => local.div_euclid(MS_PER_DAY) <= d,
                        })
                    })?
                }
                None if o.start < limit => vec![o.start],
                None => vec![],
            };
            onsets.extend(
                o.rdates
                    .iter()
                    .map(|(t, utc)| if *utc { t + o.offset_from } else { *t })
                    .filter(|t| *t < limit),
            );
            all.extend(onsets.into_iter().map(|local| Transition {
                at: local - o.offset_from,
                from: o.offset_from,
                to: o.offset_to,
            }));
        }
        all.sort_by_key(|t| t.at);
        Ok(all)
    }

    /// The UTC instant of the zone's local time `local` (naive ms).
    pub(crate) fn to_utc(&self, local: i64) -> Result<i64, String> {
        // Offsets stay within a day, so the changes up to two days later decide; later ones
        // change nothing.
        let needed = local.saturating_add(2 * MS_PER_DAY);
        let stale = self
            .known
            .borrow()
            .as_ref()
            .is_none_or(|(reach, _)| *reach < needed);
        if stale {
            let reach = needed.saturating_add(400 * MS_PER_DAY);
            *self.known.borrow_mut() = Some((reach, self.transitions(reach)?));
        }
        let known = self.known.borrow();
        let transitions: &[Transition] = known.as_ref().map_or(&[], |(_, t)| t.as_slice());
        let offset_at = |utc: i64| {
            let before = transitions.partition_point(|t| t.at <= utc);
            before.checked_sub(1).map(|i| transitions[i].to)
        };
        // The changes within two days either side, and the one in force before them.
        let first = transitions
            .partition_point(|t| t.at < local.saturating_sub(2 * MS_PER_DAY))
            .saturating_sub(1);
        let last = transitions.partition_point(|t| t.at <= needed);
        let near = transitions.get(first..last).unwrap_or(&[]);
        let earliest = near
            .iter()
            .map(|t| local - t.to)
            .filter(|utc| offset_at(*utc) == Some(local - utc))
            .min();
        if let Some(utc) = earliest {
            return Ok(utc);
        }
        // In a gap: the offset before it.
        near.iter()
            .find(|t| t.to > t.from && (t.at + t.from..t.at + t.to).contains(&local))
            .map(|t| local - t.from)
            .ok_or_else(|| "is before its time zone's first observance".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::civil::{format_utc, parse_utc};

    fn t(text: &str) -> i64 {
        parse_utc(&format!("{text}Z")).unwrap()
    }

    /// New York as the RFC's examples define it: EDT from the second Sunday of March, EST
    /// from the first Sunday of November, both at 02:00.
    fn new_york() -> Zone {
        let hour = 3_600_000;
        Zone {
            known: RefCell::default(),
            observances: vec![
                Observance {
                    start: t("20070311T020000"),
                    offset_from: -5 * hour,
                    offset_to: -4 * hour,
                    rule: Some(Rule::parse("FREQ=YEARLY;BYMONTH=3;BYDAY=2SU").unwrap()),
                    rdates: vec![],
                },
                Observance {
                    start: t("20071104T020000"),
                    offset_from: -4 * hour,
                    offset_to: -5 * hour,
                    rule: Some(Rule::parse("FREQ=YEARLY;BYMONTH=11;BYDAY=1SU").unwrap()),
                    rdates: vec![],
                },
            ],
        }
    }

    fn utc(zone: &Zone, local: &str) -> String {
        format_utc(zone.to_utc(t(local)).unwrap())
    }

    #[test]
    fn summer_winter_gaps_and_repeats() {
        let ny = new_york();
        assert_eq!(utc(&ny, "20261125T100000"), "20261125T150000Z");
        assert_eq!(utc(&ny, "20260701T100000"), "20260701T140000Z");
        // 2026-03-08: 02:00 to 03:00 does not exist; 02:30 is read as EST, i.e. 03:30 EDT.
        assert_eq!(utc(&ny, "20260308T013000"), "20260308T063000Z");
        assert_eq!(utc(&ny, "20260308T023000"), "20260308T073000Z");
        assert_eq!(utc(&ny, "20260308T030000"), "20260308T070000Z");
        // 2026-11-01: 01:00 to 02:00 happens twice; the first (EDT) is meant.
        assert_eq!(utc(&ny, "20261101T013000"), "20261101T053000Z");
        assert_eq!(utc(&ny, "20261101T020000"), "20261101T070000Z");
        assert_eq!(utc(&ny, "20261101T003000"), "20261101T043000Z");
        // Before the zone's first onset nothing is known.
        assert!(ny.to_utc(t("20070101T100000")).is_err());
        // The first onset itself is read in the offset it ends.
        assert_eq!(utc(&ny, "20070311T030000"), "20070311T070000Z");
    }

    #[test]
    fn offsets() {
        assert_eq!(parse_offset("+0100"), Some(3_600_000));
        assert_eq!(parse_offset("-0500"), Some(-18_000_000));
        assert_eq!(
            parse_offset("+115544"),
            Some(((11 * 60 + 55) * 60 + 44) * 1000)
        );
        assert_eq!(parse_offset("-0000"), Some(0));
        for bad in ["0100", "+1", "+2400", "+0160", "", "+01:00"] {
            assert_eq!(parse_offset(bad), None, "{bad}");
        }
    }
}

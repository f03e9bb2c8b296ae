//! How the database stores answer a usage question from the rollups they keep beside the
//! sessions (migration `usage_rollups`): the period's whole days from the rollups, the rest
//! from the sessions themselves, so that a year's question reads some twenty rows a room, not
//! every call. The answer is the reference's ([`super::sum_sessions`]); the stores' contract
//! tests hold them to it.
//!
//! The rollups count each session under the UTC day and hour it started, its call from the
//! moment it opens and its whole time in call once it ends (a call of no length, seen on and
//! off at the same time, counts nowhere, as in the reference). Within the whole days that is what
//! the reference counts, but for the time of calls that end after the period (or go on), which
//! [`RollupPlan::made_good`] corrects from those sessions. Everything else, the sessions that
//! started on the period's first or last (partial) day or before it, is summed from the
//! sessions as the reference does. The two never count the same day, so their distinct days
//! add up.

use super::{CallSession, UsageQuery};
use crate::civil::MS_PER_DAY;

/// The lengths, in days, of the spans a room's figures are rolled up over, longest first; each
/// span starts on a multiple of its length (days since the epoch). The same in the migration.
pub const ROOM_SPAN_DAYS: [i64; 3] = [64, 8, 1];

/// Calls longer than this are indexed apart, so that finding the calls that began before a
/// period and go on into it reads only this long before it, and the long ones. The same
/// literal is in the migration's partial index `call_sessions_long`.
pub const LONG_CALL_MS: i64 = 4 * 60 * 60 * 1000;

/// Where a question's sessions are counted from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RollupPlan {
    pub from: i64,
    pub to: i64,
    /// Where every counted part ends at the latest: the earlier of `to` and now.
    pub cap: i64,
    /// Sessions that started in `[whole_from, whole_to)` (milliseconds; whole UTC days, maybe
    /// none) are counted from the rollups; every other session from itself.
    pub whole_from: i64,
    pub whole_to: i64,
}

/// The rows of one span length a question reads: those whose first day is in `[first, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpanRange {
    pub span_days: i64,
    pub first: i64,
    pub end: i64,
}

impl RollupPlan {
    pub fn new(query: &UsageQuery, now: i64) -> RollupPlan {
        let cap = query.to.min(now);
        // The first day comes from the sessions even when the period begins at midnight: a
        // call that began the day before counts on it too, and must not count the day twice.
        let first = query.from.div_euclid(MS_PER_DAY) + 1;
        // Days up to the one holding `cap`: later ones' calls have not happened yet, or are
        // counted only in part.
        let end = cap.div_euclid(MS_PER_DAY).max(first);
        let whole_from = (first * MS_PER_DAY).min(query.to);
        let whole_to = (end * MS_PER_DAY).min(query.to).max(whole_from);
        RollupPlan {
            from: query.from,
            to: query.to,
            cap,
            whole_from,
            whole_to,
        }
    }

    /// The whole days, `[first, end)` since the epoch; empty when the period has none.
    pub fn days(&self) -> (i64, i64) {
        (
            self.whole_from.div_euclid(MS_PER_DAY),
            self.whole_to.div_euclid(MS_PER_DAY),
        )
    }

    /// The room rollup rows covering the whole days exactly once: the longest spans that fit,
    /// then shorter ones at either end.
    pub fn room_spans(&self) -> Vec<SpanRange> {
        let (first, end) = self.days();
        let mut out = Vec::new();
        cover(first, end, &ROOM_SPAN_DAYS, &mut out);
        out
    }

    /// The time in call a session of the whole days adds to what the rollups hold of it: up
    /// to `cap` for one that ended after it (the rollups hold all its time) or goes on (they
    /// hold none yet); nothing for any other.
    pub fn made_good(&self, session: &CallSession) -> i64 {
        let counted_end = session.ended_ms.unwrap_or(self.cap).min(self.cap);
        counted_end - session.ended_ms.unwrap_or(session.started_ms)
    }

    /// Whether a session's figures come from itself rather than the rollups.
    pub fn counted_from_session(&self, session: &CallSession) -> bool {
        !(self.whole_from..self.whole_to).contains(&session.started_ms)
    }
}

fn cover(first: i64, end: i64, lengths: &[i64], out: &mut Vec<SpanRange>) {
    let Some((&len, shorter)) = lengths.split_first() else {
        return;
    };
    let lo = first.div_euclid(len) * len + if first.rem_euclid(len) == 0 { 0 } else { len };
    let hi = end.div_euclid(len) * len;
    if lo < hi {
        out.push(SpanRange {
            span_days: len,
            first: lo,
            end: hi,
        });
        cover(first, lo, shorter, out);
        cover(hi, end, shorter, out);
    } else {
        cover(first, end, shorter, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::EndpointId;
    use crate::test_rng::Rng;
    use crate::usage::{JoinSource, Tally, UsageGrouping, UsageTotals, sum_sessions};
    use std::collections::BTreeMap;

    const HOUR: i64 = 60 * 60 * 1000;

    fn plan(from: i64, to: i64, now: i64) -> RollupPlan {
        RollupPlan::new(
            &UsageQuery::new(from, to, UsageGrouping::Room).unwrap(),
            now,
        )
    }

    #[test]
    fn whole_days_begin_after_the_first_and_end_before_the_one_holding_now() {
        let day = MS_PER_DAY;
        let p = plan(10 * day, 40 * day, 30 * day + HOUR);
        assert_eq!(p.days(), (11, 30));
        assert_eq!((p.whole_from, p.whole_to), (11 * day, 30 * day));
        // Within two days: none, and every session counts from itself.
        let p = plan(10 * day + HOUR, 11 * day + 2 * HOUR, 50 * day);
        assert_eq!(p.days(), (11, 11));
        assert!(p.counted_from_session(&CallSession {
            endpoint_id: EndpointId::from_trusted("a".into()),
            started_ms: 10 * day + 2 * HOUR,
            ended_ms: None,
            source: JoinSource::Device,
        }));
    }

    /// A number in `0..n`.
    fn upto(rng: &mut Rng, n: i64) -> i64 {
        rng.below(n as usize) as i64
    }

    #[test]
    fn spans_cover_the_whole_days_once() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..2_000 {
            let (first, len) = (1 + upto(&mut rng, 400), upto(&mut rng, 364));
            let p = plan(
                first * MS_PER_DAY - 1,
                (first + len + 1) * MS_PER_DAY + 1,
                i64::MAX,
            );
            let (a, b) = p.days();
            let mut covered = vec![0u8; (b - a).max(0) as usize];
            let spans = p.room_spans();
            for range in &spans {
                assert!(range.first % range.span_days == 0 && range.end % range.span_days == 0);
                for start in (range.first..range.end).step_by(range.span_days as usize) {
                    for day in start..start + range.span_days {
                        assert!(day >= a && day < b, "{day} outside {a}..{b}");
                        covered[(day - a) as usize] += 1;
                    }
                }
            }
            assert!(covered.iter().all(|n| *n == 1), "{first}+{len}: {spans:?}");
            assert!(spans.len() <= 5, "{spans:?}");
        }
    }

    /// The plan's decomposition, with the rollups computed as the migration's triggers define
    /// them, gives the reference's answer.
    #[test]
    fn rollups_and_the_sessions_at_the_edges_sum_to_the_reference() {
        let minute = 60_000;
        let mut rng = Rng(0xD1B5_4A32_D192_ED03);
        for case in 0..400 {
            let now = upto(&mut rng, 45 * 24) * HOUR + 3 * minute;
            let sessions: Vec<CallSession> = (0..1 + upto(&mut rng, 60))
                .map(|_| {
                    let started_ms = upto(&mut rng, 40 * 24) * HOUR + 7 * minute;
                    // Some long ones (up to two days), some still going.
                    let minutes = if rng.chance(20) {
                        upto(&mut rng, 48 * 60)
                    } else {
                        upto(&mut rng, 90)
                    };
                    CallSession {
                        endpoint_id: EndpointId::from_trusted(format!("r{}", upto(&mut rng, 3))),
                        started_ms,
                        ended_ms: (rng.chance(75)).then_some(started_ms + minutes * minute),
                        source: JoinSource::Device,
                    }
                })
                // As observed: nothing starts or ends after now.
                .filter(|s| s.started_ms <= now && s.ended_ms.is_none_or(|e| e <= now))
                .collect();
            let from = upto(&mut rng, 20 * 24) * HOUR + upto(&mut rng, 2) * 11 * minute;
            let to = from + (1 + upto(&mut rng, 25 * 24)) * HOUR;
            for grouping in UsageGrouping::ALL {
                let query = UsageQuery::new(from, to, grouping).unwrap();
                let plan = RollupPlan::new(&query, now);
                let (edges, whole): (Vec<&CallSession>, Vec<&CallSession>) =
                    sessions.iter().partition(|s| plan.counted_from_session(s));
                // The three parts of the stores' statement, summed by group.
                let mut parts = rolled_up(&plan, grouping, &whole);
                parts.extend(sum_sessions(&query, edges, now));
                let cut_short = whole
                    .iter()
                    .filter(|s| s.ended_ms.is_none_or(|e| e > plan.cap));
                parts.extend(cut_short.map(|s| UsageTotals {
                    key: grouping.key_of(s, s.started_ms),
                    calls: 0,
                    ms_in_call: plan.made_good(s),
                    days_used: 0,
                }));
                let mut got: BTreeMap<String, UsageTotals> = BTreeMap::new();
                for part in parts {
                    let group = got.entry(part.key.clone()).or_insert(UsageTotals {
                        key: part.key,
                        calls: 0,
                        ms_in_call: 0,
                        days_used: 0,
                    });
                    group.calls += part.calls;
                    group.ms_in_call += part.ms_in_call;
                    group.days_used += part.days_used;
                }
                let got: Vec<UsageTotals> = got.into_values().collect();
                assert_eq!(
                    got,
                    sum_sessions(&query, &sessions, now),
                    "case {case}, {grouping:?}, {from}..{to}, now {now}"
                );
            }
        }
    }

    /// What the rollup tables answer for the whole days: every session under its start, calls
    /// from opening, time once ended, distinct days per group.
    fn rolled_up(
        plan: &RollupPlan,
        grouping: UsageGrouping,
        whole: &[&CallSession],
    ) -> Vec<UsageTotals> {
        let mut tally = Tally::default();
        // A call of no length counts nowhere, in the reference and in the rollups.
        for s in whole
            .iter()
            .filter(|s| s.ended_ms.is_none_or(|e| e > s.started_ms))
        {
            assert!(s.started_ms >= plan.whole_from && s.started_ms < plan.whole_to);
            let ms = s.ended_ms.map_or(0, |e| e - s.started_ms);
            tally.add(grouping.key_of(s, s.started_ms), s.started_ms, ms);
        }
        tally.totals()
    }
}

//! Room usage: call sessions recorded from the statuses roomlink observes, and the figures an
//! operator asks of them (minutes in call, calls, days used, busy hours).
//!
//! A session is open exactly while the room's last observed status says a call is active: the
//! store opens one when a status write finds a call and no open session, and closes the open
//! one when a status write finds none ([`SESSION_RULE`]). Being a state, not a transition, the
//! rule repairs itself: a write that was missed is made good by the next observation. A session
//! therefore starts and ends within one observation of the real call (a command's answer, or a
//! status poll round).

use crate::access::Operation;
use crate::audit::{ActorKind, AuditEntry};
use crate::civil;
use crate::error::{Error, Result};
use crate::ids::EndpointId;
use serde::Serialize;

pub mod rollup;

/// The rule every store follows after writing statuses, stated once for their comments.
pub const SESSION_RULE: &str = "a room has one open call session exactly while its last \
    observed status has a call active";

/// A call observed within this long after roomlink asked the room to join is counted as that
/// join's; later, or without a join, it was started on the device.
pub const JOIN_ATTRIBUTION_MS: i64 = 5 * 60 * 1000;

/// How a call came about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JoinSource {
    /// A join through the API (roomlinkctl, the console, an integration).
    Api,
    /// The auto-join round, for a meeting in the room's calendar.
    AutoJoin,
    /// Started on the room system itself (its touch panel, an incoming call): roomlink only saw it.
    Device,
}

impl JoinSource {
    pub const ALL: [JoinSource; 3] = [JoinSource::Api, JoinSource::AutoJoin, JoinSource::Device];

    pub const fn as_str(self) -> &'static str {
        match self {
            JoinSource::Api => "api",
            JoinSource::AutoJoin => "autoJoin",
            JoinSource::Device => "device",
        }
    }

    pub fn parse(text: &str) -> Option<JoinSource> {
        Self::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// The join a command's audit entry records, if it was one: the auto-join round acts as
    /// the scheduler, anyone else through the API.
    pub fn of_command(entry: &AuditEntry) -> Option<JoinSource> {
        if entry.operation != Operation::Join.name() {
            return None;
        }
        Some(match entry.actor.kind {
            ActorKind::Scheduler => JoinSource::AutoJoin,
            _ => JoinSource::Api,
        })
    }

    /// The source of a call first observed at `started_ms`, given the room's last join by
    /// roomlink not yet credited to a call (`join`: its source and when it was asked). A join
    /// is credited to one call at most: the stores forget it once a call has started.
    pub fn attributed(join: Option<(JoinSource, i64)>, started_ms: i64) -> JoinSource {
        match join {
            Some((source, at)) if at <= started_ms && started_ms - at <= JOIN_ATTRIBUTION_MS => {
                source
            }
            _ => JoinSource::Device,
        }
    }
}

/// One call of one room, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallSession {
    pub endpoint_id: EndpointId,
    pub started_ms: i64,
    /// `None` while the call goes on.
    pub ended_ms: Option<i64>,
    pub source: JoinSource,
}

/// The CSV of sessions: one line per session, times in UTC (RFC 3339); a call still going has
/// neither end nor duration.
pub const SESSIONS_CSV_HEADER: &str = "endpointId,startedAt,endedAt,durationSeconds,source\n";

impl CallSession {
    /// Appends the session's CSV line (ids, times and names only: nothing to quote).
    pub fn write_csv(&self, out: &mut String) {
        use std::fmt::Write;
        let started = civil::UtcParts::of(self.started_ms).rfc3339();
        let (ended, seconds) = match self.ended_ms {
            Some(end) => (
                civil::UtcParts::of(end).rfc3339(),
                ((end - self.started_ms) / 1000).to_string(),
            ),
            None => (String::new(), String::new()),
        };
        let _ = writeln!(
            out,
            "{},{started},{ended},{seconds},{}",
            self.endpoint_id.as_str(),
            self.source.as_str()
        );
    }
}

/// What usage figures are grouped by. Times are UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageGrouping {
    Room,
    /// The calendar day (`2026-11-28`).
    Day,
    /// The hour of the day, 0 to 23: the busy hours.
    Hour,
    /// The day of the week, `monday` to `sunday`.
    Weekday,
}

const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// 1970-01-01, day 0 of the epoch, was a Thursday (index 3 from Monday).
const EPOCH_WEEKDAY: i64 = 3;

impl UsageGrouping {
    /// Every grouping, in declaration order.
    pub const ALL: [UsageGrouping; 4] = [
        UsageGrouping::Room,
        UsageGrouping::Day,
        UsageGrouping::Hour,
        UsageGrouping::Weekday,
    ];

    pub const NAMES: [&'static str; 4] = ["room", "day", "hour", "weekday"];

    pub fn parse(text: &str) -> Result<UsageGrouping> {
        match text {
            "room" => Ok(UsageGrouping::Room),
            "day" => Ok(UsageGrouping::Day),
            "hour" => Ok(UsageGrouping::Hour),
            "weekday" => Ok(UsageGrouping::Weekday),
            _ => Err(Error::invalid(format!(
                "groupBy: expected one of {}",
                Self::NAMES.join(", ")
            ))),
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            UsageGrouping::Room => "room",
            UsageGrouping::Day => "day",
            UsageGrouping::Hour => "hour",
            UsageGrouping::Weekday => "weekday",
        }
    }

    /// The group of a session whose counted part starts at `ms` (a room's group is its id).
    pub fn bucket_of(self, ms: i64) -> i64 {
        let day = ms.div_euclid(civil::MS_PER_DAY);
        match self {
            UsageGrouping::Room | UsageGrouping::Day => day,
            UsageGrouping::Hour => ms.div_euclid(HOUR_MS).rem_euclid(24),
            UsageGrouping::Weekday => (day + EPOCH_WEEKDAY).rem_euclid(7),
        }
    }

    /// The group of `session` whose counted part starts at `start`, as [`UsageTotals::key`].
    pub fn key_of(self, session: &CallSession, start: i64) -> String {
        match self {
            UsageGrouping::Room => session.endpoint_id.as_str().to_owned(),
            g => g.bucket_of(start).to_string(),
        }
    }

    /// A numbered group as answered: a date, an hour, a weekday's name.
    pub fn label(self, bucket: i64) -> String {
        match self {
            UsageGrouping::Room => bucket.to_string(),
            UsageGrouping::Day => date_of_day(bucket),
            UsageGrouping::Hour => bucket.to_string(),
            UsageGrouping::Weekday => WEEKDAYS[bucket.rem_euclid(7) as usize].to_owned(),
        }
    }
}

const HOUR_MS: i64 = 60 * 60 * 1000;

/// `YYYY-MM-DD` of a day counted from the epoch.
fn date_of_day(day: i64) -> String {
    let (y, m, d) = civil::civil_from_days(day);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The longest period one usage question may span: a year and a day.
pub const MAX_USAGE_SPAN_MS: i64 = 366 * civil::MS_PER_DAY;

/// A usage question: sessions' time within `[from, to)`, grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsageQuery {
    pub from: i64,
    pub to: i64,
    pub group_by: UsageGrouping,
}

impl UsageQuery {
    /// `Invalid` unless `from < to`, both at or after the epoch, at most [`MAX_USAGE_SPAN_MS`] apart.
    pub fn new(from: i64, to: i64, group_by: UsageGrouping) -> Result<UsageQuery> {
        if from < 0 || to <= from {
            return Err(Error::invalid(
                "from, to: expected from < to, in milliseconds since the epoch",
            ));
        }
        if to - from > MAX_USAGE_SPAN_MS {
            return Err(Error::invalid(
                "from, to: at most 366 days apart; ask for a year at a time",
            ));
        }
        Ok(UsageQuery { from, to, group_by })
    }

    /// The part of a session that counts: clipped to the period, an ongoing one up to `now`.
    /// `None` if nothing of it falls within.
    pub fn counted(&self, session: &CallSession, now: i64) -> Option<(i64, i64)> {
        let start = session.started_ms.max(self.from);
        let end = session.ended_ms.unwrap_or(now).min(self.to);
        (end > start).then_some((start, end))
    }
}

/// The figures of one group, as the store sums them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageTotals {
    /// A room's id, or a group number ([`UsageGrouping::bucket_of`]).
    pub key: String,
    pub calls: u64,
    pub ms_in_call: i64,
    /// Distinct UTC days on which a counted part of a call started.
    pub days_used: u64,
}

/// One group as answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageGroup {
    pub key: String,
    pub calls: u64,
    pub minutes_in_call: f64,
    pub days_used: u64,
}

impl UsageGroup {
    fn new(key: String, totals: &UsageTotals) -> UsageGroup {
        UsageGroup {
            key,
            calls: totals.calls,
            // Tenths of a minute: finer says nothing a poll interval can vouch for.
            minutes_in_call: (totals.ms_in_call as f64 / 6_000.0).round() / 10.0,
            days_used: totals.days_used,
        }
    }
}

/// The store's totals as answered: numbered groups labelled and in their natural order (hours
/// 0 to 23, Monday to Sunday, oldest day first), rooms by id in the store's order. `Internal`
/// if the store answered a group number that is not one.
pub fn usage_groups(grouping: UsageGrouping, totals: Vec<UsageTotals>) -> Result<Vec<UsageGroup>> {
    if grouping == UsageGrouping::Room {
        return Ok(totals
            .iter()
            .map(|t| UsageGroup::new(t.key.clone(), t))
            .collect());
    }
    let mut numbered: Vec<(i64, UsageTotals)> = Vec::with_capacity(totals.len());
    for t in totals {
        let n = t
            .key
            .parse::<i64>()
            .map_err(|_| Error::internal(format!("usage group {:?} is not a number", t.key)))?;
        numbered.push((n, t));
    }
    numbered.sort_by_key(|(n, _)| *n);
    Ok(numbered
        .iter()
        .map(|(n, t)| UsageGroup::new(grouping.label(*n), t))
        .collect())
}

/// The most sessions one CSV of sessions holds; a longer period is refused, not cut short.
pub const MAX_SESSION_EXPORT: usize = 100_000;

/// The reference computation of a usage answer from sessions (the in-memory store's, and the
/// contract the SQL of the database store is tested against).
pub fn sum_sessions<'a>(
    query: &UsageQuery,
    sessions: impl IntoIterator<Item = &'a CallSession>,
    now: i64,
) -> Vec<UsageTotals> {
    let mut tally = Tally::default();
    for session in sessions {
        let Some((start, end)) = query.counted(session, now) else {
            continue;
        };
        tally.add(query.group_by.key_of(session, start), start, end - start);
    }
    tally.totals()
}

/// Calls, time in call and the distinct days used per group key, summed as usage answers
/// them (the reference above, and the rollups' own test).
#[derive(Default)]
pub(crate) struct Tally(
    std::collections::BTreeMap<String, (u64, i64, std::collections::BTreeSet<i64>)>,
);

impl Tally {
    /// One call of the group `key`, begun at `start`, of `ms` in call.
    pub(crate) fn add(&mut self, key: String, start: i64, ms: i64) {
        let group = self.0.entry(key).or_default();
        group.0 += 1;
        group.1 += ms;
        group.2.insert(start.div_euclid(civil::MS_PER_DAY));
    }

    pub(crate) fn totals(self) -> Vec<UsageTotals> {
        self.0
            .into_iter()
            .map(|(key, (calls, ms, days))| UsageTotals {
                key,
                calls,
                ms_in_call: ms,
                days_used: days.len() as u64,
            })
            .collect()
    }
}

/// How long call sessions are kept after they ended (`usage.retention_days`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UsageRetention {
    pub days: u32,
}

/// Two years: a year-on-year comparison stays possible.
pub const DEFAULT_USAGE_RETENTION_DAYS: u32 = 731;

impl Default for UsageRetention {
    fn default() -> Self {
        UsageRetention {
            days: DEFAULT_USAGE_RETENTION_DAYS,
        }
    }
}

impl UsageRetention {
    /// Sessions that ended before this are deleted.
    pub fn cutoff(&self, now: i64) -> i64 {
        now.saturating_sub(i64::from(self.days).saturating_mul(civil::MS_PER_DAY))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audit::AuditEntry;

    const DAY: i64 = civil::MS_PER_DAY;
    // 2026-11-30 00:00 UTC, a Monday.
    const MONDAY: i64 = 20_787 * DAY;

    fn session(room: &str, start: i64, end: Option<i64>) -> CallSession {
        CallSession {
            endpoint_id: EndpointId::from_trusted(room.into()),
            started_ms: start,
            ended_ms: end,
            source: JoinSource::Device,
        }
    }

    #[test]
    fn groups_are_numbered_and_labelled_in_utc() {
        let ten_past_nine = MONDAY + 9 * HOUR_MS + 10 * 60_000;
        assert_eq!(date_of_day(MONDAY / DAY), "2026-11-30");
        assert_eq!(
            UsageGrouping::Weekday.label(UsageGrouping::Weekday.bucket_of(MONDAY)),
            "monday"
        );
        assert_eq!(
            UsageGrouping::Weekday.label(UsageGrouping::Weekday.bucket_of(MONDAY - 1)),
            "sunday"
        );
        assert_eq!(UsageGrouping::Hour.bucket_of(ten_past_nine), 9);
        assert_eq!(
            UsageGrouping::Day.label(UsageGrouping::Day.bucket_of(ten_past_nine)),
            "2026-11-30"
        );
        assert_eq!(
            UsageGrouping::Weekday.label(UsageGrouping::Weekday.bucket_of(0)),
            "thursday"
        );
    }

    #[test]
    fn sessions_count_only_within_the_period_and_an_ongoing_one_up_to_now() {
        let query = UsageQuery::new(MONDAY, MONDAY + DAY, UsageGrouping::Room).unwrap();
        let sessions = [
            // Began the evening before: its ten minutes after midnight count, on Monday.
            session("a", MONDAY - 20 * 60_000, Some(MONDAY + 10 * 60_000)),
            session("a", MONDAY + HOUR_MS, Some(MONDAY + 2 * HOUR_MS)),
            // Still going: counted up to now.
            session("b", MONDAY + 3 * HOUR_MS, None),
            // Entirely before the period.
            session("c", MONDAY - 2 * HOUR_MS, Some(MONDAY - HOUR_MS)),
        ];
        let totals = sum_sessions(&query, &sessions, MONDAY + 3 * HOUR_MS + 30 * 60_000);
        assert_eq!(
            totals,
            vec![
                UsageTotals {
                    key: "a".into(),
                    calls: 2,
                    ms_in_call: 70 * 60_000,
                    days_used: 1
                },
                UsageTotals {
                    key: "b".into(),
                    calls: 1,
                    ms_in_call: 30 * 60_000,
                    days_used: 1
                },
            ]
        );
        let groups = usage_groups(UsageGrouping::Room, totals).unwrap();
        assert_eq!(groups[0].minutes_in_call, 70.0);
    }

    #[test]
    fn a_session_is_one_csv_line() {
        let mut out = String::from(SESSIONS_CSV_HEADER);
        session("a", MONDAY + HOUR_MS, Some(MONDAY + HOUR_MS + 90_500)).write_csv(&mut out);
        session("b", MONDAY, None).write_csv(&mut out);
        assert_eq!(
            out,
            "endpointId,startedAt,endedAt,durationSeconds,source\n\
             a,2026-11-30T01:00:00Z,2026-11-30T01:01:30Z,90,device\n\
             b,2026-11-30T00:00:00Z,,,device\n"
        );
    }

    #[test]
    fn a_period_must_be_ordered_and_at_most_a_year_and_a_day() {
        assert!(UsageQuery::new(10, 10, UsageGrouping::Day).is_err());
        assert!(UsageQuery::new(-1, 10, UsageGrouping::Day).is_err());
        assert!(UsageQuery::new(0, MAX_USAGE_SPAN_MS, UsageGrouping::Day).is_ok());
        assert!(UsageQuery::new(0, MAX_USAGE_SPAN_MS + 1, UsageGrouping::Day).is_err());
        assert!(UsageGrouping::parse("month").is_err());
    }

    #[test]
    fn a_call_soon_after_roomlinks_join_is_that_joins_and_any_other_the_devices() {
        let at = MONDAY;
        assert_eq!(
            JoinSource::attributed(Some((JoinSource::AutoJoin, at)), at + 20_000),
            JoinSource::AutoJoin
        );
        assert_eq!(
            JoinSource::attributed(Some((JoinSource::Api, at)), at + JOIN_ATTRIBUTION_MS + 1),
            JoinSource::Device
        );
        assert_eq!(JoinSource::attributed(None, at), JoinSource::Device);
        let mut entry =
            AuditEntry::sample(&crate::ids::EnterpriseId::from_trusted("e".into()), "x", at);
        entry.operation = Operation::Join.name().into();
        assert_eq!(JoinSource::of_command(&entry), Some(JoinSource::Api));
        entry.actor.kind = ActorKind::Scheduler;
        assert_eq!(JoinSource::of_command(&entry), Some(JoinSource::AutoJoin));
        entry.operation = Operation::HangUp.name().into();
        assert_eq!(JoinSource::of_command(&entry), None);
    }
}

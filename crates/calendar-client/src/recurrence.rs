//! Recurrence rules (RFC 5545 §3.3.10, RRULE) expanded into local start times, for servers
//! that answer a calendar-query with a recurring event's master instead of its occurrences, and
//! for the observances of a VTIMEZONE.
//!
//! Times here are local "naive" milliseconds: the wall-clock date and time read as if UTC. The
//! caller turns each into UTC in the event's time zone, so a 10:00 meeting stays at 10:00 local
//! across daylight-saving changes.
//!
//! Supported: FREQ DAILY, WEEKLY, MONTHLY, YEARLY; INTERVAL; COUNT; UNTIL; BYDAY (ordinals with
//! MONTHLY and YEARLY); BYMONTHDAY; BYMONTH; WKST. Anything else (BYSETPOS, BYYEARDAY,
//! BYWEEKNO, BYHOUR/BYMINUTE/BYSECOND, FREQ below a day) is refused with its name, never
//! approximated. DTSTART is always the first occurrence (§3.8.5.3), whether or not the rule
//! would produce it.

use roomlink_domain::civil::{MS_PER_DAY, civil_from_days, days_from_civil};

/// At most this many periods (days, weeks, months or years) are walked from DTSTART: daily
/// rules from 1601 (as Exchange writes its zones) fit, a runaway rule does not.
const MAX_PERIODS: i64 = 600_000;

const WEEKDAYS: [&str; 7] = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Freq {
    Daily,
    Weekly,
    Monthly,
    Yearly,
}

/// The end of a rule, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Until {
    /// `…Z`: an instant, compared with each occurrence in UTC.
    Utc(i64),
    /// A local date-time (no `Z`), compared with each occurrence's local time.
    Local(i64),
    /// A date: occurrences on or before that local day (days since 1970-01-01).
    Date(i64),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    pub freq: Freq,
    pub interval: i64,
    pub count: Option<i64>,
    pub until: Option<Until>,
    /// (ordinal, weekday 0 = Monday); ordinal 0 means every such weekday of the period.
    by_day: Vec<(i64, i64)>,
    by_month_day: Vec<i64>,
    by_month: Vec<i64>,
    week_start: i64,
}

/// Monday 0 to Sunday 6 of the day `days` after 1970-01-01 (a Thursday).
pub(crate) fn weekday(days: i64) -> i64 {
    (days + 3).rem_euclid(7)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let (next_year, next_month) = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    days_from_civil(next_year, next_month, 1) - days_from_civil(year, month, 1)
}

fn number(key: &str, text: &str, range: std::ops::RangeInclusive<i64>) -> Result<i64, String> {
    text.trim()
        .parse::<i64>()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| format!("RRULE {key}={text} is out of range"))
}

fn weekday_named(text: &str) -> Option<i64> {
    WEEKDAYS
        .iter()
        .position(|d| d.eq_ignore_ascii_case(text))
        .map(|i| i as i64)
}

impl Rule {
    /// An RRULE value, `FREQ=WEEKLY;BYDAY=MO,WE;UNTIL=20261231T230000Z`.
    pub(crate) fn parse(text: &str) -> Result<Rule, String> {
        let mut rule = Rule {
            freq: Freq::Daily,
            interval: 1,
            count: None,
            until: None,
            by_day: Vec::new(),
            by_month_day: Vec::new(),
            by_month: Vec::new(),
            week_start: 0,
        };
        let mut freq = None;
        for part in text.trim().split(';').filter(|p| !p.trim().is_empty()) {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| format!("RRULE part '{part}' has no value"))?;
            let key = key.trim().to_ascii_uppercase();
            let list = || value.split(',').map(str::trim).filter(|v| !v.is_empty());
            match key.as_str() {
                "FREQ" => {
                    freq = Some(match value.trim().to_ascii_uppercase().as_str() {
                        "DAILY" => Freq::Daily,
                        "WEEKLY" => Freq::Weekly,
                        "MONTHLY" => Freq::Monthly,
                        "YEARLY" => Freq::Yearly,
                        other => return Err(format!("RRULE FREQ={other} is not supported")),
                    })
                }
                "INTERVAL" => rule.interval = number("INTERVAL", value, 1..=10_000)?,
                "COUNT" => rule.count = Some(number("COUNT", value, 1..=1_000_000)?),
                "UNTIL" => rule.until = Some(until(value.trim())?),
                "WKST" => {
                    rule.week_start = weekday_named(value.trim())
                        .ok_or_else(|| format!("RRULE WKST={value} is not a weekday"))?
                }
                "BYMONTH" => {
                    for v in list() {
                        rule.by_month.push(number("BYMONTH", v, 1..=12)?);
                    }
                }
                "BYMONTHDAY" => {
                    for v in list() {
                        let day = number("BYMONTHDAY", v, -31..=31)?;
                        if day == 0 {
                            return Err("RRULE BYMONTHDAY=0 is out of range".to_owned());
                        }
                        rule.by_month_day.push(day);
                    }
                }
                "BYDAY" => {
                    for v in list() {
                        let split = v.len().saturating_sub(2);
                        let (ordinal, day) = (v.get(..split), v.get(split..));
                        let day = day.and_then(weekday_named);
                        let ordinal = match ordinal {
                            Some("") => Some(0),
                            Some(n) => n
                                .trim_start_matches('+')
                                .parse::<i64>()
                                .ok()
                                .filter(|n| *n != 0 && (-53..=53).contains(n)),
                            None => None,
                        };
                        match (ordinal, day) {
                            (Some(o), Some(d)) => rule.by_day.push((o, d)),
                            _ => return Err(format!("RRULE BYDAY={v} is not a weekday")),
                        }
                    }
                }
                other => return Err(format!("RRULE {other} is not supported")),
            }
        }
        rule.freq = freq.ok_or_else(|| "RRULE without FREQ".to_owned())?;
        if rule.count.is_some() && rule.until.is_some() {
            return Err("RRULE has both COUNT and UNTIL".to_owned());
        }
        let ordinals = rule.by_day.iter().any(|(o, _)| *o != 0);
        if ordinals && matches!(rule.freq, Freq::Daily | Freq::Weekly) {
            return Err("RRULE BYDAY with ordinals is only read with MONTHLY or YEARLY".to_owned());
        }
        if rule.freq == Freq::Weekly && !rule.by_month_day.is_empty() {
            return Err("RRULE BYMONTHDAY cannot go with FREQ=WEEKLY".to_owned());
        }
        Ok(rule)
    }

    /// The local start times of the rule's occurrences from `start` (local naive ms, always
    /// the first) that begin before `limit`, in order. `within_until(t)` says whether an
    /// occurrence at local `t` is not past UNTIL (the caller knows the zone).
    pub(crate) fn occurrences(
        &self,
        start: i64,
        limit: i64,
        within_until: &dyn Fn(i64) -> Result<bool, String>,
    ) -> Result<Vec<i64>, String> {
        let mut found = Vec::new();
        if start >= limit || !within_until(start)? {
            return Ok(found);
        }
        found.push(start);
        let (start_day, time) = (start.div_euclid(MS_PER_DAY), start.rem_euclid(MS_PER_DAY));
        let limit_day = limit.div_euclid(MS_PER_DAY);
        for k in 0..MAX_PERIODS {
            let (first_day, days) = self.period(start_day, k * self.interval);
            if first_day > limit_day {
                return Ok(found);
            }
            for day in days {
                let t = day * MS_PER_DAY + time;
                if t <= start {
                    continue;
                }
                if t >= limit
                    || self.count.is_some_and(|c| found.len() as i64 >= c)
                    || !within_until(t)?
                {
                    return Ok(found);
                }
                found.push(t);
            }
        }
        Err(format!(
            "RRULE needs more than {MAX_PERIODS} periods to reach the window"
        ))
    }

    /// The first day of the period `steps` periods after the one holding `start_day`, and the
    /// days of that period the rule picks, in order.
    fn period(&self, start_day: i64, steps: i64) -> (i64, Vec<i64>) {
        let (y0, m0, d0) = civil_from_days(start_day);
        let in_months =
            |day: i64| self.by_month.is_empty() || self.by_month.contains(&civil_from_days(day).1);
        let (first_day, mut days) = match self.freq {
            Freq::Daily => {
                let day = start_day + steps;
                let (y, m, d) = civil_from_days(day);
                let month_day_ok = self.by_month_day.is_empty()
                    || self.by_month_day.contains(&d)
                    || self.by_month_day.contains(&(d - days_in_month(y, m) - 1));
                let weekday_ok =
                    self.by_day.is_empty() || self.by_day.iter().any(|(_, w)| *w == weekday(day));
                let days = if month_day_ok && weekday_ok && in_months(day) {
                    vec![day]
                } else {
                    vec![]
                };
                return (day, days);
            }
            Freq::Weekly => {
                let offset = (weekday(start_day) - self.week_start).rem_euclid(7);
                let week = start_day - offset + 7 * steps;
                let days: Vec<i64> = if self.by_day.is_empty() {
                    vec![week + offset]
                } else {
                    self.by_day
                        .iter()
                        .map(|(_, w)| week + (w - self.week_start).rem_euclid(7))
                        .collect()
                };
                let mut days: Vec<i64> = days.into_iter().filter(|d| in_months(*d)).collect();
                days.sort_unstable();
                days.dedup();
                return (week, days);
            }
            Freq::Monthly => {
                let index = y0 * 12 + (m0 - 1) + steps;
                let (y, m) = (index.div_euclid(12), index.rem_euclid(12) + 1);
                let first = days_from_civil(y, m, 1);
                if !self.by_month.is_empty() && !self.by_month.contains(&m) {
                    return (first, vec![]);
                }
                (first, self.month_days(y, m, d0))
            }
            Freq::Yearly => {
                let y = y0 + steps;
                let first = days_from_civil(y, 1, 1);
                let days = if !self.by_month.is_empty() {
                    self.by_month
                        .iter()
                        .flat_map(|m| self.month_days(y, *m, d0))
                        .collect()
                } else if !self.by_month_day.is_empty() {
                    (1..=12).flat_map(|m| self.month_days(y, m, d0)).collect()
                } else if !self.by_day.is_empty() {
                    weekdays_in(first, days_from_civil(y + 1, 1, 1) - first, &self.by_day)
                } else {
                    self.month_days(y, m0, d0)
                };
                (first, days)
            }
        };
        days.sort_unstable();
        days.dedup();
        (first_day, days)
    }

    /// The days of `year-month` the rule picks: its BYMONTHDAY and BYDAY (both: the days in
    /// both), else the day of the month DTSTART falls on (none if the month lacks it).
    fn month_days(&self, year: i64, month: i64, start_day_of_month: i64) -> Vec<i64> {
        let first = days_from_civil(year, month, 1);
        let len = days_in_month(year, month);
        let by_month_day: Vec<i64> = self
            .by_month_day
            .iter()
            .map(|d| if *d > 0 { *d } else { len + 1 + d })
            .filter(|d| (1..=len).contains(d))
            .map(|d| first + d - 1)
            .collect();
        let by_day = weekdays_in(first, len, &self.by_day);
        let mut days = match (self.by_month_day.is_empty(), self.by_day.is_empty()) {
            (false, false) => by_month_day
                .into_iter()
                .filter(|d| by_day.contains(d))
                .collect(),
            (false, true) => by_month_day,
            (true, false) => by_day,
            (true, true) if start_day_of_month <= len => vec![first + start_day_of_month - 1],
            (true, true) => vec![],
        };
        days.sort_unstable();
        days.dedup();
        days
    }
}

/// The days of `[first, first + len)` that `by_day` picks: every such weekday (ordinal 0), or
/// the nth from the start (n > 0) or from the end (n < 0).
fn weekdays_in(first: i64, len: i64, by_day: &[(i64, i64)]) -> Vec<i64> {
    let mut days = Vec::new();
    for (ordinal, wd) in by_day {
        let matching: Vec<i64> = (first..first + len)
            .filter(|d| weekday(*d) == *wd)
            .collect();
        match *ordinal {
            0 => days.extend(matching),
            n if n > 0 => days.extend(matching.get((n - 1) as usize)),
            n => days.extend(
                (matching.len() as i64 + n)
                    .try_into()
                    .ok()
                    .and_then(|i: usize| matching.get(i)),
            ),
        }
    }
    days
}

fn until(text: &str) -> Result<Until, String> {
    let bad = || format!("RRULE UNTIL={text} is not a date or date-time");
    if text.len() == 8 {
        let ms = crate::civil::parse_date(text).ok_or_else(bad)?;
        return Ok(Until::Date(ms.div_euclid(MS_PER_DAY)));
    }
    if let Some(ms) = crate::civil::parse_utc(text) {
        return Ok(Until::Utc(ms));
    }
    crate::civil::parse_utc(&format!("{text}Z"))
        .map(Until::Local)
        .ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::civil::{format_utc, parse_utc};

    fn t(text: &str) -> i64 {
        parse_utc(&format!("{text}Z")).unwrap()
    }

    /// The occurrences of `rule` from `start` before `limit` (local times), as text.
    fn expand(rule: &str, start: &str, limit: &str) -> Vec<String> {
        let rule = Rule::parse(rule).unwrap();
        let until = rule.until;
        let within = move |local: i64| {
            Ok(match until {
                None => true,
                Some(Until::Utc(u) | Until::Local(u)) => local <= u,
                Some(Until::Date(d)) => local.div_euclid(MS_PER_DAY) <= d,
            })
        };
        rule.occurrences(t(start), t(limit), &within)
            .unwrap()
            .into_iter()
            .map(|ms| format_utc(ms).trim_end_matches('Z').to_owned())
            .collect()
    }

    #[test]
    fn daily_with_count_and_interval() {
        assert_eq!(
            expand(
                "FREQ=DAILY;COUNT=3;INTERVAL=2",
                "20261123T100000",
                "20270101T000000"
            ),
            ["20261123T100000", "20261125T100000", "20261127T100000"]
        );
        // The limit cuts an endless rule.
        assert_eq!(
            expand("FREQ=DAILY", "20261123T100000", "20261125T100000").len(),
            2
        );
    }

    #[test]
    fn weekly_by_day_with_interval_until_and_week_start() {
        // Every other week on Tuesday and Thursday, from Thursday 2026-02-19, until 2026-03-10.
        assert_eq!(
            expand(
                "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,TH;UNTIL=20260310T000000Z;WKST=MO",
                "20260219T090000",
                "20270101T000000"
            ),
            ["20260219T090000", "20260303T090000", "20260305T090000"]
        );
        // RFC 5545's example of WKST: the same rule gives other days with WKST=SU.
        assert_eq!(
            expand(
                "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO",
                "19970805T090000",
                "19980101T000000"
            ),
            [
                "19970805T090000",
                "19970810T090000",
                "19970819T090000",
                "19970824T090000"
            ]
        );
        assert_eq!(
            expand(
                "FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU",
                "19970805T090000",
                "19980101T000000"
            ),
            [
                "19970805T090000",
                "19970817T090000",
                "19970819T090000",
                "19970831T090000"
            ]
        );
    }

    #[test]
    fn monthly_with_ordinals_and_month_days() {
        assert_eq!(
            expand(
                "FREQ=MONTHLY;BYDAY=1TU;COUNT=3",
                "20121002T100000",
                "20130101T000000"
            ),
            ["20121002T100000", "20121106T100000", "20121204T100000"]
        );
        assert_eq!(
            expand(
                "FREQ=MONTHLY;BYDAY=-1FR;COUNT=2",
                "20261127T100000",
                "20280101T000000"
            ),
            ["20261127T100000", "20261225T100000"]
        );
        // The 31st: months without one are skipped, not moved.
        assert_eq!(
            expand("FREQ=MONTHLY;COUNT=3", "20260131T100000", "20280101T000000"),
            ["20260131T100000", "20260331T100000", "20260531T100000"]
        );
        assert_eq!(
            expand(
                "FREQ=MONTHLY;BYMONTHDAY=-1;COUNT=2",
                "20260131T100000",
                "20280101T000000"
            ),
            ["20260131T100000", "20260228T100000"]
        );
    }

    #[test]
    fn yearly_as_time_zones_write_them() {
        assert_eq!(
            expand(
                "FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU",
                "19700329T020000",
                "19730101T000000"
            ),
            ["19700329T020000", "19710328T020000", "19720326T020000"]
        );
        // Fiji's: the Sunday among the 21st to the 27th of October.
        assert_eq!(
            expand(
                "FREQ=YEARLY;BYMONTH=10;BYMONTHDAY=21,22,23,24,25,26,27;BYDAY=SU",
                "20101024T020000",
                "20120101T000000"
            ),
            ["20101024T020000", "20111023T020000"]
        );
        // February 29th only in leap years.
        assert_eq!(
            expand("FREQ=YEARLY;COUNT=2", "20240229T100000", "20400101T000000"),
            ["20240229T100000", "20280229T100000"]
        );
    }

    #[test]
    fn unsupported_parts_are_refused_by_name() {
        for (rule, named) in [
            ("FREQ=HOURLY", "HOURLY"),
            ("FREQ=MONTHLY;BYSETPOS=-1;BYDAY=MO", "BYSETPOS"),
            ("FREQ=YEARLY;BYWEEKNO=20", "BYWEEKNO"),
            ("FREQ=DAILY;BYHOUR=9,17", "BYHOUR"),
            ("FREQ=WEEKLY;BYDAY=2MO", "ordinals"),
            ("FREQ=DAILY;COUNT=2;UNTIL=20260101", "both"),
            ("INTERVAL=2", "FREQ"),
            ("FREQ=DAILY;INTERVAL=0", "INTERVAL"),
            ("FREQ=DAILY;BYDAY=XX", "BYDAY"),
        ] {
            let e = Rule::parse(rule).unwrap_err();
            assert!(e.contains(named), "{rule}: {e}");
        }
    }
}

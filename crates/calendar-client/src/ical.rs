//! The part of iCalendar (RFC 5545) a room needs: the VEVENTs of a VCALENDAR object, with
//! their times, texts and join links, recurring events expanded into the asked window.
//!
//! Decisions:
//! - A CalDAV server asked to expand (RFC 4791 §9.6.5) answers occurrences in UTC, read as they
//!   are. A server that does not (Xandikos 0.4) answers the recurring event's master in its
//!   time zone: roomlink expands it itself ([`crate::recurrence`]) in the zone the object
//!   defines ([`crate::zone`]), so occurrences keep their local time across daylight-saving
//!   changes. What the expansion does not support is refused, naming it, never approximated.
//! - A local time is read in the VTIMEZONE of its TZID, which the object must carry (RFC 4791
//!   §4.1 requires it of CalDAV objects); a TZID without one is refused (roomlink has no
//!   time-zone database), except UTC's own names. A floating time (no TZID, no `Z`) is
//!   refused: it says nothing of where, and a guess would dial rooms at the wrong hour.
//! - A date (all-day event) starts at midnight UTC; without DTEND or DURATION, or with a DTEND
//!   not after it, it lasts one day (a date-time event without either lasts no time), as RFC
//!   5545 §3.6.1 says.
//! - Occurrences last as long as the master (DTEND − DTSTART in UTC, or its DURATION as an
//!   exact length).
//!   RECURRENCE-ID overrides replace the occurrence they name (by its start in UTC; for an
//!   all-day event, or a date, by its day as written, as Exchange names all-day occurrences with
//!   a local midnight) and are read as events of their own; EXDATE removes occurrences the same
//!   way; RDATE adds date and date-time occurrences. An all-day series ending at an instant
//!   (Exchange's UNTIL) ends on the day whose midnight is nearest to it. RDATE periods,
//!   EXRULE, RANGE=THISANDFUTURE overrides, a property given twice (DTSTART, DTEND, DURATION,
//!   RRULE, RECURRENCE-ID) or two masters of one recurring UID are refused.
//! - Join links come from URL, CONFERENCE (RFC 7986) and the vendors' X- properties that carry
//!   one (`X-GOOGLE-CONFERENCE`, `X-MICROSOFT-SKYPETEAMSMEETINGURL`).
//! - Properties of components inside a VEVENT (VALARM) are not the event's.

use crate::civil::{parse_date, parse_duration, parse_utc};
use crate::recurrence::{Rule, Until};
use crate::zone::{Observance, Zone, parse_offset};
use roomlink_domain::calendar::CalendarEvent;
use roomlink_domain::civil::MS_PER_DAY;
use std::collections::{HashMap, HashSet};

mod content;

use content::{Component, Property, components, unescape};

/// Why an iCalendar object could not be read; the caller adds which calendar.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct IcalError(pub String);

/// The properties that carry a join link.
const LINK_PROPERTIES: [&str; 4] = [
    "URL",
    "CONFERENCE",
    "X-GOOGLE-CONFERENCE",
    "X-MICROSOFT-SKYPETEAMSMEETINGURL",
];

/// More than any UTC offset: how far local times are expanded past the window.
const MARGIN: i64 = 2 * MS_PER_DAY;

/// How many more occurrences of one series than the window has days may overlap it (no
/// supported rule makes more than one a day); beyond that the series is refused. Fuzz target
/// `ical` found an all-day event lasting a millennium, recurring weekly: 100,000 occurrences in
/// every window, 16 s and 1.8 GB to answer.
const EXTRA_OCCURRENCES: i64 = 10_000;

/// TZIDs read as UTC without a VTIMEZONE.
const UTC_NAMES: [&str; 4] = ["UTC", "Etc/UTC", "GMT", "Etc/GMT"];

/// Every event of one iCalendar object from 1970 to 2100, for callers without a window (the
/// fuzz target).
pub(crate) fn events(text: &str) -> Result<Vec<CalendarEvent>, IcalError> {
    events_in(text, 0, 4_102_444_800_000)
}

/// The VEVENTs of one iCalendar object, recurring ones expanded into the occurrences that may
/// overlap `[from_ms, to_ms)` (the caller keeps the window's).
pub(crate) fn events_in(
    text: &str,
    from_ms: i64,
    to_ms: i64,
) -> Result<Vec<CalendarEvent>, IcalError> {
    let roots = components(text);
    let mut zones = Zones::default();
    let mut found = Vec::new();
    let mut pending: Vec<&Component> = roots.iter().rev().collect();
    while let Some(c) = pending.pop() {
        match c.name.as_str() {
            "VEVENT" => found.push(Vevent::read(c)?),
            "VTIMEZONE" => {
                if let Some(id) = c.property("TZID") {
                    let id = unescape(id.value.trim());
                    zones.0.entry(id).or_insert_with(|| zone(c));
                }
            }
            _ => pending.extend(c.children.iter().rev()),
        }
    }
    // The VEVENTs of each UID, UIDs in the order they come.
    let mut uids: Vec<&str> = Vec::new();
    let mut groups: HashMap<&str, Vec<&Vevent>> = HashMap::new();
    for e in &found {
        let group = groups.entry(&e.uid).or_default();
        if group.is_empty() {
            uids.push(&e.uid);
        }
        group.push(e);
    }
    let mut events = Vec::new();
    for uid in uids {
        let group = groups.remove(uid).unwrap_or_default();
        let (masters, overrides): (Vec<&Vevent>, Vec<&Vevent>) =
            group.into_iter().partition(|e| e.recurrence_id.is_none());
        let recurs = |e: &&Vevent| e.rule.is_some() || !e.rdates.is_empty();
        if masters.len() > 1 && (!overrides.is_empty() || masters.iter().any(recurs)) {
            // Which series would the overrides change, or the occurrences belong to?
            return Err(IcalError(format!(
                "VEVENT {uid} is given {} times without RECURRENCE-ID, in a recurring series",
                masters.len()
            )));
        }
        for o in &overrides {
            let (start, length) = o.span(&zones)?;
            events.push(o.event(start, length));
        }
        for m in &masters {
            if recurs(m) {
                events.extend(expand(m, &overrides, &zones, from_ms, to_ms)?);
            } else {
                let (start, length) = m.span(&zones)?;
                events.push(m.event(start, length));
            }
        }
    }
    Ok(events)
}

/// A VTIMEZONE's observances; why not, if they cannot be read.
fn zone(c: &Component) -> Result<Zone, String> {
    let mut zone = Zone::default();
    for o in c
        .children
        .iter()
        .filter(|o| o.name == "STANDARD" || o.name == "DAYLIGHT")
    {
        let start = o
            .property("DTSTART")
            .and_then(|p| parse_utc(&format!("{}Z", p.value.trim())))
            .ok_or_else(|| format!("a {} without a local DTSTART", o.name))?;
        let offset = |name: &str| {
            o.property(name)
                .and_then(|p| parse_offset(&p.value))
                .ok_or_else(|| format!("a {} without a {name}", o.name))
        };
        let mut rules = o.properties.iter().filter(|p| p.name == "RRULE");
        let rule = rules.next().map(|p| Rule::parse(&p.value)).transpose()?;
        if rules.next().is_some() {
            return Err(format!("a {} with two RRULEs", o.name));
        }
        let mut rdates = Vec::new();
        for p in o.properties.iter().filter(|p| p.name == "RDATE") {
            for v in p.value.split(',').map(str::trim).filter(|v| !v.is_empty()) {
                let at = parse_utc(v)
                    .map(|t| (t, true))
                    .or_else(|| parse_utc(&format!("{v}Z")).map(|t| (t, false)));
                rdates.push(at.ok_or_else(|| format!("an RDATE that is not a date-time: {v}"))?);
            }
        }
        zone.observances.push(Observance {
            start,
            offset_from: offset("TZOFFSETFROM")?,
            offset_to: offset("TZOFFSETTO")?,
            rule,
            rdates,
        });
    }
    if zone.observances.is_empty() {
        return Err("no STANDARD or DAYLIGHT in it".to_owned());
    }
    Ok(zone)
}

/// The object's time zones by TZID (the first of a name counts).
#[derive(Default)]
struct Zones(HashMap<String, Result<Zone, String>>);

impl Zones {
    /// `t` in UTC; `what` names it for the error.
    fn utc(&self, t: &Time, what: &str) -> Result<i64, IcalError> {
        let id = match &t.kind {
            Kind::Date | Kind::Utc => return Ok(t.local),
            Kind::Floating => {
                return Err(IcalError(format!(
                    "{what} is a local time (floating: no TZID, no Z), not UTC: the server did \
                     not say in which zone"
                )));
            }
            Kind::Zoned(id) => id,
        };
        let local = crate::civil::format_utc(t.local);
        let local = local.trim_end_matches('Z');
        match self.0.get(id) {
            Some(Ok(zone)) => zone
                .to_utc(t.local)
                .map_err(|e| IcalError(format!("{what} {local} ({id}) {e}"))),
            Some(Err(e)) => Err(IcalError(format!(
                "{what} is in time zone {id}, whose VTIMEZONE cannot be read: {e}"
            ))),
            None if UTC_NAMES.contains(&id.as_str()) => Ok(t.local),
            None => Err(IcalError(format!(
                "{what} is a local time ({id}) with no VTIMEZONE for it in the object \
                 (roomlink has no time-zone database)"
            ))),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Date,
    Utc,
    Zoned(String),
    Floating,
}

/// A date or date-time as written: its local (wall-clock) milliseconds and what they are in.
#[derive(Debug, Clone)]
struct Time {
    local: i64,
    kind: Kind,
}

/// The values of a date or date-time property (a list for RDATE and EXDATE).
fn times(p: &Property) -> Result<Vec<Time>, IcalError> {
    let value_type = p.param("VALUE").map(str::to_ascii_uppercase);
    if value_type.as_deref() == Some("PERIOD") {
        return Err(IcalError(format!(
            "{};VALUE=PERIOD is not supported",
            p.name
        )));
    }
    let tzid = p.param("TZID");
    let bad = |v: &str| {
        IcalError(format!(
            "{} is not a date-time: '{}'",
            p.name,
            v.chars().take(40).collect::<String>()
        ))
    };
    let mut found = Vec::new();
    for v in p.value.split(',').map(str::trim).filter(|v| !v.is_empty()) {
        let is_date =
            value_type.as_deref() == Some("DATE") || (value_type.is_none() && v.len() == 8);
        let time = if is_date {
            Time {
                local: parse_date(v).ok_or_else(|| bad(v))?,
                kind: Kind::Date,
            }
        } else if let Some(local) = parse_utc(v) {
            Time {
                local,
                kind: Kind::Utc,
            }
        } else {
            Time {
                local: parse_utc(&format!("{v}Z")).ok_or_else(|| bad(v))?,
                kind: tzid.map_or(Kind::Floating, |z| Kind::Zoned(z.to_owned())),
            }
        };
        found.push(time);
    }
    Ok(found)
}

/// The one date or date-time of DTSTART, DTEND or RECURRENCE-ID.
fn one_time(p: &Property) -> Result<Time, IcalError> {
    let mut all = times(p)?;
    match (all.pop(), all.is_empty()) {
        (Some(t), true) => Ok(t),
        _ => Err(IcalError(format!("{} is not one date-time", p.name))),
    }
}

/// One VEVENT as written.
#[derive(Default)]
struct Vevent {
    uid: String,
    title: Option<String>,
    location: Option<String>,
    description: Option<String>,
    links: Vec<String>,
    cancelled: bool,
    start: Option<Time>,
    end: Option<Time>,
    duration: Option<i64>,
    recurrence_id: Option<Time>,
    rule: Option<Rule>,
    rdates: Vec<Time>,
    exdates: Vec<Time>,
}

impl Vevent {
    fn read(c: &Component) -> Result<Vevent, IcalError> {
        let uid = c
            .property("UID")
            .map(|p| p.value.trim().to_owned())
            .ok_or_else(|| IcalError("a VEVENT without a UID".to_owned()))?;
        let fail = |what: String| IcalError(format!("VEVENT {uid}: {what}"));
        let mut e = Vevent {
            uid: uid.clone(),
            ..Vevent::default()
        };
        let mut seen: Vec<&str> = Vec::new();
        for p in &c.properties {
            let text = || Some(unescape(&p.value)).filter(|t| !t.trim().is_empty());
            let name = p.name.as_str();
            if matches!(
                name,
                "DTSTART" | "DTEND" | "DURATION" | "RECURRENCE-ID" | "RRULE"
            ) {
                if seen.contains(&name) {
                    return Err(fail(format!("{name} is given twice")));
                }
                seen.push(name);
            }
            match name {
                "SUMMARY" => e.title = text(),
                "LOCATION" => e.location = text(),
                "DESCRIPTION" => e.description = text(),
                "STATUS" => e.cancelled = p.value.trim().eq_ignore_ascii_case("CANCELLED"),
                "DTSTART" => e.start = Some(one_time(p)?),
                "DTEND" => e.end = Some(one_time(p)?),
                "DURATION" => {
                    e.duration = Some(parse_duration(p.value.trim()).ok_or_else(|| {
                        IcalError(format!("DURATION is not a duration: '{}'", p.value))
                    })?)
                }
                "RECURRENCE-ID" => {
                    if p.param("RANGE")
                        .is_some_and(|r| r.eq_ignore_ascii_case("THISANDFUTURE"))
                    {
                        return Err(fail(
                            "RECURRENCE-ID;RANGE=THISANDFUTURE is not supported".to_owned(),
                        ));
                    }
                    e.recurrence_id = Some(one_time(p)?);
                }
                "RRULE" => e.rule = Some(Rule::parse(&p.value).map_err(fail)?),
                "EXRULE" => return Err(fail("EXRULE is not supported".to_owned())),
                "RDATE" => e.rdates.extend(times(p).map_err(|x| fail(x.0))?),
                "EXDATE" => e.exdates.extend(times(p).map_err(|x| fail(x.0))?),
                name if LINK_PROPERTIES.contains(&name) => {
                    let link = p.value.trim();
                    if !link.is_empty() && !e.links.iter().any(|l| l == link) {
                        e.links.push(link.to_owned());
                    }
                }
                _ => {}
            }
        }
        Ok(e)
    }

    fn start(&self) -> Result<&Time, IcalError> {
        self.start
            .as_ref()
            .ok_or_else(|| IcalError(format!("VEVENT {} has no DTSTART", self.uid)))
    }

    /// Its start in UTC and how long it lasts.
    fn span(&self, zones: &Zones) -> Result<(i64, i64), IcalError> {
        let start = self.start()?;
        let start_ms = zones.utc(start, &format!("DTSTART of VEVENT {}", self.uid))?;
        let all_day = start.kind == Kind::Date;
        let length = match (&self.end, self.duration) {
            (Some(end), _) => {
                let end_ms = zones.utc(end, &format!("DTEND of VEVENT {}", self.uid))?;
                if all_day && end_ms <= start_ms {
                    MS_PER_DAY
                } else {
                    end_ms - start_ms
                }
            }
            (None, Some(duration)) => duration,
            (None, None) if all_day => MS_PER_DAY,
            (None, None) => 0,
        };
        Ok((start_ms, length))
    }

    fn event(&self, start_ms: i64, length: i64) -> CalendarEvent {
        CalendarEvent {
            uid: self.uid.clone(),
            title: self.title.clone(),
            start_ms,
            end_ms: start_ms.saturating_add(length),
            location: self.location.clone(),
            description: self.description.clone(),
            conference_uris: self.links.clone(),
            cancelled: self.cancelled,
        }
    }
}

/// The occurrences of a recurring `master` that may overlap the window, less those its EXDATEs
/// remove and its `overrides` replace.
fn expand(
    master: &Vevent,
    overrides: &[&Vevent],
    zones: &Zones,
    from_ms: i64,
    to_ms: i64,
) -> Result<Vec<CalendarEvent>, IcalError> {
    let start = master.start()?;
    let (start_ms, length) = master.span(zones)?;
    let what = format!("an occurrence of VEVENT {}", master.uid);
    let at = |local: i64| {
        zones.utc(
            &Time {
                local,
                kind: start.kind.clone(),
            },
            &what,
        )
    };
    let mut occurrences: Vec<(i64, i64)> = Vec::new();
    match &master.rule {
        Some(rule) => {
            let until = rule.until;
            let all_day = start.kind == Kind::Date;
            let day = |ms: i64| ms.div_euclid(MS_PER_DAY);
            let within = |local: i64| match until {
                None => Ok(true),
                Some(Until::Local(u)) => Ok(local <= u),
                Some(Until::Date(d)) => Ok(day(local) <= d),
                // An all-day series ending at an instant (Exchange: the last day's midnight in
                // the organiser's zone, `20260817T220000Z` for 18 August in Berlin): the
                // midnight nearest to it starts the last day.
                Some(Until::Utc(u)) if all_day => {
                    Ok(day(local) <= day(u.saturating_add(MS_PER_DAY / 2)))
                }
                Some(Until::Utc(u)) if local.saturating_add(MARGIN) <= u => Ok(true),
                Some(Until::Utc(u)) if local.saturating_sub(MARGIN) > u => Ok(false),
                Some(Until::Utc(u)) => at(local).map(|t| t <= u).map_err(|e| e.0),
            };
            let limit = to_ms.saturating_add(MARGIN);
            let locals = rule
                .occurrences(start.local, limit, &within)
                .map_err(|e| IcalError(format!("VEVENT {}: {e}", master.uid)))?;
            let most = to_ms.saturating_sub(from_ms).max(0) / MS_PER_DAY + EXTRA_OCCURRENCES;
            for local in locals {
                if local.saturating_add(length.max(0)).saturating_add(MARGIN) >= from_ms {
                    if occurrences.len() as i64 >= most {
                        return Err(IcalError(format!(
                            "VEVENT {}: more than {most} occurrences overlap the window",
                            master.uid
                        )));
                    }
                    occurrences.push((at(local)?, local));
                }
            }
        }
        None => occurrences.push((start_ms, start.local)),
    }
    for rdate in &master.rdates {
        let what = format!("RDATE of VEVENT {}", master.uid);
        occurrences.push((zones.utc(rdate, &what)?, rdate.local));
    }
    occurrences.sort_unstable();
    occurrences.dedup_by_key(|o| o.0);

    // What EXDATEs and overrides name: days (an all-day series, or a date), or instants.
    let all_day = start.kind == Kind::Date;
    let (mut days, mut instants) = (HashSet::new(), HashSet::new());
    let named = master.exdates.iter().map(|t| (t, "EXDATE")).chain(
        overrides
            .iter()
            .flat_map(|o| o.recurrence_id.as_ref().map(|t| (t, "RECURRENCE-ID"))),
    );
    for (t, what) in named {
        if all_day || t.kind == Kind::Date {
            days.insert(t.local.div_euclid(MS_PER_DAY));
        } else {
            instants.insert(zones.utc(t, &format!("{what} of VEVENT {}", master.uid))?);
        }
    }
    Ok(occurrences
        .into_iter()
        .filter(|(utc, local)| {
            !instants.contains(utc) && !days.contains(&local.div_euclid(MS_PER_DAY))
        })
        .map(|(utc, _)| master.event(utc, length))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::civil::format_utc;

    const STANDUP: &str = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//roomlink tests//EN\r\n\
BEGIN:VEVENT\r\nUID:standup-1@corp.example\r\nDTSTAMP:20261120T080000Z\r\n\
DTSTART:20261125T093000Z\r\nDTEND:20261125T094500Z\r\nSUMMARY:Team standup\\, daily\r\n\
LOCATION:Huddle 4\\; 2nd floor\r\nDESCRIPTION:Join: https://bluejeans.com/123456789/4321\\n\r\n  Dial-in: +1 408 555 0100\r\n\
CONFERENCE;VALUE=URI;FEATURE=VIDEO;LABEL=\"Join: video\":https://bluejeans.com/123456789\r\n\
BEGIN:VALARM\r\nACTION:DISPLAY\r\nDESCRIPTION:Reminder\r\nTRIGGER:-PT10M\r\nEND:VALARM\r\n\
END:VEVENT\r\nEND:VCALENDAR\r\n";

    #[test]
    fn an_event_with_folding_escapes_links_and_an_alarm() {
        let events = events(STANDUP).unwrap();
        assert_eq!(
            events,
            vec![CalendarEvent {
                uid: "standup-1@corp.example".to_owned(),
                title: Some("Team standup, daily".to_owned()),
                start_ms: 1_795_599_000_000,
                end_ms: 1_795_599_900_000,
                location: Some("Huddle 4; 2nd floor".to_owned()),
                description: Some(
                    "Join: https://bluejeans.com/123456789/4321\n Dial-in: +1 408 555 0100"
                        .to_owned()
                ),
                conference_uris: vec!["https://bluejeans.com/123456789".to_owned()],
                cancelled: false,
            }]
        );
    }

    #[test]
    fn durations_dates_and_cancellations() {
        let text = "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:a\nDTSTART:20261125T100000Z\n\
DURATION:PT30M\nSTATUS:CANCELLED\nEND:VEVENT\nBEGIN:VEVENT\nUID:b\n\
DTSTART;VALUE=DATE:20261126\nEND:VEVENT\nBEGIN:VEVENT\nUID:c\n\
DTSTART;VALUE=DATE:20261127\nDTEND;VALUE=DATE:20261127\nEND:VEVENT\nEND:VCALENDAR\n";
        let events = events(text).unwrap();
        assert_eq!(events.len(), 3);
        assert_eq!(events[0].end_ms - events[0].start_ms, 1_800_000);
        assert!(events[0].cancelled);
        assert_eq!(events[1].end_ms - events[1].start_ms, 86_400_000);
        assert!(!events[1].cancelled);
        // An all-day DTEND not after its DTSTART: one day.
        assert_eq!(events[2].end_ms - events[2].start_ms, 86_400_000);
    }

    #[test]
    fn floating_times_and_unknown_zones_are_refused_not_guessed() {
        let text = "BEGIN:VEVENT\nUID:a\nDTSTART;TZID=Europe/Berlin:20261125T100000\nEND:VEVENT\n";
        let e = events(text).unwrap_err();
        assert!(e.0.contains("Europe/Berlin"), "{}", e.0);
        assert!(e.0.contains("no VTIMEZONE"), "{}", e.0);
        let floating = "BEGIN:VEVENT\nUID:a\nDTSTART:20261125T100000\nEND:VEVENT\n";
        assert!(events(floating).unwrap_err().0.contains("floating"));
        // UTC by name needs no VTIMEZONE.
        let utc = "BEGIN:VEVENT\nUID:a\nDTSTART;TZID=UTC:20261125T100000\nEND:VEVENT\n";
        assert_eq!(events(utc).unwrap()[0].start_ms, 1_795_600_800_000);
    }

    #[test]
    fn a_series_with_too_many_occurrences_in_the_window_is_refused() {
        // Each occurrence lasts a millennium, so every one overlaps any window.
        let text = "BEGIN:VEVENT\nUID:long\nRRULE:FREQ=WEEKLY;BYDAY=TU,TH\n\
            DTSTART;VALUE=DATE:10130108\nDTEND;VALUE=DATE:20260220\nEND:VEVENT\n";
        let e = events_in(text, 1_795_564_800_000, 1_795_651_200_000).unwrap_err();
        assert!(e.0.contains("more than 10001 occurrences"), "{}", e.0);
        // The fuzz target's window of 130 years refuses it too.
        assert!(events(text).unwrap_err().0.contains("occurrences overlap"));
    }

    #[test]
    fn quoted_parameters_may_hold_colons_and_semicolons() {
        let p = Property::parse("URL;LABEL=\"a:b;c\";X=1:https://x.example/y").unwrap();
        assert_eq!(p.name, "URL");
        assert_eq!(p.param("LABEL"), Some("a:b;c"));
        assert_eq!(p.value, "https://x.example/y");
    }

    #[test]
    fn odd_input_never_panics() {
        let deep = "BEGIN:X\n".repeat(10_000) + "BEGIN:VEVENT\nUID:a\nEND:VEVENT\n";
        // Every day since 1601 in a zone whose rules start then, read from 1970 to 2100.
        let exchange_daily = BERLIN_STANDUP
            .replace("19700329T020000", "16010101T020000")
            .replace("19701025T030000", "16010101T030000")
            .replace("20261022T100000", "16010101T100000")
            .replace("COUNT=8", "INTERVAL=1");
        for text in [
            "",
            "BEGIN:VEVENT",
            "END:VEVENT\nEND:VEVENT",
            "BEGIN:VEVENT\nUID:é\nDTSTART:é\nEND:VEVENT",
            "BEGIN:VEVENT\n \n\t\n:::\n;;;\nEND:VEVENT",
            "\u{feff}BEGIN:VCALENDAR\n\\",
            deep.as_str(),
            "BEGIN:VEVENT\nUID:a\nDTSTART:16010101T000000Z\nRRULE:FREQ=DAILY\nEND:VEVENT",
            &exchange_daily,
        ] {
            let _ = events(text);
        }
        assert!(events("BEGIN:VEVENT\nDTSTART:20261125T100000Z\nEND:VEVENT").is_err());
        assert_eq!(unescape("a\\"), "a\\");
    }

    #[test]
    fn the_corpus_reads_from_1970_to_2100() {
        // What the fuzz target's window asks of every corpus file (tests/ical_corpus.rs checks
        // the events).
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ical_corpus");
        let mut read = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "ics") {
                let text = std::fs::read_to_string(&path).unwrap();
                read += usize::from(events(&text).is_ok());
            }
        }
        assert_eq!(read, 17);
    }

    /// Berlin as CalDAV clients write it, and a daily 10:00 standup across the end of summer
    /// time (2026-10-25) with a moved, a cancelled and a removed occurrence.
    const BERLIN_STANDUP: &str = "BEGIN:VCALENDAR
BEGIN:VTIMEZONE
TZID:Europe/Berlin
BEGIN:DAYLIGHT
TZOFFSETFROM:+0100
TZOFFSETTO:+0200
DTSTART:19700329T020000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU
END:DAYLIGHT
BEGIN:STANDARD
TZOFFSETFROM:+0200
TZOFFSETTO:+0100
DTSTART:19701025T030000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU
END:STANDARD
END:VTIMEZONE
BEGIN:VEVENT
UID:s
DTSTART;TZID=Europe/Berlin:20261022T100000
DTEND;TZID=Europe/Berlin:20261022T101500
RRULE:FREQ=DAILY;COUNT=8
EXDATE;TZID=Europe/Berlin:20261024T100000
SUMMARY:Standup
END:VEVENT
BEGIN:VEVENT
UID:s
RECURRENCE-ID;TZID=Europe/Berlin:20261026T100000
DTSTART;TZID=Europe/Berlin:20261026T140000
DTEND;TZID=Europe/Berlin:20261026T143000
SUMMARY:Standup (afternoon)
END:VEVENT
BEGIN:VEVENT
UID:s
RECURRENCE-ID:20261027T090000Z
DTSTART;TZID=Europe/Berlin:20261027T100000
DTEND;TZID=Europe/Berlin:20261027T101500
STATUS:CANCELLED
END:VEVENT
END:VCALENDAR
";

    fn seen(events: &[CalendarEvent]) -> Vec<(String, i64, bool)> {
        let mut seen: Vec<_> = events
            .iter()
            .map(|e| {
                (
                    format_utc(e.start_ms),
                    (e.end_ms - e.start_ms) / 60_000,
                    e.cancelled,
                )
            })
            .collect();
        seen.sort();
        seen
    }

    #[test]
    fn a_recurring_master_expands_in_its_zone_across_summer_time() {
        let events = events_in(BERLIN_STANDUP, 0, i64::MAX / 2).unwrap();
        let s = |t: &str, minutes, cancelled| (t.to_owned(), minutes, cancelled);
        assert_eq!(
            seen(&events),
            vec![
                s("20261022T080000Z", 15, false),
                s("20261023T080000Z", 15, false),
                // 24th: EXDATE. 25th: summer time ends at 03:00, 10:00 is now UTC+1.
                s("20261025T090000Z", 15, false),
                s("20261026T130000Z", 30, false),
                s("20261027T090000Z", 15, true),
                s("20261028T090000Z", 15, false),
                s("20261029T090000Z", 15, false),
            ]
        );
        assert_eq!(
            events
                .iter()
                .filter(|e| e.title.as_deref() == Some("Standup"))
                .count(),
            5
        );
    }

    #[test]
    fn only_the_windows_occurrences_are_made() {
        let daily = "BEGIN:VEVENT\nUID:d\nDTSTART:20100101T090000Z\nDURATION:PT1H\n\
RRULE:FREQ=DAILY\nEND:VEVENT\n";
        let day = 86_400_000;
        let from = parse_utc("20261125T000000Z").unwrap();
        let events = events_in(daily, from, from + day).unwrap();
        // The window's day and the margin either side of it.
        assert!((1..=5).contains(&events.len()), "{}", events.len());
        assert!(
            events
                .iter()
                .any(|e| format_utc(e.start_ms) == "20261125T090000Z")
        );
    }

    #[test]
    fn an_all_day_series_is_named_by_its_days() {
        // Exchange names an all-day occurrence by its local midnight; a date EXDATE removes a
        // timed occurrence of that day.
        let text = "BEGIN:VEVENT\nUID:a\nDTSTART;VALUE=DATE:20260219\nDTEND;VALUE=DATE:20260220\n\
RRULE:FREQ=WEEKLY;COUNT=3\nEND:VEVENT\nBEGIN:VEVENT\nUID:a\n\
RECURRENCE-ID;TZID=W. Europe Standard Time:20260226T000000\nDTSTART;VALUE=DATE:20260227\n\
END:VEVENT\nBEGIN:VEVENT\nUID:b\nDTSTART:20240609T030000Z\nRRULE:FREQ=DAILY;COUNT=3\n\
EXDATE;VALUE=DATE:20240610\nRDATE:20240620T030000Z\nEND:VEVENT\n";
        let starts: Vec<String> = events_in(text, 0, i64::MAX / 2)
            .unwrap()
            .iter()
            .map(|e| format!("{} {}", e.uid, format_utc(e.start_ms)))
            .collect();
        assert_eq!(
            starts,
            [
                "a 20260227T000000Z",
                "a 20260219T000000Z",
                "a 20260305T000000Z",
                "b 20240609T030000Z",
                "b 20240611T030000Z",
                "b 20240620T030000Z"
            ]
        );
    }

    #[test]
    fn what_is_not_supported_is_refused_saying_what() {
        let event = |extra: &str| {
            format!("BEGIN:VEVENT\nUID:x\nDTSTART:20261125T100000Z\n{extra}END:VEVENT\n")
        };
        for (extra, said) in [
            ("RRULE:FREQ=MONTHLY;BYSETPOS=1;BYDAY=MO\n", "BYSETPOS"),
            (
                "RRULE:FREQ=DAILY\nRRULE:FREQ=WEEKLY\n",
                "RRULE is given twice",
            ),
            ("DTSTART:20261126T100000Z\n", "DTSTART is given twice"),
            ("RDATE;VALUE=PERIOD:20261126T100000Z/PT1H\n", "PERIOD"),
            ("EXRULE:FREQ=DAILY\n", "EXRULE"),
            (
                "RECURRENCE-ID;RANGE=THISANDFUTURE:20261125T100000Z\n",
                "THISANDFUTURE",
            ),
            ("RDATE:20261210Z\n", "RDATE is not a date-time"),
        ] {
            let e = events(&event(extra)).unwrap_err();
            assert!(e.0.contains(said), "{extra}: {}", e.0);
        }
        // One UID twice: read as two events (as before), unless it is a recurring series.
        let twice = event("") + &event("");
        assert_eq!(events(&twice).unwrap().len(), 2);
        let series = event("RRULE:FREQ=DAILY;COUNT=2\n") + &event("");
        assert!(events(&series).unwrap_err().0.contains("2 times"));
    }
}

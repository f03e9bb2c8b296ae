//! The part of iCalendar (RFC 5545) a room needs: the VEVENTs of a VCALENDAR object, with
//! their times, texts and join links.
//!
//! Decisions:
//! - Times must be UTC (`…Z`) or dates. A CalDAV server asked to expand (RFC 4791 §9.6.5)
//!   returns UTC; a local time (`TZID=` or floating) means the server did not, and is refused
//!   rather than guessed, since a guess would dial rooms at the wrong hour.
//! - A date (all-day event) starts at midnight UTC; without DTEND or DURATION it lasts one day
//!   (a date-time event without either lasts no time), as RFC 5545 §3.6.1 says.
//! - Join links come from URL, CONFERENCE (RFC 7986) and the vendors' X- properties that carry
//!   one (`X-GOOGLE-CONFERENCE`, `X-MICROSOFT-SKYPETEAMSMEETINGURL`).
//! - Properties of components inside a VEVENT (VALARM) are not the event's.

use crate::civil::{parse_date, parse_duration, parse_utc};
use roomlink_domain::calendar::CalendarEvent;

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

/// The VEVENTs of one iCalendar object.
pub(crate) fn events(text: &str) -> Result<Vec<CalendarEvent>, IcalError> {
    let mut events = Vec::new();
    let mut current: Option<EventBuilder> = None;
    // Components opened inside the current VEVENT (VALARM, ...), whose properties are skipped.
    let mut nested = 0usize;
    for line in unfold(text) {
        let Some(property) = Property::parse(&line) else {
            continue;
        };
        match (property.name.as_str(), property.value.as_str()) {
            ("BEGIN", "VEVENT") if current.is_none() => current = Some(EventBuilder::default()),
            ("BEGIN", _) if current.is_some() => nested += 1,
            ("END", "VEVENT") if nested == 0 => {
                if let Some(event) = current.take() {
                    events.push(event.build()?);
                }
            }
            ("END", _) if current.is_some() => nested = nested.saturating_sub(1),
            _ if nested == 0 => {
                if let Some(event) = current.as_mut() {
                    event.take(property)?;
                }
            }
            _ => {}
        }
    }
    Ok(events)
}

/// Content lines with folding undone (a line starting with a space or tab continues the last).
fn unfold(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for raw in text.split('\n') {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        match (raw.strip_prefix([' ', '\t']), lines.last_mut()) {
            (Some(rest), Some(last)) => last.push_str(rest),
            _ if raw.is_empty() => {}
            _ => lines.push(raw.to_owned()),
        }
    }
    lines
}

struct Property {
    name: String,
    /// Parameter names upper-cased, values without their quotes.
    params: Vec<(String, String)>,
    value: String,
}

impl Property {
    /// `NAME;PARAM=value;PARAM="quoted:value":value`; `None` for a line that is not one.
    fn parse(line: &str) -> Option<Property> {
        let mut in_quotes = false;
        let mut value_at = None;
        for (i, c) in line.char_indices() {
            match c {
                '"' => in_quotes = !in_quotes,
                ':' if !in_quotes => {
                    value_at = Some(i);
                    break;
                }
                _ => {}
            }
        }
        let value_at = value_at?;
        let (head, value) = (&line[..value_at], &line[value_at + 1..]);
        let mut parts = split_unquoted(head, ';').into_iter();
        let name = parts.next()?.trim().to_ascii_uppercase();
        if name.is_empty() {
            return None;
        }
        let params = parts
            .filter_map(|p| {
                let (k, v) = p.split_once('=')?;
                Some((
                    k.trim().to_ascii_uppercase(),
                    v.trim_matches('"').to_owned(),
                ))
            })
            .collect();
        Some(Property {
            name,
            params,
            value: value.to_owned(),
        })
    }

    fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn split_unquoted(text: &str, separator: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut in_quotes) = (0, false);
    for (i, c) in text.char_indices() {
        if c == '"' {
            in_quotes = !in_quotes;
        } else if c == separator && !in_quotes {
            parts.push(&text[start..i]);
            start = i + c.len_utf8();
        }
    }
    parts.push(&text[start..]);
    parts
}

/// A TEXT value with its escapes (`\n`, `\,`, `\;`, `\\`) undone.
fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n' | 'N') => out.push('\n'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// A DTSTART or DTEND: milliseconds, and whether it was a date.
fn instant(property: &Property) -> Result<(i64, bool), IcalError> {
    let value = property.value.trim();
    let is_date = property.param("VALUE") == Some("DATE") || value.len() == 8;
    let parsed = if is_date {
        parse_date(value)
    } else {
        parse_utc(value)
    };
    match parsed {
        Some(ms) => Ok((ms, is_date)),
        None if property.param("TZID").is_some() || parse_utc(&format!("{value}Z")).is_some() => {
            Err(IcalError(format!(
                "{} is a local time ({}), not UTC: the server did not expand the events",
                property.name,
                property.param("TZID").unwrap_or("floating")
            )))
        }
        None => Err(IcalError(format!(
            "{} is not a date-time: '{}'",
            property.name,
            value.chars().take(40).collect::<String>()
        ))),
    }
}

#[derive(Default)]
struct EventBuilder {
    uid: Option<String>,
    title: Option<String>,
    start: Option<(i64, bool)>,
    end: Option<i64>,
    duration: Option<i64>,
    location: Option<String>,
    description: Option<String>,
    links: Vec<String>,
    cancelled: bool,
}

impl EventBuilder {
    fn take(&mut self, p: Property) -> Result<(), IcalError> {
        let text = || Some(unescape(&p.value)).filter(|t| !t.trim().is_empty());
        match p.name.as_str() {
            "UID" => self.uid = Some(p.value.trim().to_owned()),
            "SUMMARY" => self.title = text(),
            "LOCATION" => self.location = text(),
            "DESCRIPTION" => self.description = text(),
            "STATUS" => self.cancelled = p.value.trim().eq_ignore_ascii_case("CANCELLED"),
            "DTSTART" => self.start = Some(instant(&p)?),
            "DTEND" => self.end = Some(instant(&p)?.0),
            "DURATION" => {
                self.duration = Some(parse_duration(p.value.trim()).ok_or_else(|| {
                    IcalError(format!("DURATION is not a duration: '{}'", p.value))
                })?)
            }
            name if LINK_PROPERTIES.contains(&name) => {
                let link = p.value.trim();
                if !link.is_empty() && !self.links.iter().any(|l| l == link) {
                    self.links.push(link.to_owned());
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn build(self) -> Result<CalendarEvent, IcalError> {
        let uid = self
            .uid
            .ok_or_else(|| IcalError("a VEVENT without a UID".to_owned()))?;
        let (start_ms, is_date) = self
            .start
            .ok_or_else(|| IcalError(format!("VEVENT {uid} has no DTSTART")))?;
        let end_ms = match (self.end, self.duration) {
            (Some(end), _) => end,
            (None, Some(duration)) => start_ms.saturating_add(duration),
            (None, None) if is_date => start_ms + 86_400_000,
            (None, None) => start_ms,
        };
        Ok(CalendarEvent {
            uid,
            title: self.title,
            start_ms,
            end_ms,
            location: self.location,
            description: self.description,
            conference_uris: self.links,
            cancelled: self.cancelled,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
DTSTART;VALUE=DATE:20261126\nEND:VEVENT\nEND:VCALENDAR\n";
        let events = events(text).unwrap();
        assert_eq!(events.len(), 2);
        assert_eq!(events[0].end_ms - events[0].start_ms, 1_800_000);
        assert!(events[0].cancelled);
        assert_eq!(events[1].end_ms - events[1].start_ms, 86_400_000);
        assert!(!events[1].cancelled);
    }

    #[test]
    fn local_times_are_refused_not_guessed() {
        let text = "BEGIN:VEVENT\nUID:a\nDTSTART;TZID=Europe/Berlin:20261125T100000\nEND:VEVENT\n";
        let e = events(text).unwrap_err();
        assert!(e.0.contains("Europe/Berlin"), "{}", e.0);
        let floating = "BEGIN:VEVENT\nUID:a\nDTSTART:20261125T100000\nEND:VEVENT\n";
        assert!(events(floating).unwrap_err().0.contains("floating"));
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
        for text in [
            "",
            "BEGIN:VEVENT",
            "END:VEVENT\nEND:VEVENT",
            "BEGIN:VEVENT\nUID:é\nDTSTART:é\nEND:VEVENT",
            "BEGIN:VEVENT\n \n\t\n:::\n;;;\nEND:VEVENT",
            "\u{feff}BEGIN:VCALENDAR\n\\",
        ] {
            let _ = events(text);
        }
        assert!(events("BEGIN:VEVENT\nDTSTART:20261125T100000Z\nEND:VEVENT").is_err());
        assert_eq!(unescape("a\\"), "a\\");
    }
}

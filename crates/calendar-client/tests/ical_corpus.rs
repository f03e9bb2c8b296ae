//! The iCalendar parser on other projects' test corpora (`ical_corpus/`, sources in
//! `ical_corpus/SOURCES.md`): RFC 5545 examples and real exports of Google, Exchange, Apple and
//! Zimbra, with time zones, daylight-saving changes, all-day events, recurrences, exceptions and
//! folded lines. Each file is served as the `calendar-data` of a CalDAV `calendar-query`
//! answer and read by the CalDAV reader, as a room's calendar would be. Each test says what the
//! file holds and either the events it must give (times worked out by hand from the file) or
//! why it must be refused.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

use roomlink_calendar::CalDavReader;
use roomlink_domain::calendar::CalendarEvent;
use roomlink_domain::civil::{MS_PER_DAY, UtcParts, days_from_civil};
use roomlink_domain::enums::CalendarType;
use roomlink_domain::error::ErrorKind;
use roomlink_domain::ports::{CalendarAccount, CalendarReader};
use std::path::PathBuf;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ical_corpus")
}

/// `2012-11-03T12:00:00Z` in milliseconds.
fn at(text: &str) -> i64 {
    let n = |range: std::ops::Range<usize>| text[range].parse::<i64>().unwrap();
    assert_eq!(text.len(), 20, "{text}");
    days_from_civil(n(0..4), n(5..7), n(8..10)) * MS_PER_DAY
        + ((n(11..13) * 60 + n(14..16)) * 60 + n(17..19)) * 1000
}

/// The events the CalDAV reader reads from `file` for the window `[from, to)`, or its error
/// message.
async fn read(file: &str, from: &str, to: &str) -> Result<Vec<CalendarEvent>, String> {
    let ics = std::fs::read_to_string(corpus().join(file)).unwrap();
    let escaped = ics
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\r', "&#13;");
    let body = format!(
        r#"<?xml version="1.0" encoding="utf-8"?>
<D:multistatus xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
<D:response><D:href>/rooms/room/{file}</D:href><D:propstat><D:prop>
<C:calendar-data>{escaped}</C:calendar-data>
</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>
</D:multistatus>"#
    );
    let server = MockServer::start().await;
    Mock::given(method("REPORT"))
        .respond_with(ResponseTemplate::new(207).set_body_string(body))
        .mount(&server)
        .await;
    let account = CalendarAccount {
        calendar_type: CalendarType::CalDav,
        token_url: None,
        base_url: format!("{}/rooms/", server.uri()),
        username: None,
        secret: None,
    };
    CalDavReader::new()
        .events(&account, "room", at(from), at(to))
        .await
        .map_err(|e| {
            assert_eq!(e.kind(), ErrorKind::CalendarServerException);
            e.message().to_owned()
        })
}

/// Each event's start and end, RFC 3339 in UTC, and its title.
fn times(events: &[CalendarEvent]) -> Vec<(String, String, String)> {
    events
        .iter()
        .map(|e| {
            (
                UtcParts::of(e.start_ms).rfc3339(),
                UtcParts::of(e.end_ms).rfc3339(),
                e.title.clone().unwrap_or_default(),
            )
        })
        .collect()
}

fn row(start: &str, end: &str, title: &str) -> (String, String, String) {
    (start.to_owned(), end.to_owned(), title.to_owned())
}

/// Reads `file` expecting a refusal that says `reason`.
async fn refused(file: &str, reason: &str) {
    let message = read(file, "1990-01-01T00:00:00Z", "2030-01-01T00:00:00Z")
        .await
        .unwrap_err();
    assert!(message.contains(reason), "{file}: {message}");
}

#[tokio::test]
async fn every_file_is_named_in_sources_and_read_here() {
    let sources = std::fs::read_to_string(corpus().join("SOURCES.md")).unwrap();
    let this = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ical_corpus.rs"),
    )
    .unwrap();
    let mut files = 0;
    for entry in std::fs::read_dir(corpus()).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".ics") {
            files += 1;
            assert!(
                sources.contains(&format!("`{name}`")),
                "{name} not in SOURCES.md"
            );
            assert!(
                this.contains(&format!("\"{name}\"")),
                "{name} read by no test"
            );
        }
    }
    assert!(files >= 25, "{files}");
}

// --- Time zones -------------------------------------------------------------------------

/// Plone: a Vienna VTIMEZONE and a winter event (CET, UTC+1).
#[tokio::test]
async fn vienna_in_winter() {
    let events = read(
        "icalendar_timezoned.ics",
        "2012-02-01T00:00:00Z",
        "2012-03-01T00:00:00Z",
    )
    .await
    .unwrap();
    assert_eq!(
        times(&events),
        [row(
            "2012-02-13T09:00:00Z",
            "2012-02-17T17:00:00Z",
            "artsprint 2012"
        )]
    );
    assert_eq!(events[0].location.as_deref(), Some("aka bild, wien"));
}

/// New York's history as seven observances (rules with UNTIL, one-off RDATEs); in August 2014
/// the 2007 rule holds: EDT, UTC−4.
#[tokio::test]
async fn new_york_with_its_history() {
    let events = read(
        "icalendar_america_new_york.ics",
        "2014-08-29T00:00:00Z",
        "2014-08-30T00:00:00Z",
    )
    .await
    .unwrap();
    assert_eq!(
        times(&events),
        [row(
            "2014-08-29T12:00:00Z",
            "2014-08-29T14:00:00Z",
            "an event with a custom tz name"
        )]
    );
}

/// A zone going from UTC+12 to UTC+10 at 08:00 on 2024-05-05: 06:00 to 08:00 happen twice,
/// and RFC 5545 means the first (still UTC+12). The fourth summary is folded.
#[tokio::test]
async fn a_zone_setting_clocks_back_means_the_first_of_a_repeated_hour() {
    let events = read(
        "icalendar_issue_722_timezone_transition_ambiguity.ics",
        "2024-01-01T00:00:00Z",
        "2025-01-01T00:00:00Z",
    )
    .await
    .unwrap();
    let starts: Vec<(String, String)> = events
        .iter()
        .map(|e| (e.uid.clone(), UtcParts::of(e.start_ms).rfc3339()))
        .collect();
    let s = |uid: &str, t: &str| (uid.to_owned(), t.to_owned());
    assert_eq!(
        starts,
        [
            s("0", "2024-03-02T20:00:00Z"),
            // 07:00:01 at UTC+12.
            s("3", "2024-05-04T19:00:01Z"),
            // 08:00:01 only happens at UTC+10.
            s("2", "2024-05-04T22:00:01Z"),
            s("1", "2024-08-02T22:00:00Z"),
        ]
    );
    assert_eq!(
        events[1].title.as_deref(),
        Some(
            "Transition is from 8am -> 6am, so 7:00:01 is winter RFC5545 does not allow us to be \
             at the later TZ."
        )
    );
    assert_eq!(events[1].start_ms % 1000, 0);
}

/// Exchange: a VTIMEZONE whose TZID holds escaped commas, named by a quoted parameter.
#[tokio::test]
async fn an_exchange_zone_named_with_commas() {
    let events = read(
        "nodeical_exchange-custom-tz.ics",
        "2019-04-30T00:00:00Z",
        "2019-05-01T00:00:00Z",
    )
    .await
    .unwrap();
    assert_eq!(
        times(&events),
        [row(
            "2019-04-30T02:00:00Z",
            "2019-04-30T05:00:00Z",
            "Test event"
        )]
    );
    assert_eq!(events[0].location, None);
}

/// Two eras of US rules in one VTIMEZONE from 1671 (the old ones never end): both dates are
/// in summer time, UTC−4.
#[tokio::test]
async fn a_zone_with_two_eras_of_rules() {
    let events = read(
        "nodeical_multi-era-vtimezone.ics",
        "1985-01-01T00:00:00Z",
        "2026-01-01T00:00:00Z",
    )
    .await
    .unwrap();
    assert_eq!(
        times(&events),
        [
            row(
                "1985-10-15T18:00:00Z",
                "1985-10-15T19:00:00Z",
                "Event in 1985 (old rule)"
            ),
            row(
                "2025-06-10T18:00:00Z",
                "2025-06-10T19:00:00Z",
                "Event in 2025 (modern rule)"
            ),
        ]
    );
}

/// Exchange, a custom zone with rules from 1601: a weekly Tuesday/Thursday 10:35 that stays at
/// 10:35 local when New York time ends summer time on 2020-11-01, until UNTIL (inclusive).
#[tokio::test]
async fn an_exchange_series_keeps_its_local_time_across_the_end_of_summer_time() {
    let autumn = read(
        "nodeical_bad_ms_tz.ics",
        "2020-10-26T00:00:00Z",
        "2020-11-07T00:00:00Z",
    )
    .await
    .unwrap();
    let starts = |events: &[CalendarEvent]| -> Vec<String> {
        events
            .iter()
            .map(|e| UtcParts::of(e.start_ms).rfc3339())
            .collect()
    };
    assert_eq!(
        starts(&autumn),
        [
            "2020-10-27T14:35:00Z",
            "2020-10-29T14:35:00Z",
            "2020-11-03T15:35:00Z",
            "2020-11-05T15:35:00Z"
        ]
    );
    assert!(autumn.iter().all(|e| e.end_ms - e.start_ms == 75 * 60_000));
    assert_eq!(autumn[0].location.as_deref(), Some(" [private]"));
    // UNTIL=20201217T153500Z is the last Thursday's start: it is the last occurrence.
    let december = read(
        "nodeical_bad_ms_tz.ics",
        "2020-12-14T00:00:00Z",
        "2021-01-31T00:00:00Z",
    )
    .await
    .unwrap();
    assert_eq!(
        starts(&december),
        ["2020-12-15T15:35:00Z", "2020-12-17T15:35:00Z"]
    );
}

// --- Recurrences, overrides, exceptions -----------------------------------------------------

/// Google: every day at 05:00 in Los Angeles, without end; summer time ends 2012-11-04.
#[tokio::test]
async fn google_daily_keeps_5am_in_los_angeles_across_the_change() {
    let events = read(
        "icaljs_daily_recur.ics",
        "2012-11-03T00:00:00Z",
        "2012-11-06T00:00:00Z",
    )
    .await
    .unwrap();
    let title = "Every day recurring";
    assert_eq!(
        times(&events),
        [
            row("2012-11-03T12:00:00Z", "2012-11-03T13:00:00Z", title),
            row("2012-11-04T13:00:00Z", "2012-11-04T14:00:00Z", title),
            row("2012-11-05T13:00:00Z", "2012-11-05T14:00:00Z", title),
        ]
    );
    // Fourteen years on, the same rule still reads (PST in November).
    let later = read(
        "icaljs_daily_recur.ics",
        "2026-11-25T00:00:00Z",
        "2026-11-26T00:00:00Z",
    )
    .await
    .unwrap();
    assert_eq!(times(&later)[0].0, "2026-11-25T13:00:00Z");
}

/// Google: an all-day event every weekday from Friday 2012-08-03.
#[tokio::test]
async fn google_all_day_on_weekdays() {
    let events = read(
        "icaljs_day_long_recur_yearly.ics",
        "2012-08-03T00:00:00Z",
        "2012-08-10T00:00:00Z",
    )
    .await
    .unwrap();
    let days: Vec<String> = events
        .iter()
        .map(|e| {
            assert_eq!(e.end_ms - e.start_ms, MS_PER_DAY);
            UtcParts::of(e.start_ms).rfc3339()
        })
        .collect();
    assert_eq!(
        days,
        [
            "2012-08-03T00:00:00Z",
            "2012-08-06T00:00:00Z",
            "2012-08-07T00:00:00Z",
            "2012-08-08T00:00:00Z",
            "2012-08-09T00:00:00Z"
        ]
    );
}

/// Zimbra: monthly on the first Tuesday at 10:00 Los Angeles until a local UNTIL, with two
/// RDATEs; October is summer time (UTC−7), November and December are not (UTC−8).
#[tokio::test]
async fn zimbra_monthly_first_tuesday_with_rdates() {
    let events = read(
        "icaljs_recur_instances_finite.ics",
        "2012-09-01T00:00:00Z",
        "2013-03-01T00:00:00Z",
    )
    .await
    .unwrap();
    let title = "Crazy Event Thingy!";
    assert_eq!(
        times(&events),
        [
            row("2012-10-02T17:00:00Z", "2012-10-02T17:30:00Z", title),
            row("2012-11-05T18:00:00Z", "2012-11-05T18:30:00Z", title),
            row("2012-11-06T18:00:00Z", "2012-11-06T18:30:00Z", title),
            row("2012-11-10T18:00:00Z", "2012-11-10T18:30:00Z", title),
            row("2012-12-04T18:00:00Z", "2012-12-04T18:30:00Z", title),
        ]
    );
    assert_eq!(events[0].location.as_deref(), Some("PLACE"));
    assert_eq!(events[0].description.as_deref(), Some("IAM FOO"));
}

/// Google: daily at 14:00 Kyiv (EEST, UTC+3) until 2016-08-28T11:00Z, the 26th overridden
/// (same time, new title).
#[tokio::test]
async fn google_daily_with_an_override_until_a_utc_end() {
    let events = read(
        "nodeical_google-calendar-kiev-tz.ics",
        "2016-08-20T00:00:00Z",
        "2016-09-01T00:00:00Z",
    )
    .await
    .unwrap();
    assert_eq!(
        times(&events),
        [
            row("2016-08-25T11:00:00Z", "2016-08-25T12:00:00Z", "repeated"),
            row("2016-08-26T11:00:00Z", "2016-08-26T12:00:00Z", "bla bla"),
            row("2016-08-27T11:00:00Z", "2016-08-27T12:00:00Z", "repeated"),
            row("2016-08-28T11:00:00Z", "2016-08-28T12:00:00Z", "repeated"),
        ]
    );
    assert!(events.iter().all(|e| e.location.is_none()));
}

/// Google: three all-day occurrences from 2024-10-27, the second moved to the 30th.
#[tokio::test]
async fn google_all_day_series_with_a_moved_day() {
    let events = read(
        "nodeical_whole_day_moved_over_dst_change_berlin.ics",
        "2024-10-20T00:00:00Z",
        "2024-11-10T00:00:00Z",
    )
    .await
    .unwrap();
    let title = "test whole day moved";
    assert_eq!(
        times(&events),
        [
            row("2024-10-27T00:00:00Z", "2024-10-28T00:00:00Z", title),
            row("2024-10-29T00:00:00Z", "2024-10-30T00:00:00Z", title),
            row("2024-10-30T00:00:00Z", "2024-10-31T00:00:00Z", title),
        ]
    );
}

/// Exchange: all-day on Tuesdays and Thursdays from 2026-02-19 until 2026-08-17T22:00Z (18
/// August's midnight in Berlin, as Exchange ends a series at its last day's start); the
/// 26th is moved to the 27th by an override naming it with a local midnight (in a zone the
/// first file defines, the second does not: an all-day occurrence is named by its day).
#[tokio::test]
async fn exchange_all_day_series_with_a_moved_day() {
    for file in [
        "nodeical_exchange_whole_day_moved_recurrence.ics",
        "nodeical_exchange_whole_day_moved_recurrence_offset_tz.ics",
    ] {
        let events = read(file, "2026-02-16T00:00:00Z", "2026-03-06T00:00:00Z")
            .await
            .unwrap();
        let days: Vec<String> = events
            .iter()
            .map(|e| UtcParts::of(e.start_ms).rfc3339()[..10].to_owned())
            .collect();
        assert_eq!(
            days,
            [
                "2026-02-19",
                "2026-02-24",
                "2026-02-27",
                "2026-03-03",
                "2026-03-05"
            ],
            "{file}"
        );
        assert!(events.iter().all(|e| e.end_ms - e.start_ms == MS_PER_DAY));
        let end = read(file, "2026-08-10T00:00:00Z", "2026-08-31T00:00:00Z")
            .await
            .unwrap();
        let days: Vec<String> = end
            .iter()
            .map(|e| UtcParts::of(e.start_ms).rfc3339()[..10].to_owned())
            .collect();
        // UNTIL is 18 August's midnight in Berlin: the last day is that Tuesday.
        assert_eq!(days, ["2026-08-11", "2026-08-13", "2026-08-18"], "{file}");
    }
}

/// ical.js: daily at 03:00Z, four times, less the day an EXDATE gives as a date.
#[tokio::test]
async fn an_exdate_given_as_a_date() {
    let events = read(
        "icaljs_rdate_exdate.ics",
        "2024-06-01T00:00:00Z",
        "2024-07-01T00:00:00Z",
    )
    .await
    .unwrap();
    let starts: Vec<String> = events
        .iter()
        .map(|e| UtcParts::of(e.start_ms).rfc3339())
        .collect();
    assert_eq!(
        starts,
        [
            "2024-06-09T03:00:00Z",
            "2024-06-10T03:00:00Z",
            "2024-06-12T03:00:00Z"
        ]
    );
}

// --- Plain events, all-day, folding -----------------------------------------------------

/// Google: an event in UTC with four VALARMs (whose SUMMARY is not the event's).
#[tokio::test]
async fn google_event_with_alarms() {
    let events = read(
        "icalendar_alarm_google_future.ics",
        "2024-10-04T00:00:00Z",
        "2024-10-05T00:00:00Z",
    )
    .await
    .unwrap();
    assert_eq!(
        times(&events),
        [row(
            "2024-10-04T18:15:00Z",
            "2024-10-04T19:00:00Z",
            "event with alarms"
        )]
    );
    assert_eq!(events[0].uid, "79fs7pkqvht9m5igs0vjv1sfra@google.com");
}

/// Holidays whose DTEND equals DTSTART (CR LF line ends): each lasts its day.
#[tokio::test]
async fn all_day_holidays_ending_when_they_start() {
    let events = read(
        "icalendar_example.ics",
        "2022-01-01T00:00:00Z",
        "2022-04-01T00:00:00Z",
    )
    .await
    .unwrap();
    assert_eq!(
        times(&events),
        [
            row(
                "2022-01-01T00:00:00Z",
                "2022-01-02T00:00:00Z",
                "New Year's Day"
            ),
            row(
                "2022-01-07T00:00:00Z",
                "2022-01-08T00:00:00Z",
                "Orthodox Christmas"
            ),
            row(
                "2022-03-08T00:00:00Z",
                "2022-03-09T00:00:00Z",
                "International Women's Day"
            ),
        ]
    );
    assert_eq!(events[1].location.as_deref(), Some("Russia"));
    assert_eq!(events[0].description.as_deref(), Some("Happy New Year!"));
}

/// Mozilla: property names folded away from their values (even across an empty line), three
/// VCALENDARs in one object.
#[tokio::test]
async fn names_and_values_folded_apart() {
    let events = read(
        "icalendar_multiple_calendar_components.ics",
        "2003-01-01T00:00:00Z",
        "2004-01-01T00:00:00Z",
    )
    .await
    .unwrap();
    let seen: Vec<(String, String, String)> = events
        .iter()
        .map(|e| {
            (
                e.uid.clone(),
                UtcParts::of(e.start_ms).rfc3339(),
                UtcParts::of(e.end_ms).rfc3339(),
            )
        })
        .collect();
    let s = |a: &str, b: &str, c: &str| (a.to_owned(), b.to_owned(), c.to_owned());
    assert_eq!(
        seen,
        [
            s("911737808", "2003-05-01T00:00:00Z", "2003-05-02T00:00:00Z"),
            s("956630271", "2003-12-25T00:00:00Z", "2003-12-26T00:00:00Z"),
            s("wh4t3v3r", "2003-12-25T00:00:00Z", "2003-12-26T00:00:00Z"),
        ]
    );
    assert_eq!(events[1].title.as_deref(), Some("Christmas Day"));
    assert_eq!(events[0].title.as_deref(), Some("Boxing Day"));
}

// --- Refused, saying why ------------------------------------------------------------------

/// TZIDs of libical, Lightning and others with no VTIMEZONE in the object: no zone to read.
#[tokio::test]
async fn zones_the_object_does_not_define_are_refused() {
    refused(
        "icalendar_issue_313_globally_unique_tzid.ics",
        "is a local time (/freeassociation.sourceforge.net/Europe/Berlin) with no VTIMEZONE",
    )
    .await;
    // Apple: the first event is in UTC, the second names America/Vancouver only.
    refused(
        "nodeical_tentative-apple-calendar.ics",
        "is a local time (America/Vancouver) with no VTIMEZONE",
    )
    .await;
}

/// An event before the first onset its VTIMEZONE defines (RFC 2445's example zone starts in
/// October 1998, the meeting is in March): the offset then is unknown.
#[tokio::test]
async fn a_time_before_its_zone_is_refused() {
    refused(
        "libical_2445_xyz_review.ics",
        "19980312T083000 (US-Eastern) is before its time zone's first observance",
    )
    .await;
}

/// A floating DTSTART (no TZID, no Z), even beside a VTIMEZONE.
#[tokio::test]
async fn floating_times_are_refused() {
    refused(
        "nodeical_dst-transition-rules.ics",
        "DTSTART of VEVENT f683404f-aede-43eb-8774-27f62bb27c92 is a local time (floating",
    )
    .await;
}

/// What the expansion does not support, or the file gets wrong.
#[tokio::test]
async fn what_cannot_be_read_right_is_refused_saying_what() {
    for (file, reason) in [
        // Zimbra: an RDATE that is a period.
        (
            "icaljs_recur_instances.ics",
            "RDATE;VALUE=PERIOD is not supported",
        ),
        // RFC 5545's RDATE examples: the fourth is a period.
        (
            "icalendar_rfc_5545_RDATE_example.ics",
            "RDATE;VALUE=PERIOD is not supported",
        ),
        ("icaljs_multiple_rrules.ics", "RRULE is given twice"),
        ("icalendar_pacific_fiji.ics", "DTSTART is given twice"),
        // Google birthdays: `RDATE:20131210Z`, neither a date nor a date-time.
        (
            "icaljs_google_birthday.ics",
            "RDATE is not a date-time: '20131210Z'",
        ),
        // Exchange (Outlook Web Access 2012): events without UID.
        ("nodeical_Office-2012-owa.ics", "a VEVENT without a UID"),
        // Exchange: `DTSTART;TZID="W. Europe Standard Time:20200609T090000"`, the value inside
        // the quotes, is no property; the event has no start.
        ("nodeical_ms_timezones.ics", "has no DTSTART"),
    ] {
        refused(file, reason).await;
    }
}

//! The CalDAV reader against real CalDAV servers of two independent implementations, Radicale
//! and Xandikos (from PyPI; `.ci/setup` installs them), each started per test on a free loopback
//! port with its own storage: every test runs on both.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

use roomlink_calendar::CalDavReader;
use roomlink_calendar::testing::{CalDavServer, PASSWORD, USER, vcalendar};
use roomlink_domain::calendar::CalendarEvent;
use roomlink_domain::enums::CalendarType;
use roomlink_domain::error::ErrorKind;
use roomlink_domain::ports::{CalendarAccount, CalendarRead, CalendarReader};
use roomlink_domain::secret::Secret;

const ROOM: &str = "huddle-4@corp.example";

/// 2026-11-25T00:00:00Z.
const DAY: i64 = 1_795_564_800_000;
const HOUR: i64 = 3_600_000;

fn account(server: &CalDavServer, password: &str) -> CalendarAccount {
    CalendarAccount {
        calendar_type: CalendarType::CalDav,
        token_url: None,
        base_url: server.base_url(),
        username: Some(USER.to_owned()),
        secret: Some(Secret::new(password)),
    }
}

const BERLIN: &str = "BEGIN:VTIMEZONE
TZID:Europe/Berlin
BEGIN:STANDARD
DTSTART:19701025T030000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU
TZOFFSETFROM:+0200
TZOFFSETTO:+0100
TZNAME:CET
END:STANDARD
BEGIN:DAYLIGHT
DTSTART:19700329T020000
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU
TZOFFSETFROM:+0100
TZOFFSETTO:+0200
TZNAME:CEST
END:DAYLIGHT
END:VTIMEZONE
";

fn room_calendar() -> Vec<(&'static str, String)> {
    vec![
        (
            "review",
            vcalendar(
                "BEGIN:VEVENT
UID:review-77@corp.example
DTSTAMP:20261120T080000Z
DTSTART:20261125T140000Z
DTEND:20261125T150000Z
SUMMARY:Design review
LOCATION:Huddle 4
DESCRIPTION:Join the meeting: https://bluejeans.com/123456789/4321\\nOr dial in.
END:VEVENT
",
            ),
        ),
        (
            "standup",
            vcalendar(&format!(
                "{BERLIN}BEGIN:VEVENT
UID:standup@corp.example
DTSTAMP:20261101T080000Z
DTSTART;TZID=Europe/Berlin:20261123T100000
DTEND;TZID=Europe/Berlin:20261123T101500
RRULE:FREQ=DAILY;COUNT=10
SUMMARY:Standup
CONFERENCE;VALUE=URI;FEATURE=VIDEO:https://bluejeans.com/555000111
END:VEVENT
"
            )),
        ),
        (
            "next-week",
            vcalendar(
                "BEGIN:VEVENT
UID:later@corp.example
DTSTAMP:20261120T080000Z
DTSTART:20261202T140000Z
DTEND:20261202T150000Z
SUMMARY:Not in the window
END:VEVENT
",
            ),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn reads_a_rooms_day_with_recurrences_expanded_to_utc_on_radicale() {
    reads_a_rooms_day(CalDavServer::radicale()).await;
}

/// Xandikos (0.4) answers a `calendar-query` with `<C:expand>` without expanding: the daily
/// standup comes back as its master in Berlin time, with Berlin's VTIMEZONE. The reader expands
/// it itself, and reads the same day as on Radicale.
#[tokio::test(flavor = "multi_thread")]
async fn reads_a_rooms_day_with_recurrences_expanded_by_the_reader_on_xandikos() {
    reads_a_rooms_day(CalDavServer::xandikos()).await;
}

/// A weekly series at 10:00 Berlin time across the end of summer time (2026-10-25), with an
/// EXDATE, a moved and a cancelled occurrence: Radicale expands it, Xandikos leaves it to the
/// reader; both give the same occurrences, at 10:00 local before and after the change.
#[tokio::test(flavor = "multi_thread")]
async fn a_series_across_summer_time_reads_alike_on_both_servers() {
    let series = vcalendar(&format!(
        "{BERLIN}BEGIN:VEVENT
UID:weekly@corp.example
DTSTAMP:20261001T080000Z
DTSTART;TZID=Europe/Berlin:20261008T100000
DTEND;TZID=Europe/Berlin:20261008T110000
RRULE:FREQ=WEEKLY;BYDAY=TH;UNTIL=20261126T090000Z
EXDATE;TZID=Europe/Berlin:20261105T100000
SUMMARY:Weekly review
END:VEVENT
BEGIN:VEVENT
UID:weekly@corp.example
DTSTAMP:20261001T080000Z
RECURRENCE-ID;TZID=Europe/Berlin:20261029T100000
DTSTART;TZID=Europe/Berlin:20261030T140000
DTEND;TZID=Europe/Berlin:20261030T150000
SUMMARY:Weekly review (moved)
END:VEVENT
BEGIN:VEVENT
UID:weekly@corp.example
DTSTAMP:20261001T080000Z
RECURRENCE-ID;TZID=Europe/Berlin:20261112T100000
DTSTART;TZID=Europe/Berlin:20261112T100000
DTEND;TZID=Europe/Berlin:20261112T110000
STATUS:CANCELLED
SUMMARY:Weekly review
END:VEVENT
"
    ));
    // 2026-10-15 to 2026-11-30: 15th and 22nd in summer time (08:00Z), the 29th moved to
    // Friday 14:00 (13:00Z), 5 November removed, 12 November cancelled, 19 and 26 in winter
    // time (09:00Z; UNTIL is the 26th's start).
    let expected = [
        ("2026-10-15T08:00:00Z", "Weekly review", false),
        ("2026-10-22T08:00:00Z", "Weekly review", false),
        ("2026-10-30T13:00:00Z", "Weekly review (moved)", false),
        ("2026-11-12T09:00:00Z", "Weekly review", true),
        ("2026-11-19T09:00:00Z", "Weekly review", false),
        ("2026-11-26T09:00:00Z", "Weekly review", false),
    ];
    let (from, to) = (DAY - 41 * 24 * HOUR, DAY + 5 * 24 * HOUR);
    for server in [CalDavServer::radicale(), CalDavServer::xandikos()] {
        server.calendar(ROOM, &[("weekly", series.clone())]).await;
        let events = CalDavReader::new()
            .events(&account(&server, PASSWORD), ROOM, from, to)
            .await
            .unwrap();
        let seen: Vec<(String, &str, bool)> = events
            .iter()
            .map(|e| {
                assert_eq!(e.end_ms - e.start_ms, HOUR, "{}", server.name());
                (
                    roomlink_domain::civil::UtcParts::of(e.start_ms).rfc3339(),
                    e.title.as_deref().unwrap_or(""),
                    e.cancelled,
                )
            })
            .collect();
        let expected: Vec<(String, &str, bool)> = expected
            .iter()
            .map(|(t, title, cancelled)| ((*t).to_owned(), *title, *cancelled))
            .collect();
        assert_eq!(seen, expected, "{}", server.name());
    }
}

/// Each event's uid, start and end from the start of [`DAY`].
fn on_the_day(events: &[CalendarEvent]) -> Vec<(&str, i64, i64)> {
    events
        .iter()
        .map(|e| (e.uid.as_str(), e.start_ms - DAY, e.end_ms - DAY))
        .collect()
}

async fn reads_a_rooms_day(server: CalDavServer) {
    server.calendar(ROOM, &room_calendar()).await;
    let reader = CalDavReader::new();
    let events = reader
        .events(&account(&server, PASSWORD), ROOM, DAY, DAY + 24 * HOUR)
        .await
        .unwrap();
    let seen = on_the_day(&events);
    // 10:00 in Berlin is 09:00 UTC in November; the day's one occurrence of the daily standup.
    assert_eq!(
        seen,
        vec![
            ("standup@corp.example", 9 * HOUR, 9 * HOUR + 15 * 60_000),
            ("review-77@corp.example", 14 * HOUR, 15 * HOUR),
        ]
    );
    assert_eq!(
        events[0].conference_uris,
        vec!["https://bluejeans.com/555000111"]
    );
    assert_eq!(events[1].title.as_deref(), Some("Design review"));
    assert_eq!(events[1].location.as_deref(), Some("Huddle 4"));
    assert_eq!(
        events[1].description.as_deref(),
        Some("Join the meeting: https://bluejeans.com/123456789/4321\nOr dial in.")
    );

    // Three days: three standups, one review.
    let three_days = reader
        .events(
            &account(&server, PASSWORD),
            ROOM,
            DAY - 24 * HOUR,
            DAY + 48 * HOUR,
        )
        .await
        .unwrap();
    let standups = three_days
        .iter()
        .filter(|e| e.uid == "standup@corp.example");
    assert_eq!(standups.count(), 3);
    assert!(
        three_days
            .windows(2)
            .all(|w| w[0].start_ms <= w[1].start_ms)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn failures_are_calendar_server_errors_naming_the_calendar_and_no_secret_on_radicale() {
    failures_are_calendar_server_errors(CalDavServer::radicale()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn failures_are_calendar_server_errors_naming_the_calendar_and_no_secret_on_xandikos() {
    failures_are_calendar_server_errors(CalDavServer::xandikos()).await;
}

async fn failures_are_calendar_server_errors(server: CalDavServer) {
    server.calendar(ROOM, &room_calendar()).await;
    let reader = CalDavReader::new();
    let wrong = "wrong-secret-93c1";
    let mut cases = vec![
        (account(&server, wrong), ROOM, "refused the account"),
        (
            account(&server, PASSWORD),
            "nobody@corp.example",
            "no calendar",
        ),
        (
            CalendarAccount {
                base_url: "http://127.0.0.1:1/rooms/".to_owned(),
                ..account(&server, PASSWORD)
            },
            ROOM,
            "cannot connect",
        ),
    ];
    if !server.checks_passwords() {
        cases.remove(0);
    }
    for (account, calendar, expected) in cases {
        let e = reader
            .events(&account, calendar, DAY, DAY + 24 * HOUR)
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::CalendarServerException);
        let body = format!("{} {:?}", e.message(), e.details());
        assert!(body.contains(expected), "{calendar}: {body}");
        assert!(body.contains(calendar), "{body}");
        for secret in [PASSWORD, wrong] {
            assert!(!body.contains(secret), "{body}");
        }
    }
}

/// Polling: the collection's sync token is read first; the same token as last time answers
/// `Unchanged` (nothing else asked), a new one reads the window again.
#[tokio::test]
async fn an_unchanged_calendar_is_not_read_again_on_radicale() {
    an_unchanged_calendar_is_not_read_again(CalDavServer::radicale()).await;
}

#[tokio::test]
async fn an_unchanged_calendar_is_not_read_again_on_xandikos() {
    an_unchanged_calendar_is_not_read_again(CalDavServer::xandikos()).await;
}

async fn an_unchanged_calendar_is_not_read_again(server: CalDavServer) {
    server.calendar(ROOM, &room_calendar()).await;
    let reader = CalDavReader::new();
    let room_account = account(&server, PASSWORD);
    let (from, to) = (DAY, DAY + 24 * HOUR);
    let first = reader
        .events_since(&room_account, ROOM, from, to, None)
        .await
        .unwrap();
    let CalendarRead::Events { events, mark } = first else {
        panic!("a first read reads: {first:?}");
    };
    let mark = mark.unwrap_or_else(|| panic!("{} gives a sync token", server.name()));
    assert!(mark.starts_with("sync:"), "{mark}");
    let count = events.len();
    assert!(count >= 2, "{events:?}");
    let again = reader
        .events_since(&room_account, ROOM, from, to, Some(mark.clone()))
        .await
        .unwrap();
    assert_eq!(again, CalendarRead::Unchanged);

    server
        .put(
            ROOM,
            "added",
            &vcalendar(
                "BEGIN:VEVENT
UID:added@corp.example
DTSTAMP:20261120T080000Z
DTSTART:20261125T160000Z
DTEND:20261125T163000Z
SUMMARY:Added later
END:VEVENT
",
            ),
        )
        .await;
    let changed = reader
        .events_since(&room_account, ROOM, from, to, Some(mark.clone()))
        .await
        .unwrap();
    let CalendarRead::Events {
        events,
        mark: new_mark,
    } = changed
    else {
        panic!("a changed calendar is read: {changed:?}");
    };
    assert_eq!(events.len(), count + 1);
    assert!(events.iter().any(|e| e.uid == "added@corp.example"));
    assert_ne!(new_mark, Some(mark));

    // The mark is asked for as the account: a refused password is the same failure as a read's.
    if !server.checks_passwords() {
        return;
    }
    let e = reader
        .events_since(&account(&server, "wrong"), ROOM, from, to, new_mark)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CalendarServerException);
    assert!(
        e.message().contains("refused the account"),
        "{}",
        e.message()
    );
    assert!(!e.message().contains("wrong"), "{}", e.message());
}

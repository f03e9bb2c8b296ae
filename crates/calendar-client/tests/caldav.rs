//! The CalDAV reader against a real CalDAV server: Radicale (from PyPI; `.ci/run` installs it),
//! started per test on a free loopback port with its own storage and htpasswd file.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

use roomlink_calendar::CalDavReader;
use roomlink_calendar::testing::{PASSWORD, Radicale, USER, vcalendar};
use roomlink_domain::enums::CalendarType;
use roomlink_domain::error::ErrorKind;
use roomlink_domain::ports::{CalendarAccount, CalendarReader};
use roomlink_domain::secret::Secret;

const ROOM: &str = "huddle-4@corp.example";

/// 2026-11-25T00:00:00Z.
const DAY: i64 = 1_795_564_800_000;
const HOUR: i64 = 3_600_000;

fn account(radicale: &Radicale, password: &str) -> CalendarAccount {
    CalendarAccount {
        calendar_type: CalendarType::CalDav,
        token_url: None,
        base_url: radicale.base_url(),
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
async fn reads_a_rooms_day_with_recurrences_expanded_to_utc() {
    let radicale = Radicale::start();
    radicale.calendar(ROOM, &room_calendar()).await;
    let reader = CalDavReader::new();
    let events = reader
        .events(&account(&radicale, PASSWORD), ROOM, DAY, DAY + 24 * HOUR)
        .await
        .unwrap();
    let seen: Vec<(&str, i64, i64)> = events
        .iter()
        .map(|e| (e.uid.as_str(), e.start_ms - DAY, e.end_ms - DAY))
        .collect();
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
            &account(&radicale, PASSWORD),
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
async fn failures_are_calendar_server_errors_naming_the_calendar_and_no_secret() {
    let radicale = Radicale::start();
    radicale.calendar(ROOM, &room_calendar()).await;
    let reader = CalDavReader::new();
    let wrong = "wrong-secret-93c1";
    let cases = [
        (account(&radicale, wrong), ROOM, "refused the account"),
        (
            account(&radicale, PASSWORD),
            "nobody@corp.example",
            "no calendar",
        ),
        (
            CalendarAccount {
                base_url: "http://127.0.0.1:1/rooms/".to_owned(),
                ..account(&radicale, PASSWORD)
            },
            ROOM,
            "cannot connect",
        ),
    ];
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

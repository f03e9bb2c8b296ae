//! Google's own example answers fed through the reader by the stub: `events.list` answers that
//! Chromium's Google API client keeps as its test data (`google_apis/test/data/calendar/` of
//! chromium/chromium; tests/fixtures/google-example-*.json, the bytes as they are, sources and
//! commits in tests/fixtures/README.md). Times are worked out by hand from the examples' offsets.
//!
//! They hold timed events (with and without `timeZone`), Meet conferences (`hangoutLink`, video,
//! "more" and phone entry points), two series' first events (`recurrence`), an entry point
//! without a type, an unreadable video link and four `status` values. No example of Google's
//! found has an all-day event, an occurrence (`recurringEventId`), a `nextPageToken` or a sip
//! entry point: those shapes are this project's own answers in tests/google.rs.

use super::*;
use roomlink_domain::calendar::meeting::{Detection, MeetingRules, detect};

const EVENTS: &str = include_str!("../fixtures/google-example-events.json");
const STATUSES: &str = include_str!("../fixtures/google-example-event-statuses.json");
const UNTYPED_ENTRY: &str =
    include_str!("../fixtures/google-example-missing-entry-point-type.json");
const BAD_VIDEO_URI: &str = include_str!("../fixtures/google-example-invalid-conference-uri.json");
const MINUTE: i64 = 60_000;
/// 2020-11-01T00:00:00Z and 2021-07-01T00:00:00Z: a window holding every example event.
const NOV_2020: i64 = 1_604_188_800_000;
const JUL_2021: i64 = 1_625_097_600_000;
/// The examples' Monday meeting, `2020-11-02T10:00:00-08:00` (Pacific standard time):
/// 2020-11-02T18:00:00Z.
const MONDAY_MEETING: i64 = 1_604_340_000_000;

/// What the reader gives for `example`, served as the one page of the window `[from, to)`.
async fn read_example(
    example: &str,
    from: i64,
    to: i64,
) -> roomlink_domain::error::Result<Vec<CalendarEvent>> {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .and(query_param("singleEvents", "true"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(example.as_bytes().to_vec(), "application/json"),
        )
        .expect(1)
        .mount(&server)
        .await;
    reader().events(&account(&server), ROOM, from, to).await
}

fn some(text: &str) -> Option<String> {
    Some(text.to_owned())
}

fn links(uris: &[&str]) -> Vec<String> {
    uris.iter().map(|u| (*u).to_owned()).collect()
}

/// The examples' weekly team meeting (id `or8221sirt4ogftest`), as the reader gives it: the
/// title with Google's trailing space, the description's HTML unescaped, 30 minutes.
fn team_meeting(location: Option<&str>, conference_uris: &[&str]) -> CalendarEvent {
    CalendarEvent {
        uid: "or8221test@google.com".to_owned(),
        title: some("Mobile weekly team meeting "),
        start_ms: MONDAY_MEETING,
        end_ms: MONDAY_MEETING + 30 * MINUTE,
        location: location.map(str::to_owned),
        description: some(
            "<a href=\"https://docs.google.com/document/d/1BSA5pn6dpPQOIBuvtest/edit\">\
             Meeting agenda and notes</a>",
        ),
        conference_uris: links(conference_uris),
        cancelled: false,
    }
}

/// The list of three: in start order (the example lists them otherwise), `iCalUID`s, UTC times
/// from `-08:00` and `-07:00` offsets (one without `timeZone`), and one join link each: the
/// `hangoutLink`, the same as the video entry point; the "more" and phone entry points are
/// not dialled.
///
/// Two of them carry `recurrence`: the list is a series' first event, not its occurrences (the
/// example was not asked with `singleEvents=true`). The reader reads an event's own times and
/// never expands `recurrence` (Google does, for the `singleEvents=true` the reader sends), so
/// "System UI sync", weekly on Mondays until 2021-06-14, is given on 2021-05-10 only.
#[tokio::test]
async fn the_example_list_gives_its_three_meetings_in_utc_with_their_meet_links() {
    let events = read_example(EVENTS, NOV_2020, JUL_2021).await.unwrap();
    let system_ui_sync = CalendarEvent {
        uid: "1a5n209tijjtrd1mhn2lkgdaq9@google.com".to_owned(),
        title: some("System UI sync"),
        // 2021-05-10T11:30:00-07:00 (Pacific summer time): 18:30Z.
        start_ms: 1_620_671_400_000,
        end_ms: 1_620_671_400_000 + 30 * MINUTE,
        location: None,
        description: None,
        conference_uris: links(&["https://meet.google.com/kid-test"]),
        cancelled: false,
    };
    let notes = "https://docs.google.com/document/d/1UikvkL__BYOtest/edit\
                 ?resourcekey=0-e1MW5R3-74eHVaj4Fad_vw#";
    let calendar_view = CalendarEvent {
        uid: "7749obefodf44k4kt7r8lr0l8b@google.com".to_owned(),
        title: some("Calendar view weekly meeting"),
        // 2021-06-07T15:00:00-07:00, no timeZone: 22:00Z.
        start_ms: 1_623_103_200_000,
        end_ms: 1_623_103_200_000 + 30 * MINUTE,
        location: some("location 2"),
        description: Some(format!("meeting notes: <a href=\"{notes}\">{notes}</a>")),
        conference_uris: links(&["https://meet.google.com/dbp-qnpu-dtr"]),
        cancelled: false,
    };
    let first = team_meeting(Some("location 1"), &["https://meet.google.com/jbe-test"]);
    assert_eq!(events, [first, system_ui_sync, calendar_view]);

    // 2021-05-17, the series' second Monday: nothing (the example holds no occurrence).
    let may_17 = 1_621_209_600_000;
    let none = read_example(EVENTS, may_17, may_17 + 24 * HOUR).await;
    assert_eq!(none.unwrap(), []);
}

/// The four statuses, one event each at the same time (ids as uids: no `iCalUID`): only
/// `cancelled` is marked cancelled, with its times kept; `tentative` and the unknown `qwerty`
/// are read as meetings. None has a conference.
#[tokio::test]
async fn the_status_example_marks_only_the_cancelled_event() {
    let events = read_example(STATUSES, MONDAY_MEETING, MONDAY_MEETING + HOUR)
        .await
        .unwrap();
    let expected: Vec<CalendarEvent> = [
        ("1", "confirmed", false),
        ("2", "cancelled", true),
        ("3", "tentative", false),
        ("4", "wrong type", false),
    ]
    .into_iter()
    .map(|(uid, title, cancelled)| CalendarEvent {
        uid: uid.to_owned(),
        title: some(title),
        start_ms: MONDAY_MEETING,
        end_ms: MONDAY_MEETING + 30 * MINUTE,
        location: None,
        description: None,
        conference_uris: Vec::new(),
        cancelled,
    })
    .collect();
    assert_eq!(events, expected);
}

/// An entry point without `entryPointType` (a Meet live stream's link) is no join link: the
/// event keeps its `hangoutLink` only.
#[tokio::test]
async fn an_entry_point_without_a_type_is_not_a_join_link() {
    let events = read_example(UNTYPED_ENTRY, MONDAY_MEETING, MONDAY_MEETING + HOUR)
        .await
        .unwrap();
    assert_eq!(
        events,
        [team_meeting(None, &["https://meet.google.com/jbe-test"])]
    );
}

/// A video entry point whose link does not parse (`http:://google.com`) is handed on after the
/// `hangoutLink` as the text Google gave: the reader does not judge links (neither does the
/// Graph reader's `joinUrl` nor the iCalendar reader's). Meeting detection reads the links as
/// text for known hosts, so the event is detected exactly as without it.
#[tokio::test]
async fn an_unreadable_video_link_is_handed_on_and_changes_no_detection() {
    let events = read_example(BAD_VIDEO_URI, MONDAY_MEETING, MONDAY_MEETING + HOUR)
        .await
        .unwrap();
    let meet = "https://meet.google.com/jbe-test";
    assert_eq!(events, [team_meeting(None, &[meet, "http:://google.com"])]);
    let rules = MeetingRules::default();
    let detected = detect(&events[0], &rules);
    assert!(
        matches!(detected, Detection::NotDialable(_)),
        "{detected:?}"
    );
    assert_eq!(detected, detect(&team_meeting(None, &[meet]), &rules));
}

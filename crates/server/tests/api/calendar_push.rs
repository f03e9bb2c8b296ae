//! Calendar push end to end: a room's CalDAV calendar (Radicale), the room behind the
//! listener simulator (a listener version with `pushcalendar`), and the simulated room shows
//! its meetings; pushed again only when they change; a failed push is in failures.

use crate::control::{room, sim_state};
use crate::support::app::{Backend, Round, TestApp};
use reqwest::{Method, StatusCode};
use roomlink_calendar::testing::{CalDavServer, PASSWORD, USER, vcalendar};
use roomlink_listener_sim::SimConfig;
use roomlink_listener_sim::version::Version;
use serde_json::{Value, json};
use std::time::Duration;

const ROOM: &str = "huddle-7@corp.example";
const ADDRESS: &str = "127.77.0.47";
/// 2027-01-15T10:00:00Z: the review's start.
const REVIEW: i64 = 1_800_007_200_000;
const MIN: i64 = 60_000;
/// Rounds every 100 ms.
/// Rounds every 100 ms, each asking Radicale whether the calendar changed (its sync token), so
/// an event put in mid-test shows at the next round.
const FAST: &[(&str, &str)] = &[
    ("ROOMLINK__CALENDAR__PUSH_INTERVAL_MS", "100"),
    ("ROOMLINK__CALENDAR__POLL_INTERVAL_MS", "0"),
];

fn event(uid: &str, start: &str, end: &str, summary: &str, location: &str) -> String {
    vcalendar(&format!(
        "BEGIN:VEVENT
UID:{uid}
DTSTAMP:20270110T080000Z
DTSTART:{start}
DTEND:{end}
SUMMARY:{summary}
LOCATION:{location}
END:VEVENT
"
    ))
}

/// The review at 10:00 with a passcode, lunch at 12:00 with nothing to dial, and a meeting
/// two days later (outside the window).
fn events() -> [(&'static str, String); 3] {
    [
        (
            "review",
            event(
                "review@corp.example",
                "20270115T100000Z",
                "20270115T110000Z",
                "Design review",
                "https://bluejeans.com/123456789/4321",
            ),
        ),
        (
            "lunch",
            event(
                "lunch@corp.example",
                "20270115T120000Z",
                "20270115T130000Z",
                "Team lunch",
                "Cafeteria",
            ),
        ),
        (
            "later",
            event(
                "later@corp.example",
                "20270117T100000Z",
                "20270117T110000Z",
                "Offsite",
                "https://bluejeans.com/999000999",
            ),
        ),
    ]
}

/// Waits (real time) until the simulated room has been pushed `pushes` times; its state then.
async fn pushes_reach(app: &TestApp, room: &crate::control::Room, pushes: u64) -> Value {
    for _ in 0..100 {
        let state = sim_state(app, room, ADDRESS).await;
        if state["calendarPushes"].as_u64() >= Some(pushes) {
            return state;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the room was never pushed {pushes} times");
}

async fn a_room_shows_its_meetings_pushed_when_they_change(app: TestApp) {
    app.clock.set(REVIEW - 60 * MIN);
    let radicale = CalDavServer::radicale();
    radicale.calendar(ROOM, &events()).await;
    let (rw, ro) = app.tenant("acme").await;
    let (status, account) = app
        .call(
            Method::PUT,
            "/api/calendaraccounts/CALDAV",
            &rw,
            Some(json!({"baseUrl": radicale.base_url(), "username": USER, "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{account}");
    let config = SimConfig {
        version: Version::new(3, 1, 0),
        ..SimConfig::default()
    };
    let room = room(&app, &rw, config, ADDRESS).await;
    let id = room.endpoint.clone();

    // With calendar push off, nothing is pushed.
    let (status, patched) = app
        .call(
            Method::PATCH,
            &format!("/api/endpoints/{id}"),
            &rw,
            Some(json!({"calendarId": ROOM, "calendarType": "CALDAV"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    TestApp::full_rounds(&[&app], Round::CalendarPush).await;
    assert_eq!(sim_state(&app, &room, ADDRESS).await["calendarPushes"], 0);

    let (status, patched) = app
        .call(
            Method::PATCH,
            &format!("/api/endpoints/{id}"),
            &rw,
            Some(json!({"calendarPushMode": "ENABLED"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    let state = pushes_reach(&app, &room, 1).await;
    let calendar = &state["calendar"];
    let meetings = calendar["meetings"].as_array().unwrap();
    assert_eq!(meetings.len(), 2, "the day's meetings only: {calendar}");
    assert_eq!(meetings[0]["uid"], "review@corp.example");
    assert_eq!(meetings[0]["title"], "Design review");
    assert_eq!(meetings[0]["start"], REVIEW);
    assert_eq!(meetings[0]["end"], REVIEW + 60 * MIN);
    assert_eq!(meetings[0]["dial"]["meetingId"], "123456789");
    assert_eq!(meetings[0]["dial"]["cluster"], "PROD");
    assert_eq!(meetings[1]["title"], "Team lunch");
    assert!(meetings[1]["dial"].is_null(), "{calendar}");
    assert!(
        !calendar.to_string().contains("4321"),
        "no passcode is pushed: {calendar}"
    );
    assert_eq!(
        calendar["from"], 1_799_971_200_000_i64,
        "the UTC day's start"
    );
    assert_eq!(state["callActive"], false, "a push dials nothing");

    // Unchanged meetings are not pushed again, even as time passes.
    app.clock.set(REVIEW - 30 * MIN);
    TestApp::full_rounds(&[&app], Round::CalendarPush).await;
    assert_eq!(sim_state(&app, &room, ADDRESS).await["calendarPushes"], 1);

    // A new meeting on the calendar: pushed again.
    radicale
        .put(
            ROOM,
            "standup",
            &event(
                "standup@corp.example",
                "20270115T150000Z",
                "20270115T151500Z",
                "Stand-up",
                "https://bluejeans.com/555000111",
            ),
        )
        .await;
    let state = pushes_reach(&app, &room, 2).await;
    let meetings = state["calendar"]["meetings"].as_array().unwrap().clone();
    assert_eq!(meetings.len(), 3, "{meetings:?}");
    assert_eq!(meetings[2]["dial"]["meetingId"], "555000111");

    // A push that fails is recorded against the room and sent again once the room is back.
    let fault = app
        .client
        .put(format!("{}/sim/endpoints/{ADDRESS}/fault", room.sim))
        .json(&json!({"fault": "unreachable"}))
        .send()
        .await
        .unwrap();
    assert!(fault.status().is_success());
    radicale
        .put(
            ROOM,
            "retro",
            &event(
                "retro@corp.example",
                "20270115T160000Z",
                "20270115T170000Z",
                "Retro",
                "Room 4",
            ),
        )
        .await;
    let mut failure = None;
    for _ in 0..100 {
        let (status, failures) = app.call(Method::GET, "/api/failures", &ro, None).await;
        assert_eq!(status, StatusCode::OK, "{failures}");
        failure = failures
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["subjectClass"] == "Endpoint")
            .cloned();
        if failure.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let failure = failure.expect("a failure against the endpoint");
    assert_eq!(failure["subjectId"], id.as_str());
    assert_eq!(
        failure["errorName"], "ExternalSystemUnreachable",
        "{failure}"
    );
    assert_eq!(failure["errorDetails"]["calendarPush"]["meetings"], 4);
    assert!(
        failure["errorMessage"]
            .as_str()
            .unwrap()
            .starts_with("calendar push of 4 meetings"),
        "{failure}"
    );
    assert_eq!(sim_state(&app, &room, ADDRESS).await["calendarPushes"], 2);
    let cleared = app
        .client
        .delete(format!("{}/sim/endpoints/{ADDRESS}/fault", room.sim))
        .send()
        .await
        .unwrap();
    assert!(cleared.status().is_success());
    let state = pushes_reach(&app, &room, 3).await;
    assert_eq!(state["calendar"]["meetings"].as_array().unwrap().len(), 4);

    // Made REDACTED: the panel gets the same meetings without their titles, at once (the
    // titles are part of what a push is compared by), and the API shows none either.
    let (status, patched) = app
        .call(
            Method::PATCH,
            &format!("/api/endpoints/{id}"),
            &rw,
            Some(json!({"meetingPrivacyMode": "REDACTED"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    let state = pushes_reach(&app, &room, 4).await;
    let pushed = &state["calendar"]["meetings"];
    assert_eq!(pushed.as_array().unwrap().len(), 4, "{pushed}");
    assert_eq!(
        pushed[0]["dial"]["meetingId"], "123456789",
        "still dialable"
    );
    for title in ["Design review", "Team lunch", "Stand-up", "Retro"] {
        assert!(!pushed.to_string().contains(title), "{title} in {pushed}");
    }
    let (status, listed) = app
        .call(
            Method::GET,
            &format!("/api/endpoints/{id}/meetings"),
            &ro,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    let listed = listed.as_array().unwrap();
    assert!(!listed.is_empty());
    assert!(listed.iter().all(|m| m["title"].is_null()), "{listed:?}");
}

/// A listener older than `pushcalendar` does not report CALENDAR_PUSH: its room is not pushed
/// and nothing is recorded.
async fn an_older_listener_is_left_alone(app: TestApp) {
    app.clock.set(REVIEW - 60 * MIN);
    let radicale = CalDavServer::radicale();
    radicale.calendar(ROOM, &events()).await;
    let (rw, ro) = app.tenant("acme").await;
    let (status, _) = app
        .call(
            Method::PUT,
            "/api/calendaraccounts/CALDAV",
            &rw,
            Some(json!({"baseUrl": radicale.base_url(), "username": USER, "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let room = room(&app, &rw, SimConfig::default(), ADDRESS).await;
    let (status, patched) = app
        .call(
            Method::PATCH,
            &format!("/api/endpoints/{}", room.endpoint),
            &rw,
            Some(json!({"calendarId": ROOM, "calendarType": "CALDAV", "calendarPushMode": "ENABLED"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    TestApp::full_rounds(&[&app], Round::CalendarPush).await;
    let state = sim_state(&app, &room, ADDRESS).await;
    assert_eq!(
        (&state["calendarPushes"], &state["commands"]),
        (&json!(0), &json!(0))
    );
    let (_, failures) = app.call(Method::GET, "/api/failures", &ro, None).await;
    assert!(
        !failures
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["subjectClass"] == "Endpoint"),
        "{failures}"
    );
}

async fn on(backend: Backend) {
    if let Some(app) = TestApp::spawn_with_background(backend, FAST).await {
        a_room_shows_its_meetings_pushed_when_they_change(app).await;
    }
    if let Some(app) = TestApp::spawn_with_background(backend, FAST).await {
        an_older_listener_is_left_alone(app).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    on(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres() {
    on(Backend::Postgres).await;
}

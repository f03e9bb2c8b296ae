//! Auto-join end to end, as a new user would try it: a meeting on a room's CalDAV calendar
//! (Radicale), the room behind the listener simulator, the clock moved by hand to the start,
//! and the simulated room dials the meeting, once, with two instances on one database.

use crate::control::{room, sim_state};
use crate::support::app::{Backend, Round, TestApp};
use reqwest::{Method, StatusCode};
use roomlink_calendar::testing::{CalDavServer, PASSWORD, USER, vcalendar};
use roomlink_listener_sim::SimConfig;
use serde_json::{Value, json};
use std::time::Duration;

const ROOM: &str = "huddle-4@corp.example";
const ADDRESS: &str = "127.77.0.40";
/// 2027-01-15T10:00:00Z: the review's start.
const REVIEW: i64 = 1_800_007_200_000;
const MIN: i64 = 60_000;
/// Rounds every 100 ms on each instance.
const FAST: &[(&str, &str)] = &[("ROOMLINK__CALENDAR__AUTO_JOIN_INTERVAL_MS", "100")];

/// The review at 10:00 with a passcode, the stand-up at 12:00 without.
fn events() -> [(&'static str, String); 2] {
    let review = vcalendar(
        "BEGIN:VEVENT
UID:review@corp.example
DTSTAMP:20270110T080000Z
DTSTART:20270115T100000Z
DTEND:20270115T110000Z
SUMMARY:Design review
LOCATION:https://bluejeans.com/123456789/4321
END:VEVENT
",
    );
    let standup = vcalendar(
        "BEGIN:VEVENT
UID:standup@corp.example
DTSTAMP:20270110T080000Z
DTSTART:20270115T120000Z
DTEND:20270115T121500Z
SUMMARY:Stand-up
DESCRIPTION:Dial in: https://bluejeans.com/555000111
END:VEVENT
",
    );
    [("review", review), ("standup", standup)]
}

/// Waits (real time) until the simulated room has seen `commands` commands; its state then.
async fn commands_reach(app: &TestApp, room: &crate::control::Room, commands: u64) -> Value {
    for _ in 0..100 {
        let state = sim_state(app, room, ADDRESS).await;
        if state["commands"].as_u64() >= Some(commands) {
            return state;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the room never saw {commands} commands");
}

/// Long enough for several rounds on every instance.
async fn a_room_joins_its_meeting_at_the_start_once(first: TestApp) {
    // Time starts an hour before the review.
    first.clock.set(REVIEW - 60 * MIN);
    let second = first.spawn_beside(FAST).await;
    let radicale = CalDavServer::radicale();
    radicale.calendar(ROOM, &events()).await;
    let (rw, ro) = first.tenant("acme").await;
    let (status, account) = first
        .call(
            Method::PUT,
            "/api/calendaraccounts/CALDAV",
            &rw,
            Some(json!({"baseUrl": radicale.base_url(), "username": USER, "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{account}");
    let room = room(&first, &rw, SimConfig::default(), ADDRESS).await;
    let id = room.endpoint.clone();
    let (status, patched) = first
        .call(
            Method::PATCH,
            &format!("/api/endpoints/{id}"),
            &rw,
            Some(json!({"calendarId": ROOM, "calendarType": "CALDAV", "autoJoinMode": "ENABLED"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{patched}");

    // What the room will dial, as GET .../meetings shows it.
    let (status, meetings) = second
        .call(
            Method::GET,
            &format!("/api/endpoints/{id}/meetings"),
            &ro,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{meetings}");
    assert_eq!(meetings[0]["start"], REVIEW, "{meetings}");
    assert_eq!(meetings[0]["dial"]["meetingId"], "123456789");

    // Before the lead time nothing is dialled.
    first.clock.set(REVIEW - 5 * MIN);
    TestApp::full_rounds(&[&first, &second], Round::AutoJoin).await;
    assert_eq!(sim_state(&first, &room, ADDRESS).await["commands"], 0);

    // Within the lead time (30 s by default) the room dials the review.
    first.clock.set(REVIEW - 20_000);
    let state = commands_reach(&first, &room, 1).await;
    assert_eq!(state["callActive"], true, "{state}");
    assert_eq!(state["lastMeetingId"], "123456789", "{state}");
    assert_eq!(state["lastPasscode"], "4321", "{state}");
    // Exactly once: more rounds on both instances, past the start, dial nothing more.
    for at in [REVIEW - 10_000, REVIEW, REVIEW + MIN] {
        first.clock.set(at);
        TestApp::full_rounds(&[&first, &second], Round::AutoJoin).await;
    }
    assert_eq!(sim_state(&first, &room, ADDRESS).await["commands"], 1);

    // The people leave early and hang up: the room is not pulled back in.
    let (status, body) = first
        .call(
            Method::POST,
            &format!("/api/endpoints/{id}/hangup"),
            &rw,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    first.clock.set(REVIEW + 2 * MIN);
    TestApp::full_rounds(&[&first, &second], Round::AutoJoin).await;
    let state = sim_state(&first, &room, ADDRESS).await;
    assert_eq!(
        (state["commands"].as_u64(), &state["callActive"]),
        (Some(2), &json!(false))
    );

    // The join is in the audit trail as the scheduler's.
    let (status, trail) = first
        .call(Method::GET, "/api/auditlog?actor=auto-join", &rw, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{trail}");
    let joins = trail.as_array().unwrap();
    assert_eq!(joins.len(), 1, "{trail}");
    assert_eq!(joins[0]["operation"], "endpoints.join");
    assert_eq!(joins[0]["actor"]["kind"], "scheduler");
    assert_eq!(joins[0]["actor"]["id"], "auto-join");
    assert_eq!(joins[0]["targetId"], id.as_str());

    // A join that fails is recorded in failures, against the room, and not repeated.
    let fault = first
        .client
        .put(format!("{}/sim/endpoints/{ADDRESS}/fault", room.sim))
        .json(&json!({"fault": "unreachable"}))
        .send()
        .await
        .unwrap();
    assert!(fault.status().is_success());
    first.clock.set(REVIEW + 2 * 60 * MIN);
    commands_reach(&first, &room, 3).await;
    TestApp::full_rounds(&[&first, &second], Round::AutoJoin).await;
    assert_eq!(sim_state(&first, &room, ADDRESS).await["commands"], 3);
    let (status, failures) = second.call(Method::GET, "/api/failures", &ro, None).await;
    assert_eq!(status, StatusCode::OK, "{failures}");
    let failure = failures
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["subjectClass"] == "Endpoint")
        .unwrap_or_else(|| panic!("no failure against the endpoint: {failures}"));
    assert_eq!(failure["subjectId"], id.as_str());
    assert_eq!(
        failure["errorName"], "ExternalSystemUnreachable",
        "{failure}"
    );
    assert_eq!(
        failure["errorDetails"]["autoJoin"]["uid"],
        "standup@corp.example"
    );
    assert!(
        failure["errorMessage"]
            .as_str()
            .unwrap()
            .starts_with("auto-join of the meeting"),
        "{failure}"
    );
}

/// Both instances round every 100 ms; on PostgreSQL the poll lease lets one of them read the
/// calendars, on SQLite both do and the claims alone keep the join single.
async fn on(backend: Backend) {
    if let Some(first) = TestApp::spawn_with_background(backend, FAST).await {
        a_room_joins_its_meeting_at_the_start_once(first).await;
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

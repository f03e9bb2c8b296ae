//! Calendars end to end: a calendar account set through the API, a room whose calendar lives
//! on a real CalDAV server (Radicale), its meetings with what the room would dial, and a
//! calendar that cannot be read.

use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error};
use reqwest::{Method, StatusCode};
use roomlink_calendar::testing::{CalDavServer, PASSWORD, USER, vcalendar};
use serde_json::json;

const ROOM: &str = "boardroom@corp.example";
/// 2026-11-25T00:00:00Z.
const DAY: i64 = 1_795_564_800_000;
const HOUR: i64 = 3_600_000;
const WRONG: &str = "not-the-calendar-password";

fn meetings_path(id: &str) -> String {
    format!(
        "/api/endpoints/{id}/meetings?from={DAY}&to={}",
        DAY + 24 * HOUR
    )
}

async fn a_rooms_meetings_come_from_its_caldav_calendar(app: TestApp) {
    let radicale = CalDavServer::radicale();
    radicale
        .calendar(
            ROOM,
            &[(
                "review",
                vcalendar(
                    "BEGIN:VEVENT
UID:review@corp.example
DTSTAMP:20261120T080000Z
DTSTART:20261125T140000Z
DTEND:20261125T150000Z
SUMMARY:Quarterly review
LOCATION:Boardroom
DESCRIPTION:Join: https://bluejeans.com/123456789/4321
END:VEVENT
",
                ),
            )],
        )
        .await;
    let (rw, ro) = app.tenant("acme").await;

    // The account: set, shown without its password, to anyone who may read.
    let (status, account) = app
        .call(
            Method::PUT,
            "/api/calendaraccounts/CALDAV",
            &rw,
            Some(json!({"baseUrl": radicale.base_url(), "username": USER, "password": PASSWORD})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{account}");
    assert_eq!(account["calendarType"], "CALDAV");
    assert_eq!(account["hasPassword"], true);
    let (status, listed) = app
        .call(Method::GET, "/api/calendaraccounts", &ro, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed.as_array().unwrap().len(), 1);
    for shown in [&account, &listed] {
        assert!(!shown.to_string().contains(PASSWORD), "{shown}");
    }
    let (status, error) = app
        .call(
            Method::PUT,
            "/api/calendaraccounts/CALDAV",
            &ro,
            Some(json!({"baseUrl": radicale.base_url()})),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{error}");

    // The room's meetings, with what it would dial.
    let room = app
        .create_endpoint(
            &rw,
            json!({"name": "Boardroom", "calendarId": ROOM, "calendarType": "CALDAV"}),
        )
        .await;
    let id = room["id"].as_str().unwrap();
    let (status, meetings) = app.call(Method::GET, &meetings_path(id), &ro, None).await;
    assert_eq!(status, StatusCode::OK, "{meetings}");
    assert_eq!(
        meetings,
        json!([{
            "uid": "review@corp.example",
            "title": "Quarterly review",
            "start": DAY + 14 * HOUR,
            "end": DAY + 15 * HOUR,
            "dial": {
                "meetingId": "123456789",
                "passcode": "4321",
                "meetingType": "MEETME",
                "cluster": "PROD",
                "foundIn": "description"
            },
            "notDialable": null
        }])
    );

    // A new base URL without a password keeps the stored password.
    let (status, kept) = app
        .call(
            Method::PUT,
            "/api/calendaraccounts/CALDAV",
            &rw,
            Some(json!({"baseUrl": radicale.base_url(), "username": USER})),
        )
        .await;
    assert_eq!(
        (status, &kept["hasPassword"]),
        (StatusCode::OK, &json!(true))
    );
    let (status, _) = app.call(Method::GET, &meetings_path(id), &ro, None).await;
    assert_eq!(status, StatusCode::OK);

    // A refused password: CalendarServerException naming the calendar, and no secret.
    app.call(
        Method::PUT,
        "/api/calendaraccounts/CALDAV",
        &rw,
        Some(json!({"baseUrl": radicale.base_url(), "username": USER, "password": WRONG})),
    )
    .await;
    let (status, error) = app.call(Method::GET, &meetings_path(id), &ro, None).await;
    assert_error(status, &error, 502, "CalendarServerException", 187263818);
    assert_eq!(error["errorDetails"]["calendarId"], ROOM, "{error}");
    assert!(!error.to_string().contains(WRONG), "{error}");
    // Nothing else broke: the room itself still reads.
    let (status, _) = app
        .call(Method::GET, &format!("/api/endpoints/{id}"), &ro, None)
        .await;
    assert_eq!(status, StatusCode::OK);

    // Rooms without a calendar, types roomlink does not read, accounts that are gone.
    let bare = app.create_endpoint(&rw, json!({"name": "Huddle"})).await;
    let bare_id = bare["id"].as_str().unwrap();
    let (status, error) = app
        .call(Method::GET, &meetings_path(bare_id), &ro, None)
        .await;
    assert_error(status, &error, 400, "Invalid", 1782937293);
    let (status, error) = app
        .call(
            Method::PUT,
            "/api/calendaraccounts/GOOGLE",
            &rw,
            Some(json!({"baseUrl": "https://www.googleapis.com/calendar/v3"})),
        )
        .await;
    assert_error(status, &error, 400, "Invalid", 1782937293);
    assert!(
        error["errorMessage"]
            .as_str()
            .unwrap()
            .starts_with("tokenUrl: is required"),
        "{error}"
    );
    let (status, error) = app
        .call(
            Method::PUT,
            "/api/calendaraccounts/EXCHANGE",
            &rw,
            Some(json!({"baseUrl": "https://mail.corp.example/EWS/Exchange.asmx"})),
        )
        .await;
    assert_error(status, &error, 400, "Invalid", 1782937293);
    assert!(
        error["errorMessage"]
            .as_str()
            .unwrap()
            .contains("each room's listener reads them"),
        "{error}"
    );
    let (status, error) = app
        .call(
            Method::PUT,
            "/api/calendaraccounts/CALDAV",
            &rw,
            Some(
                json!({"baseUrl": radicale.base_url(), "tokenUrl": "https://login.example/token"}),
            ),
        )
        .await;
    assert_error(status, &error, 400, "Invalid", 1782937293);
    let (status, _) = app
        .call(Method::DELETE, "/api/calendaraccounts/CALDAV", &rw, None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, error) = app
        .call(Method::DELETE, "/api/calendaraccounts/CALDAV", &rw, None)
        .await;
    assert_error(status, &error, 404, "NotFound", 1217481661);
    let (status, error) = app.call(Method::GET, &meetings_path(id), &ro, None).await;
    assert_error(status, &error, 400, "Invalid", 1782937293);
    assert!(
        error
            .to_string()
            .contains("PUT /api/calendaraccounts/CALDAV"),
        "{error}"
    );
}

on_every_backend!(a_rooms_meetings_come_from_its_caldav_calendar);

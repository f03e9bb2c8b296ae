//! Microsoft 365 accounts through the service: an OFFICE_365 account set with the API (its
//! client secret sealed, never shown), a room whose meetings come from a loopback stub of
//! Microsoft Graph answering the documented shapes, and a refused secret that breaks nothing
//! else. The reader's own protocol tests are in `crates/calendar-client/tests/graph.rs`.

use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error};
use reqwest::{Method, StatusCode};
use serde_json::json;
use wiremock::matchers::{body_string_contains, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const ROOM: &str = "boardroom@corp.example";
const CLIENT: &str = "3f2a-client-id";
const SECRET: &str = "graph-client-secret-value";
const TOKEN: &str = "eyJ0eXAi.graph-access-token";

async fn graph() -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/tenant-1/oauth2/v2.0/token"))
        .and(body_string_contains(format!("client_secret={SECRET}")))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "token_type": "Bearer", "expires_in": 3599, "access_token": TOKEN
        })))
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/tenant-1/oauth2/v2.0/token"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "error": "invalid_client",
            "error_description": "AADSTS7000215: Invalid client secret provided."
        })))
        .mount(&server)
        .await;
    // A delta round (how the reader learns the calendar's change mark): one page, with its
    // delta link on the same server.
    let delta = format!("/v1.0/users/{ROOM}/calendarView/delta");
    Mock::given(method("GET"))
        .and(path(delta.as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "value": [{"id": "AAMkAGI2TG93AAA="}],
            "@odata.deltaLink": format!("{}{delta}?$deltatoken=R0usmcCM996", server.uri()),
        })))
        .mount(&server)
        .await;
    let view = format!("/v1.0/users/{ROOM}/calendarView");
    Mock::given(method("GET"))
        .and(path(view.as_str()))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "value": [{
                "id": "AAMkAGI2TG93AAA=",
                "iCalUId": "040000008200E00074C5B7101A82E008000000001",
                "subject": "Quarterly review",
                "isAllDay": false,
                "isCancelled": false,
                "start": {"dateTime": "2026-11-25T14:00:00.0000000", "timeZone": "UTC"},
                "end": {"dateTime": "2026-11-25T15:00:00.0000000", "timeZone": "UTC"},
                "location": {"displayName": "Boardroom"},
                "body": {"contentType": "html", "content": "<p>Agenda attached.</p>"},
                "onlineMeeting": {"joinUrl": "https://bluejeans.com/123456789/4321"}
            }]
        })))
        .mount(&server)
        .await;
    server
}

async fn a_rooms_meetings_come_from_microsoft_graph(app: TestApp) {
    let graph = graph().await;
    let (rw, ro) = app.tenant("acme").await;
    let account = json!({
        "baseUrl": format!("{}/v1.0", graph.uri()),
        "tokenUrl": format!("{}/tenant-1/oauth2/v2.0/token", graph.uri()),
        "username": CLIENT,
        "password": SECRET,
    });
    let (status, shown) = app
        .call(
            Method::PUT,
            "/api/calendaraccounts/OFFICE_365",
            &rw,
            Some(account.clone()),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{shown}");
    assert_eq!(shown["tokenUrl"], account["tokenUrl"]);
    assert_eq!(shown["hasPassword"], true);
    assert!(!shown.to_string().contains(SECRET), "{shown}");

    let room = app
        .create_endpoint(
            &rw,
            json!({"name": "Boardroom", "calendarId": ROOM, "calendarType": "OFFICE_365"}),
        )
        .await;
    let id = room["id"].as_str().unwrap();
    // 2026-11-25, the whole day.
    let path = format!("/api/endpoints/{id}/meetings?from=1795564800000&to=1795651200000");
    let (status, meetings) = app.call(Method::GET, &path, &ro, None).await;
    assert_eq!(status, StatusCode::OK, "{meetings}");
    assert_eq!(
        meetings,
        json!([{
            "uid": "040000008200E00074C5B7101A82E008000000001",
            "title": "Quarterly review",
            "start": 1_795_564_800_000_i64 + 14 * 3_600_000,
            "end": 1_795_564_800_000_i64 + 15 * 3_600_000,
            "dial": {
                "meetingId": "123456789",
                "passcode": "4321",
                "meetingType": "MEETME",
                "cluster": "PROD",
                "foundIn": "conference"
            },
            "notDialable": null
        }])
    );
    // The secret went only to the token endpoint, the token only to Graph.
    for request in graph.received_requests().await.unwrap() {
        let body = String::from_utf8_lossy(&request.body).into_owned();
        let bearer = request
            .headers
            .get("authorization")
            .map(|v| v.to_str().unwrap().to_owned());
        if request.url.path().ends_with("/token") {
            assert!(body.contains(SECRET) && bearer.is_none());
        } else {
            assert_eq!(bearer.as_deref(), Some(format!("Bearer {TOKEN}").as_str()));
            assert!(!body.contains(SECRET));
        }
    }

    // A refused secret: CalendarServerException naming the calendar, no secret, nothing else
    // broken.
    let mut wrong = account.clone();
    wrong["password"] = json!("not-the-secret");
    let (status, _) = app
        .call(
            Method::PUT,
            "/api/calendaraccounts/OFFICE_365",
            &rw,
            Some(wrong),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, error) = app.call(Method::GET, &path, &ro, None).await;
    assert_error(status, &error, 502, "CalendarServerException", 187263818);
    assert_eq!(error["errorDetails"]["calendarId"], ROOM, "{error}");
    let text = error.to_string();
    assert!(text.contains("refused the account"), "{error}");
    for secret in ["not-the-secret", SECRET, "AADSTS"] {
        assert!(!text.contains(secret), "{secret} in {error}");
    }
    let (status, _) = app
        .call(Method::GET, &format!("/api/endpoints/{id}"), &ro, None)
        .await;
    assert_eq!(status, StatusCode::OK, "the room itself still reads");
}

on_every_backend!(a_rooms_meetings_come_from_microsoft_graph);

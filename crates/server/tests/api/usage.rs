//! Room usage: call sessions recorded from what roomlink observes (commands through the real
//! listener simulator, status polls), summed by `GET /api/analytics/usage` and listed by
//! `GET /api/analytics/sessions`.

use crate::control::{call_started_at_the_room, room};
use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error};
use reqwest::{Method, StatusCode};
use roomlink_listener_sim::SimConfig;
use serde_json::{Value, json};

async fn get_csv(app: &TestApp, path: &str, token: &str) -> (StatusCode, String, String) {
    let response = app
        .with_token(Method::GET, path, token)
        .send()
        .await
        .unwrap();
    let status = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, content_type, response.text().await.unwrap())
}

async fn calls_are_recorded_with_how_they_came_about(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let room = room(&app, &rw, SimConfig::default(), "127.77.0.21").await;
    let id = room.endpoint.clone();

    // Joined and hung up through the API (a read-only caller may control).
    let (status, body) = app
        .call(
            Method::POST,
            &format!("/api/endpoints/{id}/join?meetingid=123456789"),
            &ro,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    app.clock.advance(90_000);
    let (status, _) = app
        .call(
            Method::POST,
            &format!("/api/endpoints/{id}/hangup"),
            &ro,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    app.clock.advance(60_000);
    // A call started on the room itself (straight to the simulator), seen by a poll round.
    call_started_at_the_room(&app, &room, "127.77.0.21").await;
    assert_eq!(app.poll_now(&ro, true).await, 1);
    app.clock.advance(30_000);

    // The sessions, oldest first: the API's, ended; the device's, still going.
    let (status, content_type, csv) = get_csv(&app, "/api/analytics/sessions", &ro).await;
    assert_eq!(status, StatusCode::OK, "{csv}");
    assert!(content_type.starts_with("text/csv"), "{content_type}");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "endpointId,startedAt,endedAt,durationSeconds,source"
    );
    assert_eq!(lines.len(), 3, "{csv}");
    let api: Vec<&str> = lines[1].split(',').collect();
    assert_eq!((api[0], api[4]), (id.as_str(), "api"), "{csv}");
    assert!(api[1].ends_with('Z') && api[2].ends_with('Z'), "{csv}");
    assert_eq!(api[3], "90", "joined for 90 s: {csv}");
    let device: Vec<&str> = lines[2].split(',').collect();
    assert_eq!(
        (device[0], device[2], device[3], device[4]),
        (id.as_str(), "", "", "device"),
        "{csv}"
    );

    // Summed per room: two calls on one day.
    let (status, usage) = app
        .call(Method::GET, "/api/analytics/usage", &ro, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{usage}");
    assert_eq!(usage["groupBy"], "room");
    assert_eq!(usage["calls"], 2);
    let groups = usage["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{usage}");
    assert_eq!(groups[0]["key"], id.as_str());
    assert_eq!(groups[0]["calls"], 2);
    assert_eq!(groups[0]["daysUsed"], 1);
    // 90 s through the API, 30 s of the device's call so far.
    assert_eq!(groups[0]["minutesInCall"], 2.0);
    assert_eq!(usage["minutesInCall"], 2.0);
    assert_eq!(
        usage["to"].as_i64().unwrap() - usage["from"].as_i64().unwrap(),
        30 * 86_400_000,
        "the default period: the last 30 days"
    );

    // By weekday: today's name.
    let (_, by_day) = app
        .call(
            Method::GET,
            "/api/analytics/usage?groupBy=weekday",
            &ro,
            None,
        )
        .await;
    let today = by_day["groups"][0]["key"].as_str().unwrap().to_owned();
    assert!(
        [
            "monday",
            "tuesday",
            "wednesday",
            "thursday",
            "friday",
            "saturday",
            "sunday"
        ]
        .contains(&today.as_str()),
        "{by_day}"
    );

    // Another enterprise sees nothing of it.
    let (_, other) = app.tenant("globex").await;
    let (_, theirs) = app
        .call(Method::GET, "/api/analytics/usage", &other, None)
        .await;
    assert_eq!(theirs["calls"], 0);
    assert_eq!(
        theirs["minutesInCall"].to_string(),
        "0.0",
        "not -0.0: {theirs}"
    );
    assert_eq!(theirs["groups"], json!([]));
}

async fn usage_questions_are_checked(app: TestApp) {
    let (_, ro) = app.tenant("acme").await;
    let year_and_two_days = 368 * 86_400_000_i64;
    for query in [
        "groupBy=month".to_owned(),
        "groupBy=room&groupBy=day".to_owned(),
        "from=20&to=10".to_owned(),
        "from=10&to=10".to_owned(),
        "from=-5&to=10".to_owned(),
        "to=yesterday".to_owned(),
        format!("from=0&to={year_and_two_days}"),
    ] {
        let (status, error) = app
            .call(
                Method::GET,
                &format!("/api/analytics/usage?{query}"),
                &ro,
                None,
            )
            .await;
        assert_error(status, &error, 400, "Invalid", 1782937293);
        let message = error["errorMessage"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(!message.is_empty(), "{query}: {error}");
    }
    let (status, _, body) = get_csv(&app, "/api/analytics/sessions?from=20&to=10", &ro).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_error(status, &error, 400, "Invalid", 1782937293);
    // An explicit period, grouped by hour: nothing yet, and the period as asked.
    let (status, usage) = app
        .call(
            Method::GET,
            "/api/analytics/usage?from=1000&to=2000&groupBy=hour",
            &ro,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (
            usage["from"].clone(),
            usage["to"].clone(),
            usage["groupBy"].clone()
        ),
        (json!(1000), json!(2000), json!("hour"))
    );
    // Without credentials: the catalog's 401.
    let response = app
        .request(Method::GET, "/api/analytics/usage")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

on_every_backend!(
    calls_are_recorded_with_how_they_came_about,
    usage_questions_are_checked,
);

//! The audit trail through the API: what is recorded (writes, tokens, listeners, commands,
//! refusals), that no secret ever is, who may read it, its filters and its pages.

use crate::control::room;
use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error, json};
use reqwest::{Method, StatusCode};
use roomlink_listener_sim::SimConfig;
use serde_json::{Value, json};

/// One page of the trail and its `X-Next-Cursor`.
async fn trail(app: &TestApp, token: &str, query: &str) -> (Vec<Value>, Option<String>) {
    let response = app
        .with_token(Method::GET, &format!("/api/auditlog{query}"), token)
        .send()
        .await
        .unwrap();
    let next = response
        .headers()
        .get("X-Next-Cursor")
        .map(|v| v.to_str().unwrap().to_owned());
    let (status, body) = json(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    (body.as_array().unwrap().clone(), next)
}

fn ops(entries: &[Value]) -> Vec<String> {
    entries
        .iter()
        .map(|e| {
            format!(
                "{} {}",
                e["operation"].as_str().unwrap(),
                e["outcome"].as_str().unwrap()
            )
        })
        .collect()
}

async fn the_trail_records_who_did_what(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let (other_rw, _) = app.tenant("globex").await;
    let r = room(&app, &rw, SimConfig::default(), "127.77.0.1").await;
    let endpoint = r.endpoint.clone();

    // A write, a command with a passcode, a refusal, a CSV upload and a token deletion.
    let (status, _) = app
        .call(
            Method::PATCH,
            &format!("/api/endpoints/{endpoint}"),
            &rw,
            Some(json!({"location": "HQ", "password": "patched-room-pw"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = app
        .call(
            Method::POST,
            &format!("/api/endpoints/{endpoint}/join?meetingid=123456789&passcode=Passc0deXyz"),
            &ro,
            None,
        )
        .await;
    assert!(status.is_success(), "{body}");
    let (status, error) = app
        .call(
            Method::DELETE,
            &format!("/api/endpoints/{endpoint}"),
            &ro,
            None,
        )
        .await;
    assert_error(status, &error, 403, "Forbidden", 1900000001);
    let response = app
        .with_token(Method::PUT, "/api/endpoints/csv", &rw)
        .header("Content-Type", "text/csv")
        .body("id,name,password\n\"\",\"Huddle\",\"csv-room-pw\"\n")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let spare = app.token("acme-admin").await;
    let (_, spare_view) = app
        .call(
            Method::GET,
            &format!("/api/auth/accesstokens/{spare}"),
            &rw,
            None,
        )
        .await;
    let spare_id = spare_view["id"].as_str().unwrap().to_owned();
    let (status, _) = app
        .call(
            Method::DELETE,
            &format!("/api/auth/accesstokens/{spare}"),
            &rw,
            None,
        )
        .await;
    assert!(status.is_success());

    // Reading it needs ROLE_READWRITE.
    let (status, error) = app.call(Method::GET, "/api/auditlog", &ro, None).await;
    assert_error(status, &error, 403, "Forbidden", 1900000001);

    let (entries, next) = trail(&app, &rw, "?limit=1000").await;
    assert_eq!(next, None);
    assert_eq!(
        ops(&entries),
        [
            "auth.deleteAccessToken ok",
            "auth.createAccessToken ok",
            "endpoints.bulkPut ok",
            "endpoints.delete Forbidden",
            "endpoints.join ok",
            "endpoints.patch ok",
            "endpoints.insert ok",
            "listenerservices.create ok",
            "auth.createAccessToken ok",
            "auth.createAccessToken ok",
        ]
    );
    // Newest first, each with its time and who: a token by id (and its creator), a user.
    let deletion = &entries[0];
    assert_eq!(deletion["targetId"], spare_id.as_str());
    assert_eq!(deletion["actor"]["kind"], "token");
    assert_eq!(deletion["actor"]["username"], "acme-admin");
    assert_eq!(entries[1]["actor"]["kind"], "serviceUser");
    assert_eq!(entries[1]["actor"]["id"], "acme-admin");
    assert_eq!(entries[1]["targetId"], spare_id.as_str());
    assert_eq!(entries[2]["detail"], "created 1, updated 0, skipped 0");
    assert_eq!(entries[3]["actor"]["roles"], json!(["ROLE_READONLY"]));
    assert_eq!(entries[4]["targetId"], endpoint.as_str());
    assert_eq!(entries[5]["detail"], "fields: location, password");
    let times: Vec<i64> = entries.iter().map(|e| e["at"].as_i64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");

    // No secret, whatever the requests held.
    let text = serde_json::to_string(&entries).unwrap();
    for secret in [
        "patched-room-pw",
        "room-pw-secret",
        "csv-room-pw",
        "Passc0deXyz",
        &rw,
        &ro,
        &spare,
        "-password",
    ] {
        assert!(!text.contains(secret), "{secret} in the trail");
    }

    // Filters: by target, by actor (a token's creator too), by time.
    let (about, _) = trail(&app, &rw, &format!("?targetId={endpoint}")).await;
    assert_eq!(
        ops(&about),
        [
            "endpoints.delete Forbidden",
            "endpoints.join ok",
            "endpoints.patch ok",
            "endpoints.insert ok"
        ]
    );
    let (viewer, _) = trail(&app, &rw, "?actor=acme-viewer").await;
    assert_eq!(
        ops(&viewer),
        [
            "endpoints.delete Forbidden",
            "endpoints.join ok",
            "auth.createAccessToken ok"
        ]
    );
    let at = entries[4]["at"].as_i64().unwrap();
    let (window, _) = trail(
        &app,
        &rw,
        &format!("?from={at}&to={at}&targetId={endpoint}"),
    )
    .await;
    assert!(ops(&window).contains(&"endpoints.join ok".to_owned()));

    // Pages: each continues where the last stopped, through the cursor or the Link header.
    let (first, cursor) = trail(&app, &rw, "?limit=4").await;
    let cursor = cursor.expect("more pages");
    assert_eq!(first, entries[..4]);
    let (second, _) = trail(&app, &rw, &format!("?limit=4&cursor={cursor}")).await;
    assert_eq!(second, entries[4..8]);

    // Another enterprise sees only its own.
    let (theirs, _) = trail(&app, &other_rw, "").await;
    assert_eq!(
        ops(&theirs),
        ["auth.createAccessToken ok", "auth.createAccessToken ok"]
    );

    for bad in [
        "?limit=0",
        "?limit=1001",
        "?cursor=zz",
        "?from=5&to=4",
        "?from=x",
        "?actor=",
    ] {
        let (status, error) = app
            .call(Method::GET, &format!("/api/auditlog{bad}"), &rw, None)
            .await;
        assert_error(status, &error, 400, "Invalid", 1782937293);
    }
}

/// A write refused inside its transaction leaves an entry with the refusal, never an `ok`.
async fn a_refused_write_is_recorded_as_refused(app: TestApp) {
    app.enterprise("small", Some(1)).await;
    app.user(
        "small",
        "small-admin",
        roomlink_domain::access::Role::ReadWrite,
    )
    .await;
    let rw = app.token("small-admin").await;
    app.create_endpoint(&rw, json!({"name": "One"})).await;
    let (status, error) = app
        .call(
            Method::POST,
            "/api/endpoints",
            &rw,
            Some(json!({"name": "Two"})),
        )
        .await;
    assert_error(status, &error, 403, "LimitReached", 1881171140);
    let (entries, _) = trail(&app, &rw, "").await;
    assert_eq!(
        ops(&entries),
        [
            "endpoints.insert LimitReached",
            "endpoints.insert ok",
            "auth.createAccessToken ok"
        ]
    );
    let (status, list) = app.call(Method::GET, "/api/endpoints", &rw, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list.as_array().unwrap().len(), 1);
}

on_every_backend!(
    the_trail_records_who_did_what,
    a_refused_write_is_recorded_as_refused
);

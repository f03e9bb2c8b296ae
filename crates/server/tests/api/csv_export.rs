//! `GET /api/endpoints/csv`: the export a spreadsheet can open safely and the bulk load reads
//! back without changing anything.

use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error, json};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

async fn export(app: &TestApp, token: &str) -> reqwest::Response {
    app.with_token(Method::GET, "/api/endpoints/csv", token)
        .send()
        .await
        .unwrap()
}

async fn list(app: &TestApp, token: &str) -> Value {
    let (status, list) = app.call(Method::GET, "/api/endpoints", token, None).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    list
}

async fn export_is_an_attachment_that_uploads_back_unchanged(app: TestApp) {
    app.enterprise("acme", Some(5000)).await;
    app.user(
        "acme",
        "acme-admin",
        roomlink_domain::access::Role::ReadWrite,
    )
    .await;
    app.user(
        "acme",
        "acme-viewer",
        roomlink_domain::access::Role::ReadOnly,
    )
    .await;
    let rw = app.token("acme-admin").await;
    let ro = app.token("acme-viewer").await;
    app.create_endpoint(
        &rw,
        json!({
            "name": "=HYPERLINK(\"http://evil.example\")", "location": "@floor, \"3\"",
            "username": "+admin", "assetId": "'quoted", "elevation": -12.5, "port": 22,
            "ipAddress": "fe80::1", "calendarId": "-room@corp.example", "calendarType": "GOOGLE",
            "customData": {"k": "=1+1", "n": [1, 2]},
            "geolocation": {"latitude": -33.5, "longitude": 151.25},
            "dialStyle": "ANNEX_O", "password": "secret-pw"
        }),
    )
    .await;
    // More rows than one page of the stream.
    let rows: String = std::iter::once("id,name,password,location\n".to_owned())
        .chain((0..1100).map(|i| format!(",Room {i},pw{i},Floor {}\n", i % 7)))
        .collect();
    let response = app
        .with_token(Method::PUT, "/api/endpoints/csv", &rw)
        .header("Content-Type", "text/csv")
        .body(rows)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let before = list(&app, &rw).await;

    let response = export(&app, &ro).await;
    assert_eq!(response.status(), StatusCode::OK);
    let headers = response.headers().clone();
    assert!(
        headers[reqwest::header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/csv")
    );
    let disposition = headers[reqwest::header::CONTENT_DISPOSITION]
        .to_str()
        .unwrap();
    assert!(disposition.starts_with("attachment"), "{disposition}");
    assert!(
        disposition.contains("filename=\"endpoints.csv\""),
        "{disposition}"
    );
    let body = response.text().await.unwrap();
    assert!(body.starts_with(
        "id,name,ipaddress,port,listenerserviceid,controlprotocol,signalingprotocol,dialstyle,addressstyle,username,password,calendarid,calendartype,customdata,"
    ));
    assert_eq!(body.lines().count(), 1 + 1101);
    assert!(
        body.contains("\"'=HYPERLINK(\"\"http://evil.example\"\")\""),
        "guarded"
    );
    assert!(body.contains("\"'@floor, \"\"3\"\"\""));
    assert!(body.contains("\"'+admin\""));
    assert!(body.contains("\"-12.5\""), "plain numbers stay numbers");
    assert!(
        !body.contains("secret-pw") && !body.contains("pw7"),
        "no passwords"
    );

    // Uploading the export back changes nothing, the ANNEX_O endpoint included.
    let response = app
        .with_token(Method::PUT, "/api/endpoints/csv", &rw)
        .header("Content-Type", "text/csv")
        .body(body)
        .send()
        .await
        .unwrap();
    let (status, after) = json(response).await;
    assert_eq!(status, StatusCode::OK, "{after}");
    assert_eq!(after, before);
}

async fn export_needs_a_caller_and_stays_in_the_enterprise(app: TestApp) {
    let (acme, _) = app.tenant("acme").await;
    let (_, globex_ro) = app.tenant("globex").await;
    app.create_endpoint(&acme, json!({"name": "Acme room"}))
        .await;
    let response = app
        .request(Method::GET, "/api/endpoints/csv")
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_error(status, &body, 401, "NotAuthenticated", 1285563822);

    let text = export(&app, &globex_ro).await.text().await.unwrap();
    assert_eq!(text.lines().count(), 1, "the header only: {text}");
    assert!(!text.contains("Acme room"));

    let (status, body) = app
        .call(Method::DELETE, "/api/endpoints/csv", &acme, None)
        .await;
    assert_error(status, &body, 405, "MethodNotAllowed", 1900000002);
    assert_eq!(
        body["errorDetails"]["allowed"],
        json!(["GET", "PUT", "POST"])
    );
}

on_every_backend!(
    export_is_an_attachment_that_uploads_back_unchanged,
    export_needs_a_caller_and_stays_in_the_enterprise,
);

use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error, json};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const HEADER: &str = "id,name,ipaddress,port,listenerserviceid,controlprotocol,signalingprotocol,dialstyle,addressstyle,username,password,calendarid,calendartype,customdata";

async fn upload(
    app: &TestApp,
    token: &str,
    method: Method,
    content_type: &str,
    csv: String,
) -> (StatusCode, Value) {
    let response = app
        .with_token(method, "/api/endpoints/csv", token)
        .header("Content-Type", content_type)
        .body(csv)
        .send()
        .await
        .unwrap();
    json(response).await
}

async fn upload_creates_updates_skips_and_answers_the_full_list(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let existing = app
        .create_endpoint(
            &rw,
            json!({"name": "Old", "location": "HQ", "password": "keep-me"}),
        )
        .await;
    let untouched = app.create_endpoint(&rw, json!({"name": "Untouched"})).await;
    let id = existing["id"].as_str().unwrap();
    let csv = format!(
        "{HEADER}\n\
         \"\",\"New, with comma\",\"127.77.0.9\",\"22\",\"\",\"TANDBERG_SSH\",\"H323\",\"\",\"\",\"admin\",\"pw1\",\"new@x.example\",\"GOOGLE\",\"{{\"\"k\"\": \"\"v\"\"}}\"\n\
         \"{id}\",\"Old renamed\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\"\n\
         \"\",\"No password\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\"\n\
         \"ffffffffffffffffffffffff\",\"Unknown\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\"\n"
    );
    let (status, list) = upload(&app, &rw, Method::PUT, "text/csv", csv).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let list = list.as_array().unwrap();
    assert_eq!(
        list.len(),
        3,
        "two existing plus one created; the bad rows skipped"
    );
    let renamed = list.iter().find(|e| e["id"] == id).unwrap();
    assert_eq!(renamed["name"], "Old renamed");
    assert_eq!(
        renamed["location"], "HQ",
        "a column absent from the header keeps its field"
    );
    assert!(
        renamed["ipAddress"].is_null(),
        "a present column's blank cell means null"
    );
    let created = list
        .iter()
        .find(|e| e["name"] == "New, with comma")
        .unwrap();
    assert_eq!(created["port"], 22);
    assert_eq!(created["customData"], json!({"k": "v"}));
    assert!(
        list.iter().any(|e| e["id"] == untouched["id"]),
        "absent endpoints untouched"
    );
    let (_, listed) = app.call(Method::GET, "/api/endpoints", &rw, None).await;
    assert_eq!(
        listed.as_array().unwrap(),
        list,
        "identical to the list operation"
    );
}

async fn every_accepted_content_type_and_post(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    for (i, content_type) in [
        "text/csv",
        "application/vnd.ms-excel",
        "application/octet-stream",
        "text/csv; charset=utf-8",
    ]
    .into_iter()
    .enumerate()
    {
        let csv = format!("id,name,password\n,Room {i},pw\n");
        let (status, list) = upload(&app, &rw, Method::POST, content_type, csv).await;
        assert_eq!(status, StatusCode::OK, "{content_type}: {list}");
        assert_eq!(list.as_array().unwrap().len(), i + 1);
    }
    let (status, body) = upload(
        &app,
        &rw,
        Method::PUT,
        "application/json",
        "id,name\n".to_owned(),
    )
    .await;
    assert_error(status, &body, 415, "UnsupportedMediaType", 1900000003);
}

async fn oversized_or_malformed_uploads_change_nothing(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let mut big = String::from("id,name,password\n");
    while big.len() <= 1024 * 1024 {
        big.push_str(",Room,pw\n");
    }
    let (status, body) = upload(&app, &rw, Method::PUT, "text/csv", big).await;
    assert_error(status, &body, 413, "PayloadTooLarge", 1900000004);
    let (status, body) = upload(
        &app,
        &rw,
        Method::PUT,
        "text/csv",
        "id,name,colour\n,x,red\n".to_owned(),
    )
    .await;
    assert_error(status, &body, 400, "Invalid", 1782937293);
    let (_, list) = app.call(Method::GET, "/api/endpoints", &rw, None).await;
    assert_eq!(list, json!([]));
}

async fn uploads_stop_at_the_endpoint_limit(app: TestApp) {
    app.enterprise("small", Some(3)).await;
    app.user(
        "small",
        "small-admin",
        roomlink_domain::access::Role::ReadWrite,
    )
    .await;
    let token = app.token("small-admin").await;
    let csv: String = std::iter::once("id,name,password\n".to_owned())
        .chain((0..10).map(|i| format!(",Room {i},pw\n")))
        .collect();
    let (status, list) = upload(&app, &token, Method::PUT, "text/csv", csv).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(
        list.as_array().unwrap().len(),
        3,
        "rows past the limit are skipped"
    );
}

on_every_backend!(
    upload_creates_updates_skips_and_answers_the_full_list,
    every_accepted_content_type_and_post,
    oversized_or_malformed_uploads_change_nothing,
    uploads_stop_at_the_endpoint_limit,
);

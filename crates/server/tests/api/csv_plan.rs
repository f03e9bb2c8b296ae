//! `POST /api/endpoints/csv/plan`: the dry run of a CSV upload, row by row, writing nothing.

use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error, json};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

async fn send(
    app: &TestApp,
    token: &str,
    path: &str,
    method: Method,
    csv: &str,
) -> (StatusCode, Value) {
    let response = app
        .with_token(method, path, token)
        .header("Content-Type", "text/csv")
        .body(csv.to_owned())
        .send()
        .await
        .unwrap();
    json(response).await
}

async fn the_plan_names_each_row_and_writes_nothing(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let existing = app
        .create_endpoint(&rw, json!({"name": "Old", "password": "keep-me"}))
        .await;
    let id = existing["id"].as_str().unwrap();
    let csv = format!(
        "id,name,location,password\n\
         ,Lobby,Ground floor,pw1\n\
         {id},Old renamed,Floor 2,\n\
         ,No password,,\n\
         ffffffffffffffffffffffff,Ghost,,\n"
    );
    let (_, before) = app.call(Method::GET, "/api/endpoints", &rw, None).await;
    let (status, plan) = send(&app, &rw, "/api/endpoints/csv/plan", Method::POST, &csv).await;
    assert_eq!(status, StatusCode::OK, "{plan}");
    assert_eq!(plan["created"], 1, "{plan}");
    assert_eq!(plan["updated"], 1, "{plan}");
    assert_eq!(plan["skipped"], 2, "{plan}");
    let rows = plan["rows"].as_array().unwrap();
    let actions: Vec<(u64, &str)> = rows
        .iter()
        .map(|r| (r["line"].as_u64().unwrap(), r["action"].as_str().unwrap()))
        .collect();
    assert_eq!(
        actions,
        vec![(2, "create"), (3, "update"), (4, "skip"), (5, "skip")]
    );
    assert_eq!(rows[0]["name"], "Lobby");
    assert!(rows[0]["id"].is_null());
    assert_eq!(rows[1]["id"], id);
    assert_eq!(rows[1]["name"], "Old renamed");
    assert!(
        rows[2]["reason"].as_str().unwrap().contains("password"),
        "{plan}"
    );
    assert!(
        rows[3]["reason"].as_str().unwrap().contains("no endpoint"),
        "{plan}"
    );
    assert!(
        !plan.to_string().contains("pw1"),
        "a plan never shows a password"
    );

    let (_, after) = app.call(Method::GET, "/api/endpoints", &rw, None).await;
    assert_eq!(before, after, "the plan wrote nothing");
    let (_, trail) = app.call(Method::GET, "/api/auditlog", &rw, None).await;
    assert!(
        !trail.to_string().contains("endpoints.bulkPut"),
        "a dry run is not an audited write: {trail}"
    );

    // The upload then does what the plan said.
    let (status, list) = send(&app, &rw, "/api/endpoints/csv", Method::PUT, &csv).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert!(list.iter().any(|e| e["name"] == "Lobby"));
    assert!(
        list.iter()
            .any(|e| e["id"] == id && e["name"] == "Old renamed")
    );
}

async fn the_plan_has_the_uploads_role_and_errors(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let (status, body) = send(
        &app,
        &ro,
        "/api/endpoints/csv/plan",
        Method::POST,
        "id,name\n",
    )
    .await;
    assert_error(status, &body, 403, "Forbidden", 1900000001);
    let (status, body) = send(
        &app,
        &rw,
        "/api/endpoints/csv/plan",
        Method::POST,
        "nonsense,name\n",
    )
    .await;
    assert_error(status, &body, 400, "Invalid", 1782937293);
    let (status, body) = app
        .call(Method::GET, "/api/endpoints/csv/plan", &rw, None)
        .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{body}");
}

on_every_backend!(
    the_plan_names_each_row_and_writes_nothing,
    the_plan_has_the_uploads_role_and_errors,
);

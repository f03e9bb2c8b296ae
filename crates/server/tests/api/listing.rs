//! The endpoint list beyond one page: the plain list streams every endpoint in creation
//! order; `limit` and `cursor` page through it; `/metrics` counts the requests just made.

use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error, json};
use reqwest::{Method, StatusCode};
use serde_json::Value;

/// Uploads `n` endpoints named "Room 0".."Room n-1" (in that order) through the CSV route.
async fn load(app: &TestApp, token: &str, n: usize) {
    // New endpoints from CSV need a password.
    let csv: String = std::iter::once("id,name,password\n".to_owned())
        .chain((0..n).map(|i| format!(",Room {i},pw{i}\n")))
        .collect();
    let response = app
        .with_token(Method::PUT, "/api/endpoints/csv", token)
        .header("Content-Type", "text/csv")
        .body(csv)
        .send()
        .await
        .unwrap();
    let (status, list) = json(response).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list.as_array().map(Vec::len), Some(n));
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("array")
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn the_plain_list_streams_every_endpoint_in_creation_order(app: TestApp) {
    app.enterprise("big", Some(5000)).await;
    app.user("big", "big-admin", roomlink_domain::access::Role::ReadWrite)
        .await;
    let token = app.token("big-admin").await;
    // More than two of the stream's internal pages.
    load(&app, &token, 1234).await;
    let (status, list) = app.call(Method::GET, "/api/endpoints", &token, None).await;
    assert_eq!(status, StatusCode::OK);
    let expected: Vec<String> = (0..1234).map(|i| format!("Room {i}")).collect();
    assert_eq!(names(&list), expected);
}

async fn pages_follow_cursors_to_the_end_without_gaps(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    load(&app, &rw, 7).await;
    let mut seen = Vec::new();
    let mut path = "/api/endpoints?limit=3".to_owned();
    loop {
        let response = app
            .with_token(Method::GET, &path, &ro)
            .send()
            .await
            .unwrap();
        let next = response
            .headers()
            .get("x-next-cursor")
            .map(|v| v.to_str().unwrap().to_owned());
        let (status, page) = json(response).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let names = names(&page);
        assert!(names.len() <= 3);
        seen.extend(names);
        match next {
            Some(cursor) => {
                // A deletion between pages skips nothing that remains.
                if seen.len() == 3 {
                    let (_, first) = app
                        .call(Method::GET, "/api/endpoints?limit=1", &rw, None)
                        .await;
                    let id = first[0]["id"].as_str().unwrap().to_owned();
                    let (status, _) = app
                        .call(Method::DELETE, &format!("/api/endpoints/{id}"), &rw, None)
                        .await;
                    assert_eq!(status, StatusCode::NO_CONTENT);
                }
                path = format!("/api/endpoints?limit=3&cursor={cursor}");
            }
            None => break,
        }
    }
    let expected: Vec<String> = (0..7).map(|i| format!("Room {i}")).collect();
    assert_eq!(seen, expected);
    // Bad paging parameters are Invalid, not silently ignored.
    for bad in ["limit=0", "limit=1001", "limit=ten", "cursor=not-ours"] {
        let (status, body) = app
            .call(Method::GET, &format!("/api/endpoints?{bad}"), &ro, None)
            .await;
        assert_error(status, &body, 400, "Invalid", 1782937293);
    }
}

async fn metrics_show_the_requests_just_made(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    for _ in 0..3 {
        let (status, _) = app.call(Method::GET, "/api/endpoints", &rw, None).await;
        assert_eq!(status, StatusCode::OK);
    }
    let (status, _) = app
        .call(Method::GET, "/api/endpoints/nope", &rw, None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let response = app.request(Method::GET, "/metrics").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    let text = response.text().await.unwrap();
    for line in [
        "roomlink_http_requests_total{method=\"GET\",route=\"/api/endpoints\",status=\"200\"} 3",
        "roomlink_http_requests_total{method=\"GET\",route=\"/api/endpoints/{id}\",status=\"404\"} 1",
        "roomlink_http_request_duration_seconds_count{method=\"GET\",route=\"/api/endpoints\"} 3",
    ] {
        assert!(text.lines().any(|l| l == line), "missing {line} in\n{text}");
    }
    assert!(text.contains("roomlink_db_pool_max_connections"), "{text}");
    // Neither ids nor tokens become labels.
    assert!(!text.contains(&rw) && !text.contains("nope"), "{text}");
}

on_every_backend!(
    the_plain_list_streams_every_endpoint_in_creation_order,
    pages_follow_cursors_to_the_end_without_gaps,
    metrics_show_the_requests_just_made,
);

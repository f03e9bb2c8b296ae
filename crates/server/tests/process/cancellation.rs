//! Clients that go away mid-request: hundreds of CSV uploads, PUTs and token creations cut off
//! at many points (during the body, right after it, a few milliseconds into the work; by a
//! close or a reset), against the real binary on SQLite and on PostgreSQL. Afterwards the
//! service must be alive with no panic logged, every write whole or absent (each upload all or
//! nothing, each PUT's fields from one request, the audit trail agreeing with the data), and
//! every pooled connection back.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

use crate::support::service::{Served, Service, token};
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

const ROUNDS: u64 = 300;
/// Rows per CSV upload: an upload applied in part would leave a group of another size.
const ROWS: usize = 5;
const POOL: &str = "3";

/// A small deterministic generator: the same cut points every run.
struct Dice(u64);

impl Dice {
    fn roll(&mut self, sides: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % sides
    }
}

fn http_request(method: &str, path: &str, headers: &[(&str, String)], body: &[u8]) -> Vec<u8> {
    let mut text = format!("{method} {path} HTTP/1.1\r\nHost: roomlink\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut bytes = text.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// Sends `request` (all of it, or the part the dice choose), waits a little, and goes away.
async fn cut_off(address: &str, request: &[u8], dice: &mut Dice) {
    let Ok(mut stream) = TcpStream::connect(address).await else {
        return;
    };
    let whole = dice.roll(3) > 0;
    let sent = if whole {
        request.len()
    } else {
        // Somewhere in the body or the headers.
        1 + usize::try_from(dice.roll(request.len() as u64 - 1)).unwrap_or(0)
    };
    let _ = stream.write_all(&request[..sent]).await;
    let waits = [0, 0, 1, 2, 3, 5, 8, 13];
    let wait = waits[usize::try_from(dice.roll(waits.len() as u64)).unwrap_or(0)];
    tokio::time::sleep(Duration::from_millis(wait)).await;
    if dice.roll(2) == 0 {
        // A reset rather than a close.
        let _ = stream.set_zero_linger();
    }
    drop(stream);
}

fn csv_upload(round: u64) -> Vec<u8> {
    // A new endpoint needs a password (without one its row is skipped, not created).
    let mut csv = String::from("id,name,location,password\n");
    for row in 0..ROWS {
        csv.push_str(&format!(",csv-{round}-{row},group {round},room-pw-{row}\n"));
    }
    csv.into_bytes()
}

async fn get(client: &reqwest::Client, served: &Served, token: &str, path: &str) -> Value {
    let response = client
        .get(format!("http://{}{path}", served.address))
        .header("X-Access-Token", token)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    response.json().await.unwrap()
}

/// Every audit entry of the enterprise, following the pages.
async fn audit_trail(client: &reqwest::Client, served: &Served, token: &str) -> Vec<Value> {
    let mut all = Vec::new();
    let mut path = "/api/auditlog?limit=1000".to_owned();
    loop {
        let response = client
            .get(format!("http://{}{path}", served.address))
            .header("X-Access-Token", token)
            .send()
            .await
            .unwrap();
        let next = response
            .headers()
            .get("X-Next-Cursor")
            .map(|v| v.to_str().unwrap().to_owned());
        let page: Vec<Value> = response.json().await.unwrap();
        all.extend(page);
        match next {
            Some(cursor) => path = format!("/api/auditlog?limit=1000&cursor={cursor}"),
            None => return all,
        }
    }
}

fn metric(text: &str, line_start: &str) -> Option<i64> {
    text.lines()
        .find(|l| l.starts_with(line_start))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
}

async fn storm(service: Service) {
    service.tenant("acme");
    let mut served = service.serve_watched(&[("ROOMLINK__DATABASE__MAX_CONNECTIONS", POOL)]);
    let client = reqwest::Client::new();
    let token = token(&client, &served.address, "acme").await;
    let created: Value = client
        .post(format!("http://{}/api/endpoints", served.address))
        .header("X-Access-Token", &token)
        .json(&json!({ "name": "v-start", "location": "v-start" }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let target = created["id"].as_str().unwrap().to_owned();
    let auth = ("X-Access-Token", token.clone());
    let basic = (
        "Authorization",
        "Basic YWNtZS1vcHM6YWNtZS1wYXNzd29yZC0x".to_owned(), // acme-ops:acme-password-1
    );

    let mut dice = Dice(0x9e37_79b9_7f4a_7c15);
    for round in 0..ROUNDS {
        let request = match round % 3 {
            0 => http_request(
                "PUT",
                "/api/endpoints/csv",
                &[auth.clone(), ("Content-Type", "text/csv".to_owned())],
                &csv_upload(round),
            ),
            1 => {
                let body =
                    json!({ "name": format!("v-{round}"), "location": format!("v-{round}") });
                http_request(
                    "PUT",
                    &format!("/api/endpoints/{target}"),
                    &[
                        auth.clone(),
                        ("Content-Type", "application/json".to_owned()),
                    ],
                    body.to_string().as_bytes(),
                )
            }
            _ => http_request(
                "POST",
                "/api/auth/accesstokens",
                std::slice::from_ref(&basic),
                b"",
            ),
        };
        cut_off(&served.address, &request, &mut dice).await;
    }

    // Work cut off by its client still finishes: wait until the pool is idle again.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = client
            .get(format!("http://{}/metrics", served.address))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let in_use = metric(&text, "roomlink_db_pool_connections{state=\"in_use\"}");
        let waiting = metric(&text, "roomlink_db_pool_waiting");
        // The scrape itself holds no connection; 0 in use means none leaked.
        if in_use == Some(0) && waiting == Some(0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "pooled connections never came back: {in_use:?} in use, {waiting:?} waiting"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        served.child.try_wait().unwrap().is_none(),
        "roomlink is running"
    );

    // Each upload is whole or absent.
    let endpoints = get(&client, &served, &token, "/api/endpoints").await;
    let mut groups: HashMap<String, usize> = HashMap::new();
    for endpoint in endpoints.as_array().unwrap() {
        let name = endpoint["name"].as_str().unwrap();
        if name.starts_with("csv-") {
            *groups
                .entry(endpoint["location"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
    }
    assert!(
        groups.values().all(|n| *n == ROWS),
        "an upload half applied: {groups:?}"
    );
    // Cut-off points on both sides of the commit: uploads cut during their body never apply.
    let uploads = ROUNDS.div_ceil(3) as usize;
    assert!(
        !groups.is_empty() && groups.len() < uploads,
        "{} of {uploads} uploads applied",
        groups.len()
    );
    eprintln!("{} of {uploads} cut-off uploads applied", groups.len());
    // The PUT target holds one request's fields.
    let one = get(
        &client,
        &served,
        &token,
        &format!("/api/endpoints/{target}"),
    )
    .await;
    assert_eq!(one["name"], one["location"], "{one}");

    // The audit trail agrees with the data: one entry per applied upload and per stored token.
    let trail = audit_trail(&client, &served, &token).await;
    let applied = |operation: &str| {
        trail
            .iter()
            .filter(|e| e["operation"] == operation && e["outcome"] == "ok")
            .count()
    };
    assert_eq!(applied("endpoints.bulkPut"), groups.len());
    let tokens = get(&client, &served, &token, "/api/auth/accesstokens").await;
    assert_eq!(
        applied("auth.createAccessToken"),
        tokens.as_array().unwrap().len()
    );

    // Requests are served as before, the pool's size at once.
    let answers = futures::future::join_all((0..6).map(|_| {
        client
            .get(format!("http://{}/api/endpoints/{target}", served.address))
            .header("X-Access-Token", &token)
            .send()
    }))
    .await;
    assert!(
        answers
            .iter()
            .all(|r| r.as_ref().is_ok_and(|r| r.status() == StatusCode::OK))
    );

    let panics: Vec<&Value> = served
        .log_so_far()
        .iter()
        .filter(|line| line.to_string().contains("panicked"))
        .collect();
    assert!(panics.is_empty(), "{panics:#?}");
    served.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_cut_off_mid_request_leave_nothing_half_done_on_sqlite() {
    storm(Service::on_sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_cut_off_mid_request_leave_nothing_half_done_on_postgres() {
    let Some((service, database)) = Service::on_postgres().await else {
        return;
    };
    storm(service).await;
    database.drop_now().await;
}

//! The endpoint list cache is never stale (docs/adr/0003-endpoint-list-cache.md): two serving
//! processes on one database, no cluster bus between them; every write through one is seen by
//! the very next read through the other, for the list and for single endpoints, and the cached
//! answers are byte for byte those of a third process with the cache off. On PostgreSQL (when
//! `ROOMLINK_TEST_DATABASE_URL` is set) and on one SQLite file.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

use crate::support::service::{Service, sigkill, token};
use reqwest::StatusCode;
use serde_json::{Value, json};

struct Instance {
    child: std::process::Child,
    base: String,
}

fn start(service: &Service, cache_mib: &str) -> Instance {
    let mut service_env = Service::new(tempfile::tempdir().unwrap(), service.database_url.clone());
    // The same key file: every process opens what the others sealed.
    service_env.env = service.env.clone();
    service_env.env.push((
        "ROOMLINK__SECURITY__SERVICE_KEY_FILE".into(),
        service.dir.path().join("service.key").display().to_string(),
    ));
    service_env.env.push((
        "ROOMLINK__SERVER__ENDPOINT_LIST_CACHE_MIB".into(),
        cache_mib.into(),
    ));
    let (child, address) = service_env.serve();
    Instance {
        child,
        base: format!("http://{address}/api"),
    }
}

struct Client {
    http: reqwest::Client,
    token: String,
}

impl Client {
    async fn send(&self, request: reqwest::RequestBuilder) -> (StatusCode, Vec<u8>) {
        let response = request
            .header("X-Access-Token", &self.token)
            .send()
            .await
            .unwrap();
        let status = response.status();
        (status, response.bytes().await.unwrap().to_vec())
    }

    async fn list(&self, on: &Instance) -> Vec<u8> {
        let (status, body) = self
            .send(self.http.get(format!("{}/endpoints", on.base)))
            .await;
        assert_eq!(status, StatusCode::OK);
        body
    }

    async fn one(&self, on: &Instance, id: &str) -> (StatusCode, Vec<u8>) {
        self.send(self.http.get(format!("{}/endpoints/{id}", on.base)))
            .await
    }

    async fn json(&self, request: reqwest::RequestBuilder) -> Value {
        let (status, body) = self.send(request).await;
        assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&body));
        serde_json::from_slice(&body).unwrap()
    }
}

fn names(list: &[u8]) -> Vec<String> {
    let list: Vec<Value> = serde_json::from_slice(list).unwrap();
    list.iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn writes_through_one_are_read_through_the_other(service: Service) {
    service.tenant("acme");
    let a = start(&service, "64");
    let b = start(&service, "64");
    // The reference: the same database read without a cache.
    let plain = start(&service, "0");
    let http = reqwest::Client::new();
    let address = a
        .base
        .trim_start_matches("http://")
        .trim_end_matches("/api");
    let client = Client {
        token: token(&http, address, "acme").await,
        http,
    };

    let mut ids = Vec::new();
    for n in 0..4 {
        let created = client
            .json(
                client
                    .http
                    .post(format!("{}/endpoints", a.base))
                    .json(&json!({ "name": format!("room-{n}") })),
            )
            .await;
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    // Both instances now hold the list (and a single read is served from it).
    for on in [&a, &b] {
        assert_eq!(names(&client.list(on).await).len(), 4);
        assert_eq!(client.one(on, &ids[0]).await.0, StatusCode::OK);
    }

    for round in 0..24 {
        let (writer, reader) = if round % 2 == 0 { (&a, &b) } else { (&b, &a) };
        let id = &ids[round % ids.len()];
        let name = format!("renamed-{round}");
        client
            .json(
                client
                    .http
                    .patch(format!("{}/endpoints/{id}", writer.base))
                    .json(&json!({ "name": name })),
            )
            .await;
        let list = client.list(reader).await;
        assert!(
            names(&list).contains(&name),
            "round {round}: {:?}",
            names(&list)
        );
        let (status, one) = client.one(reader, id).await;
        assert_eq!(status, StatusCode::OK);
        let one: Value = serde_json::from_slice(&one).unwrap();
        assert_eq!(one["name"], name.as_str(), "round {round}");
        // Byte for byte what an instance without the cache answers.
        assert_eq!(list, client.list(&plain).await, "round {round}");
        assert_eq!(client.one(reader, id).await, client.one(&plain, id).await);
    }

    // A delete through one: the other answers NotFound and lists without it.
    let gone = ids.pop().unwrap();
    let (status, _) = client
        .send(client.http.delete(format!("{}/endpoints/{gone}", a.base)))
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = client.one(&b, &gone).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["errorName"], "NotFound");
    assert_eq!(names(&client.list(&b).await).len(), 3);

    // A CSV upload through one: the other lists the new rows at once.
    let (status, _) = client
        .send(
            client
                .http
                .put(format!("{}/endpoints/csv", b.base))
                .header("Content-Type", "text/csv")
                .body("name,password\ncsv-room,secret-1\n"),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let list = client.list(&a).await;
    assert!(names(&list).contains(&"csv-room".to_owned()));
    assert_eq!(list, client.list(&plain).await);

    for instance in [a, b, plain] {
        sigkill(instance.child);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_postgres_a_write_through_one_instance_is_read_through_another() {
    let Some((service, database)) = Service::on_postgres().await else {
        return;
    };
    writes_through_one_are_read_through_the_other(service).await;
    database.drop_now().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_sqlite_a_write_through_one_instance_is_read_through_another() {
    writes_through_one_are_read_through_the_other(Service::on_sqlite()).await;
}

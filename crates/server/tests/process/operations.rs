//! The keys and data an operator manages, as the README tells a new user to do it, with the
//! real binary: `admin rotate-key` while serving (SQLite and PostgreSQL), `admin backup` while
//! serving and `admin restore`, and HTTPS with a certificate swapped by SIGHUP.

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

use crate::support::service::{Served, Service, run, token};
use reqwest::StatusCode;
use roomlink_crypto::{KeyRing, Sealer};
use roomlink_domain::ports::{SealedKind, SealedSecretStore, SecretSealer};
use roomlink_store::{DbConfig, DbStore};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

async fn post(client: &reqwest::Client, url: String, token: &str, body: Value) -> Value {
    let response = client
        .post(url)
        .header("X-Access-Token", token)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    response.json().await.unwrap()
}

/// Every stored sealed value, opened with the key file's ring: (key id, plaintext), sorted.
async fn opened(database_url: &str, key_file: &Path) -> Vec<(String, String)> {
    let store = DbStore::connect(&DbConfig::new(database_url.to_owned()))
        .await
        .unwrap();
    let sealer = Sealer::new(KeyRing::load(key_file).unwrap());
    let mut all = Vec::new();
    for kind in [SealedKind::EndpointPassword, SealedKind::ListenerSecret] {
        for stored in store.sealed_not_under(kind, "", None, 1000).await.unwrap() {
            let plain = sealer.open(&stored.sealed).unwrap().unwrap();
            all.push((stored.sealed.key_id, plain.expose().to_owned()));
        }
    }
    all.sort();
    all
}

fn key_ids(key_file: &Path) -> (String, Vec<String>) {
    let ring = KeyRing::load(key_file).unwrap();
    let previous = ring.previous_ids().into_iter().map(str::to_owned).collect();
    (ring.current().id().to_owned(), previous)
}

async fn rotation_while_serving(service: Service) {
    service.tenant("acme");
    let mut served = service.serve_watched(&[]);
    let client = reqwest::Client::new();
    let base = format!("http://{}", served.address);
    let token = token(&client, &served.address, "acme").await;
    for n in 0..3 {
        let body = json!({ "name": format!("Room {n}"), "password": format!("room-pw-{n}") });
        post(&client, format!("{base}/api/endpoints"), &token, body).await;
    }
    let listener = post(
        &client,
        format!("{base}/api/listenerservices"),
        &token,
        json!({ "name": "Site", "baseUrl": "http://127.0.0.1:9" }),
    )
    .await;
    let listener_secret = listener["secret"].as_str().unwrap().to_owned();
    let key_file = service.dir.path().join("service.key");
    let (old, _) = key_ids(&key_file);

    let (code, text) = run(&service, &["admin", "rotate-key"]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("re-sealed 4 value(s)"), "{text}");
    let (new, previous) = key_ids(&key_file);
    assert_ne!(new, old);
    assert_eq!(previous, vec![old.clone()], "the old key stays readable");
    let mut expected: Vec<(String, String)> = (0..3)
        .map(|n| (new.clone(), format!("room-pw-{n}")))
        .chain([(new.clone(), listener_secret)])
        .collect();
    expected.sort();
    assert_eq!(opened(&service.database_url, &key_file).await, expected);

    // The running instance still seals under the old key until SIGHUP: `--resume` picks that up.
    let body = json!({ "name": "Late", "password": "late-pw" });
    post(&client, format!("{base}/api/endpoints"), &token, body).await;
    served.signal("HUP");
    let reloaded = served.wait_for_log("service key ring reloaded");
    assert_eq!(reloaded["fields"]["current"], new.as_str());
    let body = json!({ "name": "After", "password": "after-pw" });
    post(&client, format!("{base}/api/endpoints"), &token, body).await;
    let (code, text) = run(
        &service,
        &["admin", "rotate-key", "--resume", "--forget-previous"],
    );
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("re-sealed 1 value(s)"),
        "only the late one: {text}"
    );
    assert_eq!(key_ids(&key_file), (new.clone(), Vec::new()));
    let all = opened(&service.database_url, &key_file).await;
    assert_eq!(all.len(), 6);
    assert!(all.iter().all(|(key, _)| *key == new), "{all:?}");
    for secret in ["late-pw", "after-pw", "room-pw-0"] {
        assert!(all.iter().any(|(_, plain)| plain == secret));
    }
    assert!(!text.contains("room-pw"), "no secret in the output: {text}");
    served.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotate_key_reseals_everything_online_on_sqlite() {
    rotation_while_serving(Service::on_sqlite()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotate_key_reseals_everything_online_on_postgres() {
    let Some((service, database)) = Service::on_postgres().await else {
        return;
    };
    rotation_while_serving(service).await;
    database.drop_now().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotate_key_refuses_what_it_cannot_do() {
    let mut service = Service::on_sqlite();
    service.tenant("acme");
    service.env.push((
        "ROOMLINK__SECURITY__SERVICE_KEY".into(),
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=".into(),
    ));
    let (code, text) = run(&service, &["admin", "rotate-key"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("security.previous_service_keys"), "{text}");
    let (code, text) = run(&service, &["admin", "rotate-key", "--resume"]);
    assert_eq!(code, 0, "nothing to re-seal is fine: {text}");
}

async fn endpoint_names(client: &reqwest::Client, served: &Served) -> Vec<String> {
    let token = token(client, &served.address, "acme").await;
    let list: Vec<Value> = client
        .get(format!("http://{}/api/endpoints", served.address))
        .header("X-Access-Token", token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let mut names: Vec<String> = list
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_while_serving_then_restore_brings_that_moment_back() {
    let service = Service::on_sqlite();
    service.tenant("acme");
    let served = service.serve_watched(&[]);
    let client = reqwest::Client::new();
    let token = token(&client, &served.address, "acme").await;
    let base = format!("http://{}", served.address);
    for name in ["Alpha", "Beta"] {
        post(
            &client,
            format!("{base}/api/endpoints"),
            &token,
            json!({ "name": name }),
        )
        .await;
    }
    let backup = service.dir.path().join("backups/monday.db");
    std::fs::create_dir_all(backup.parent().unwrap()).unwrap();
    let backup_arg = backup.to_str().unwrap();
    let (code, text) = run(&service, &["admin", "backup", backup_arg]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("service.key"), "says to keep the key: {text}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&backup).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the copy is its owner's only");
    }
    let (code, text) = run(&service, &["admin", "backup", backup_arg]);
    assert_eq!(code, 1, "an existing file is not overwritten: {text}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let live = service.dir.path().join("roomlink.db");
        let mode = std::fs::metadata(&live).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the live database is its owner's only");
    }

    // A restore under the running service would replace the file it writes to: refused, and
    // nothing changes (the write after it is still there after a restart, below).
    let (code, text) = run(&service, &["admin", "restore", backup_arg, "--yes"]);
    assert_eq!(code, 1, "refused while serving: {text}");
    assert!(text.contains("roomlink is serving"), "{text}");
    assert!(
        !service
            .dir
            .path()
            .join("roomlink.db.before-restore-1")
            .exists(),
        "nothing was done: {text}"
    );
    post(
        &client,
        format!("{base}/api/endpoints"),
        &token,
        json!({ "name": "Gamma" }),
    )
    .await;
    served.stop();
    let served = service.serve_watched(&[]);
    assert_eq!(
        endpoint_names(&client, &served).await,
        ["Alpha", "Beta", "Gamma"]
    );
    served.stop();

    let (code, text) = run(&service, &["admin", "restore", backup_arg]);
    assert_eq!(code, 1, "asks for --yes: {text}");
    let not_a_db = service.dir.path().join("notes.txt");
    std::fs::write(&not_a_db, "not a database").unwrap();
    let (code, text) = run(
        &service,
        &["admin", "restore", not_a_db.to_str().unwrap(), "--yes"],
    );
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("not a roomlink database"), "{text}");
    let (code, text) = run(&service, &["admin", "restore", backup_arg, "--yes"]);
    assert_eq!(code, 0, "{text}");
    let kept = service.dir.path().join("roomlink.db.before-restore-1");
    assert!(kept.exists(), "the replaced database is kept: {text}");

    let served = service.serve_watched(&[]);
    assert_eq!(endpoint_names(&client, &served).await, ["Alpha", "Beta"]);
    served.stop();
    // The kept copy holds what the restore replaced, Gamma included.
    let (code, text) = run(
        &service,
        &["admin", "restore", kept.to_str().unwrap(), "--yes"],
    );
    assert_eq!(code, 0, "{text}");
    let served = service.serve_watched(&[]);
    assert_eq!(
        endpoint_names(&client, &served).await,
        ["Alpha", "Beta", "Gamma"]
    );
    served.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_is_refused_on_postgres_with_the_way_to_do_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut service = Service::new(dir, "postgres://postgres@127.0.0.1:1/none".to_owned());
    service.env.push((
        "ROOMLINK__SECURITY__SERVICE_KEY".into(),
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=".into(),
    ));
    let (code, text) = run(&service, &["admin", "backup", "copy.db"]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("pg_dump"), "{text}");
}

/// A self-signed certificate for 127.0.0.1 written as PEM files; the certificate's DER.
fn certificate(dir: &Path, name: &str) -> (String, String, reqwest::Certificate) {
    let made = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let cert = dir.join(format!("{name}.crt"));
    let key = dir.join(format!("{name}.key"));
    std::fs::write(&cert, made.cert.pem()).unwrap();
    std::fs::write(&key, made.signing_key.serialize_pem()).unwrap();
    let trusted = reqwest::Certificate::from_der(made.cert.der()).unwrap();
    (
        cert.display().to_string(),
        key.display().to_string(),
        trusted,
    )
}

fn trusting(cert: reqwest::Certificate) -> reqwest::Client {
    reqwest::Client::builder()
        .tls_certs_only([cert])
        .build()
        .unwrap()
}

async fn answers(client: &reqwest::Client, url: &str) -> bool {
    matches!(client.get(url).send().await, Ok(r) if r.status() == StatusCode::OK)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_with_a_certificate_swapped_by_sighup() {
    let service = Service::on_sqlite();
    let files = service.dir.path();
    let (cert, key, first) = certificate(files, "first");
    let mut served = service.serve_watched(&[
        ("ROOMLINK__SERVER__TLS_CERT", cert.as_str()),
        ("ROOMLINK__SERVER__TLS_KEY", key.as_str()),
    ]);
    let https = format!("https://{}/healthz", served.address);
    assert!(answers(&trusting(first.clone()), &https).await);
    assert!(
        !answers(
            &reqwest::Client::new(),
            &format!("http://{}/healthz", served.address)
        )
        .await,
        "plain HTTP is not served on the HTTPS port"
    );

    // A broken pair: the reload says why and the first certificate stays.
    std::fs::write(&key, "not a key").unwrap();
    served.signal("HUP");
    let failed = served.wait_for_log("SIGHUP: reload incomplete");
    assert!(
        failed["fields"]["error"]
            .as_str()
            .unwrap()
            .contains("first.key")
    );
    assert!(answers(&trusting(first.clone()), &https).await);

    let (new_cert, new_key, second) = certificate(files, "second");
    std::fs::rename(new_cert, &cert).unwrap();
    std::fs::rename(new_key, &key).unwrap();
    served.signal("HUP");
    served.wait_for_log("TLS certificate reloaded");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !answers(&trusting(second.clone()), &https).await {
        assert!(Instant::now() < deadline, "the new certificate is served");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        !answers(&trusting(first), &https).await,
        "the old one is not"
    );
    served.stop();
}

#[test]
fn half_a_tls_setting_is_refused_at_start() {
    let mut service = Service::on_sqlite();
    service
        .env
        .push(("ROOMLINK__SERVER__TLS_CERT".into(), "cert.pem".into()));
    let (code, text) = run(&service, &["serve"]);
    assert_ne!(code, 0);
    assert!(
        text.contains("server.tls_cert and server.tls_key"),
        "{text}"
    );
}

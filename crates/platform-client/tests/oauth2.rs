//! `OAuth2Platform` against a stub identity provider on loopback (wiremock).

use roomlink_domain::ports::PlatformIdentity;
use roomlink_domain::secret::Secret;
use roomlink_platform::{OAuth2Config, OAuth2Platform};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::Duration;
use wiremock::matchers::{header, method, path};
use wiremock::{Match, Mock, MockBuilder, MockServer, Request, ResponseTemplate};

const CLIENT_ID: &str = "roomlink";
const CLIENT_SECRET: &str = "client-s3cret-xyz";
const TOKEN: &str = "plat-token-alice-0123456789";
const PASSWORD: &str = "alice-pa55word";
/// base64("roomlink:client-s3cret-xyz")
const BASIC: &str = "Basic cm9vbWxpbms6Y2xpZW50LXMzY3JldC14eXo=";

fn config(server: &MockServer) -> OAuth2Config {
    OAuth2Config::new(
        format!("{}/token", server.uri()),
        format!("{}/introspect", server.uri()),
        CLIENT_ID,
        CLIENT_SECRET,
    )
}

fn platform(config: OAuth2Config) -> OAuth2Platform {
    OAuth2Platform::new(config).expect("a usable configuration")
}

/// Matches a form body with exactly these fields, in any order.
struct FormIs(Vec<(&'static str, &'static str)>);

impl Match for FormIs {
    fn matches(&self, request: &Request) -> bool {
        let is_form = request
            .headers
            .get("content-type")
            .is_some_and(|v| v == "application/x-www-form-urlencoded");
        let got: HashMap<String, String> =
            form_urlencoded::parse(&request.body).into_owned().collect();
        let want: HashMap<String, String> = self
            .0
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        is_form && got == want
    }
}

fn introspection_of(token: &'static str) -> MockBuilder {
    Mock::given(method("POST"))
        .and(path("/introspect"))
        .and(header("authorization", BASIC))
        .and(FormIs(vec![
            ("token", token),
            ("token_type_hint", "access_token"),
        ]))
}

fn active_alice() -> Value {
    json!({
        "active": true,
        "scope": "openid profile",
        "platform_id": 1001,
        "username": "alice@example.com",
        "enterprise": "acme",
        "given_name": "Alice",
        "family_name": "Liddell"
    })
}

/// The error's Display and Debug name no secret of the exchange.
fn assert_no_secrets(e: &roomlink_domain::Error) {
    for text in [format!("{e}"), format!("{e:?}")] {
        for secret in [TOKEN, PASSWORD, CLIENT_SECRET] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
    }
}

#[tokio::test]
async fn an_active_token_maps_every_claim() {
    let server = MockServer::start().await;
    introspection_of(TOKEN)
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "active": true,
            "scope": "openid roomlink:zero-touch",
            "uid": "1001",
            "email": "alice@example.com",
            "ext": {"enterprise": "acme", "admin": "true"},
            "first": "Alice",
            "last": "Liddell",
            "zt": "false"
        })))
        .expect(1)
        .mount(&server)
        .await;
    let mut c = config(&server);
    c.claims.platform_id = "uid".into();
    c.claims.username = "email".into();
    c.claims.enterprise = "ext.enterprise".into();
    c.claims.enterprise_admin = "ext.admin".into();
    c.claims.first_name = "first".into();
    c.claims.last_name = "last".into();
    c.claims.zero_touch = "zt".into();
    c.zero_touch_scope = Some("roomlink:zero-touch".into());
    let user = platform(c)
        .introspect(&Secret::new(TOKEN))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.platform_id, 1001);
    assert_eq!(user.username, "alice@example.com");
    assert_eq!(user.enterprise_name, "acme");
    assert!(user.enterprise_admin);
    assert_eq!(user.first_name.as_deref(), Some("Alice"));
    assert_eq!(user.last_name.as_deref(), Some("Liddell"));
    assert!(
        user.zero_touch,
        "granted by the scope although the claim says false"
    );
}

#[tokio::test]
async fn default_claims_and_no_zero_touch_without_claim_or_scope() {
    let server = MockServer::start().await;
    introspection_of(TOKEN)
        .respond_with(ResponseTemplate::new(200).set_body_json(active_alice()))
        .mount(&server)
        .await;
    let mut c = config(&server);
    c.zero_touch_scope = Some("roomlink:zero-touch".into());
    let user = platform(c)
        .introspect(&Secret::new(TOKEN))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(user.platform_id, 1001);
    assert!(!user.enterprise_admin && !user.zero_touch);
}

#[tokio::test]
async fn an_inactive_token_is_refused_and_the_refusal_is_cached() {
    let server = MockServer::start().await;
    introspection_of(TOKEN)
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"active": false})))
        .expect(1)
        .mount(&server)
        .await;
    let p = platform(config(&server));
    for _ in 0..2 {
        assert!(p.introspect(&Secret::new(TOKEN)).await.unwrap().is_none());
    }
}

#[tokio::test]
async fn a_blank_token_is_refused_without_asking() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500))
        .expect(0)
        .mount(&server)
        .await;
    let p = platform(config(&server));
    assert!(p.introspect(&Secret::new("")).await.unwrap().is_none());
    assert!(
        p.verify_password("alice@example.com", &Secret::new(""))
            .await
            .unwrap()
            .is_none()
    );
}

#[tokio::test]
async fn introspections_are_cached_for_the_ttl() {
    let server = MockServer::start().await;
    introspection_of(TOKEN)
        .respond_with(ResponseTemplate::new(200).set_body_json(active_alice()))
        .expect(1)
        .mount(&server)
        .await;
    let p = platform(config(&server));
    let first = p.introspect(&Secret::new(TOKEN)).await.unwrap();
    let second = p.introspect(&Secret::new(TOKEN)).await.unwrap();
    assert!(first.is_some());
    assert_eq!(first, second);
}

#[tokio::test]
async fn the_provider_is_asked_again_after_the_ttl() {
    let server = MockServer::start().await;
    introspection_of(TOKEN)
        .respond_with(ResponseTemplate::new(200).set_body_json(active_alice()))
        .expect(2)
        .mount(&server)
        .await;
    let mut c = config(&server);
    c.cache_ttl = Duration::from_millis(50);
    let p = platform(c);
    p.introspect(&Secret::new(TOKEN)).await.unwrap().unwrap();
    p.introspect(&Secret::new(TOKEN)).await.unwrap().unwrap();
    tokio::time::sleep(Duration::from_millis(120)).await;
    p.introspect(&Secret::new(TOKEN)).await.unwrap().unwrap();
}

fn password_grant(password: &'static str) -> MockBuilder {
    Mock::given(method("POST"))
        .and(path("/token"))
        .and(header("authorization", BASIC))
        .and(FormIs(vec![
            ("grant_type", "password"),
            ("username", "alice@example.com"),
            ("password", password),
            ("scope", "openid roomlink"),
        ]))
}

#[tokio::test]
async fn the_password_grant_yields_the_introspected_user_and_is_cached() {
    let server = MockServer::start().await;
    password_grant(PASSWORD)
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "access_token": TOKEN, "token_type": "Bearer", "expires_in": 300
        })))
        .expect(1)
        .mount(&server)
        .await;
    introspection_of(TOKEN)
        .respond_with(ResponseTemplate::new(200).set_body_json(active_alice()))
        .expect(1)
        .mount(&server)
        .await;
    let mut c = config(&server);
    c.scope = Some("openid roomlink".into());
    let p = platform(c);
    for _ in 0..2 {
        let user = p
            .verify_password("alice@example.com", &Secret::new(PASSWORD))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(user.platform_id, 1001);
        assert_eq!(user.first_name.as_deref(), Some("Alice"));
    }
}

#[tokio::test]
async fn a_wrong_password_is_refused_and_not_cached() {
    let server = MockServer::start().await;
    password_grant("wrong")
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "error": "invalid_grant", "error_description": "Invalid user credentials"
        })))
        .expect(2)
        .mount(&server)
        .await;
    let mut c = config(&server);
    c.scope = Some("openid roomlink".into());
    let p = platform(c);
    for _ in 0..2 {
        assert!(
            p.verify_password("alice@example.com", &Secret::new("wrong"))
                .await
                .unwrap()
                .is_none()
        );
    }
}

#[tokio::test]
async fn other_grant_refusals_are_errors_naming_the_code() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({"error": "invalid_client"})))
        .mount(&server)
        .await;
    let e = platform(config(&server))
        .verify_password("alice@example.com", &Secret::new(PASSWORD))
        .await
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("invalid_client") && text.contains("401"),
        "{text}"
    );
    assert!(text.contains(&format!("{}/token", server.uri())), "{text}");
    assert_no_secrets(&e);
}

#[tokio::test]
async fn a_server_error_is_an_error_naming_url_and_status() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string(format!("boom {TOKEN}")))
        .mount(&server)
        .await;
    let p = platform(config(&server));
    let e = p.introspect(&Secret::new(TOKEN)).await.unwrap_err();
    let text = e.to_string();
    assert!(text.contains("500"), "{text}");
    assert!(
        text.contains(&format!("{}/introspect", server.uri())),
        "{text}"
    );
    assert_no_secrets(&e);
    let e = p
        .verify_password("alice@example.com", &Secret::new(PASSWORD))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("500"), "{e}");
    assert_no_secrets(&e);
}

#[tokio::test]
async fn a_non_json_answer_is_an_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_string(format!("<html>{TOKEN} {PASSWORD}</html>")),
        )
        .mount(&server)
        .await;
    let p = platform(config(&server));
    let e = p.introspect(&Secret::new(TOKEN)).await.unwrap_err();
    assert!(e.to_string().contains("not JSON"), "{e}");
    assert_no_secrets(&e);
    let e = p
        .verify_password("alice@example.com", &Secret::new(PASSWORD))
        .await
        .unwrap_err();
    assert_no_secrets(&e);
}

#[tokio::test]
async fn an_unreachable_provider_is_an_error() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let p = platform(OAuth2Config::new(
        format!("http://127.0.0.1:{port}/token"),
        format!("http://127.0.0.1:{port}/introspect"),
        CLIENT_ID,
        CLIENT_SECRET,
    ));
    let e = p.introspect(&Secret::new(TOKEN)).await.unwrap_err();
    assert!(e.to_string().contains("unreachable"), "{e}");
    assert_no_secrets(&e);
    let e = p
        .verify_password("alice@example.com", &Secret::new(PASSWORD))
        .await
        .unwrap_err();
    assert_no_secrets(&e);
}

#[tokio::test]
async fn a_slow_provider_times_out() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(active_alice())
                .set_delay(Duration::from_secs(3)),
        )
        .mount(&server)
        .await;
    let mut c = config(&server);
    c.timeout = Duration::from_millis(200);
    let p = platform(c);
    let started = std::time::Instant::now();
    let e = p.introspect(&Secret::new(TOKEN)).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(e.to_string().contains("no answer within 200 ms"), "{e}");
    assert_no_secrets(&e);
    let e = p
        .verify_password("alice@example.com", &Secret::new(PASSWORD))
        .await
        .unwrap_err();
    assert_no_secrets(&e);
}

#[tokio::test]
async fn an_active_token_without_the_enterprise_claim_is_an_error() {
    let server = MockServer::start().await;
    let mut answer = active_alice();
    answer.as_object_mut().unwrap().remove("enterprise");
    introspection_of(TOKEN)
        .respond_with(ResponseTemplate::new(200).set_body_json(answer))
        .mount(&server)
        .await;
    let e = platform(config(&server))
        .introspect(&Secret::new(TOKEN))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("`enterprise`"), "{e}");
    assert_no_secrets(&e);
}

#[tokio::test]
async fn an_answer_without_active_is_an_error() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({"username": "x"})))
        .mount(&server)
        .await;
    let e = platform(config(&server))
        .introspect(&Secret::new(TOKEN))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("active"), "{e}");
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/introspect"))
        .respond_with(
            ResponseTemplate::new(307)
                .insert_header("location", format!("{}/elsewhere", server.uri())),
        )
        .mount(&server)
        .await;
    Mock::given(path("/elsewhere"))
        .respond_with(ResponseTemplate::new(200).set_body_json(active_alice()))
        .expect(0)
        .mount(&server)
        .await;
    let e = platform(config(&server))
        .introspect(&Secret::new(TOKEN))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("307"), "{e}");
}

#[test]
fn nothing_prints_the_client_secret() {
    let c = OAuth2Config::new(
        "https://idp.example/t",
        "https://idp.example/i",
        CLIENT_ID,
        CLIENT_SECRET,
    );
    let p = OAuth2Platform::new(c.clone()).unwrap();
    for text in [format!("{c:?}"), format!("{p:?}")] {
        assert!(!text.contains(CLIENT_SECRET), "{text}");
        assert!(text.contains("idp.example"), "{text}");
    }
}

#[test]
fn unusable_configurations_are_refused() {
    let good = || OAuth2Config::new("https://idp.example/t", "https://idp.example/i", "id", "s");
    let mut c = good();
    c.client_id.clear();
    assert!(OAuth2Platform::new(c).is_err());
    let mut c = good();
    c.timeout = Duration::ZERO;
    assert!(OAuth2Platform::new(c).is_err());
    let mut c = good();
    c.introspection_url = "idp.example/i".into();
    assert!(OAuth2Platform::new(c).is_err());
    let mut c = good();
    c.claims.enterprise.clear();
    let e = OAuth2Platform::new(c).unwrap_err();
    assert!(e.to_string().contains("claims.enterprise"), "{e}");
}

//! The Google Calendar reader against loopback stubs answering Google's documented shapes (the
//! JWT bearer token endpoint, `events.list` pages); requests and fields checked against Google's
//! discovery document (`google/discovery.rs`); Google's example answers in `google/examples.rs`.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

#[path = "google/discovery.rs"]
mod discovery;
#[path = "google/examples.rs"]
mod examples;
mod support;

use base64::{Engine as _, engine::general_purpose::URL_SAFE_NO_PAD};
use roomlink_calendar::{CalendarReaders, GoogleReader};
use roomlink_domain::ports::{CalendarAccount, CalendarRead, CalendarReader};
use roomlink_domain::system::ManualClock;
use roomlink_domain::{calendar::CalendarEvent, enums::CalendarType, secret::Secret};
use rsa::{pkcs8::DecodePublicKey as _, signature::Verifier as _};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{assert_failure, loopback_server, token_requests};
use wiremock::matchers::{any, header, method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

const ROOM: &str = "c_1889f0ab2c@resource.calendar.google.com";
const SERVICE_ACCOUNT: &str = "roomlink-reader@rooms-project.iam.gserviceaccount.com";
/// A key made for these tests (tests/fixtures/README.md), and its public half.
const KEY: &str = include_str!("fixtures/service-account-key.pem");
const PUBLIC_KEY: &str = include_str!("fixtures/service-account-key.pub.pem");
const TOKEN: &str = "ya29.c.b0AXv0zTPgoogle-token-one";
const TOKEN_PATH: &str = "/token";
const EVENTS_PATH: &str = "/calendar/v3/calendars/c_1889f0ab2c@resource.calendar.google.com/events";

/// 2026-11-25T00:00:00Z.
const DAY: i64 = 1_795_564_800_000;
const HOUR: i64 = 3_600_000;
/// The service's clock: 2026-11-24T23:50:00.750Z.
const NOW_MS: i64 = DAY - 10 * 60_000 + 750;

fn account(server: &MockServer) -> CalendarAccount {
    CalendarAccount {
        calendar_type: CalendarType::Google,
        base_url: format!("{}/calendar/v3", server.uri()),
        username: Some(SERVICE_ACCOUNT.to_owned()),
        token_url: Some(format!("{}{TOKEN_PATH}", server.uri())),
        secret: Some(Secret::new(KEY)),
    }
}

fn reader() -> GoogleReader {
    GoogleReader::new(Arc::new(ManualClock::at(NOW_MS)))
}

fn token_answer(token: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "access_token": token,
        "expires_in": 3599,
        "token_type": "Bearer",
    }))
}

async fn token_endpoint(server: &MockServer, token: &str, times: u64) {
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(token_answer(token))
        .expect(times)
        .mount(server)
        .await;
}

fn page(items: Vec<Value>, next_page_token: Option<&str>) -> ResponseTemplate {
    let mut body = json!({
        "kind": "calendar#events",
        "summary": ROOM,
        "timeZone": "Europe/Berlin",
        "accessRole": "reader",
        "items": items,
    });
    if let Some(token) = next_page_token {
        body["nextPageToken"] = json!(token);
    }
    ResponseTemplate::new(200).set_body_json(body)
}

fn one_event() -> Vec<Value> {
    vec![json!({
        "kind": "calendar#event",
        "id": "standup_20261125T080000Z",
        "iCalUID": "standup-series@google.com",
        "status": "confirmed",
        "summary": "Standup",
        "start": {"dateTime": "2026-11-25T09:00:00+01:00", "timeZone": "Europe/Berlin"},
        "end": {"dateTime": "2026-11-25T09:15:00+01:00", "timeZone": "Europe/Berlin"},
    })]
}

async fn one_page_events(server: &MockServer, token: &str, times: u64) {
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .and(header("Authorization", format!("Bearer {token}").as_str()))
        .respond_with(page(one_event(), None))
        .expect(times)
        .mount(server)
        .await;
}

async fn read(
    reader: &dyn CalendarReader,
    account: &CalendarAccount,
) -> roomlink_domain::error::Result<Vec<CalendarEvent>> {
    reader.events(account, ROOM, DAY, DAY + 24 * HOUR).await
}

/// The assertions the token endpoint received.
async fn assertions(server: &MockServer) -> Vec<String> {
    token_requests(server)
        .await
        .into_iter()
        .map(|form| form["assertion"].clone())
        .collect()
}

/// What a failure must never quote: the key (any line of it), the token, the assertions.
fn never(assertions: &[String]) -> Vec<&str> {
    let mut never: Vec<&str> = KEY.lines().filter(|l| !l.starts_with("-----")).collect();
    never.push(TOKEN);
    never.extend(assertions.iter().map(String::as_str));
    never.extend(assertions.iter().filter_map(|a| a.split('.').nth(2)));
    never
}

#[tokio::test]
async fn reads_two_pages_in_order_with_a_signed_assertion() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    let first_page = vec![
        json!({
            "id": "standup_20261125T080000Z",
            "iCalUID": "standup-series@google.com",
            "status": "confirmed",
            "summary": "Standup",
            "start": {"dateTime": "2026-11-25T09:00:00+01:00", "timeZone": "Europe/Berlin"},
            "end": {"dateTime": "2026-11-25T09:15:00+01:00", "timeZone": "Europe/Berlin"},
            "hangoutLink": "https://meet.google.com/abc-defg-hij",
            "conferenceData": {
                "conferenceSolution": {"key": {"type": "hangoutsMeet"}, "name": "Google Meet"},
                "conferenceId": "abc-defg-hij",
                "entryPoints": [
                    {
                        "entryPointType": "video",
                        "uri": "https://meet.google.com/abc-defg-hij",
                        "label": "meet.google.com/abc-defg-hij"
                    },
                    {"entryPointType": "phone", "uri": "tel:+49-30-555-0100", "pin": "123456789"},
                    {"entryPointType": "more", "uri": "https://tel.meet/abc-defg-hij?pin=123"}
                ]
            }
        }),
        json!({
            "id": "offsite",
            "iCalUID": "offsite@google.com",
            "status": "confirmed",
            "summary": "Office closed",
            "start": {"date": "2026-11-25"},
            "end": {"date": "2026-11-26"},
            "hangoutLink": "https://meet.google.com/all-day-link",
        }),
        json!({
            "id": "retro_77",
            "iCalUID": "retro-77@google.com",
            "status": "cancelled",
            "summary": "Retro",
            "start": {"dateTime": "2026-11-25T06:00:00-05:00", "timeZone": "America/New_York"},
            "end": {"dateTime": "2026-11-25T07:00:00-05:00", "timeZone": "America/New_York"},
        }),
    ];
    let review = json!({
        "id": "review77",
        "status": "tentative",
        "summary": "Design review",
        "location": "Huddle 4",
        "description": "Join: https://zoom.us/j/123456789",
        "start": {"dateTime": "2026-11-25T14:00:00Z"},
        "end": {"dateTime": "2026-11-25T15:00:00.000Z"},
        "conferenceData": {"entryPoints": [
            {"entryPointType": "sip", "uri": "sip:123456789@zoomcrc.com"}
        ]},
    });
    let page_token = "EjkKL+/page two=";
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .and(query_param("timeMin", "2026-11-25T00:00:00Z"))
        .and(query_param("timeMax", "2026-11-26T00:00:00Z"))
        .and(query_param("singleEvents", "true"))
        .and(query_param("orderBy", "startTime"))
        .and(query_param("maxResults", "250"))
        .and(query_param_is_missing("pageToken"))
        .and(header("Authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(page(first_page, Some(page_token)))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .and(query_param("pageToken", page_token))
        .and(query_param("timeMin", "2026-11-25T00:00:00Z"))
        .and(query_param("singleEvents", "true"))
        .and(header("Authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(page(vec![review], None))
        .expect(1)
        .mount(&server)
        .await;

    let events = read(&reader(), &account(&server)).await.unwrap();

    let seen: Vec<(&str, i64, i64, bool)> = events
        .iter()
        .map(|e| {
            (
                e.uid.as_str(),
                e.start_ms - DAY,
                e.end_ms - DAY,
                e.cancelled,
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            // 09:00 at +01:00 is 08:00 UTC; 06:00 at -05:00 is 11:00 UTC.
            (
                "standup-series@google.com",
                8 * HOUR,
                8 * HOUR + 15 * 60_000,
                false
            ),
            ("retro-77@google.com", 11 * HOUR, 12 * HOUR, true),
            // No iCalUID: the Google id. The all-day event is left out.
            ("review77", 14 * HOUR, 15 * HOUR, false),
        ]
    );
    assert_eq!(
        events[0].conference_uris,
        vec!["https://meet.google.com/abc-defg-hij"]
    );
    assert_eq!(events[0].title.as_deref(), Some("Standup"));
    assert_eq!(events[2].location.as_deref(), Some("Huddle 4"));
    assert_eq!(
        events[2].description.as_deref(),
        Some("Join: https://zoom.us/j/123456789")
    );
    assert_eq!(events[2].conference_uris, vec!["sip:123456789@zoomcrc.com"]);

    // The token request: the JWT bearer grant with an RS256 assertion the public key verifies.
    let forms = token_requests(&server).await;
    assert_eq!(forms.len(), 1);
    let keys: Vec<&str> = forms[0].keys().map(String::as_str).collect();
    assert_eq!(keys, vec!["assertion", "grant_type"]);
    assert_eq!(
        forms[0]["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    let jwt = &forms[0]["assertion"];
    let parts: Vec<&str> = jwt.split('.').collect();
    assert_eq!(parts.len(), 3);
    let decode = |part: &str| -> Value {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
    };
    assert_eq!(decode(parts[0]), json!({"alg": "RS256", "typ": "JWT"}));
    let public =
        rsa::pkcs1v15::VerifyingKey::<rsa::sha2::Sha256>::from_public_key_pem(PUBLIC_KEY).unwrap();
    let signature =
        rsa::pkcs1v15::Signature::try_from(URL_SAFE_NO_PAD.decode(parts[2]).unwrap().as_slice())
            .unwrap();
    let signed = format!("{}.{}", parts[0], parts[1]);
    public.verify(signed.as_bytes(), &signature).unwrap();
    // Another message does not verify with that signature: the check above means something.
    assert!(public.verify(b"something else", &signature).is_err());
    let iat = NOW_MS.div_euclid(1000);
    assert_eq!(
        decode(parts[1]),
        json!({
            "iss": SERVICE_ACCOUNT,
            "scope": "https://www.googleapis.com/auth/calendar.readonly",
            "aud": format!("{}{TOKEN_PATH}", server.uri()),
            "iat": iat,
            "exp": iat + 3600,
        })
    );
}

#[tokio::test]
async fn the_token_is_reused_across_reads() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    one_page_events(&server, TOKEN, 2).await;
    let reader = reader();
    for _ in 0..2 {
        assert_eq!(read(&reader, &account(&server)).await.unwrap().len(), 1);
    }
}

#[tokio::test]
async fn a_401_fetches_a_new_token_once() {
    let server = loopback_server().await;
    let fresh = "ya29.c.b0AXv0zTPgoogle-token-two";
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(token_answer(TOKEN))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    token_endpoint(&server, fresh, 1).await;
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .and(header("Authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "error": {
                "code": 401,
                "message": "Request had invalid authentication credentials.",
                "status": "UNAUTHENTICATED"
            }
        })))
        .expect(1)
        .mount(&server)
        .await;
    one_page_events(&server, fresh, 1).await;

    let events = read(&reader(), &account(&server)).await.unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(assertions(&server).await.len(), 2);
}

#[tokio::test]
async fn a_second_401_refuses_the_account() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 2).await;
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .respond_with(ResponseTemplate::new(401))
        .expect(2)
        .mount(&server)
        .await;
    let e = read(&reader(), &account(&server)).await.unwrap_err();
    let sent = assertions(&server).await;
    assert_failure(
        &e,
        ROOM,
        "refused the account (401 Unauthorized)",
        &never(&sent),
    );
}

#[tokio::test]
async fn a_refused_assertion_refuses_the_account() {
    let server = loopback_server().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({
            "error": "invalid_grant",
            "error_description": "Invalid JWT Signature."
        })))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .respond_with(page(vec![], None))
        .expect(0)
        .mount(&server)
        .await;
    let e = read(&reader(), &account(&server)).await.unwrap_err();
    let sent = assertions(&server).await;
    let mut never = never(&sent);
    never.push("Invalid JWT Signature");
    assert_failure(&e, ROOM, "token endpoint 127.0.0.1", &never);
    assert!(
        e.message()
            .contains("refused the account (400 Bad Request)"),
        "{}",
        e.message()
    );
}

#[tokio::test]
async fn a_short_retry_after_is_waited_for() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .respond_with(ResponseTemplate::new(503).insert_header("Retry-After", "1"))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    one_page_events(&server, TOKEN, 1).await;
    let started = Instant::now();
    let events = read(&reader(), &account(&server)).await.unwrap();
    assert_eq!(events.len(), 1);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_long_retry_after_fails_at_once_as_throttled() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("Retry-After", "3600")
                .set_body_json(json!({"error": {
                    "code": 429,
                    "message": "Rate Limit Exceeded",
                    "errors": [{"reason": "rateLimitExceeded"}]
                }})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let started = Instant::now();
    let e = read(&reader(), &account(&server)).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let sent = assertions(&server).await;
    let mut never = never(&sent);
    never.push("rateLimitExceeded");
    assert_failure(
        &e,
        ROOM,
        "throttled (429 Too Many Requests, Retry-After: 3600 s)",
        &never,
    );
}

#[tokio::test]
async fn throttling_past_the_retries_fails() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .respond_with(ResponseTemplate::new(429).insert_header("Retry-After", "0"))
        .expect(3)
        .mount(&server)
        .await;
    let e = read(&reader(), &account(&server)).await.unwrap_err();
    let sent = assertions(&server).await;
    assert_failure(
        &e,
        ROOM,
        "throttled (429 Too Many Requests, Retry-After: 0 s)",
        &never(&sent),
    );
}

#[tokio::test]
async fn server_errors_are_retried_once() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .respond_with(ResponseTemplate::new(500).set_body_string("backendError details"))
        .expect(2)
        .mount(&server)
        .await;
    let e = read(&reader(), &account(&server)).await.unwrap_err();
    let sent = assertions(&server).await;
    let mut never = never(&sent);
    never.push("backendError");
    assert_failure(&e, ROOM, "answered 500 Internal Server Error", &never);
}

#[tokio::test]
async fn an_unknown_calendar_has_no_calendar() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({
            "error": {"code": 404, "message": "Not Found", "errors": [{"reason": "notFound"}]}
        })))
        .expect(1)
        .mount(&server)
        .await;
    let e = read(&reader(), &account(&server)).await.unwrap_err();
    let sent = assertions(&server).await;
    assert_failure(
        &e,
        ROOM,
        &format!("has no calendar {ROOM} (404 Not Found)"),
        &never(&sent),
    );
}

#[tokio::test]
async fn a_key_that_is_not_pkcs8_fails_before_any_request() {
    let server = loopback_server().await;
    Mock::given(any())
        .respond_with(page(vec![], None))
        .expect(0)
        .mount(&server)
        .await;
    // An RSA key in PKCS#1 form ("BEGIN RSA PRIVATE KEY"), not what a key file holds.
    let body: String = KEY
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect::<Vec<_>>()
        .join("\n");
    let pkcs1 = format!("-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n");
    let account = CalendarAccount {
        secret: Some(Secret::new(pkcs1)),
        ..account(&server)
    };
    let e = read(&reader(), &account).await.unwrap_err();
    assert_failure(
        &e,
        ROOM,
        "not an RSA private key in PKCS#8 PEM",
        &never(&[]),
    );
}

#[tokio::test]
async fn calendar_readers_send_google_to_google() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    one_page_events(&server, TOKEN, 1).await;
    let readers = CalendarReaders::new(Arc::new(ManualClock::at(NOW_MS)));
    let events = read(&readers, &account(&server)).await.unwrap();
    assert_eq!(events[0].start_ms, DAY + 8 * HOUR);
    let claims: Value = serde_json::from_slice(
        &URL_SAFE_NO_PAD
            .decode(assertions(&server).await[0].split('.').nth(1).unwrap())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(claims["iat"], NOW_MS.div_euclid(1000));
}

// Change marks: `events.list` with `updatedMin`.

/// Google's clock in the tests' answers: 2026-11-25T08:00:00Z, and a minute later.
const SERVER_DATE: &str = "Wed, 25 Nov 2026 08:00:00 GMT";
const SERVER_MS: i64 = DAY + 8 * HOUR;
const LATER_DATE: &str = "Wed, 25 Nov 2026 08:01:00 GMT";
const LATER_MS: i64 = SERVER_MS + 60_000;

/// The mark a read of the test window beginning at the server's `server_ms` gives.
fn mark(server_ms: i64) -> String {
    format!("google-updated:{DAY}:{}:{server_ms}", DAY + 24 * HOUR)
}

/// The window's full read: one page, answered at `date` by the server's clock.
async fn full_read(server: &MockServer, date: &str, times: u64) {
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .and(query_param("orderBy", "startTime"))
        .and(query_param_is_missing("updatedMin"))
        .and(header("Authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(page(one_event(), None).insert_header("Date", date))
        .expect(times)
        .mount(server)
        .await;
}

/// The check for changes since `updated_min` answers `answer`.
async fn check(server: &MockServer, updated_min: &str, answer: ResponseTemplate, times: u64) {
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .and(query_param("updatedMin", updated_min))
        .and(query_param("timeMin", "2026-11-25T00:00:00Z"))
        .and(query_param("timeMax", "2026-11-26T00:00:00Z"))
        .and(query_param("singleEvents", "true"))
        .and(query_param("showDeleted", "true"))
        .and(query_param("maxResults", "1"))
        .and(query_param("fields", "items(id)"))
        .and(query_param_is_missing("orderBy"))
        .and(query_param_is_missing("pageToken"))
        .and(header("Authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(answer)
        .expect(times)
        .mount(server)
        .await;
}

fn changes(items: Vec<Value>, date: &str) -> ResponseTemplate {
    ResponseTemplate::new(200)
        .set_body_json(json!({"items": items}))
        .insert_header("Date", date)
}

async fn read_since(
    reader: &dyn CalendarReader,
    account: &CalendarAccount,
    since: Option<&str>,
) -> roomlink_domain::error::Result<CalendarRead> {
    reader
        .events_since(
            account,
            ROOM,
            DAY,
            DAY + 24 * HOUR,
            since.map(str::to_owned),
        )
        .await
}

/// The queries of the GETs the server received, in order.
async fn get_queries(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method == wiremock::http::Method::GET)
        .map(|r| r.url.query().unwrap_or_default().to_owned())
        .collect()
}

fn events_and_mark(read: CalendarRead) -> (Vec<CalendarEvent>, String) {
    match read {
        CalendarRead::Events {
            events,
            mark: Some(mark),
        } => (events, mark),
        other => panic!("expected events with a mark, got {other:?}"),
    }
}

#[tokio::test]
async fn a_first_read_keeps_the_servers_time_as_its_mark() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    full_read(&server, SERVER_DATE, 1).await;
    let read = read_since(&reader(), &account(&server), None).await;
    let (events, mark) = events_and_mark(read.unwrap());
    assert_eq!(mark, self::mark(SERVER_MS));
    assert_eq!(events.len(), 1);
    assert_eq!(get_queries(&server).await.len(), 1);
}

#[tokio::test]
async fn an_unchanged_calendar_costs_one_small_request() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    // Asked from a minute before the kept time.
    check(
        &server,
        "2026-11-25T07:59:00Z",
        changes(vec![], LATER_DATE),
        1,
    )
    .await;
    full_read(&server, LATER_DATE, 0).await;
    let since = mark(SERVER_MS);
    let read = read_since(&reader(), &account(&server), Some(&since)).await;
    assert_eq!(read.unwrap(), CalendarRead::Unchanged);
    let queries = get_queries(&server).await;
    assert_eq!(queries.len(), 1, "{queries:?}");
    assert!(queries[0].contains("maxResults=1"), "{queries:?}");
}

#[tokio::test]
async fn a_changed_calendar_is_read_in_full_marked_with_the_checks_time() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    let cancelled = json!({"id": "standup_20261125T080000Z", "status": "cancelled"});
    check(
        &server,
        "2026-11-25T07:59:00Z",
        changes(vec![cancelled], LATER_DATE),
        1,
    )
    .await;
    // The page answers later still: the mark is the check's time, before the read.
    full_read(&server, "Wed, 25 Nov 2026 08:01:05 GMT", 1).await;
    let since = mark(SERVER_MS);
    let read = read_since(&reader(), &account(&server), Some(&since)).await;
    let (events, mark) = events_and_mark(read.unwrap());
    assert_eq!(mark, self::mark(LATER_MS));
    assert_eq!(events.len(), 1);
    assert_eq!(get_queries(&server).await.len(), 2);
}

#[tokio::test]
async fn updated_min_too_long_ago_reads_in_full() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    check(
        &server,
        "2026-11-25T07:59:00Z",
        ResponseTemplate::new(410).set_body_json(json!({"error": {
            "code": 410,
            "message": "The requested minimum modification time lies too far in the past.",
            "errors": [{"domain": "calendar", "reason": "updatedMinTooLongAgo"}]
        }})),
        1,
    )
    .await;
    full_read(&server, LATER_DATE, 1).await;
    let since = mark(SERVER_MS);
    let read = read_since(&reader(), &account(&server), Some(&since)).await;
    let (events, mark) = events_and_mark(read.unwrap());
    assert_eq!(mark, self::mark(LATER_MS));
    assert_eq!(events.len(), 1);
}

#[tokio::test]
async fn marks_of_another_kind_or_window_and_garbage_are_read_in_full() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    let marks = [
        "sync:http://radicale.example/ns/sync/17".to_owned(),
        "ctag:1795593600000".to_owned(),
        format!("graph-delta:{DAY}:{}:{}/x", DAY + 24 * HOUR, server.uri()),
        "google-updated:".to_owned(),
        "google-updated:garbage".to_owned(),
        format!("google-updated:{DAY}:{}:", DAY + 24 * HOUR),
        format!("google-updated:{DAY}:{}:{SERVER_MS}:9", DAY + 24 * HOUR),
        format!(
            "google-updated:{}:{}:{SERVER_MS}",
            DAY - HOUR,
            DAY + 24 * HOUR
        ),
    ];
    full_read(&server, LATER_DATE, marks.len() as u64).await;
    let reader = reader();
    for since in &marks {
        let read = read_since(&reader, &account(&server), Some(since)).await;
        let (events, mark) = events_and_mark(read.unwrap());
        assert_eq!(mark, self::mark(LATER_MS), "{since}");
        assert_eq!(events.len(), 1, "{since}");
    }
    // Never a check: every request was a full read.
    let queries = get_queries(&server).await;
    assert_eq!(queries.len(), marks.len());
    assert!(
        queries.iter().all(|q| !q.contains("updatedMin")),
        "{queries:?}"
    );
}

#[tokio::test]
async fn a_server_without_a_date_gives_no_mark() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    // An obsolete date form is no time to keep.
    full_read(&server, "Wednesday, 25-Nov-26 08:00:00 GMT", 1).await;
    let read = read_since(&reader(), &account(&server), None).await;
    assert!(
        matches!(read.unwrap(), CalendarRead::Events { mark: None, ref events } if events.len() == 1)
    );
}

#[tokio::test]
async fn throttling_during_the_check_is_waited_for() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .and(query_param("updatedMin", "2026-11-25T07:59:00Z"))
        .respond_with(ResponseTemplate::new(429).insert_header("Retry-After", "1"))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    check(
        &server,
        "2026-11-25T07:59:00Z",
        changes(vec![], LATER_DATE),
        1,
    )
    .await;
    let started = Instant::now();
    let since = mark(SERVER_MS);
    let read = read_since(&reader(), &account(&server), Some(&since)).await;
    assert_eq!(read.unwrap(), CalendarRead::Unchanged);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(get_queries(&server).await.len(), 2);
}

#[tokio::test]
async fn plain_reads_ask_no_changes() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    full_read(&server, SERVER_DATE, 1).await;
    read(&reader(), &account(&server)).await.unwrap();
    assert_eq!(get_queries(&server).await.len(), 1);
}

//! The Microsoft Graph reader against loopback stubs answering Graph's documented shapes: the
//! client-credentials token endpoint and `calendarView` pages.
#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

mod support;
// A test target's root resolves modules beside it, hence the path.
#[path = "graph/delta.rs"]
mod delta;
#[path = "graph/examples.rs"]
mod examples;
#[path = "graph/openapi.rs"]
mod openapi;

use roomlink_calendar::{CalendarReaders, GraphReader};
use roomlink_domain::calendar::CalendarEvent;
use roomlink_domain::enums::CalendarType;
use roomlink_domain::ports::{CalendarAccount, CalendarRead, CalendarReader};
use roomlink_domain::secret::Secret;
use roomlink_domain::system::ManualClock;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use support::{assert_failure, loopback_server, token_requests};
use wiremock::matchers::{any, header, method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

const ROOM: &str = "huddle-4@corp.example";
const CLIENT_ID: &str = "6731de76-14a6-49ae-97bc-6eba6914391e";
const CLIENT_SECRET: &str = "graph-client-secret~Qx7.9f";
const TOKEN: &str = "eyJ0eXAiOiJKV1QiLCJub25jZSI6.graph-token-one.sig";
const TOKEN_PATH: &str = "/tenant-7f3a/oauth2/v2.0/token";
const VIEW_PATH: &str = "/v1.0/users/huddle-4@corp.example/calendarView";

/// 2026-11-25T00:00:00Z.
const DAY: i64 = 1_795_564_800_000;
const HOUR: i64 = 3_600_000;

fn account(server: &MockServer) -> CalendarAccount {
    CalendarAccount {
        calendar_type: CalendarType::Office365,
        base_url: format!("{}/v1.0", server.uri()),
        username: Some(CLIENT_ID.to_owned()),
        token_url: Some(format!("{}{TOKEN_PATH}", server.uri())),
        secret: Some(Secret::new(CLIENT_SECRET)),
    }
}

fn token_answer(token: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "token_type": "Bearer",
        "expires_in": 3599,
        "ext_expires_in": 3599,
        "access_token": token,
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

fn page(events: Vec<Value>, next_link: Option<String>) -> ResponseTemplate {
    let mut body = json!({
        "@odata.context":
            "https://graph.microsoft.com/v1.0/$metadata#users('huddle-4%40corp.example')/calendarView",
        "value": events,
    });
    if let Some(link) = next_link {
        body["@odata.nextLink"] = json!(link);
    }
    ResponseTemplate::new(200).set_body_json(body)
}

#[allow(clippy::too_many_arguments)]
fn event(
    id: &str,
    ical_uid: Option<&str>,
    subject: &str,
    start: &str,
    end: &str,
    join_url: Option<&str>,
    cancelled: bool,
    all_day: bool,
) -> Value {
    let mut event = json!({
        "id": id,
        "subject": subject,
        "isAllDay": all_day,
        "isCancelled": cancelled,
        "start": {"dateTime": start, "timeZone": "UTC"},
        "end": {"dateTime": end, "timeZone": "UTC"},
        "location": {"displayName": "", "locationType": "default"},
        "body": {"contentType": "html", "content": ""},
        "onlineMeeting": join_url.map(|url| json!({"joinUrl": url})),
    });
    if let Some(uid) = ical_uid {
        event["iCalUId"] = json!(uid);
    }
    event
}

fn one_event() -> Vec<Value> {
    vec![event(
        "AAMkAGI2TAAA=",
        Some("040000008200E00074C5B7101A82E00800000000D0A1"),
        "Standup",
        "2026-11-25T09:00:00.0000000",
        "2026-11-25T09:15:00.0000000",
        None,
        false,
        false,
    )]
}

/// A calendarView answering one page for the window, only to `token`.
async fn one_page_view(server: &MockServer, token: &str, times: u64) {
    Mock::given(method("GET"))
        .and(path(VIEW_PATH))
        .and(header("Authorization", format!("Bearer {token}").as_str()))
        .respond_with(page(one_event(), None))
        .expect(times)
        .mount(server)
        .await;
}

async fn read(
    reader: &dyn CalendarReader,
    account: &CalendarAccount,
) -> roomlink_domain::error::Result<Vec<roomlink_domain::calendar::CalendarEvent>> {
    reader.events(account, ROOM, DAY, DAY + 24 * HOUR).await
}

#[tokio::test]
async fn reads_two_pages_in_order_with_a_client_credentials_token() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    let next = format!(
        "{}{VIEW_PATH}?startDateTime=2026-11-25T00:00:00Z&endDateTime=2026-11-26T00:00:00Z\
         &$top=100&$skip=100",
        server.uri()
    );
    let first_page = vec![
        event(
            "AAMkAGI2TAAA=",
            Some("040000008200E00074C5B7101A82E00800000000D0A1"),
            "Standup",
            "2026-11-25T09:00:00.0000000",
            "2026-11-25T09:15:00.0000000",
            Some("https://teams.microsoft.com/l/meetup-join/19%3ameeting_abc%40thread.v2/0"),
            false,
            false,
        ),
        event(
            "AAMkAGI2TBBB=",
            Some("040000008200E00074C5B7101A82E00800000000E1B2"),
            "Retro (moved)",
            "2026-11-25T11:00:00.0000000",
            "2026-11-25T12:00:00.0000000",
            None,
            true,
            false,
        ),
        event(
            "AAMkAGI2TCCC=",
            Some("040000008200E00074C5B7101A82E00800000000F2C3"),
            "Office closed",
            "2026-11-25T00:00:00.0000000",
            "2026-11-26T00:00:00.0000000",
            Some("https://teams.microsoft.com/l/meetup-join/19%3ameeting_allday%40thread.v2/0"),
            false,
            true,
        ),
    ];
    let mut review = event(
        "AAMkAGI2TDDD=",
        None,
        "Design review",
        "2026-11-25T14:00:00.0000000",
        "2026-11-25T15:00:00.0000000",
        None,
        false,
        false,
    );
    review["location"]["displayName"] = json!("Huddle 4");
    review["body"]["content"] =
        json!("<html><body><p>Join: https://bluejeans.com/123456789/4321</p></body></html>");
    Mock::given(method("GET"))
        .and(path(VIEW_PATH))
        .and(query_param("startDateTime", "2026-11-25T00:00:00Z"))
        .and(query_param("endDateTime", "2026-11-26T00:00:00Z"))
        .and(query_param("$top", "100"))
        .and(query_param_is_missing("$skip"))
        .and(header("Authorization", format!("Bearer {TOKEN}").as_str()))
        .and(header("Prefer", r#"outlook.timezone="UTC""#))
        .respond_with(page(first_page, Some(next)))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(VIEW_PATH))
        .and(query_param("$skip", "100"))
        .and(header("Authorization", format!("Bearer {TOKEN}").as_str()))
        .and(header("Prefer", r#"outlook.timezone="UTC""#))
        .respond_with(page(vec![review], None))
        .expect(1)
        .mount(&server)
        .await;

    let events = read(&GraphReader::new(), &account(&server)).await.unwrap();

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
            (
                "040000008200E00074C5B7101A82E00800000000D0A1",
                9 * HOUR,
                9 * HOUR + 15 * 60_000,
                false
            ),
            (
                "040000008200E00074C5B7101A82E00800000000E1B2",
                11 * HOUR,
                12 * HOUR,
                true
            ),
            // No iCalUId: the Graph id. The all-day event is left out.
            ("AAMkAGI2TDDD=", 14 * HOUR, 15 * HOUR, false),
        ]
    );
    assert_eq!(
        events[0].conference_uris,
        vec!["https://teams.microsoft.com/l/meetup-join/19%3ameeting_abc%40thread.v2/0"]
    );
    assert_eq!(events[0].title.as_deref(), Some("Standup"));
    assert_eq!(events[0].location, None);
    assert_eq!(events[2].title.as_deref(), Some("Design review"));
    assert_eq!(events[2].location.as_deref(), Some("Huddle 4"));
    assert_eq!(
        events[2].description.as_deref(),
        Some("<html><body><p>Join: https://bluejeans.com/123456789/4321</p></body></html>")
    );
    assert!(events[2].conference_uris.is_empty());

    let forms = token_requests(&server).await;
    assert_eq!(forms.len(), 1);
    let fields: Vec<(&str, &str)> = forms[0]
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        fields,
        vec![
            ("client_id", CLIENT_ID),
            ("client_secret", CLIENT_SECRET),
            ("grant_type", "client_credentials"),
            ("scope", "https://graph.microsoft.com/.default"),
        ]
    );
}

#[tokio::test]
async fn the_token_is_reused_across_reads() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    one_page_view(&server, TOKEN, 2).await;
    let reader = GraphReader::new();
    for _ in 0..2 {
        assert_eq!(read(&reader, &account(&server)).await.unwrap().len(), 1);
    }
    // Another secret for the same client id does not ride on the cached token.
    let other = CalendarAccount {
        secret: Some(Secret::new("another-secret-entirely")),
        ..account(&server)
    };
    server.verify().await;
    server.reset().await;
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "error": "invalid_client",
            "error_description": "AADSTS7000215: Invalid client secret provided.",
        })))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(any())
        .respond_with(page(one_event(), None))
        .expect(0)
        .mount(&server)
        .await;
    let e = read(&reader, &other).await.unwrap_err();
    assert_failure(
        &e,
        ROOM,
        "refused the account",
        &[CLIENT_SECRET, "another-secret-entirely", TOKEN, "AADSTS"],
    );
}

#[tokio::test]
async fn a_401_fetches_a_new_token_once() {
    let server = loopback_server().await;
    let fresh = "eyJ0eXAiOiJKV1QiLCJub25jZSI6.graph-token-two.sig";
    Mock::given(method("POST"))
        .and(path(TOKEN_PATH))
        .respond_with(token_answer(TOKEN))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    token_endpoint(&server, fresh, 1).await;
    Mock::given(method("GET"))
        .and(path(VIEW_PATH))
        .and(header("Authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(ResponseTemplate::new(401).set_body_json(json!({
            "error": {
                "code": "InvalidAuthenticationToken",
                "message": "Access token has expired or is not yet valid."
            }
        })))
        .expect(1)
        .mount(&server)
        .await;
    one_page_view(&server, fresh, 1).await;

    let events = read(&GraphReader::new(), &account(&server)).await.unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(token_requests(&server).await.len(), 2);
}

#[tokio::test]
async fn a_second_401_refuses_the_account() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 2).await;
    Mock::given(method("GET"))
        .and(path(VIEW_PATH))
        .respond_with(ResponseTemplate::new(401))
        .expect(2)
        .mount(&server)
        .await;
    let e = read(&GraphReader::new(), &account(&server))
        .await
        .unwrap_err();
    assert_failure(
        &e,
        ROOM,
        "refused the account (401 Unauthorized)",
        &[CLIENT_SECRET, TOKEN],
    );
    assert!(e.message().contains("127.0.0.1"), "{}", e.message());
}

#[tokio::test]
async fn a_short_retry_after_is_waited_for() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    Mock::given(method("GET"))
        .and(path(VIEW_PATH))
        .respond_with(ResponseTemplate::new(429).insert_header("Retry-After", "1"))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    one_page_view(&server, TOKEN, 1).await;
    let started = Instant::now();
    let events = read(&GraphReader::new(), &account(&server)).await.unwrap();
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
        .and(path(VIEW_PATH))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("Retry-After", "3600")
                .set_body_json(json!({"error": {
                    "code": "ApplicationThrottled",
                    "message": "MailboxConcurrency limit hit"
                }})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let started = Instant::now();
    let e = read(&GraphReader::new(), &account(&server))
        .await
        .unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_failure(
        &e,
        ROOM,
        "throttled (429 Too Many Requests, Retry-After: 3600 s)",
        &[CLIENT_SECRET, TOKEN, "MailboxConcurrency"],
    );
}

#[tokio::test]
async fn server_errors_are_retried_once() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    Mock::given(method("GET"))
        .and(path(VIEW_PATH))
        .respond_with(ResponseTemplate::new(500).set_body_string("stack trace with internals"))
        .expect(2)
        .mount(&server)
        .await;
    let e = read(&GraphReader::new(), &account(&server))
        .await
        .unwrap_err();
    assert_failure(
        &e,
        ROOM,
        "answered 500 Internal Server Error",
        &[CLIENT_SECRET, TOKEN, "stack trace"],
    );
}

#[tokio::test]
async fn a_next_link_to_another_server_is_not_followed() {
    let server = loopback_server().await;
    let elsewhere = loopback_server().await;
    Mock::given(any())
        .respond_with(page(vec![], None))
        .expect(0)
        .mount(&elsewhere)
        .await;
    token_endpoint(&server, TOKEN, 1).await;
    Mock::given(method("GET"))
        .and(path(VIEW_PATH))
        .respond_with(page(
            one_event(),
            Some(format!("{}{VIEW_PATH}?$skip=100", elsewhere.uri())),
        ))
        .expect(1)
        .mount(&server)
        .await;
    let e = read(&GraphReader::new(), &account(&server))
        .await
        .unwrap_err();
    assert_failure(
        &e,
        ROOM,
        "next page on another server",
        &[CLIENT_SECRET, TOKEN, &elsewhere.uri()],
    );
    assert!(elsewhere.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn an_unknown_mailbox_has_no_calendar() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    Mock::given(method("GET"))
        .and(path(VIEW_PATH))
        .respond_with(ResponseTemplate::new(404).set_body_json(json!({
            "error": {
                "code": "ErrorInvalidUser",
                "message": "The requested user 'huddle-4@corp.example' is invalid."
            }
        })))
        .expect(1)
        .mount(&server)
        .await;
    let e = read(&GraphReader::new(), &account(&server))
        .await
        .unwrap_err();
    assert_failure(
        &e,
        ROOM,
        "has no calendar huddle-4@corp.example (404 Not Found)",
        &[CLIENT_SECRET, TOKEN, "ErrorInvalidUser"],
    );
}

#[tokio::test]
async fn accounts_without_a_token_url_or_secret_fail_before_any_request() {
    let server = loopback_server().await;
    Mock::given(any())
        .respond_with(page(vec![], None))
        .expect(0)
        .mount(&server)
        .await;
    let reader = GraphReader::new();
    let cases = [
        (
            CalendarAccount {
                token_url: None,
                ..account(&server)
            },
            "no token URL",
        ),
        (
            CalendarAccount {
                secret: None,
                ..account(&server)
            },
            "no client secret",
        ),
        (
            CalendarAccount {
                token_url: Some(format!("http://admin:{CLIENT_SECRET}@127.0.0.1:1/token")),
                ..account(&server)
            },
            "token URL must be an http(s) URL without credentials",
        ),
    ];
    for (account, expected) in cases {
        let e = read(&reader, &account).await.unwrap_err();
        assert_failure(&e, ROOM, expected, &[CLIENT_SECRET]);
    }
}

#[tokio::test]
async fn an_unreachable_token_endpoint_cannot_be_connected() {
    let server = loopback_server().await;
    Mock::given(any())
        .respond_with(page(vec![], None))
        .expect(0)
        .mount(&server)
        .await;
    let account = CalendarAccount {
        token_url: Some("http://127.0.0.1:1/tenant/oauth2/v2.0/token".to_owned()),
        ..account(&server)
    };
    let e = read(&GraphReader::new(), &account).await.unwrap_err();
    assert_failure(&e, ROOM, "token endpoint 127.0.0.1", &[CLIENT_SECRET]);
    assert!(e.message().contains("cannot connect"), "{}", e.message());
}

#[tokio::test]
async fn calendar_readers_send_office_365_to_graph() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    one_page_view(&server, TOKEN, 1).await;
    let readers = CalendarReaders::new(Arc::new(ManualClock::at(DAY)));
    let events = read(&readers, &account(&server)).await.unwrap();
    assert_eq!(events[0].start_ms, DAY + 9 * HOUR);
}

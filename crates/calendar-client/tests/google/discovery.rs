//! The Google reader's requests and the fields it reads, checked against Google's published
//! Calendar API v3 discovery document (`tests/fixtures/google-calendar-v3-events-list.json`,
//! derived from it by `tests/fixtures/derive_google.py`; source, commit and revision written in it), not
//! against this project's reading of the documentation.
//!
//! Every GET the reader sends in a full read of two pages and in a change check goes to
//! `events.list`'s path; each query parameter is one of its parameters or a global one, with a
//! value in its type (booleans, integers from the minimum, enums, RFC 3339 date-times), and a
//! `fields` selector names only properties of the response. Every field the reader deserializes
//! is a property of the resource it reads it from.

use crate::support::loopback_server;
use roomlink_calendar::GoogleReader;
use roomlink_domain::enums::CalendarType;
use roomlink_domain::ports::{CalendarAccount, CalendarRead, CalendarReader};
use roomlink_domain::secret::Secret;
use roomlink_domain::system::ManualClock;
use serde_json::{Value, json};
use std::sync::Arc;
use wiremock::matchers::{method, path, query_param, query_param_is_missing};
use wiremock::{Mock, MockServer, ResponseTemplate};

const DISCOVERY: &str = include_str!("../fixtures/google-calendar-v3-events-list.json");
const KEY: &str = include_str!("../fixtures/service-account-key.pem");
const ROOM: &str = "c_1889f0ab2c@resource.calendar.google.com";
const EVENTS_PATH: &str = "/calendar/v3/calendars/c_1889f0ab2c@resource.calendar.google.com/events";
/// 2026-11-25T00:00:00Z.
const DAY: i64 = 1_795_564_800_000;
const HOUR: i64 = 3_600_000;
const SERVER_DATE: &str = "Tue, 24 Nov 2026 23:50:00 GMT";

fn discovery() -> Value {
    serde_json::from_str(DISCOVERY).unwrap()
}

/// Why `query` (one request's query string) is not a valid `events.list` call, if it is not.
fn refusal(discovery: &Value, query: &str) -> Option<String> {
    let method = &discovery["eventsList"]["parameters"];
    let global = &discovery["globalParameters"];
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        let spec = [method, global]
            .into_iter()
            .find_map(|params| params.get(name.as_ref()))
            .filter(|spec| spec["location"] == "query");
        let Some(spec) = spec else {
            return Some(format!("no query parameter {name}"));
        };
        let valid = match spec["type"].as_str() {
            Some("boolean") => value == "true" || value == "false",
            Some("integer") => value.parse::<i64>().is_ok_and(|n| {
                let bound = |key: &str| spec[key].as_str().and_then(|b| b.parse::<i64>().ok());
                bound("minimum").is_none_or(|m| n >= m) && bound("maximum").is_none_or(|m| n <= m)
            }),
            _ => match (spec.get("enum"), spec["format"].as_str()) {
                (Some(values), _) => values
                    .as_array()
                    .is_some_and(|v| v.iter().any(|v| v == value.as_ref())),
                (None, Some("date-time")) => is_rfc3339(&value),
                _ => true,
            },
        };
        if !valid {
            return Some(format!("{name}={value} is not a {spec}"));
        }
        if name == "fields"
            && let Some(bad) = unknown_fields(discovery, &value)
        {
            return Some(format!("fields names {bad}, not a property"));
        }
    }
    None
}

/// `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`.
fn is_rfc3339(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    let head = b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19);
    let rest = text.get(19..).unwrap_or_default();
    let rest = rest
        .strip_prefix('.')
        .map_or(rest, |r| r.trim_start_matches(|c: char| c.is_ascii_digit()));
    head && (rest == "Z" || (rest.len() == 6 && (rest.starts_with('+') || rest.starts_with('-'))))
}

/// The first name in a partial-response selector (`items(id)`) that is not a property of
/// `Events` (outside parentheses) or `Event` (inside `items(...)`).
fn unknown_fields(discovery: &Value, selector: &str) -> Option<String> {
    let names = |key: &str| -> Vec<String> {
        discovery[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    let (top, event) = (names("eventsResponseProperties"), names("eventProperties"));
    let mut depth = 0;
    let mut word = String::new();
    let check = |word: &mut String, depth: i32| {
        let known = if depth == 0 { &top } else { &event };
        let bad = !word.is_empty() && !known.contains(word);
        let found = bad.then(|| word.clone());
        word.clear();
        found
    };
    for c in selector.chars() {
        match c {
            '(' | ')' | ',' | '/' => {
                if let Some(bad) = check(&mut word, depth) {
                    return Some(bad);
                }
                depth += match c {
                    '(' => 1,
                    ')' => -1,
                    _ => 0,
                };
            }
            c => word.push(c),
        }
    }
    check(&mut word, depth)
}

fn page(items: Value, next: Option<&str>) -> ResponseTemplate {
    let mut body = json!({"kind": "calendar#events", "items": items});
    if let Some(next) = next {
        body["nextPageToken"] = json!(next);
    }
    ResponseTemplate::new(200)
        .set_body_json(body)
        .insert_header("Date", SERVER_DATE)
}

/// The reader's requests in a full read of two pages, then a change check, as the stub saw them.
async fn requests_of_a_read_and_a_check() -> (MockServer, Vec<wiremock::Request>) {
    let server = loopback_server().await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "access_token": "ya29.discovery-test", "expires_in": 3599, "token_type": "Bearer"
        })))
        .mount(&server)
        .await;
    let event = json!({
        "id": "review_1", "iCalUID": "review@google.com", "status": "confirmed",
        "summary": "Review", "start": {"dateTime": "2026-11-25T14:00:00Z"},
        "end": {"dateTime": "2026-11-25T15:00:00Z"}
    });
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .and(query_param("updatedMin", "2026-11-24T23:49:00Z"))
        .respond_with(page(json!([]), None))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .and(query_param("pageToken", "page-2"))
        .respond_with(page(json!([event]), None))
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(EVENTS_PATH))
        .and(query_param_is_missing("pageToken"))
        .respond_with(page(json!([]), Some("page-2")))
        .mount(&server)
        .await;
    let account = CalendarAccount {
        calendar_type: CalendarType::Google,
        base_url: format!("{}/calendar/v3", server.uri()),
        username: Some("reader@rooms-project.iam.gserviceaccount.com".to_owned()),
        token_url: Some(format!("{}/token", server.uri())),
        secret: Some(Secret::new(KEY)),
    };
    let reader = GoogleReader::new(Arc::new(ManualClock::at(DAY - 10 * 60_000)));
    let (from, to) = (DAY, DAY + 24 * HOUR);
    let first = reader
        .events_since(&account, ROOM, from, to, None)
        .await
        .unwrap();
    let CalendarRead::Events {
        events,
        mark: Some(mark),
    } = first
    else {
        panic!("a first read with a mark: {first:?}");
    };
    assert_eq!(events.len(), 1, "both pages were read");
    let again = reader
        .events_since(&account, ROOM, from, to, Some(mark))
        .await
        .unwrap();
    assert_eq!(again, CalendarRead::Unchanged);
    let requests = server.received_requests().await.unwrap();
    (server, requests)
}

#[tokio::test]
async fn every_events_request_is_a_valid_events_list_call() {
    let discovery = discovery();
    let (server, requests) = requests_of_a_read_and_a_check().await;
    let gets: Vec<_> = requests
        .iter()
        .filter(|r| r.method == wiremock::http::Method::GET)
        .collect();
    assert_eq!(gets.len(), 3, "two pages and a change check");
    let template = discovery["eventsList"]["path"].as_str().unwrap();
    assert_eq!(template, "calendars/{calendarId}/events");
    assert_eq!(discovery["eventsList"]["httpMethod"], "GET");
    let prefix = format!("/{}", discovery["servicePath"].as_str().unwrap());
    let expected_path = format!("{prefix}{}", template.replace("{calendarId}", ROOM));
    for request in gets {
        assert_eq!(
            request.url.path().replace("%40", "@"),
            expected_path,
            "{}",
            request.url
        );
        let query = request.url.query().unwrap_or_default();
        assert_eq!(refusal(&discovery, query), None, "{query}");
    }
    drop(server);
}

/// The check can fail: each of these is refused by the published description.
#[test]
fn the_check_refuses_what_the_discovery_document_does_not_have() {
    let discovery = discovery();
    let refused = |query: &str| refusal(&discovery, query).unwrap_or_default();
    assert!(refused("singleEvent=true").contains("no query parameter singleEvent"));
    assert!(refused("orderBy=start").contains("orderBy=start"));
    assert!(refused("maxResults=0").contains("maxResults=0"));
    assert!(refused("showDeleted=yes").contains("showDeleted=yes"));
    assert!(refused("timeMin=2026-11-25").contains("timeMin"));
    assert!(refused("fields=items(id,title)").contains("title"));
    assert!(refused("fields=entries").contains("entries"));
    assert_eq!(
        refusal(
            &discovery,
            "timeMin=2026-11-25T00%3A00%3A00Z&singleEvents=true&orderBy=startTime&maxResults=250&fields=items(id),nextPageToken"
        ),
        None
    );
}

/// The fields the reader deserializes (crates/calendar-client/src/google.rs: `Page`,
/// `GoogleEvent`, `EventTime`, `ConferenceData`, `EntryPoint`) are properties of the resources
/// it reads them from, and the entry point types it dials are ones Google names.
#[test]
fn every_field_the_reader_reads_is_a_published_property() {
    let discovery = discovery();
    let has = |key: &str, names: &[&str]| {
        let list = discovery[key].as_array().unwrap();
        for name in names {
            assert!(list.iter().any(|v| v == name), "{key} has no {name}");
        }
    };
    has("eventsResponseProperties", &["items", "nextPageToken"]);
    has(
        "eventProperties",
        &[
            "id",
            "iCalUID",
            "status",
            "summary",
            "description",
            "location",
            "start",
            "end",
            "hangoutLink",
            "conferenceData",
        ],
    );
    has("eventDateTimeProperties", &["date", "dateTime"]);
    has("conferenceDataProperties", &["entryPoints"]);
    has("entryPointProperties", &["entryPointType", "uri"]);
    has("entryPointTypeValues", &["video", "sip"]);
}

//! Change marks: the delta rounds that confirm a mirrored calendar view (`events_since`).

use super::*;

const DELTA_PATH: &str = "/v1.0/users/huddle-4@corp.example/calendarView/delta";

/// A page of a delta round: its changes, and the link to the next page or the round's delta
/// link.
fn delta_page(
    changes: Vec<Value>,
    next_link: Option<String>,
    delta_link: Option<String>,
) -> ResponseTemplate {
    let mut body = json!({
        "@odata.context":
            "https://graph.microsoft.com/v1.0/$metadata#Collection(event)",
        "value": changes,
    });
    if let Some(link) = next_link {
        body["@odata.nextLink"] = json!(link);
    }
    if let Some(link) = delta_link {
        body["@odata.deltaLink"] = json!(link);
    }
    ResponseTemplate::new(200).set_body_json(body)
}

fn delta_link(server: &MockServer, token: &str) -> String {
    format!("{}{DELTA_PATH}?$deltatoken={token}", server.uri())
}

fn skip_link(server: &MockServer, token: &str) -> String {
    format!("{}{DELTA_PATH}?$skiptoken={token}", server.uri())
}

/// The mark a read of the test window with delta link `link` gives.
fn mark(link: &str) -> String {
    format!("graph-delta:{DAY}:{}:{link}", DAY + 24 * HOUR)
}

/// The delta round started afresh for the test window (no token): one page, `changes`, closed
/// by the delta link with `$deltatoken={token}`.
async fn new_round(server: &MockServer, changes: Vec<Value>, token: &str, times: u64) {
    Mock::given(method("GET"))
        .and(path(DELTA_PATH))
        .and(query_param("startDateTime", "2026-11-25T00:00:00Z"))
        .and(query_param("endDateTime", "2026-11-26T00:00:00Z"))
        .and(query_param_is_missing("$deltatoken"))
        .and(query_param_is_missing("$skiptoken"))
        .and(header("Prefer", "odata.maxpagesize=100"))
        .respond_with(delta_page(changes, None, Some(delta_link(server, token))))
        .expect(times)
        .mount(server)
        .await;
}

/// The round from `$deltatoken={token}` answers `answer`.
async fn round_from(server: &MockServer, token: &str, answer: ResponseTemplate, times: u64) {
    Mock::given(method("GET"))
        .and(path(DELTA_PATH))
        .and(query_param("$deltatoken", token))
        .and(header("Authorization", format!("Bearer {TOKEN}").as_str()))
        .and(header("Prefer", "odata.maxpagesize=100"))
        .respond_with(answer)
        .expect(times)
        .mount(server)
        .await;
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

/// The paths and queries of the GETs the server received, in order.
async fn gets(server: &MockServer) -> Vec<String> {
    server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .filter(|r| r.method == wiremock::http::Method::GET)
        .map(|r| match r.url.query() {
            Some(query) => format!("{}?{query}", r.url.path()),
            None => r.url.path().to_owned(),
        })
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
async fn a_first_read_runs_a_delta_round_then_reads_the_view_and_keeps_the_delta_link() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    // The round's changes are only counted: the events come from calendarView.
    new_round(&server, one_event(), "D1", 1).await;
    one_page_view(&server, TOKEN, 1).await;

    let read = read_since(&GraphReader::new(), &account(&server), None).await;
    let (events, mark) = events_and_mark(read.unwrap());
    assert_eq!(mark, self::mark(&delta_link(&server, "D1")));
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].start_ms, DAY + 9 * HOUR);
    // The round first (its mark is older than the events), then the view.
    let gets = gets(&server).await;
    assert_eq!(gets.len(), 2, "{gets:?}");
    assert!(gets[0].starts_with(DELTA_PATH), "{gets:?}");
    assert!(gets[1].starts_with(VIEW_PATH), "{gets:?}");
}

#[tokio::test]
async fn an_unchanged_calendar_costs_one_delta_request() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    round_from(
        &server,
        "D1",
        delta_page(vec![], None, Some(delta_link(&server, "D2"))),
        1,
    )
    .await;
    let reader = GraphReader::new();
    let since = mark(&delta_link(&server, "D1"));
    let read = read_since(&reader, &account(&server), Some(&since)).await;
    assert_eq!(
        read.unwrap(),
        CalendarRead::Confirmed {
            mark: self::mark(&delta_link(&server, "D2"))
        }
    );
    assert_eq!(
        gets(&server).await,
        vec![format!("{DELTA_PATH}?$deltatoken=D1")]
    );
}

#[tokio::test]
async fn a_changed_calendar_is_read_in_full_with_the_new_delta_link() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    let removed = json!({"@odata.type": "#microsoft.graph.event", "id": "AAMkAGI2TBBB=",
                         "@removed": {"reason": "deleted"}});
    round_from(
        &server,
        "D1",
        delta_page(vec![removed], None, Some(delta_link(&server, "D2"))),
        1,
    )
    .await;
    one_page_view(&server, TOKEN, 1).await;
    let since = mark(&delta_link(&server, "D1"));
    let read = read_since(&GraphReader::new(), &account(&server), Some(&since)).await;
    let (events, mark) = events_and_mark(read.unwrap());
    assert_eq!(mark, self::mark(&delta_link(&server, "D2")));
    assert_eq!(events.len(), 1);
    assert_eq!(gets(&server).await.len(), 2);
}

#[tokio::test]
async fn delta_rounds_are_followed_page_by_page() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    // No change on the first page; the second holds one and closes the round.
    round_from(
        &server,
        "D1",
        delta_page(vec![], Some(skip_link(&server, "S1")), None),
        1,
    )
    .await;
    Mock::given(method("GET"))
        .and(path(DELTA_PATH))
        .and(query_param("$skiptoken", "S1"))
        .and(header("Prefer", "odata.maxpagesize=100"))
        .respond_with(delta_page(
            one_event(),
            None,
            Some(delta_link(&server, "D2")),
        ))
        .expect(1)
        .mount(&server)
        .await;
    one_page_view(&server, TOKEN, 1).await;
    let reader = GraphReader::new();
    let since = mark(&delta_link(&server, "D1"));
    let read = read_since(&reader, &account(&server), Some(&since)).await;
    let (_, mark) = events_and_mark(read.unwrap());
    assert_eq!(mark, self::mark(&delta_link(&server, "D2")));

    // Two pages without a change: unchanged, both asked.
    server.reset().await;
    round_from(
        &server,
        "D2",
        delta_page(vec![], Some(skip_link(&server, "S2")), None),
        1,
    )
    .await;
    Mock::given(method("GET"))
        .and(path(DELTA_PATH))
        .and(query_param("$skiptoken", "S2"))
        .respond_with(delta_page(vec![], None, Some(delta_link(&server, "D3"))))
        .expect(1)
        .mount(&server)
        .await;
    let read = read_since(&reader, &account(&server), Some(&mark)).await;
    assert_eq!(
        read.unwrap(),
        CalendarRead::Confirmed {
            mark: self::mark(&delta_link(&server, "D3"))
        }
    );
    assert_eq!(
        gets(&server).await,
        vec![
            format!("{DELTA_PATH}?$deltatoken=D2"),
            format!("{DELTA_PATH}?$skiptoken=S2"),
        ]
    );
}

#[tokio::test]
async fn an_expired_delta_link_starts_a_new_round_and_reads_in_full() {
    for (status, code) in [
        (410, "SyncStateNotFound"),
        (400, "ErrorInvalidSyncStateData"),
    ] {
        let server = loopback_server().await;
        token_endpoint(&server, TOKEN, 1).await;
        round_from(
            &server,
            "D1",
            ResponseTemplate::new(status).set_body_json(json!({"error": {
                "code": code,
                "message": "The sync state cannot be used"
            }})),
            1,
        )
        .await;
        new_round(&server, one_event(), "D9", 1).await;
        one_page_view(&server, TOKEN, 1).await;
        let since = mark(&delta_link(&server, "D1"));
        let read = read_since(&GraphReader::new(), &account(&server), Some(&since)).await;
        let (events, mark) = events_and_mark(read.unwrap());
        assert_eq!(mark, self::mark(&delta_link(&server, "D9")), "{status}");
        assert_eq!(events.len(), 1);
        server.verify().await;
    }
}

#[tokio::test]
async fn a_new_round_answered_gone_fails_rather_than_looping() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    Mock::given(method("GET"))
        .and(path(DELTA_PATH))
        .and(query_param_is_missing("$deltatoken"))
        .respond_with(ResponseTemplate::new(410))
        .expect(1)
        .mount(&server)
        .await;
    round_from(&server, "D1", ResponseTemplate::new(410), 1).await;
    one_page_view(&server, TOKEN, 0).await;
    let since = mark(&delta_link(&server, "D1"));
    let e = read_since(&GraphReader::new(), &account(&server), Some(&since))
        .await
        .unwrap_err();
    assert_failure(
        &e,
        ROOM,
        "answered 410 Gone to a new delta query",
        &[CLIENT_SECRET, TOKEN],
    );
}

#[tokio::test]
async fn marks_of_another_kind_window_or_server_and_garbage_are_read_in_full() {
    let server = loopback_server().await;
    let elsewhere = loopback_server().await;
    Mock::given(any())
        .respond_with(delta_page(vec![], None, None))
        .expect(0)
        .mount(&elsewhere)
        .await;
    token_endpoint(&server, TOKEN, 1).await;
    let other_window = format!(
        "graph-delta:{}:{}:{}",
        DAY - HOUR,
        DAY + 24 * HOUR,
        delta_link(&server, "D1")
    );
    let marks = [
        "sync:http://radicale.example/ns/sync/17".to_owned(),
        "ctag:D1".to_owned(),
        "graph-delta:".to_owned(),
        "graph-delta:garbage".to_owned(),
        format!("graph-delta:{DAY}:x:{}", delta_link(&server, "D1")),
        mark("not a URL"),
        mark(&format!("{}{DELTA_PATH}?$deltatoken=D1", elsewhere.uri())),
        mark(&format!(
            "http://user:pw@{}{DELTA_PATH}?$deltatoken=D1",
            server.address()
        )),
        other_window,
        "google-updated:1:2:3".to_owned(),
    ];
    // Every one: a new round and the view, nothing with the old link.
    round_from(&server, "D1", delta_page(vec![], None, None), 0).await;
    new_round(&server, vec![], "D5", marks.len() as u64).await;
    one_page_view(&server, TOKEN, marks.len() as u64).await;
    let reader = GraphReader::new();
    for since in &marks {
        let read = read_since(&reader, &account(&server), Some(since)).await;
        let (events, mark) = events_and_mark(read.unwrap());
        assert_eq!(mark, self::mark(&delta_link(&server, "D5")), "{since}");
        assert_eq!(events.len(), 1, "{since}");
    }
    assert!(elsewhere.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn throttling_during_the_check_is_waited_for() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    Mock::given(method("GET"))
        .and(path(DELTA_PATH))
        .and(query_param("$deltatoken", "D1"))
        .respond_with(ResponseTemplate::new(429).insert_header("Retry-After", "1"))
        .up_to_n_times(1)
        .expect(1)
        .mount(&server)
        .await;
    round_from(
        &server,
        "D1",
        delta_page(vec![], None, Some(delta_link(&server, "D2"))),
        1,
    )
    .await;
    let started = Instant::now();
    let since = mark(&delta_link(&server, "D1"));
    let read = read_since(&GraphReader::new(), &account(&server), Some(&since)).await;
    assert_eq!(
        read.unwrap(),
        CalendarRead::Confirmed {
            mark: self::mark(&delta_link(&server, "D2"))
        }
    );
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(gets(&server).await.len(), 2);
}

#[tokio::test]
async fn a_401_during_the_check_fetches_a_new_token_once() {
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
    round_from(&server, "D1", ResponseTemplate::new(401), 1).await;
    Mock::given(method("GET"))
        .and(path(DELTA_PATH))
        .and(query_param("$deltatoken", "D1"))
        .and(header("Authorization", format!("Bearer {fresh}").as_str()))
        .respond_with(delta_page(vec![], None, Some(delta_link(&server, "D2"))))
        .expect(1)
        .mount(&server)
        .await;
    let since = mark(&delta_link(&server, "D1"));
    let read = read_since(&GraphReader::new(), &account(&server), Some(&since)).await;
    assert_eq!(
        read.unwrap(),
        CalendarRead::Confirmed {
            mark: self::mark(&delta_link(&server, "D2"))
        }
    );
    assert_eq!(token_requests(&server).await.len(), 2);
}

#[tokio::test]
async fn next_and_delta_links_to_another_server_are_not_followed() {
    let server = loopback_server().await;
    let elsewhere = loopback_server().await;
    Mock::given(any())
        .respond_with(delta_page(vec![], None, None))
        .expect(0)
        .mount(&elsewhere)
        .await;
    token_endpoint(&server, TOKEN, 1).await;
    let foreign_next = format!("{}{DELTA_PATH}?$skiptoken=S1", elsewhere.uri());
    let foreign_delta = format!("{}{DELTA_PATH}?$deltatoken=D2", elsewhere.uri());
    round_from(
        &server,
        "D1",
        delta_page(vec![], Some(foreign_next), None),
        1,
    )
    .await;
    round_from(
        &server,
        "D3",
        delta_page(one_event(), None, Some(foreign_delta)),
        1,
    )
    .await;
    one_page_view(&server, TOKEN, 0).await;
    let reader = GraphReader::new();
    for token in ["D1", "D3"] {
        let since = mark(&delta_link(&server, token));
        let e = read_since(&reader, &account(&server), Some(&since))
            .await
            .unwrap_err();
        assert_failure(
            &e,
            ROOM,
            "delta link on another server; not followed",
            &[CLIENT_SECRET, TOKEN, &elsewhere.uri()],
        );
    }
    assert!(elsewhere.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn plain_reads_ask_no_delta() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    one_page_view(&server, TOKEN, 1).await;
    read(&GraphReader::new(), &account(&server)).await.unwrap();
    assert_eq!(gets(&server).await.len(), 1);
}

#[tokio::test]
async fn a_round_without_changes_or_a_delta_link_is_unchanged() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    round_from(&server, "D1", delta_page(vec![], None, None), 1).await;
    let since = mark(&delta_link(&server, "D1"));
    let read = read_since(&GraphReader::new(), &account(&server), Some(&since)).await;
    assert_eq!(read.unwrap(), CalendarRead::Unchanged);
    assert_eq!(gets(&server).await.len(), 1);
}

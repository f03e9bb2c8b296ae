//! Microsoft's own example answers (tests/fixtures/graph-example-*.json, the bytes of the
//! response examples of the API reference; sources in tests/fixtures/README.md) fed through the
//! reader by the stub.
//!
//! The examples' links name `https://graph.microsoft.com`; the reader follows links only to its
//! base URL's server, so the stub serves them with that origin replaced by its own (nothing
//! else changes), and one test shows the unchanged example refused for exactly that reason.

use super::*;

const DELTA_1: &str = include_str!("../fixtures/graph-example-delta-1.json");
const DELTA_2: &str = include_str!("../fixtures/graph-example-delta-2.json");
const DELTA_3: &str = include_str!("../fixtures/graph-example-delta-3.json");
const DELTA_NEXT: &str = include_str!("../fixtures/graph-example-delta-next.json");
const USER_VIEW: &str = include_str!("../fixtures/graph-example-user-calendarview.json");
const ROOM_DELTA: &str = "/v1.0/users/huddle-4@corp.example/calendarView/delta";
/// Where the examples' links lead, on the stub.
const ME_DELTA: &str = "/v1.0/me/calendarView/delta";
/// The examples' window: 2016-12-01T00:00:00Z to 2016-12-30T00:00:00Z.
const FROM: i64 = 1_480_550_400_000;
const TO: i64 = 1_483_056_000_000;

/// `example` as the stub serves it: Graph's origin replaced by the stub's.
fn served(server: &MockServer, example: &str) -> ResponseTemplate {
    let body = example.replace("https://graph.microsoft.com", &server.uri());
    ResponseTemplate::new(200).set_body_raw(body.into_bytes(), "application/json")
}

/// The stub answers the examples' links with the pages they lead to.
async fn example_links(server: &MockServer) {
    let pages = [
        ("$skiptoken", "R0usmcCM996atia_s", DELTA_2),
        ("$skiptoken", "R0usmci39OQxqJrxK4", DELTA_3),
        ("$deltatoken", "R0usmcMDNGg0J1E", DELTA_NEXT),
    ];
    for (name, token, example) in pages {
        Mock::given(method("GET"))
            .and(path(ME_DELTA))
            .and(query_param(name, token))
            .respond_with(served(server, example))
            .mount(server)
            .await;
    }
}

/// An event as these tests compare it: uid, title, start, end, location.
type Shown = (String, Option<String>, i64, i64, Option<String>);

/// The five events of the example round, as the reader gives them.
fn the_five_events() -> Vec<Shown> {
    let at = |day: i64, hour: i64, minute: i64| {
        FROM + ((day - 1) * 24 * 60 + hour * 60 + minute) * 60_000
    };
    [
        (
            "AAMkADNVxRAAA=",
            "Plan shopping list",
            at(9, 20, 30),
            at(9, 22, 0),
            None,
        ),
        (
            "AAMkADVxSAAA=",
            "Pick up car",
            at(10, 1, 0),
            at(10, 2, 0),
            None,
        ),
        (
            "AAMkADVxTAAA=",
            "Get food",
            at(10, 19, 30),
            at(10, 21, 30),
            None,
        ),
        (
            "AAMkADVxUAAA=",
            "Prepare food",
            at(10, 22, 0),
            at(11, 0, 0),
            None,
        ),
        (
            "AAMkADj1HuAAA=",
            "Rest!",
            at(12, 2, 0),
            at(12, 7, 30),
            Some("Home"),
        ),
    ]
    .into_iter()
    .map(|(uid, title, start, end, location)| {
        (
            uid.to_owned(),
            Some(title.to_owned()),
            start,
            end,
            location.map(str::to_owned),
        )
    })
    .collect()
}

fn shown(events: &[CalendarEvent]) -> Vec<Shown> {
    for event in events {
        assert!(!event.cancelled);
        assert!(event.conference_uris.is_empty());
        assert_eq!(event.description, None, "the examples' bodies are empty");
    }
    events
        .iter()
        .map(|e| {
            (
                e.uid.clone(),
                e.title.clone(),
                e.start_ms,
                e.end_ms,
                e.location.clone(),
            )
        })
        .collect()
}

/// The concept page's round (three pages of two, two and one event, the last with the delta
/// link) as a first `events_since`: the round gives the mark; the same pages, which hold the
/// events `calendarView` answers, give the five events. A second round from the kept link
/// answers the page of the example's next round (one `@removed` entry, one new event): changed,
/// read again, the new delta link kept.
#[tokio::test]
async fn the_example_rounds_give_their_events_and_delta_links() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    example_links(&server).await;
    for first in [ROOM_DELTA, VIEW_PATH] {
        Mock::given(method("GET"))
            .and(path(first))
            .respond_with(served(&server, DELTA_1))
            .mount(&server)
            .await;
    }
    let reader = GraphReader::new();
    let account = account(&server);
    let read = reader.events_since(&account, ROOM, FROM, TO, None).await;
    let CalendarRead::Events {
        events,
        mark: Some(mark),
    } = read.unwrap()
    else {
        panic!("events with a mark");
    };
    assert_eq!(shown(&events), the_five_events());
    let link = format!("{}{ME_DELTA}?$deltatoken=R0usmcMDNGg0J1E", server.uri());
    assert_eq!(mark, format!("graph-delta:{FROM}:{TO}:{link}"));

    let read = reader
        .events_since(&account, ROOM, FROM, TO, Some(mark))
        .await;
    let CalendarRead::Events {
        events,
        mark: Some(mark),
    } = read.unwrap()
    else {
        panic!("a changed window read again");
    };
    assert_eq!(events.len(), 5);
    assert!(
        mark.ends_with("/v1.0/me/calendarView/delta?$deltatoken=R0usmcFuQtZdtpk4"),
        "{mark}"
    );
}

/// Served as Microsoft wrote it, the example's next link names graph.microsoft.com: not the
/// account's server, so it is not followed and the token goes nowhere else.
#[tokio::test]
async fn the_unchanged_example_link_to_graph_is_not_followed_from_a_stub() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    Mock::given(method("GET"))
        .and(path(ROOM_DELTA))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(DELTA_1.as_bytes().to_vec(), "application/json"),
        )
        .expect(1)
        .mount(&server)
        .await;
    let read = GraphReader::new()
        .events_since(&account(&server), ROOM, FROM, TO, None)
        .await;
    let e = read.unwrap_err();
    assert_failure(
        &e,
        ROOM,
        "answered a delta link on another server; not followed",
        &[TOKEN],
    );
}

/// The API reference's `List calendarView` example is marked truncated: it shows none of the
/// properties the reader selects but `iCalUId` (no `start`, `end` or `subject`), so the reader
/// refuses it rather than invent times; an answer to the reader's `$select` carries them.
#[tokio::test]
async fn the_truncated_calendar_view_example_is_refused_for_its_missing_times() {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    Mock::given(method("GET"))
        .and(path(VIEW_PATH))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(USER_VIEW.as_bytes().to_vec(), "application/json"),
        )
        .expect(1)
        .mount(&server)
        .await;
    let e = GraphReader::new()
        .events(&account(&server), ROOM, FROM, TO)
        .await
        .unwrap_err();
    assert_failure(
        &e,
        ROOM,
        "answered an event without a start or end",
        &[TOKEN],
    );
}

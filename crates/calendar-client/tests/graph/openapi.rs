//! The Graph reader's requests and the fields it reads, checked against Microsoft's published
//! descriptions of Graph v1.0 (`tests/fixtures/graph-v1.0-calendarview.json`: facts of the CSDL,
//! derived by `tests/fixtures/derive_graph.py`, and of the OpenAPI description; sources and
//! commits written in it), not against this project's reading of the documentation.
//!
//! Every GET the reader builds in a full read of two pages and in two delta rounds is a described
//! operation (`calendarView` of a user, or the `delta` function bound to a collection of events)
//! with only described query parameters, the required ones present, each value of its schema
//! (integers from their minimum, booleans, RFC 3339 times for the window), `$select` naming
//! only `event` properties; every other GET is exactly a link the server handed out. Every
//! field the reader deserializes is a described property.

use super::*;

const DESCRIPTION: &str = include_str!("../fixtures/graph-v1.0-calendarview.json");
const DELTA_PATH: &str = "/v1.0/users/huddle-4@corp.example/calendarView/delta";
/// The OData query options the API reference (event-delta.md) says `delta` on a calendar view
/// does not support, although the OpenAPI description lists them for the bound function.
const NOT_ON_DELTA: [&str; 5] = ["$select", "$expand", "$filter", "$orderby", "$search"];
/// The event properties the API reference (user-list-calendarview.md) says `$select` cannot
/// name, although they are properties.
const NOT_SELECTABLE: [&str; 2] = ["createdDateTime", "lastModifiedDateTime"];

fn description() -> Value {
    serde_json::from_str(DESCRIPTION).unwrap()
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

/// The described operation a request path (after `/v1.0`) is: `users/{id}/calendarView` is
/// `calendarView`; `users/{id}/calendarView/delta` is the `delta` function bound to the view's
/// events, called as the API reference writes it (see `docs/calendars.md`).
fn operation(path: &str) -> Option<&'static str> {
    let path = path.strip_prefix("/v1.0/users/")?;
    let (user, rest) = path.split_once('/')?;
    if user.is_empty() {
        return None;
    }
    match rest {
        "calendarView" => Some("calendarView"),
        "calendarView/delta" => Some("eventDelta"),
        _ => None,
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`.
fn is_rfc3339(text: &str) -> bool {
    let shape = "dddd-dd-ddTdd:dd:dd";
    let head = text.get(..19).is_some_and(|head| {
        head.bytes().zip(shape.bytes()).all(|(c, s)| match s {
            b'd' => c.is_ascii_digit(),
            s => c == s,
        })
    });
    let rest = text.get(19..).unwrap_or_default();
    let rest = rest
        .strip_prefix('.')
        .map_or(rest, |r| r.trim_start_matches(|c: char| c.is_ascii_digit()));
    head && (rest == "Z" || (rest.len() == 6 && (rest.starts_with('+') || rest.starts_with('-'))))
}

/// Why the request `path?query` is not a described call, if it is not.
fn refusal(description: &Value, path: &str, query: &str) -> Option<String> {
    let Some(operation) = operation(path) else {
        return Some(format!("{path} is no described operation"));
    };
    let spec = &description["openapi"][operation];
    let event = names(&description["csdl"]["properties"]["event"]);
    let query: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    for (name, value) in &query {
        let Some(param) = spec["parameters"]
            .get(name.as_str())
            .filter(|p| p["in"] == "query")
        else {
            return Some(format!("no query parameter {name} on {operation}"));
        };
        if operation == "eventDelta" && NOT_ON_DELTA.contains(&name.as_str()) {
            return Some(format!("{name} is not supported on delta (event-delta.md)"));
        }
        let schema = &param["schema"];
        let valid = match schema["type"].as_str() {
            Some("integer") => value
                .parse::<i64>()
                .is_ok_and(|n| schema["minimum"].as_i64().is_none_or(|m| n >= m)),
            Some("boolean") => value == "true" || value == "false",
            Some("array") => !value.is_empty() && value.split(',').all(|item| !item.is_empty()),
            // The window: "represented in ISO 8601 format", in RFC 3339's profile of it.
            _ if name.ends_with("DateTime") => is_rfc3339(value),
            _ => true,
        };
        if !valid {
            return Some(format!("{name}={value} is not a {schema}"));
        }
        if name == "$select"
            && let Some(bad) = value.split(',').find(|p| !event.contains(p))
        {
            return Some(format!("$select names {bad}, not an event property"));
        }
        if name == "$select"
            && let Some(bad) = value.split(',').find(|p| NOT_SELECTABLE.contains(p))
        {
            return Some(format!("$select names {bad}, which it does not support"));
        }
    }
    let parameters = spec["parameters"].as_object().unwrap();
    for (name, param) in parameters {
        let required = param["in"] == "query" && param["required"] == true;
        if required && !query.iter().any(|(n, _)| n == name) {
            return Some(format!("{operation} requires {name}"));
        }
    }
    None
}

fn links(server: &MockServer, name: &str, token: &str, path: &str) -> String {
    format!("{}{path}?{name}={token}", server.uri())
}

/// A delta page: `changes`, then the next page's or the round's link.
fn delta_answer(
    changes: Vec<Value>,
    next: Option<String>,
    delta: Option<String>,
) -> ResponseTemplate {
    let mut body = json!({"value": changes});
    if let Some(link) = next {
        body["@odata.nextLink"] = json!(link);
    }
    if let Some(link) = delta {
        body["@odata.deltaLink"] = json!(link);
    }
    ResponseTemplate::new(200).set_body_json(body)
}

/// The GETs the reader sends in a first `events_since` (a new delta round of two pages, then
/// `calendarView` in two pages) and a second one (a round from the kept link, unchanged), and
/// the links the stub handed out (the reader follows them as they are).
async fn requests_of_reads_and_a_round() -> (Vec<wiremock::Request>, Vec<String>) {
    let server = loopback_server().await;
    token_endpoint(&server, TOKEN, 1).await;
    let skip = links(&server, "$skiptoken", "S1", DELTA_PATH);
    let first_delta = links(&server, "$deltatoken", "D1", DELTA_PATH);
    let second_delta = links(&server, "$deltatoken", "D2", DELTA_PATH);
    let view_next = format!(
        "{}{VIEW_PATH}?startDateTime=2026-11-25T00:00:00Z&endDateTime=2026-11-26T00:00:00Z\
         &$top=100&$skip=100",
        server.uri()
    );
    let answers = [
        (
            "$skiptoken",
            "S1",
            delta_answer(vec![], None, Some(first_delta.clone())),
        ),
        (
            "$deltatoken",
            "D1",
            delta_answer(vec![], None, Some(second_delta.clone())),
        ),
    ];
    for (name, token, answer) in answers {
        Mock::given(method("GET"))
            .and(path(DELTA_PATH))
            .and(query_param(name, token))
            .respond_with(answer)
            .expect(1)
            .mount(&server)
            .await;
    }
    Mock::given(method("GET"))
        .and(path(DELTA_PATH))
        .and(query_param_is_missing("$skiptoken"))
        .and(query_param_is_missing("$deltatoken"))
        .respond_with(delta_answer(one_event(), Some(skip.clone()), None))
        .expect(1)
        .mount(&server)
        .await;
    let later = event(
        "AAMkAGI2TBBB=",
        None,
        "Review",
        "2026-11-25T14:00:00.0000000",
        "2026-11-25T15:00:00.0000000",
        Some("https://teams.microsoft.com/l/meetup-join/19%3ameeting_x"),
        false,
        false,
    );
    Mock::given(method("GET"))
        .and(path(VIEW_PATH))
        .and(query_param("$skip", "100"))
        .respond_with(page(vec![later], None))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path(VIEW_PATH))
        .and(query_param_is_missing("$skip"))
        .respond_with(page(one_event(), Some(view_next.clone())))
        .expect(1)
        .mount(&server)
        .await;

    let reader = GraphReader::new();
    let account = account(&server);
    let (from, to) = (DAY, DAY + 24 * HOUR);
    let first = reader.events_since(&account, ROOM, from, to, None).await;
    let CalendarRead::Events {
        events,
        mark: Some(mark),
    } = first.unwrap()
    else {
        panic!("a first read with a mark");
    };
    assert_eq!(events.len(), 2, "both pages of the view were read");
    let again = reader
        .events_since(&account, ROOM, from, to, Some(mark))
        .await;
    assert!(matches!(again.unwrap(), CalendarRead::Confirmed { .. }));
    let requests = server.received_requests().await.unwrap();
    let handed_out = vec![skip, first_delta, view_next];
    (requests, handed_out)
}

#[tokio::test]
async fn every_request_is_a_described_call_or_a_link_graph_handed_out() {
    let description = description();
    let (requests, handed_out) = requests_of_reads_and_a_round().await;
    let gets: Vec<_> = requests
        .iter()
        .filter(|r| r.method == wiremock::http::Method::GET)
        .collect();
    assert_eq!(
        gets.len(),
        5,
        "a round of two pages, two view pages, a round of one"
    );
    // Both operations the reader builds are GETs in the description.
    assert_eq!(description["openapi"]["calendarView"]["method"], "get");
    assert_eq!(description["openapi"]["eventDelta"]["method"], "get");
    let mut built = Vec::new();
    for request in gets {
        let path = request.url.path().replace("%40", "@");
        let query = request.url.query().unwrap_or_default();
        let url = format!("{path}?{query}");
        if handed_out.iter().any(|link| link.ends_with(&url)) {
            continue;
        }
        assert_eq!(refusal(&description, &path, query), None, "{url}");
        built.push(operation(&path).unwrap());
        // No body, so no Content-Type (event-delta.md lists it as required; see calendars.md).
        assert!(request.headers.get("content-type").is_none(), "{url}");
        // The Prefer values are the API reference's (the description names no header).
        let prefer = request.headers.get("prefer").unwrap().to_str().unwrap();
        assert!(
            prefer == r#"outlook.timezone="UTC""# || prefer == "odata.maxpagesize=100",
            "{prefer}"
        );
    }
    assert_eq!(built, ["eventDelta", "calendarView"]);
}

/// The check can fail: each of these is refused by the description.
#[test]
fn the_check_refuses_what_the_description_does_not_have() {
    let description = description();
    let view = "/v1.0/users/room@corp.example/calendarView";
    let delta = "/v1.0/users/room@corp.example/calendarView/delta";
    let window = "startDateTime=2026-11-25T00:00:00Z&endDateTime=2026-11-26T00:00:00Z";
    let refused = |path: &str, query: &str| refusal(&description, path, query).unwrap_or_default();
    let with = |more: &str| format!("{window}&{more}");
    assert!(refused("/v1.0/users/room@corp.example/events", window).contains("no described"));
    assert!(refused("/v1.0/users//calendarView", window).contains("no described"));
    assert!(refused(view, &with("$selct=id")).contains("no query parameter $selct"));
    assert!(refused(view, &with("$top=-1")).contains("$top=-1"));
    assert!(refused(view, &with("$top=ten")).contains("$top=ten"));
    assert!(refused(view, &with("$count=yes")).contains("$count=yes"));
    assert!(refused(view, &with("$select=id,title")).contains("title"));
    assert!(refused(view, &with("$select=")).contains("$select="));
    assert!(refused(view, &with("$select=id,createdDateTime")).contains("does not support"));
    assert!(
        refused(view, "startDateTime=2026-11-25&endDateTime=2026-11-26").contains("startDateTime")
    );
    assert!(refused(view, "startDateTime=2026-11-25T00:00:00Z").contains("requires endDateTime"));
    assert!(refused(delta, &with("$select=id")).contains("not supported on delta"));
    // State tokens come only in the links Graph hands out; the description names none.
    assert!(refused(delta, &with("$deltatoken=x")).contains("no query parameter $deltatoken"));
    assert_eq!(
        refusal(
            &description,
            view,
            &with("$top=100&$skip=0&$count=false&$select=id,start,end&$orderby=start/dateTime")
        ),
        None
    );
    assert_eq!(refusal(&description, delta, window), None);
}

/// The fields the reader deserializes (crates/calendar-client/src/graph.rs: `Page`, `DeltaPage`,
/// `GraphEvent`, `DateTimeTimeZone`, `Location`, `ItemBody`, `OnlineMeeting`) are described
/// properties of the types it reads them from, in the CSDL and in the OpenAPI responses.
#[test]
fn every_field_the_reader_reads_is_a_described_property() {
    let description = description();
    let has = |list: &Value, wanted: &[&str]| {
        let list = names(list);
        for name in wanted {
            assert!(list.contains(name), "{list:?} has no {name}");
        }
    };
    let properties = &description["csdl"]["properties"];
    has(
        &properties["event"],
        &[
            "id",
            "iCalUId",
            "subject",
            "start",
            "end",
            "isAllDay",
            "location",
            "body",
            "onlineMeeting",
            "isCancelled",
        ],
    );
    has(&properties["dateTimeTimeZone"], &["dateTime", "timeZone"]);
    has(&properties["location"], &["displayName"]);
    has(&properties["itemBody"], &["content"]);
    has(&properties["onlineMeetingInfo"], &["joinUrl"]);
    let openapi = &description["openapi"];
    has(
        &openapi["calendarView"]["responseProperties"],
        &["value", "@odata.nextLink"],
    );
    has(
        &openapi["eventDelta"]["responseProperties"],
        &["value", "@odata.nextLink", "@odata.deltaLink"],
    );
    // What the reader relies on besides the names: the view of a user is a collection of
    // events; `delta` on it takes the window; change tracking is supported.
    let csdl = &description["csdl"];
    assert_eq!(csdl["userCalendarView"]["type"], "Collection(graph.event)");
    let options = &csdl["eventDelta"]["customQueryOptions"];
    assert_eq!(options["startDateTime"]["required"], true);
    assert_eq!(options["endDateTime"]["required"], true);
    let tracking =
        &csdl["userCalendarView"]["annotations"]["Org.OData.Capabilities.V1.ChangeTracking"];
    assert_eq!(tracking["Supported"], true);
}

//! The listener's EWS requests checked against Microsoft's published EWS schema by a real
//! XML Schema validator (`xmllint`, libxml2), and Microsoft's example answers read by the
//! listener's reader (issue #35; docs/calendars.md, "Checked against Microsoft's schema").
//!
//! The schema is the subset of types.xsd and messages.xsd that `recorded/ews/derive_ews_xsd.py`
//! derives (everything the FindItem and GetItem requests and the RequestServerVersion header
//! reach, copied unchanged), under `recorded/ews/envelope.xsd`, a SOAP 1.1 envelope written
//! here that validates the header and the body element strictly. Sources in
//! `recorded/ews/SOURCES.md`. Without `xmllint` these tests fail: `.ci/setup` installs it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use roomlink_device_emu::ews::{Ews, EwsItem};
use roomlink_listener::calendar::ews::{ExchangeClient, ExchangeConfig};
use roomlink_listener::calendar::soap::{
    self, AnswerProblem, Found, GotItem, ItemId, ResponseError,
};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use zeroize::Zeroizing;

/// 2027-01-15T10:00:00Z.
const REVIEW: i64 = 1_800_007_200_000;
const HOUR: i64 = 3_600_000;
const PASSWORD: &str = "Ews-Schema-Passw0rd";

fn ews_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/recorded/ews")
}

fn recorded(name: &str) -> String {
    std::fs::read_to_string(ews_dir().join(name)).unwrap()
}

/// `Ok` when `xmllint` finds the document valid against the envelope and the EWS subset,
/// `Err` with its complaint when the document is not valid. Anything else (no `xmllint`, a
/// schema that does not compile) fails the test: a refusal must be the document's fault.
fn validate(xml: &str) -> Result<(), String> {
    let schema = ews_dir().join("envelope.xsd");
    let mut child = Command::new("xmllint")
        .args(["--noout", "--nonet", "--schema"])
        .arg(&schema)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run xmllint ({e}): install it (Debian: apt-get install libxml2-utils; \
                 .ci/setup does)"
            )
        });
    child
        .stdin
        .take()
        .unwrap()
        .write_all(xml.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    match output.status.code() {
        Some(0) => Ok(()),
        // xmllint's exit status for a document that does not validate.
        Some(3) => Err(stderr),
        other => panic!("xmllint could not check the document ({other:?}): {stderr}"),
    }
}

fn assert_valid(what: &str, xml: &str) {
    if let Err(why) = validate(xml) {
        panic!("{what} is not valid EWS: {why}\n{xml}");
    }
}

/// The complaint about an invalid document; the test fails if it is valid.
fn refusal(what: &str, xml: &str) -> String {
    match validate(xml) {
        Ok(()) => panic!("{what} passed validation:\n{xml}"),
        Err(why) => why,
    }
}

/// A loopback HTTP/1.1 relay in front of the emulated Exchange server that keeps every
/// request body it passes on (one request a connection, answered with `Connection: close`).
async fn relay(upstream: String) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let kept = bodies.clone();
    tokio::spawn(async move {
        let client = reqwest::Client::new();
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(pass_on(
                stream,
                client.clone(),
                upstream.clone(),
                kept.clone(),
            ));
        }
    });
    (port, bodies)
}

async fn pass_on(
    stream: TcpStream,
    client: reqwest::Client,
    upstream: String,
    kept: Arc<Mutex<Vec<String>>>,
) {
    let mut stream = BufReader::new(stream);
    let mut line = String::new();
    stream.read_line(&mut line).await.unwrap();
    let mut forward = client.post(&upstream);
    let mut length = 0;
    loop {
        line.clear();
        stream.read_line(&mut line).await.unwrap();
        let Some((name, value)) = line.trim_end().split_once(':') else {
            break;
        };
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "content-length" => length = value.parse().unwrap(),
            "authorization" | "soapaction" | "content-type" => {
                forward = forward.header(name, value);
            }
            _ => {}
        }
    }
    let mut body = vec![0; length];
    stream.read_exact(&mut body).await.unwrap();
    let body = String::from_utf8(body).unwrap();
    kept.lock().unwrap().push(body.clone());
    let answer = forward.body(body).send().await.unwrap();
    let status = answer.status().as_u16();
    let text = answer.text().await.unwrap();
    let head = format!(
        "HTTP/1.1 {status} Relayed\r\nContent-Type: text/xml; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        text.len()
    );
    let stream = stream.get_mut();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(text.as_bytes()).await.unwrap();
    stream.shutdown().await.unwrap();
}

#[tokio::test]
async fn every_request_of_a_real_read_is_valid_ews() {
    // A mailbox and item ids that need escaping, and more items than one GetItem asks for.
    let mailbox = "board&co@corp.example";
    let ews = Ews::new("CORP\\svc-rooms", PASSWORD);
    let count = soap::GET_ITEM_BATCH + 1;
    for n in 0..count {
        let id = if n == 0 {
            "AAMk<&\"'>0".to_owned()
        } else {
            format!("AAMkAD+{n:03}/w==")
        };
        let start = REVIEW + n as i64 * 60_000;
        ews.add_item(
            mailbox,
            EwsItem {
                id,
                subject: Some(format!("Meeting {n}")),
                body: Some("Join: https://bjn.vc/123".into()),
                start_ms: start,
                end_ms: start + HOUR,
                ..EwsItem::default()
            },
        );
    }
    let server = roomlink_device_emu::ews::start([127, 0, 0, 1].into(), 0, ews.clone())
        .await
        .unwrap();
    let (port, bodies) = relay(format!(
        "http://127.0.0.1:{}{}",
        server.port,
        roomlink_device_emu::ews::PATH
    ))
    .await;
    let client = ExchangeClient::new(ExchangeConfig {
        soap_uri: format!("http://127.0.0.1:{port}/EWS/Exchange.asmx"),
        username: "svc-rooms".into(),
        password: Zeroizing::new(PASSWORD.into()),
        domain: Some("CORP".into()),
        connect_timeout: Duration::from_secs(5),
        timeout: Duration::from_secs(30),
    })
    .unwrap();

    let events = client
        .events(mailbox, REVIEW - 10 * HOUR, REVIEW + 14 * HOUR)
        .await
        .unwrap();
    assert_eq!(events.len(), count);
    assert_eq!(events[0].id, "AAMk<&\"'>0");
    assert!(events.iter().all(|e| e.body.is_some()), "every body read");

    let operations: Vec<String> = ews.requests().into_iter().map(|r| r.operation).collect();
    assert_eq!(operations, ["FindItem", "GetItem", "GetItem"]);
    let seen = bodies.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "the relay saw every request");
    for (operation, body) in operations.iter().zip(&seen) {
        assert_valid(operation, body);
    }

    // An empty window sends FindItem only: a GetItem without ids would not be valid EWS.
    let none = client
        .events(mailbox, REVIEW - 30 * HOUR, REVIEW - 20 * HOUR)
        .await
        .unwrap();
    assert!(none.is_empty());
    let operations: Vec<String> = ews.requests().into_iter().map(|r| r.operation).collect();
    assert_eq!(operations[3..], ["FindItem"]);
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 4);
    assert_valid("FindItem of an empty window", &bodies[3]);
    server.stop();
}

#[test]
fn built_requests_are_valid_ews_for_awkward_inputs() {
    for mailbox in [
        "room@corp.example",
        "o'hara&\"co\"<x>@corp.example",
        "Ünïcødé.Raum@corp.example",
        " spaced @corp.example",
    ] {
        for (from, to) in [
            (REVIEW, REVIEW + HOUR),
            (0, 1),
            // The longest window (366 days) from a leap day, its milliseconds dropped.
            (1_709_164_800_999, 1_709_164_800_999 + 366 * 24 * HOUR),
        ] {
            assert_valid(
                &format!("FindItem of {mailbox:?}"),
                &soap::find_item(mailbox, from, to),
            );
        }
    }
    let ids = [
        ItemId {
            id: "AAMkADk0+/=".into(),
            change_key: Some("DwAAABYA".into()),
        },
        ItemId {
            id: "<&\"'>".into(),
            change_key: None,
        },
    ];
    assert_valid("GetItem", &soap::get_item(&ids));
    let batch: Vec<ItemId> = (0..soap::GET_ITEM_BATCH)
        .map(|n| ItemId {
            id: format!("AAMk{n}"),
            change_key: Some(format!("Dw{n}")),
        })
        .collect();
    assert_valid("a full GetItem batch", &soap::get_item(&batch));
}

/// 0001-01-01T00:00:00Z and 10000-01-01T00:00:00Z.
const YEAR_1: i64 = -62_135_596_800_000;
const YEAR_10000: i64 = 253_402_300_800_000;

#[tokio::test]
async fn windows_stay_within_the_years_xs_datetime_writes() {
    assert_valid(
        "the first window",
        &soap::find_item("room@corp.example", YEAR_1, YEAR_1 + HOUR),
    );
    assert_valid(
        "the last window",
        &soap::find_item("room@corp.example", YEAR_10000 - HOUR, YEAR_10000 - 1),
    );
    // Year 0 would be written 0000: not an xs:dateTime.
    let why = refusal(
        "a window in year 0",
        &soap::find_item("room@corp.example", YEAR_1 - 1, YEAR_1 + HOUR),
    );
    assert!(why.contains("0000-12-31T23:59:59Z"), "{why}");
    // So the client never sends such a window (nothing listens on the discard port).
    let client = ExchangeClient::new(ExchangeConfig {
        soap_uri: "http://127.0.0.1:9/EWS/Exchange.asmx".into(),
        username: "svc-rooms".into(),
        password: Zeroizing::new(PASSWORD.into()),
        domain: None,
        connect_timeout: Duration::from_secs(1),
        timeout: Duration::from_secs(2),
    })
    .unwrap();
    for (from, to) in [(YEAR_1 - 1, YEAR_1 + HOUR), (YEAR_10000 - HOUR, YEAR_10000)] {
        let why = client
            .events("room@corp.example", from, to)
            .await
            .unwrap_err();
        assert!(
            why.ends_with("the window must lie within the years 1 to 9999"),
            "{why}"
        );
    }
}

#[test]
fn the_validator_refuses_requests_that_are_not_ews() {
    let find = soap::find_item("room@corp.example", REVIEW, REVIEW + HOUR);
    let get = soap::get_item(&[ItemId {
        id: "AAMk".into(),
        change_key: None,
    }]);
    assert_valid("FindItem", &find);
    assert_valid("GetItem", &get);

    let mutate = |from: &str, to: &str, xml: &str| {
        assert!(xml.contains(from), "{from} not in the request");
        xml.replacen(from, to, 1)
    };
    let cases = [
        (
            "an unknown property",
            mutate("calendar:UID", "calendar:Uid", &find),
            "calendar:Uid",
        ),
        (
            "a CalendarView without StartDate",
            mutate(r#" StartDate="2027-01-15T10:00:00Z""#, "", &find),
            "StartDate",
        ),
        (
            "a date that is not xs:dateTime",
            mutate("2027-01-15T10:00:00Z", "2027-01-15 10:00:00", &find),
            "StartDate",
        ),
        (
            "an unknown server version",
            mutate("Exchange2010_SP2", "Exchange2010_SP9", &find),
            "Exchange2010_SP9",
        ),
        (
            "an unknown distinguished folder",
            mutate(r#"Id="calendar""#, r#"Id="calendars""#, &find),
            "calendars",
        ),
        (
            "FindItem without Traversal",
            mutate(r#" Traversal="Shallow""#, "", &find),
            "Traversal",
        ),
        (
            "ItemShape after CalendarView",
            {
                let shape_end = find.find("</m:ItemShape>").unwrap() + "</m:ItemShape>".len();
                let shape_start = find.find("<m:ItemShape>").unwrap();
                let shape = &find[shape_start..shape_end];
                let without = find.replacen(shape, "", 1);
                without.replacen("</m:FindItem>", &format!("{shape}</m:FindItem>"), 1)
            },
            "ItemShape",
        ),
        ("GetItem without ids", soap::get_item(&[]), "ItemIds"),
        (
            "GetItem with an unknown body type",
            mutate(
                "<t:BodyType>Text</t:BodyType>",
                "<t:BodyType>Plain</t:BodyType>",
                &get,
            ),
            "Plain",
        ),
        (
            "the operation in another namespace",
            mutate("<m:GetItem>", r#"<GetItem xmlns="urn:not-ews">"#, &get).replacen(
                "</m:GetItem>",
                "</GetItem>",
                1,
            ),
            "GetItem",
        ),
    ];
    for (what, xml, named) in cases {
        let why = refusal(what, &xml);
        assert!(
            why.contains(named),
            "{what}: the refusal names {named}: {why}"
        );
    }
}

/// Microsoft's example envelopes in the reference pages that were edited in 2020 name the
/// SOAP namespace with `https://`; a SOAP 1.1 server sends `http://` (docs/calendars.md).
fn with_the_soap_namespace_of_servers(xml: &str) -> String {
    assert!(xml.contains("https://schemas.xmlsoap.org/soap/envelope/"));
    xml.replace("https://schemas.xmlsoap.org/soap/envelope/", soap::SOAP_NS)
}

#[test]
fn microsofts_example_requests_are_valid_against_the_subset() {
    let find = recorded("ms_finditem_calendarview_request.xml");
    // As published, the envelope is not SOAP 1.1's (see above): refused.
    assert!(refusal("the published FindItem", &find).contains("Envelope"));
    assert_valid(
        "Microsoft's FindItem with a CalendarView",
        &with_the_soap_namespace_of_servers(&find),
    );
    assert_valid(
        "Microsoft's GetItem of a calendar item",
        &recorded("ms_getitem_calendar_request.xml"),
    );
}

#[test]
fn microsofts_calendar_view_answer_is_read() {
    let answer = recorded("ms_finditem_calendarview_response.xml");
    // As published: not a SOAP 1.1 envelope, refused as not EWS rather than misread.
    assert!(matches!(
        soap::read_find_item(&answer),
        Err(AnswerProblem::NotEws(ref why)) if why.contains("not a SOAP envelope")
    ));
    let Found { items, complete } =
        soap::read_find_item(&with_the_soap_namespace_of_servers(&answer)).unwrap();
    // 5 of 33 (MaxEntriesReturned="5"): IncludesLastItemInRange="false", which the client
    // refuses as a cut-short view rather than showing part of the calendar.
    assert!(!complete);
    let seen: Vec<(&str, i64, i64)> = items
        .iter()
        .map(|i| (i.subject.as_deref().unwrap(), i.start_ms, i.end_ms))
        .collect();
    // 2013-08-21T19:30:00Z is 1377113400000.
    const AUG21_1930: i64 = 1_377_113_400_000;
    const MIN: i64 = 60_000;
    assert_eq!(
        seen,
        [
            (
                "Contoso devs team meeting",
                AUG21_1930,
                AUG21_1930 + 30 * MIN
            ),
            (
                "Daily status meeting",
                AUG21_1930 + 30 * MIN,
                AUG21_1930 + 90 * MIN
            ),
            (
                "Lunch with sales team",
                AUG21_1930 + 120 * MIN,
                AUG21_1930 + 180 * MIN
            ),
            (
                "Tennis at the club",
                AUG21_1930 + 1350 * MIN,
                AUG21_1930 + 1410 * MIN
            ),
            (
                "Online training webcast",
                AUG21_1930 + 1530 * MIN,
                AUG21_1930 + 1590 * MIN
            ),
        ]
    );
    let first = &items[0];
    assert_eq!(
        first.item_id,
        ItemId {
            id: "AAMk".into(),
            change_key: Some("DwAA".into())
        }
    );
    // Properties the request did not ask for are absent, not defaulted to something else.
    assert_eq!((first.uid.as_ref(), first.location.as_ref()), (None, None));
    assert!(!first.all_day && !first.cancelled);
    assert_eq!(items[4].item_id.id, "AAMkA");
}

#[test]
fn microsofts_find_item_error_is_a_response_error() {
    let answer = recorded("ms_finditem_error_response.xml");
    assert_eq!(
        soap::read_find_item(&answer),
        Err(AnswerProblem::Response(ResponseError {
            class: "Error".into(),
            code: "ErrorInvalidIdMalformed".into(),
            text: Some("Id is malformed.".into()),
        }))
    );
}

#[test]
fn microsofts_get_item_answers_are_read() {
    // The Default shape: no Body element; the AllProperties shape: an empty text Body. Both
    // are an event without a body, and nested CalendarItems (ConflictingMeetings) do not
    // stand for the item.
    assert_eq!(
        soap::read_get_item(&recorded("ms_getitem_calendar_default_response.xml")).unwrap(),
        [GotItem::Body {
            id: "ASUAdTB".into(),
            text: None
        }]
    );
    assert_eq!(
        soap::read_get_item(&recorded("ms_getitem_calendar_allproperties_response.xml")).unwrap(),
        [GotItem::Body {
            id: "ASUAdT".into(),
            text: None
        }]
    );
    // A batch whose second item is gone: published as the GetItemResponse element alone,
    // put in an envelope here.
    let fragment = recorded("ms_getitem_batch_response_fragment.xml");
    let answer = format!(
        r#"<s:Envelope xmlns:s="{}"><s:Body>{fragment}</s:Body></s:Envelope>"#,
        soap::SOAP_NS
    );
    assert_eq!(
        soap::read_get_item(&answer).unwrap(),
        [
            GotItem::Body {
                id: "Er5cAAA=".into(),
                text: None
            },
            GotItem::Failed(ResponseError {
                class: "Error".into(),
                code: "ErrorItemNotFound".into(),
                text: Some("The specified object was not found in the store.".into()),
            }),
        ]
    );
}

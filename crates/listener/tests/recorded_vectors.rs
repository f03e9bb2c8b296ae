//! Recorded device output (issue #35): bytes real Cisco and Poly room systems sent, as recorded in
//! other projects' public repositories (`recorded/SOURCES.md` names repository, path and commit
//! of each file), fed through the drivers' parsers. Each vector either reads as the state the
//! device was in, or is refused with the failure the driver gives; where the recording and our
//! parsers disagree, the test pins down what the driver does today and says so.

use roomlink_listener::driver::{CallPhase, Device, Driver};
use roomlink_listener::drivers::cisco_http::bodies::call_phase;
use roomlink_listener::drivers::cisco_http::xml::{command_result, parse, status_document};
use roomlink_listener::drivers::cisco_inventory::{self, Part};
use roomlink_listener::drivers::cisco_ssh::answers::{Outcome, outcome, take_object, take_ok};
use roomlink_listener::drivers::cisco_ssh::{status_refused, status_value};
use roomlink_listener::drivers::poly_telnet::{PolyTelnetDriver, PolyTelnetSettings};
use roomlink_listener_protocol::failure::FailureKind;
use roomlink_listener_protocol::wire::WireEndpoint;
use serde_json::Value;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

const JSXAPI_WELCOME: &str = include_str!("recorded/jsxapi_welcome.txt");
const JSXAPI_BANNER_1: &str = include_str!("recorded/jsxapi_banner_chunk1.txt");
const JSXAPI_BANNER_2: &str = include_str!("recorded/jsxapi_banner_chunk2.txt");
const JSXAPI_ANSWERS: &str = include_str!("recorded/jsxapi_tsh_answers.json");
const PLACEOS_BANNER: &str = include_str!("recorded/placeos_banner.txt");
const PLACEOS_ECHO_OFF: &str = include_str!("recorded/placeos_echo_off_answer.txt");
const PLACEOS_ANSWERS: &str = include_str!("recorded/placeos_room_os_answers.json");
const AVISPL_STATUS: &str = include_str!("recorded/avispl_cisco_status.xml");
const GS_IN_CALL: &str = include_str!("recorded/avispl_gs_callinfo_in_call.txt");
const GS_MUTE_ON: &str = include_str!("recorded/avispl_gs_mute_near_on.txt");
const GS_MUTE_OFF: &str = include_str!("recorded/avispl_gs_mute_near_off.txt");
const GS_NOT_IN_CALL: &str = include_str!("recorded/avispl_gs_not_in_a_call.txt");
const GS_NOT_FOUND: &str = include_str!("recorded/avispl_gs_error_not_found.txt");
const GS_NOT_FOUND_NOSPACE: &str = include_str!("recorded/avispl_gs_error_not_found_nospace.txt");
const GS_PARAMETERS: &str = include_str!("recorded/avispl_gs_error_parameters.txt");

/// Every JSON object of a recorded stream, in order, as the SSH driver takes them.
fn objects(stream: &str) -> Vec<Value> {
    let mut buffer = stream.as_bytes().to_vec();
    let mut all = Vec::new();
    while let Some(object) = take_object(&mut buffer) {
        all.push(object);
    }
    assert!(
        buffer.iter().all(u8::is_ascii_whitespace),
        "nothing but whitespace is left after the last object"
    );
    all
}

/// The answer tagged `id` in a recorded stream (the SSH driver's `ResultId` match).
fn answer(stream: &str, id: &str) -> Value {
    objects(stream)
        .into_iter()
        .find(|o| o.get("ResultId").and_then(Value::as_str) == Some(id))
        .unwrap_or_else(|| panic!("no answer {id} in the stream"))
}

fn failed(answer: &Value) -> (String, String) {
    match outcome(answer) {
        Outcome::Ok => panic!("expected a failed outcome for {answer}"),
        Outcome::Failed { status, reason } => (status, reason),
    }
}

// ---- Cisco SSH (JSON output mode) -------------------------------------------------------------

/// cisco-ce/jsxapi `test/data/welcome.txt`: a real codec's login banner. The driver's banner
/// wait (`Login successful` seen and an `OK` line taken) is met; the text after `OK` is left.
#[test]
fn jsxapi_welcome_banner_ends_the_login_wait() {
    assert!(JSXAPI_WELCOME.contains("\r\n"), "recorded with CR LF");
    assert!(JSXAPI_WELCOME.contains("Login successful"));
    let mut buffer = JSXAPI_WELCOME.as_bytes().to_vec();
    assert!(take_ok(&mut buffer), "the banner's OK line is seen");
    assert_eq!(buffer, b"\r\n", "only the blank line after OK is left");
    // The banner says CE firmware (`Release ce8.1.0 ...`), not TC.
    let release = JSXAPI_WELCOME
        .lines()
        .find_map(|l| l.split("Release").nth(1))
        .expect("a Release line");
    assert!(release.trim().starts_with("ce8.1.0"));
}

/// cisco-ce/jsxapi `test/backend/tsh.spec.ts` ("unfortunate chunking"): the banner's `OK`
/// split across two reads. The first read must not count as the acknowledgement, the second
/// must; the `Last login` line after it stays in the buffer.
#[test]
fn jsxapi_banner_split_inside_ok_is_taken_only_when_whole() {
    let mut buffer = JSXAPI_BANNER_1.as_bytes().to_vec();
    assert!(JSXAPI_BANNER_1.contains("Login successful"));
    assert!(!take_ok(&mut buffer), "a lone `O` is not the OK line");
    buffer.extend_from_slice(JSXAPI_BANNER_2.as_bytes());
    assert!(take_ok(&mut buffer));
    let rest = String::from_utf8(buffer).expect("text");
    assert!(
        rest.trim_start()
            .starts_with("Last login from 10.228.101.226")
    );
}

/// cisco-ce/jsxapi `test/backend/tsh.spec.ts`: the JSON answers, as one stream. Success,
/// `Unknown command`, a `ParameterError` without a reason, Dial's result, an `xGet` value.
#[test]
fn jsxapi_json_answers_read_as_outcomes_and_values() {
    let all = objects(JSXAPI_ANSWERS);
    assert_eq!(all.len(), 7, "seven answers in the stream");

    assert!(matches!(
        outcome(&answer(JSXAPI_ANSWERS, "request-1")),
        Outcome::Ok
    ));

    let (status, reason) = failed(&answer(JSXAPI_ANSWERS, "request-2"));
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("Error", "Unknown command")
    );

    // A ParameterError carries no Reason: the failure has the status and an empty reason (the
    // driver then names the status as the reason).
    let (status, reason) = failed(&answer(JSXAPI_ANSWERS, "request-3"));
    assert_eq!(status, "ParameterError");
    assert_eq!(reason, "");

    let dial = answer(JSXAPI_ANSWERS, "request-4");
    assert!(matches!(outcome(&dial), Outcome::Ok));
    assert_eq!(
        dial["CommandResponse"]["DialResult"]["CallId"]["Value"],
        "2"
    );

    let uptime = answer(JSXAPI_ANSWERS, "request-5");
    assert_eq!(
        status_value(&uptime, &["SystemUnit", "Uptime"]),
        Some("29038")
    );
    assert!(status_refused(&uptime).is_none());
    let tree = cisco_inventory::status_node(&uptime).expect("a Status tree");
    assert_eq!(tree.text_at(&["SystemUnit", "Uptime"]), Some("29038"));
}

/// cisco-ce/jsxapi `test/backend/tsh.spec.ts`: an `xGet` of a missing path is refused under
/// `CommandResponse` with the *path's root* as key (`Configuration`), and an `xSet` that
/// succeeds answers with nothing but its `ResultId`. `status_refused` sees the refusal under
/// any key whose `status` is `Error`; `outcome` reads a bare `ResultId` as a failure with no
/// status (nothing the drivers send is answered so).
#[test]
fn jsxapi_refusal_keys_and_bare_result_ids() {
    let refused = answer(JSXAPI_ANSWERS, "request-6");
    assert_eq!(
        status_refused(&refused).as_deref(),
        Some("No match on address expression"),
        "a refused read, though the key is `Configuration`, not `Status`"
    );
    let (status, reason) = failed(&refused);
    assert_eq!(status, "Error");
    assert_eq!(reason, "No match on address expression");

    let bare = answer(JSXAPI_ANSWERS, "request-7");
    let (status, reason) = failed(&bare);
    assert_eq!((status.as_str(), reason.as_str()), ("(none)", ""));
}

/// PlaceOS/drivers `drivers/cisco/room_os_spec.cr`: the login the spec transmits has no `OK`
/// after `Login successful` (the OK arrives only with the `Echo off` answer, behind a terminal
/// escape). Our banner wait does not end on it: the driver would report it as "not a Cisco
/// xAPI shell" after the answer timeout. The real banner (jsxapi above) does carry its OK.
#[test]
fn placeos_login_without_ok_does_not_end_the_banner_wait_but_echo_off_is_acknowledged() {
    let mut banner = PLACEOS_BANNER.as_bytes().to_vec();
    assert!(PLACEOS_BANNER.contains("Login successful"));
    assert!(!take_ok(&mut banner), "no OK line in this banner");

    let mut echo = PLACEOS_ECHO_OFF.as_bytes().to_vec();
    assert_eq!(echo.first(), Some(&0x1b), "starts with a terminal escape");
    assert!(
        take_ok(&mut echo),
        "the escape line is skipped, the OK line taken"
    );
    assert!(echo.is_empty());
}

/// PlaceOS/drivers `drivers/cisco/room_os_spec.cr`: `xStatus Audio` (microphones muted), a
/// command OK, an error with its reason, and `Unknown command` (its `XPath` beside the result).
#[test]
fn placeos_status_and_command_answers() {
    let ok = answer(PLACEOS_ANSWERS, "1");
    assert!(matches!(outcome(&ok), Outcome::Ok));

    let audio = answer(PLACEOS_ANSWERS, "2");
    assert!(status_refused(&audio).is_none());
    assert_eq!(
        status_value(&audio, &["Audio", "Microphones", "Mute"]),
        Some("On"),
        "microphones muted"
    );
    let tree = cisco_inventory::status_node(&audio).expect("a Status tree");
    let microphones = tree.find_all(&["Audio", "Input", "Connectors", "Microphone"]);
    assert_eq!(microphones.len(), 2);
    assert_eq!(microphones[1].attr("item"), Some("2"));
    assert_eq!(
        microphones[1].text_at(&["ConnectionStatus"]),
        Some("NotConnected")
    );

    let (status, reason) = failed(&answer(PLACEOS_ANSWERS, "4"));
    assert_eq!(status, "Error");
    assert_eq!(
        reason,
        "Must supply either SourceId or ConnectorId (but not both.)"
    );

    let unknown = answer(PLACEOS_ANSWERS, "5");
    let (status, reason) = failed(&unknown);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("Error", "Unknown command")
    );
}

/// PlaceOS/drivers `drivers/cisco/room_os_spec.cr`: `xStatus Wrong` answered with the error at
/// the top level (`{"Status": {"status": "Error", ...}}`), not under `CommandResponse`. It is a
/// refused read: a status read answered so fails with its reason instead of reading as no call,
/// and an inventory part answered so is listed in `notReported` (the SSH driver asks
/// `status_refused` before reading the document).
#[test]
fn placeos_top_level_status_error_is_a_refused_read() {
    let wrong = answer(PLACEOS_ANSWERS, "3");
    assert_eq!(
        status_refused(&wrong).as_deref(),
        Some("No match on address expression.")
    );
    let inventory = cisco_inventory::inventory(&[(
        Part::SystemUnit,
        Err(status_refused(&wrong).expect("refused")),
    )]);
    assert_eq!(inventory.product, None);
    assert!(
        inventory.not_reported.iter().any(|f| f == "product"),
        "{:?}",
        inventory.not_reported
    );
}

// ---- Cisco HTTP (getxml) ---------------------------------------------------------------------

fn avispl_status() -> roomlink_listener::xml::Element {
    let root = parse(AVISPL_STATUS).expect("the recorded document parses");
    status_document(root).expect("a <Status> document, not a fault")
}

/// AVISPL/dal-codecs-singlecodecs-cisco `src/test/resources/__files/status.xml`: a Room Bar's
/// whole `/Status`. Microphones muted; the software version read where the driver reads it.
#[test]
fn avispl_status_document_mute_and_version() {
    let status = avispl_status();
    assert_eq!(status.attr("product"), Some("Cisco Codec"));
    assert_eq!(
        status.text_at(&["Audio", "Microphones", "Mute"]),
        Some("On")
    );
    assert_eq!(
        status.text_at(&["SystemUnit", "Software", "Version"]),
        Some("ce11.19.1.6.76526b1b094")
    );
    assert!(command_result(&status).is_none(), "not a command answer");
}

/// Same document: the codec is in a call (`SystemUnit/State/NumberOfActiveCalls` 1, `System`
/// `InCall`, `MicrosoftTeams/Calling/InCall` True: a Teams Rooms mode device), but there is no
/// `/Status/Call` element. The HTTP driver reads the phase from `/Status/Call` only, so this
/// device in a call reads as Idle (the SSH driver falls back on NumberOfActiveCalls only when
/// `xStatus Call` is refused).
#[test]
fn avispl_teams_mode_call_has_no_status_call_and_reads_idle() {
    let status = avispl_status();
    assert_eq!(
        status.text_at(&["SystemUnit", "State", "NumberOfActiveCalls"]),
        Some("1")
    );
    assert_eq!(
        status.text_at(&["SystemUnit", "State", "System"]),
        Some("InCall")
    );
    assert_eq!(
        status.text_at(&["MicrosoftTeams", "Calling", "InCall"]),
        Some("True")
    );
    assert!(status.find_all(&["Call"]).is_empty());
    assert_eq!(call_phase(&status), CallPhase::Idle, "today: a missed call");
}

/// Same document through the Cisco inventory reader (each of the four parts is in it).
#[test]
fn avispl_status_document_makes_the_inventory() {
    let status = avispl_status();
    let readings: Vec<_> = Part::ALL
        .iter()
        .map(|part| (*part, Ok(status.clone())))
        .collect();
    let inventory = cisco_inventory::inventory(&readings);
    assert_eq!(inventory.vendor.as_deref(), Some("Cisco"));
    assert_eq!(inventory.product.as_deref(), Some("Cisco Room Bar"));
    assert_eq!(inventory.model.as_deref(), Some("Room Bar"));
    assert_eq!(inventory.serial_number.as_deref(), Some("FOC2735HU8V"));
    assert_eq!(
        inventory.software_version.as_deref(),
        Some("ce11.19.1.6.76526b1b094")
    );
    assert_eq!(
        inventory.software_release_date.as_deref(),
        Some("2024-08-02")
    );
    assert_eq!(inventory.uptime_seconds, Some(37224));
    assert!(inventory.not_reported.is_empty());

    let addresses: Vec<(&str, &str)> = inventory
        .addresses
        .iter()
        .map(|a| (a.kind.as_str(), a.value.as_str()))
        .collect();
    assert!(addresses.contains(&("ipv4", "10.8.50.218")));
    assert!(addresses.contains(&("mac", "68:79:09:CB:1E:9C")));
    assert!(
        !addresses.iter().any(|(kind, _)| *kind == "ipv6"),
        "the empty IPv6 address is not listed"
    );

    let navigator = inventory
        .peripherals
        .iter()
        .find(|p| p.serial_number.as_deref() == Some("FOC2736HXGS"))
        .expect("the Room Navigator is listed");
    assert_eq!(navigator.kind, "touchPanel");
    assert_eq!(navigator.name.as_deref(), Some("Cisco Room Navigator"));
    assert_eq!(navigator.model.as_deref(), Some("73-101864-1"));
    assert!(navigator.connected);

    let camera = inventory
        .peripherals
        .iter()
        .find(|p| p.kind == "camera")
        .expect("the integrated camera is listed");
    assert_eq!(camera.id.as_deref(), Some("1"));
    assert_eq!(camera.model.as_deref(), Some("Integrated Camera"));
    assert!(camera.connected);
    assert_eq!(inventory.peripherals.len(), 2);
}

// ---- Poly Telnet -----------------------------------------------------------------------------

/// A Poly Telnet API stand-in with no password: shows the prompt, then answers each command
/// with the recorded bytes for it (nothing for others).
async fn replaying(host: &str, answers: Vec<(&'static str, &'static str)>) -> u16 {
    let listener = TcpListener::bind((host, 0)).await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let answers = answers.clone();
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                if write.write_all(b"-> ").await.is_err() {
                    return;
                }
                let mut lines = BufReader::new(read).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    let command = line.trim();
                    if command == "exit" {
                        return;
                    }
                    let reply = answers
                        .iter()
                        .find(|(c, _)| *c == command)
                        .map(|(_, a)| *a)
                        .unwrap_or("");
                    if write.write_all(reply.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

fn poly_device(address: &str, port: u16) -> Device {
    Device {
        endpoint: WireEndpoint::default(),
        address: address.into(),
        port: Some(port),
        username: None,
        password: None,
    }
}

fn poly_driver() -> PolyTelnetDriver {
    PolyTelnetDriver::new(PolyTelnetSettings {
        connect_timeout: Duration::from_secs(2),
        answer_timeout: Duration::from_millis(1500),
    })
}

/// AVISPL/dal-codecs-singlecodecs-polycom-realpresence-groupseries `PolycomGroupSeriesTest.java`
/// (`test08`): a Group Series in a connected incoming call, microphones muted; the echo of the
/// command and the lines come joined by bare LF, as recorded there.
#[tokio::test]
async fn avispl_group_series_in_call_and_muted() {
    let host = "127.77.35.1";
    let port = replaying(
        host,
        vec![("callinfo all", GS_IN_CALL), ("mute near get", GS_MUTE_ON)],
    )
    .await;
    let status = poly_driver()
        .status(&poly_device(host, port))
        .await
        .expect("status is read");
    assert_eq!(status.call, CallPhase::Connected);
    assert!(status.microphone_muted);
}

/// Same file (`test01`): `system is not in a call` and `mute near off`, ending in CR CR LF.
#[tokio::test]
async fn avispl_group_series_idle_and_unmuted() {
    let host = "127.77.35.2";
    let port = replaying(
        host,
        vec![
            ("callinfo all", GS_NOT_IN_CALL),
            ("mute near get", GS_MUTE_OFF),
        ],
    )
    .await;
    let status = poly_driver()
        .status(&poly_device(host, port))
        .await
        .expect("status is read");
    assert_eq!(status.call, CallPhase::Idle);
    assert!(!status.microphone_muted);
}

/// Same file (`test01`'s error list): both spellings of `command not found` are
/// Misprovisioned; `command needs more parameters` is ServerError; the codec's text is kept.
#[tokio::test]
async fn avispl_group_series_errors_become_failures() {
    for (n, recorded, kind) in [
        (3, GS_NOT_FOUND, FailureKind::Misprovisioned),
        (4, GS_NOT_FOUND_NOSPACE, FailureKind::Misprovisioned),
        (5, GS_PARAMETERS, FailureKind::ServerError),
    ] {
        let host = format!("127.77.35.{n}");
        let port = replaying(&host, vec![("callinfo all", recorded)]).await;
        let failure = poly_driver()
            .status(&poly_device(&host, port))
            .await
            .expect_err("the error answer fails the status read");
        assert_eq!(failure.kind, kind, "for {recorded:?}");
        assert!(
            failure.causes.iter().any(|c| c == recorded.trim_end()),
            "the codec's line is a cause: {:?}",
            failure.causes
        );
    }
}

//! The listener protocol's decoders on arbitrary bytes, on both sides of the wire
//! (docs/listener-protocol.md):
//!
//! - a listener reads request frames (`dial_home::frames::decode`), routes them
//!   (`server::Route::of`), reads command and status bodies (`wire::CommandBody`,
//!   `wire::StatusBody`), credentials (`secrets::password`), `Authorization` headers
//!   (`secrets::bearer`) and versions;
//! - roomlink reads the answers (`roomlink-listener-client`): `/v1/info` bodies and the version
//!   gate, command states, status lists, `readcalendar`'s events and failures, failure bodies,
//!   and the catalog error a failure answer becomes (`errors::Call::from_status`);
//!   `pushcalendar`'s `params.calendar` is part of the command bodies the listener reads.
//!
//! Never a panic, and:
//! - a decoded frame is what the JSON says, and re-encoded it decodes the same; frames that
//!   are answered `400` or dropped are exactly those the protocol says;
//! - decoded bodies re-encode to themselves; a plain credential is its password, a sealed one
//!   opens only with the right key;
//! - what one side encodes the other decodes to the same values: versions, `/v1/info` (and the
//!   gate agrees with the listener's command table), failure bodies, answer frames, request
//!   frames, sealed passwords;
//! - the error a failure answer becomes carries only its catalog row's keys and never the
//!   listener secret or the endpoint password, whatever the listener wrote.

#![no_main]

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use libfuzzer_sys::arbitrary::{Result as ArbitraryResult, Unstructured};
use libfuzzer_sys::fuzz_target;
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::error::{Error, ErrorKind};
use roomlink_domain::ids::{EndpointId, EnterpriseId, ListenerServiceId};
use roomlink_domain::rules::put;
use roomlink_listener_client::errors::Call;
use roomlink_listener_client::info::{self, Info, InfoBody, Refusal, gate, minimum_version};
use roomlink_listener_client::redact::MAX_TEXT_CHARS;
use roomlink_listener_client::wire::{self, FailureBody, StateAnswer, StatusAnswer};
use roomlink_listener_protocol::dial_home::frames::{
    AnswerBody, Decoded, RequestFrame, decode, encode,
};
use roomlink_listener_protocol::failure::{FailureKind, room_failure};
use roomlink_listener_protocol::secrets::{CredentialProblem, bearer, password};
use roomlink_listener_protocol::server::{Answer, Route, info_body, no_handler};
use roomlink_listener_protocol::version::{COMMANDS, Version, capabilities_of, commands_of};
use roomlink_listener_protocol::wire::{
    CalendarAnswer, CommandBody, Failure, StatusBody, WireCredential, WireEndpoint,
};
use serde_json::{Value, json};
use std::sync::LazyLock;

/// What no error may carry: the listener secret and the endpoint password. Neither has a
/// square bracket, so `[redacted]` next to listener text cannot spell them again.
const SECRET: &str = "s3cr3t-listener-K9";
const PASSWORD: &str = "room-pw-Q7x";

/// The listener's private key, and another one.
static KEY: LazyLock<crypto_box::SecretKey> =
    LazyLock::new(|| crypto_box::SecretKey::from_bytes([7; 32]));
static OTHER_KEY: LazyLock<crypto_box::SecretKey> =
    LazyLock::new(|| crypto_box::SecretKey::from_bytes([9; 32]));

/// The room system a failure answer is about.
static ENDPOINT: LazyLock<Endpoint> = LazyLock::new(|| {
    let body = json!({"name": "Boardroom", "ipAddress": "127.77.0.1", "port": 22,
                      "controlProtocol": "TANDBERG_SSH", "username": "admin"});
    let draft = put::insert(body.as_object().expect("an object")).expect("a valid endpoint");
    Endpoint::new(
        EndpointId::from_trusted("5f0c9289e4b0c0c6485f4cfa".to_owned()),
        EnterpriseId::from_trusted("ent".to_owned()),
        draft.profile,
        None,
    )
    .expect("a complete endpoint")
});

fuzz_target!(|data: &[u8]| {
    let json = serde_json::from_slice::<Value>(data).ok();
    listener_reads_a_frame(data, json.as_ref());
    listener_reads_a_body(data);
    roomlink_reads_an_answer(data, json.as_ref());
    if let Ok(text) = std::str::from_utf8(data) {
        reads_text(text);
    }
    // The same bytes as choices for values one side encodes and the other decodes.
    let _ = round_trips(&mut Unstructured::new(data));
});

// ---- The listener's side --------------------------------------------------------------

fn listener_reads_a_frame(data: &[u8], json: Option<&Value>) {
    let id = json.and_then(|v| v.get("id")).and_then(Value::as_u64);
    let text = |name: &str| json.and_then(|v| v.get(name)).and_then(Value::as_str);
    match decode(data) {
        Decoded::Request(request) => {
            assert_eq!(Some(request.id), id);
            assert_eq!(Some(request.method.as_str()), text("method"));
            assert_eq!(Some(request.path.as_str()), text("path"));
            let body = json.and_then(|v| v.get("body")).unwrap_or(&Value::Null);
            assert_eq!(&request.body, body);
            let again = request_frame(&request);
            assert_eq!(decode(again.as_bytes()), Decoded::Request(request.clone()));
            listener_routes(&request);
        }
        Decoded::Invalid {
            id: answered,
            failure,
        } => {
            assert!(json.is_some_and(Value::is_object));
            assert_eq!(Some(answered), id);
            assert!(text("method").is_none() || text("path").is_none());
            assert_eq!((failure.status, failure.failure), (400, "bad_request"));
            // The session answers it; roomlink reads the failure back from the frame.
            check_answer_frame(answered, &Answer::failure(&failure), Some(&failure));
        }
        Decoded::Unanswerable(reason) => {
            assert!(!reason.is_empty());
            assert!(id.is_none() || !json.is_some_and(Value::is_object));
        }
    }
}

/// The frame roomlink writes for a request.
fn request_frame(request: &RequestFrame) -> String {
    json!({"id": request.id, "method": request.method, "path": request.path, "body": request.body})
        .to_string()
}

/// What the WebSocket session does with a request: its route, then the body as bytes.
fn listener_routes(request: &RequestFrame) {
    let body = serde_json::to_vec(&request.body).expect("a JSON value writes");
    match Route::of(&request.method, &request.path) {
        Some(Route::Info) => assert_eq!(request.method, "GET"),
        Some(Route::Status) => {
            assert_eq!(request.method, "POST");
            read_status(&body);
        }
        Some(Route::Command(name)) => {
            assert_eq!(request.method, "POST");
            assert!(
                !name.is_empty() && !name.contains(['/', '?', '#']),
                "{name:?}"
            );
            assert!(request.path.starts_with("/v1/commands/"));
            read_command(&body);
        }
        None => {
            let failure = no_handler(&request.method, &request.path);
            assert_eq!((failure.status, failure.failure), (404, "no_such_handler"));
        }
    }
}

/// Over HTTP the body arrives as it was sent.
fn listener_reads_a_body(data: &[u8]) {
    read_command(data);
    read_status(data);
}

fn read_command(body: &[u8]) {
    if let Ok(command) = serde_json::from_slice::<CommandBody>(body) {
        check_endpoint(&command.endpoint);
        check_credential(command.credential.as_ref());
        let params = command.params.unwrap_or_default();
        let _ = format!("{params:?}");
    }
}

fn read_status(body: &[u8]) {
    if let Ok(status) = serde_json::from_slice::<StatusBody>(body) {
        for entry in &status.endpoints {
            check_endpoint(&entry.endpoint);
            check_credential(entry.credential.as_ref());
        }
    }
}

fn check_endpoint(endpoint: &WireEndpoint) {
    let written = serde_json::to_value(endpoint).expect("an endpoint writes");
    let back: WireEndpoint = serde_json::from_value(written.clone()).expect("and reads back");
    assert_eq!(serde_json::to_value(&back).expect("writes"), written);
    if let Some(address) = endpoint.address() {
        assert!(!address.trim().is_empty());
        assert!(endpoint.socket_text().starts_with(address));
    }
}

fn check_credential(credential: Option<&WireCredential>) {
    let without_key = password(credential, None);
    let with_key = password(credential, Some(&KEY));
    match credential {
        None | Some(WireCredential::None) => {
            assert!(matches!(without_key, Ok(None)));
            assert!(matches!(with_key, Ok(None)));
        }
        Some(WireCredential::Plain { password }) => {
            for opened in [without_key, with_key] {
                let opened = opened.expect("a plain password is taken as it is");
                assert_eq!(
                    opened.as_deref().map(String::as_str),
                    Some(password.as_str())
                );
            }
        }
        Some(WireCredential::Sealed { .. }) => {
            assert_eq!(without_key.err(), Some(CredentialProblem::NoPrivateKey));
            // Only a ciphertext sealed to KEY opens; the fuzzer cannot forge one.
            assert!(matches!(
                with_key,
                Err(CredentialProblem::Unopenable) | Ok(Some(_))
            ));
        }
    }
}

// ---- roomlink's side ---------------------------------------------------------------

fn roomlink_reads_an_answer(data: &[u8], json: Option<&Value>) {
    if let Ok(body) = serde_json::from_slice::<InfoBody>(data) {
        let version = body.version.clone();
        match Info::from_body(body) {
            Ok(info) => {
                assert_eq!(info.version_text, version);
                assert_eq!(info::Version::parse(&version), Some(info.version));
                check_gate(&info);
            }
            Err(_) => assert_eq!(info::Version::parse(&version), None),
        }
    }
    if let Ok(answer) = serde_json::from_slice::<StateAnswer>(data) {
        let _ = wire::observed(answer.state);
    }
    if let Ok(answer) = serde_json::from_slice::<StatusAnswer>(data) {
        for item in answer.statuses {
            let _ = (
                item.endpoint_id,
                item.failure,
                item.state.map(wire::observed),
            );
        }
    }
    // `readcalendar`'s answer (3.2.0): every event becomes the domain's, or is left out as the
    // protocol says (all-day, no uid); a meeting never ends before it starts.
    if let Ok(answer) = serde_json::from_slice::<CalendarAnswer>(data) {
        for read in answer.calendar.events {
            match wire::event(read.clone()) {
                Some(event) => {
                    assert_eq!(event.uid, read.uid);
                    assert!(event.end_ms >= event.start_ms, "{event:?}");
                }
                None => assert!(read.all_day || read.uid.is_empty(), "{read:?}"),
            }
        }
    }
    let failure = FailureBody::from_bytes(data);
    let named = json.and_then(|v| v.get("failure")).and_then(Value::as_str);
    assert_eq!(failure.as_ref().map(|f| f.failure.as_str()), named);

    let listener = ListenerServiceId::from_trusted("ls1".to_owned());
    // `readcalendar`'s own failures carry neither the secret nor the password either.
    if let Some(failure) = &failure {
        let reader = Call::new(&listener, "readcalendar", SECRET).with_password(Some(PASSWORD));
        if let Some(error) = reader.calendar_failure("room@example.com", failure) {
            let text = format!("{error:?} {}", error.message());
            assert!(!text.contains(SECRET) && !text.contains(PASSWORD), "{text}");
        }
    }
    let call = Call::new(&listener, "join", SECRET).with_password(Some(PASSWORD));
    for status in [400, 401, 404, 500, 501, 502, 504] {
        for endpoint in [None, Some(&*ENDPOINT)] {
            let error = call.from_status(status, data, endpoint);
            check_error(&error, status);
        }
    }
}

/// The gate never lets a command through that the listener lacks or is too old for.
fn check_gate(info: &Info) {
    let names = COMMANDS.iter().map(|(name, _)| *name);
    for command in names.chain(info.commands.iter().map(String::as_str)) {
        match gate(info, command) {
            Ok(()) => {
                assert!(info.has_command(command));
                if let Some((minimum, _)) = minimum_version(command) {
                    assert!(info.version >= minimum);
                }
            }
            Err(Refusal::TooOld { minimum }) => {
                let (needed, text) = minimum_version(command).expect("a known command");
                assert_eq!(minimum, text);
                assert!(info.version < needed);
            }
            Err(Refusal::NoCommand) => assert!(!info.has_command(command)),
        }
    }
}

fn check_error(error: &Error, status: u16) {
    const LISTENER_KINDS: [ErrorKind; 9] = [
        ErrorKind::ListenerServiceException,
        ErrorKind::NoSuchHandler,
        ErrorKind::UnknownControlProtocol,
        ErrorKind::ExternalSystemUnreachable,
        ErrorKind::ExternalSystemTimedOut,
        ErrorKind::AuthenticationFailed,
        ErrorKind::IncorrectlyProvisioned,
        ErrorKind::Unavailable,
        ErrorKind::BadCommand,
    ];
    let kind = error.kind();
    assert!(LISTENER_KINDS.contains(&kind), "{kind}");
    match status {
        401 => assert_eq!(kind, ErrorKind::ListenerServiceException),
        404 => assert_eq!(kind, ErrorKind::NoSuchHandler),
        _ => {}
    }
    for key in error.details().keys() {
        assert!(
            kind.detail_keys().contains(&key.as_str()),
            "{kind} has no {key}"
        );
    }
    let shown = format!(
        "{} {}",
        error.message(),
        Value::Object(error.details().clone())
    );
    for secret in [SECRET, PASSWORD] {
        assert!(!shown.contains(secret), "{kind} shows a secret: {shown}");
    }
    if let Some(Value::Array(causes)) = error.details().get("causes") {
        for cause in causes {
            let cause = cause.as_str().expect("causes are text");
            assert!(
                cause.chars().count() <= MAX_TEXT_CHARS + 1,
                "a cause is shortened"
            );
        }
    }
}

// ---- Text: headers and versions ------------------------------------------------------

fn reads_text(text: &str) {
    if let Some(token) = bearer(text) {
        assert!(!token.is_empty() && token == token.trim());
        assert!(text.contains(token));
    }
    // roomlink reads versions more leniently (a pre-release suffix is ignored) than a listener
    // writes them: whatever a listener accepts, roomlink reads the same.
    if let Ok(version) = text.parse::<Version>() {
        assert_eq!(version.to_string().parse::<Version>(), Ok(version));
        assert_eq!(
            info::Version::parse(text),
            info::Version::parse(&version.to_string())
        );
        assert!(info::Version::parse(text).is_some());
    }
}

// ---- One side encodes, the other decodes --------------------------------------------

fn round_trips(u: &mut Unstructured<'_>) -> ArbitraryResult<()> {
    let version = Version::new(u.arbitrary()?, u.arbitrary()?, u.arbitrary()?);
    versions(
        version,
        Version::new(u.arbitrary()?, u.arbitrary()?, u.arbitrary()?),
    );
    info(version, u)?;
    failures(u)?;
    request_frames(u)?;
    // Three X25519 operations: a few inputs in a hundred are enough, the rest stay fast (and
    // `ratio` answers true once the bytes run out, hence the negation).
    if !u.ratio(31u8, 32u8)? {
        sealed_password(u.arbitrary()?);
    }
    Ok(())
}

fn versions(a: Version, b: Version) {
    let (ta, tb) = (a.to_string(), b.to_string());
    assert_eq!(ta.parse::<Version>(), Ok(a));
    let ca = info::Version::parse(&ta).expect("roomlink reads a listener's version");
    let cb = info::Version::parse(&tb).expect("roomlink reads a listener's version");
    assert_eq!(a.cmp(&b), ca.cmp(&cb), "both sides order versions alike");
}

/// `/v1/info` as a listener of `version` writes it; roomlink's gate lets through exactly the
/// commands the listener's table gives that version.
fn info(version: Version, u: &mut Unstructured<'_>) -> ArbitraryResult<()> {
    let commands: Vec<String> = commands_of(version)
        .into_iter()
        .map(str::to_owned)
        .collect();
    let protocols: Vec<String> = u.arbitrary()?;
    let body = info_body(version, &commands, &protocols);
    let read: InfoBody = serde_json::from_value(body).expect("roomlink reads /v1/info");
    let info = Info::from_body(read).expect("a listener's version is X.Y.Z");
    assert_eq!(info.version_text, version.to_string());
    assert_eq!(info.commands, commands);
    assert_eq!(info.control_protocols, protocols);
    assert_eq!(info.capabilities, capabilities_of(&commands));
    for (command, _) in COMMANDS {
        let listed = commands.iter().any(|c| c == command);
        assert_eq!(
            gate(&info, command).is_ok(),
            listed,
            "{command} at {version}"
        );
    }
    Ok(())
}

const KINDS: [FailureKind; 7] = [
    FailureKind::Unreachable,
    FailureKind::Timeout,
    FailureKind::BadCredentials,
    FailureKind::Misprovisioned,
    FailureKind::ServerError,
    FailureKind::Ignored,
    FailureKind::UnsupportedProtocol,
];

/// A failure, over HTTP and in an answer frame, reads back as written.
fn failures(u: &mut Unstructured<'_>) -> ArbitraryResult<()> {
    let failure = if u.arbitrary()? {
        room_failure(
            *u.choose(&KINDS)?,
            u.arbitrary::<String>()?,
            u.arbitrary()?,
            u.arbitrary()?,
            u.arbitrary()?,
        )
    } else {
        let name = *u.choose(&["bad_request", "unauthorized", "no_such_handler", "internal"])?;
        Failure::listener(u.int_in_range(400..=599)?, name, u.arbitrary::<String>()?)
    };
    let body = serde_json::to_vec(&failure).expect("a failure writes");
    let read = FailureBody::from_bytes(&body).expect("roomlink reads a failure body");
    assert_failure(&read, &failure);
    check_answer_frame(u.arbitrary()?, &Answer::failure(&failure), Some(&failure));
    check_answer_frame(u.arbitrary()?, &Answer::NotProtocol(u.arbitrary()?), None);
    Ok(())
}

fn assert_failure(read: &FailureBody, written: &Failure) {
    assert_eq!(read.failure, written.failure);
    assert_eq!(read.message, written.message);
    assert_eq!(read.causes, written.causes);
    assert_eq!(read.remote_request, written.remote_request);
    assert_eq!(read.remote_response, written.remote_response);
}

/// The frame a listener sends for `answer` carries its id, status, version and body.
fn check_answer_frame(id: u64, answer: &Answer, failure: Option<&Failure>) {
    let version = Version::new(2, 25, 0);
    let body = AnswerBody::of(answer.clone()).expect("not a reset");
    let frame: Value = serde_json::from_str(&encode(id, version, body)).expect("a JSON frame");
    assert_eq!(frame["id"].as_u64(), Some(id));
    assert_eq!(frame["version"].as_str(), Some("2.25.0"));
    match answer {
        Answer::Json { status, body } => {
            assert_eq!(frame["status"].as_u64(), Some(u64::from(*status)));
            assert_eq!(&frame["body"], body);
        }
        Answer::NotProtocol(text) => {
            assert_eq!(frame["status"], 200);
            assert_eq!(frame["body"].as_str(), Some(text.as_str()));
        }
        Answer::Reset => unreachable!("no frame for a reset"),
    }
    if let Some(failure) = failure {
        let read = FailureBody::from_value(&frame["body"]).expect("a failure body");
        assert_failure(&read, failure);
    }
}

/// Request frames as roomlink writes them decode to the same request.
fn request_frames(u: &mut Unstructured<'_>) -> ArbitraryResult<()> {
    let method = *u.choose(&["GET", "POST", "PUT", "get", ""])?;
    let path = if u.arbitrary()? {
        (*u.choose(&[
            "/v1/info",
            "/v1/status",
            "/v1/commands/join",
            "/v1/commands/senddtmf?x=1",
            "/v1/commands/",
            "/v1/commands/a/b",
        ])?)
        .to_owned()
    } else {
        u.arbitrary()?
    };
    let body = match u.int_in_range(0..=2u8)? {
        0 => Value::Null,
        1 => json!({"endpoints": []}),
        _ => Value::String(u.arbitrary()?),
    };
    let request = RequestFrame {
        id: u.arbitrary()?,
        method: method.to_owned(),
        path,
        body,
    };
    assert_eq!(
        decode(request_frame(&request).as_bytes()),
        Decoded::Request(request.clone())
    );
    listener_routes(&request);
    Ok(())
}

/// roomlink seals a password to the enterprise's public key; only the listener holding the
/// private key opens it, to the same text.
fn sealed_password(text: String) {
    let sealed = KEY
        .public_key()
        .seal(&mut crypto_box::aead::OsRng, text.as_bytes())
        .expect("sealing does not fail");
    let credential = WireCredential::Sealed {
        key_id: "pk-1".to_owned(),
        ciphertext: BASE64.encode(sealed),
    };
    let opened = password(Some(&credential), Some(&KEY)).expect("the right key opens it");
    assert_eq!(opened.as_deref().map(String::as_str), Some(text.as_str()));
    assert_eq!(
        password(Some(&credential), Some(&OTHER_KEY)).err(),
        Some(CredentialProblem::Unopenable)
    );
}

//! The protocol's answers shared by every listener and both transports: failure answers, the
//! secret check, the `/v1/info` body, the answer to unknown paths, and which request a
//! method and path name ([`Route`]). Each listener answers a [`Route`] with an [`Answer`];
//! the HTTP side renders it with [`Answer::into_http`], the WebSocket side as a frame.

use crate::secrets::{SharedSecret, bearer};
use crate::version::{Version, capabilities_of};
use crate::wire::Failure;
use actix_web::http::StatusCode;
use actix_web::http::header::{AUTHORIZATION, ContentType};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse};
use serde_json::{Value, json};

/// The protocol's limit on endpoints per `POST /v1/status`.
pub const MAX_STATUS_BATCH: usize = 500;

/// Status bodies of 500 endpoints are a few hundred kilobytes; actix's default limit is 256 KiB.
/// Also the WebSocket transport's frame limit.
pub const BODY_LIMIT: usize = 16 << 20;

/// The response header naming the listener software's version.
pub const VERSION_HEADER: &str = "X-Listener-Version";

/// Which request of the protocol a method and path name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route<'a> {
    /// `GET /v1/info`
    Info,
    /// `POST /v1/commands/{command}`
    Command(&'a str),
    /// `POST /v1/status`
    Status,
}

impl<'a> Route<'a> {
    /// The route of `method` and `path` (a query string is ignored, as over HTTP); `None`
    /// for anything else, answered with [`no_handler`].
    pub fn of(method: &str, path: &'a str) -> Option<Route<'a>> {
        let path = path.split(['?', '#']).next().unwrap_or(path);
        match (method, path) {
            ("GET", "/v1/info") => Some(Route::Info),
            ("POST", "/v1/status") => Some(Route::Status),
            ("POST", _) => path
                .strip_prefix("/v1/commands/")
                .filter(|name| !name.is_empty() && !name.contains('/'))
                .map(Route::Command),
            _ => None,
        }
    }
}

/// A listener's answer to one request, whatever the transport.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A status and a JSON body (a success or a failure body).
    Json { status: u16, body: Value },
    /// A body that is not the protocol (the simulator's `listener_garbage`).
    NotProtocol(String),
    /// No answer: the connection is dropped (the simulator's `listener_reset`).
    Reset,
}

impl Answer {
    pub fn ok(body: Value) -> Answer {
        Answer::Json { status: 200, body }
    }

    /// A failure body with its status.
    pub fn failure(failure: &Failure) -> Answer {
        Answer::Json {
            status: failure.status,
            body: serde_json::to_value(failure).unwrap_or(Value::Null),
        }
    }

    /// `400 bad_request`: a body that is not the protocol.
    pub fn bad_request(message: String) -> Answer {
        Answer::failure(&Failure::listener(400, "bad_request", message))
    }

    /// The HTTP response. A reset is a body that fails before its first byte: actix-http then
    /// drops the connection with the head still unsent (h1 dispatcher: body error before the
    /// write buffer is flushed), so the client sees the connection close without any answer.
    pub fn into_http(self) -> HttpResponse {
        match self {
            Answer::Json { status, body } => {
                let status =
                    StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
                HttpResponse::build(status).json(body)
            }
            Answer::NotProtocol(text) => HttpResponse::Ok()
                .content_type(ContentType::html())
                .body(text),
            Answer::Reset => {
                let failing = futures::stream::once(async {
                    Err::<Bytes, _>(std::io::Error::new(
                        std::io::ErrorKind::ConnectionReset,
                        "simulated listener_reset",
                    ))
                });
                HttpResponse::Ok().streaming(failing)
            }
        }
    }
}

/// A failure body with its status.
pub fn failure(body: &Failure) -> HttpResponse {
    Answer::failure(body).into_http()
}

/// `400 bad_request`: a body that is not the protocol.
pub fn bad_request(message: String) -> HttpResponse {
    Answer::bad_request(message).into_http()
}

/// The failure for a method and path no handler takes: roomlink maps any 404 to `NoSuchHandler`.
pub fn no_handler(method: &str, path: &str) -> Failure {
    Failure::listener(
        404,
        "no_such_handler",
        format!("no handler for {method} {path}"),
    )
}

/// Unknown paths answer a failure body too.
pub async fn not_found(req: HttpRequest) -> HttpResponse {
    failure(&no_handler(req.method().as_str(), req.path()))
}

/// `None` when the request may proceed; otherwise the 401 answer. `expected: None` accepts
/// any secret (the simulator without `--secret`).
pub fn refuse_secret(expected: Option<&SharedSecret>, req: &HttpRequest) -> Option<HttpResponse> {
    let expected = expected?;
    let presented = req
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer);
    if presented.is_some_and(|p| expected.matches(p)) {
        return None;
    }
    tracing::warn!(
        path = req.path(),
        "refused a request without the listener secret"
    );
    Some(failure(&Failure::listener(
        401,
        "unauthorized",
        "missing or wrong listener secret",
    )))
}

/// The `GET /v1/info` body of a listener whose every control protocol can take every command
/// it has (the simulator).
pub fn info_body(version: Version, commands: &[String], control_protocols: &[String]) -> Value {
    let mut body = info_body_for(version, commands, control_protocols, control_protocols);
    // Every protocol can take every command it has, even with no protocol listed.
    body["capabilities"] = json!(capabilities_of(commands));
    body
}

/// The `GET /v1/info` body when only the rooms of `push_protocols` can be pushed their
/// calendars: `CALENDAR_PUSH` is in `capabilities` when some protocol can, and in
/// `protocolCapabilities` for those that can (listeners from 3.1.0).
pub fn info_body_for(
    version: Version,
    commands: &[String],
    control_protocols: &[String],
    push_protocols: &[String],
) -> Value {
    let all = capabilities_of(commands);
    let without_push: Vec<&str> = all
        .iter()
        .copied()
        .filter(|c| *c != "CALENDAR_PUSH")
        .collect();
    let mut per_protocol = serde_json::Map::new();
    for protocol in control_protocols {
        let list = if push_protocols.contains(protocol) {
            &all
        } else {
            &without_push
        };
        per_protocol.insert(protocol.clone(), json!(list));
    }
    let overall = if push_protocols.is_empty() {
        &without_push
    } else {
        &all
    };
    let mut body = json!({
        "version": version.to_string(),
        "protocol": 1,
        "commands": commands,
        "controlProtocols": control_protocols,
        "capabilities": overall,
    });
    if commands.iter().any(|c| c == "pushcalendar") {
        body["protocolCapabilities"] = Value::Object(per_protocol);
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_is_reported_for_the_protocols_that_can_take_it() {
        let names =
            |list: &[&str]| -> Vec<String> { list.iter().map(|s| (*s).to_owned()).collect() };
        let commands = names(&["join", "status", "pushcalendar"]);
        let protocols = names(&["TANDBERG_HTTP", "POLYCOM_HTTP_HDX"]);
        let body = info_body_for(
            Version::new(3, 1, 0),
            &commands,
            &protocols,
            &names(&["TANDBERG_HTTP"]),
        );
        assert_eq!(
            body["capabilities"],
            json!(["JOIN", "STATUS", "CALENDAR_PUSH"])
        );
        assert_eq!(
            body["protocolCapabilities"]["TANDBERG_HTTP"],
            json!(["JOIN", "STATUS", "CALENDAR_PUSH"])
        );
        assert_eq!(
            body["protocolCapabilities"]["POLYCOM_HTTP_HDX"],
            json!(["JOIN", "STATUS"])
        );
        let none = info_body_for(Version::new(3, 1, 0), &commands, &protocols, &[]);
        assert_eq!(none["capabilities"], json!(["JOIN", "STATUS"]));
        let old = info_body(Version::new(2, 25, 0), &names(&["join"]), &protocols);
        assert!(old.get("protocolCapabilities").is_none());
    }

    #[test]
    fn routes_are_the_protocols_requests() {
        assert_eq!(Route::of("GET", "/v1/info"), Some(Route::Info));
        assert_eq!(Route::of("GET", "/v1/info?x=1"), Some(Route::Info));
        assert_eq!(Route::of("POST", "/v1/status"), Some(Route::Status));
        assert_eq!(
            Route::of("POST", "/v1/commands/join"),
            Some(Route::Command("join"))
        );
        for (method, path) in [
            ("POST", "/v1/info"),
            ("GET", "/v1/status"),
            ("GET", "/v1/commands/join"),
            ("POST", "/v1/commands/"),
            ("POST", "/v1/commands/a/b"),
            ("POST", "/v2/status"),
        ] {
            assert_eq!(Route::of(method, path), None, "{method} {path}");
        }
    }
}

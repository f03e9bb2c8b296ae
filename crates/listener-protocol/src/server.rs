//! The protocol's HTTP side shared by every listener: failure answers, the secret check, the
//! `/v1/info` body and the answer to unknown paths.

use crate::secrets::{SharedSecret, bearer};
use crate::version::{Version, capabilities_of};
use crate::wire::Failure;
use actix_web::http::StatusCode;
use actix_web::http::header::AUTHORIZATION;
use actix_web::{HttpRequest, HttpResponse};
use serde_json::{Value, json};

/// The protocol's limit on endpoints per `POST /v1/status`.
pub const MAX_STATUS_BATCH: usize = 500;

/// Status bodies of 500 endpoints are a few hundred kilobytes; actix's default limit is 256 KiB.
pub const BODY_LIMIT: usize = 16 << 20;

/// The response header naming the listener software's version.
pub const VERSION_HEADER: &str = "X-Listener-Version";

/// A failure body with its status.
pub fn failure(body: &Failure) -> HttpResponse {
    let status = StatusCode::from_u16(body.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    HttpResponse::build(status).json(body)
}

/// `400 bad_request`: a body that is not the protocol.
pub fn bad_request(message: String) -> HttpResponse {
    failure(&Failure::listener(400, "bad_request", message))
}

/// Unknown paths answer a failure body too: roomlink maps any 404 to `NoSuchHandler`.
pub async fn not_found(req: HttpRequest) -> HttpResponse {
    failure(&Failure::listener(
        404,
        "no_such_handler",
        format!("no handler for {} {}", req.method(), req.path()),
    ))
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

/// The `GET /v1/info` body.
pub fn info_body(version: Version, commands: &[String], control_protocols: &[String]) -> Value {
    json!({
        "version": version.to_string(),
        "protocol": 1,
        "commands": commands,
        "controlProtocols": control_protocols,
        "capabilities": capabilities_of(commands),
    })
}

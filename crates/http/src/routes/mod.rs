//! The route table. Each operation is declared once, beside its handler, in its area's module
//! (the types: [`crate::table`]); [`TABLE`] orders them, [`configure`] registers them with actix and `openapi` describes
//! them. A path answers its own methods; any other method is `MethodNotAllowed` naming the
//! allowed ones (in its details and in `Allow`), and any unknown path is `NotFound`.

mod analytics;
mod audit;
mod calendars;
mod console;
mod control;
mod csv_export;
mod docs;
mod endpoint_list;
mod endpoints;
mod enterprise;
mod health;
mod inventory;
mod listener_link;
mod listeners;
mod live;
mod pairing;
mod probes;
mod template_drift;
mod template_jobs;
mod template_plans;
mod templates;
#[cfg(test)]
mod tests;
mod tokens;
mod webhooks;

use crate::error::ApiError;
use crate::table::Operation;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::middleware::{ErrorHandlerResponse, ErrorHandlers};
use actix_web::{HttpRequest, HttpResponse, Resource, web};
use roomlink_domain::{Error, ErrorKind};
use std::sync::Arc;

/// Every operation, in registration order. actix tries resources in the order they are
/// registered, so a path comes before any pattern that also matches it
/// (`/api/endpoints/status` and `/api/endpoints/csv` before `/api/endpoints/{id}`). A path's
/// operations, in this order, are the `allowed` list of its `MethodNotAllowed`.
pub(crate) const TABLE: &[Operation] = &[
    probes::HEALTHZ,
    probes::READYZ,
    crate::metrics::SERVE,
    docs::DOCUMENT,
    docs::REFERENCE_ROOT,
    docs::REFERENCE_FILE,
    console::SITE_ROOT,
    console::ROOT,
    console::FILE,
    tokens::LIST,
    tokens::CREATE,
    tokens::GET,
    tokens::DELETE,
    endpoint_list::LIST,
    endpoints::INSERT,
    endpoint_list::LIST_SLASH,
    endpoints::INSERT_SLASH,
    control::STATUSES,
    csv_export::EXPORT,
    endpoints::BULK_PUT,
    endpoints::BULK_POST,
    endpoints::BULK_PLAN,
    endpoints::GET,
    endpoints::REPLACE,
    endpoints::PATCH,
    endpoints::DELETE,
    control::STATUS,
    inventory::GET,
    health::ROOM_HISTORY,
    control::JOIN,
    control::SEND_DTMF,
    control::HANG_UP,
    control::MUTE,
    control::UNMUTE,
    calendars::MEETINGS,
    pairing::CURRENT,
    pairing::VIEW,
    pairing::PAIRED,
    control::FAILURES,
    control::FAILURES_SLASH,
    audit::LIST,
    analytics::USAGE,
    analytics::SESSIONS,
    inventory::LIST,
    health::ROOMS,
    live::TICKET,
    live::EVENTS,
    enterprise::GET_SELF,
    enterprise::UPDATE_SELF,
    listeners::LIST,
    listeners::CREATE,
    listeners::GET,
    listeners::REPLACE,
    listeners::DELETE,
    listener_link::CONNECT,
    calendars::LIST_ACCOUNTS,
    calendars::PUT_ACCOUNT,
    calendars::DELETE_ACCOUNT,
    webhooks::LIST,
    webhooks::CREATE,
    webhooks::GET,
    webhooks::REPLACE,
    webhooks::DELETE,
    webhooks::PAUSE,
    webhooks::RESUME,
    webhooks::TEST,
    webhooks::DELIVERIES,
    templates::LIST,
    templates::CREATE,
    templates::SETTINGS,
    templates::GET,
    templates::REPLACE,
    templates::PATCH,
    templates::DELETE,
    template_plans::PLAN,
    template_jobs::APPLY,
    template_drift::ROOMS,
    template_drift::ASSIGN,
    template_drift::UNASSIGN,
    template_drift::CHECK,
    template_drift::REAPPLY,
    template_jobs::LIST,
    template_jobs::GET,
    template_jobs::UNDO,
    template_jobs::CANCEL,
];

/// The table grouped by path, paths in first-seen order and each path's operations in table
/// order: one actix resource per path.
pub(crate) fn by_path() -> Vec<(&'static str, Vec<&'static Operation>)> {
    let mut paths: Vec<(&'static str, Vec<&'static Operation>)> = Vec::new();
    for op in TABLE {
        match paths.iter_mut().find(|(path, _)| *path == op.path) {
            Some((_, ops)) => ops.push(op),
            None => paths.push((op.path, vec![op])),
        }
    }
    paths
}

/// A resource at `path` that refuses methods other than those routed, listing them.
fn resource(path: &str, allowed: Vec<&'static str>) -> Resource {
    let allowed: Arc<[&'static str]> = allowed.into();
    web::resource(path).default_service(web::to(move |req: HttpRequest| {
        let allowed = allowed.clone();
        async move {
            let method = req.method().to_string();
            Err::<HttpResponse, _>(ApiError(
                Error::new(
                    ErrorKind::MethodNotAllowed,
                    format!("{method} is not allowed here; use {}.", allowed.join(", ")),
                )
                .with("method", method)
                .with("allowed", allowed.to_vec()),
            ))
        }
    }))
}

/// Any path no route matches: `NotFound` naming the method and the path, redacted (see
/// [`redacted_path`]).
pub async fn not_found(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    Err(ApiError(unknown_path(&req)))
}

/// The `NotFound` of a path nothing answers: the method and the redacted path in the message,
/// `entityClass: Resource` and the path as `entityId` (the catalog's only keys for NotFound).
pub(crate) fn unknown_path(req: &HttpRequest) -> Error {
    let path = redacted_path(req.path());
    let method = shorten(req.method().as_str(), 16);
    Error::new(
        ErrorKind::NotFound,
        format!("No Resource exists at {method} {path}."),
    )
    .with("entityClass", "Resource")
    .with("entityId", path)
}

/// Segments at least this long are redacted.
const REDACT_FROM_CHARS: usize = 20;
/// The longest path echoed; the rest is cut.
const ECHO_MAX_CHARS: usize = 200;

/// A request path fit to echo in an error. A mistyped path may still carry a secret (an access
/// token in `/api/auth/accesstoken/<token>`, a platform token), and tokens are long runs of
/// letters and digits. So every segment of 20 characters or more becomes `{redacted}`, whatever
/// it holds (an endpoint id too: 24 characters), as does any segment after one that begins with
/// `accesstoken` (a short token there is still a token); the result is cut at 200 characters.
/// The query string is never part of it (`HttpRequest::path` excludes it).
pub(crate) fn redacted_path(path: &str) -> String {
    let mut after_token_segment = false;
    let redacted = path
        .split('/')
        .map(|segment| {
            let secret = (after_token_segment && !segment.is_empty())
                || segment.chars().count() >= REDACT_FROM_CHARS;
            after_token_segment = segment
                .get(..TOKEN_SEGMENT.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(TOKEN_SEGMENT));
            if secret { "{redacted}" } else { segment }
        })
        .collect::<Vec<_>>()
        .join("/");
    shorten(&redacted, ECHO_MAX_CHARS)
}

/// The segment after one beginning so (`accesstokens`, `accesstoken`, any case) is a token.
const TOKEN_SEGMENT: &str = "accesstoken";

/// At most `max` characters of `text`, with `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    for (path, ops) in by_path() {
        let allowed: Vec<&'static str> = ops.iter().map(|op| op.method.as_str()).collect();
        let allow = allow_header(&allowed);
        let resource = ops.iter().fold(resource(path, allowed), |resource, op| {
            resource.route((op.handler)(web::method(op.method.actix())))
        });
        cfg.service(resource.wrap(ErrorHandlers::new().handler(
            StatusCode::METHOD_NOT_ALLOWED,
            move |mut response| {
                // RFC 9110 §15.5.6: a 405 names the methods the resource supports. Every 405
                // of the path gets it: the router's and the handlers' (an `Unmodifiable`
                // write, an unsupported `X-HTTP-Method-Override`) alike, as the resource
                // still supports the same methods.
                if let Some(allow) = &allow {
                    response.headers_mut().insert(header::ALLOW, allow.clone());
                }
                Ok(ErrorHandlerResponse::Response(
                    response.map_into_left_body(),
                ))
            },
        )));
    }
}

/// The `Allow` value listing `methods` (`GET, POST`); `None` only if one were not a token.
fn allow_header(methods: &[&str]) -> Option<HeaderValue> {
    HeaderValue::from_str(&methods.join(", ")).ok()
}

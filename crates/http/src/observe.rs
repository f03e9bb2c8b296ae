//! Request ids, the request span and log line, abuse limits and metrics.
//!
//! Every response carries `X-Request-Id` (the client's, if it sent a sane one, else a new
//! one), and every log line of the request carries it too. The request log names the route
//! pattern, never the raw path or query (they can hold tokens), and no header.
//!
//! Two layers: tracing-actix-web's `TracingLogger` with [`RequestSpan`] as its root span builder
//! opens the span (around the body stream too, so a streamed list's logs keep the id) and writes
//! the request log; [`observe`] inside it applies the limits, counts, and sets the response
//! header, which a root span builder cannot (it sees the response only by reference).
//! The default root span builder is not used: it records the raw target (`http.target`, query
//! string included, where access tokens may be) and its own UUID as the request id.

use crate::AppState;
use crate::caller;
use crate::error::ApiError;
use crate::limits::too_many_requests;
use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::{HttpMessage, HttpRequest, web};
use roomlink_domain::ErrorKind;
use roomlink_domain::ports::IdGenerator;
use roomlink_domain::system::RandomIds;
use std::time::Instant;
use tracing::Span;
use tracing_actix_web::RootSpanBuilder;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Our request id, for [`observe`] to echo. (tracing-actix-web also stores a UUID of its own
/// in the request; nothing of ours reads it.)
#[derive(Clone)]
struct RequestId(String);

/// When the request came in, for the log's and the metrics' latency.
#[derive(Clone, Copy)]
struct Started(Instant);

fn request_id(req: &ServiceRequest) -> String {
    req.headers()
        .get(&REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            (1..=64).contains(&v.len())
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .map(str::to_owned)
        .unwrap_or_else(|| RandomIds.entity_id())
}

fn route_pattern(req: &HttpRequest) -> String {
    req.match_pattern()
        .unwrap_or_else(|| "(unmatched)".to_owned())
}

/// The root span of every request: our request id and the method, nothing from the target or
/// the headers.
pub struct RequestSpan;

impl RootSpanBuilder for RequestSpan {
    fn on_request_start(req: &ServiceRequest) -> Span {
        let id = request_id(req);
        let span = tracing::info_span!("request", request_id = %id, method = %req.method());
        let mut extensions = req.extensions_mut();
        extensions.insert(RequestId(id));
        extensions.insert(Started(Instant::now()));
        span
    }

    /// The request log line; tracing-actix-web calls this inside the span.
    fn on_request_end<B: MessageBody>(
        _span: Span,
        outcome: &Result<ServiceResponse<B>, actix_web::Error>,
    ) {
        match outcome {
            Ok(response) => {
                let req = response.request();
                let elapsed = req
                    .extensions()
                    .get::<Started>()
                    .map(|s| s.0.elapsed())
                    .unwrap_or_default();
                tracing::info!(
                    route = %route_pattern(req),
                    status = response.status().as_u16(),
                    elapsed_ms = elapsed.as_secs_f64() * 1000.0,
                    "request completed"
                );
            }
            // A middleware failed; the request (and so its route) is gone with it.
            Err(e) => tracing::info!(
                status = e.as_response_error().status_code().as_u16(),
                "request completed"
            ),
        }
    }
}

/// The bytes the request's headers take on the wire (name, ": ", value, CRLF).
fn header_bytes(req: &ServiceRequest) -> usize {
    req.headers()
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum()
}

/// Refuses what the limits refuse, before routing, authentication or body reading.
fn refusal(req: &ServiceRequest, state: &AppState) -> Option<ApiError> {
    let limiter = &state.limiter;
    if let Err(e) = limiter.check_headers(header_bytes(req)) {
        return Some(ApiError(e));
    }
    let address = req.peer_addr().map(|a| a.ip());
    let token = caller::token_text(req.request());
    match limiter.admit(address, token.as_deref()) {
        Ok(()) => None,
        Err((limit, retry_after)) => {
            state.metrics.record_limited(limit.name());
            Some(ApiError(too_many_requests(limit, retry_after)))
        }
    }
}

pub async fn observe(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<EitherBody<impl MessageBody>>, actix_web::Error> {
    let (id, started) = {
        let extensions = req.extensions();
        (
            extensions.get::<RequestId>().cloned(),
            extensions.get::<Started>().map(|s| s.0),
        )
    };
    // Without the span builder in front (an App put together by hand), still an id.
    let id = id.unwrap_or_else(|| RequestId(request_id(&req)));
    let started = started.unwrap_or_else(Instant::now);
    let state = req.app_data::<web::Data<AppState>>().cloned();
    let refused = state.as_ref().and_then(|s| refusal(&req, s));
    let mut response = match refused {
        Some(error) => req.into_response(error.render()).map_into_right_body(),
        None => next.call(req).await?.map_into_left_body(),
    };
    if let Some(state) = &state {
        let status = response.status().as_u16();
        let failure = response
            .response()
            .extensions()
            .get::<ErrorKind>()
            .map(|k| k.name());
        let request = response.request();
        state.metrics.record(
            request.method(),
            &route_pattern(request),
            status,
            started.elapsed(),
            failure,
        );
    }
    if let Ok(value) = HeaderValue::from_str(&id.0) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    Ok(response)
}

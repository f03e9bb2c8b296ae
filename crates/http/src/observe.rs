//! The outer middleware: request ids, abuse limits, request logs and metrics.
//!
//! Every response carries `X-Request-Id` (the client's, if it sent a sane one, else a new
//! one), and every log line of the request carries it too. The request log names the route
//! pattern, never the raw path or query (they can hold tokens), and no header.

use crate::AppState;
use crate::caller;
use crate::error::ApiError;
use crate::limits::too_many_requests;
use actix_web::body::{EitherBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
use actix_web::web;
use roomlink_domain::ErrorKind;
use roomlink_domain::ports::IdGenerator;
use roomlink_domain::system::RandomIds;
use std::time::Instant;
use tracing::Instrument;

pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

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
    let id = request_id(&req);
    let span = tracing::info_span!("request", request_id = %id, method = %req.method());
    let started = Instant::now();
    let state = req.app_data::<web::Data<AppState>>().cloned();
    let refused = state.as_ref().and_then(|s| refusal(&req, s));
    let mut response = match refused {
        Some(error) => {
            let _entered = span.enter();
            req.into_response(error.render()).map_into_right_body()
        }
        None => next
            .call(req)
            .instrument(span.clone())
            .await?
            .map_into_left_body(),
    };
    let route = response
        .request()
        .match_pattern()
        .unwrap_or_else(|| "(unmatched)".to_owned());
    let status = response.status().as_u16();
    let elapsed = started.elapsed();
    if let Some(state) = &state {
        if status == 401
            && let Some(peer) = response.request().peer_addr()
        {
            state.limiter.failed_authentication(peer.ip());
        }
        let failure = response
            .response()
            .extensions()
            .get::<ErrorKind>()
            .map(|k| k.name());
        let method = response.request().method();
        state
            .metrics
            .record(method, &route, status, elapsed, failure);
    }
    let _entered = span.enter();
    tracing::info!(
        route = %route,
        status,
        elapsed_ms = elapsed.as_secs_f64() * 1000.0,
        "request completed"
    );
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    Ok(response)
}

//! Request ids and request logs.
//!
//! Every response carries `X-Request-Id` (the client's, if it sent a sane one, else a new
//! one), and every log line of the request carries it too. The request log names the route
//! pattern, never the raw path or query (they can hold tokens), and no header.

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::header::{HeaderName, HeaderValue};
use actix_web::middleware::Next;
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

pub async fn observe(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let id = request_id(&req);
    let span = tracing::info_span!("request", request_id = %id, method = %req.method());
    let started = Instant::now();
    let mut response = next.call(req).instrument(span.clone()).await?;
    let route = response
        .request()
        .match_pattern()
        .unwrap_or_else(|| "(unmatched)".to_owned());
    let _entered = span.enter();
    tracing::info!(
        route = %route,
        status = response.status().as_u16(),
        elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
        "request completed"
    );
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID, value);
    }
    Ok(response)
}

//! Rendering of catalog errors. Every failure a client sees goes through [`ApiError`]: the
//! status, `errorCode` and `errorName` come from the domain's catalog table alone.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};
use roomlink_domain::{Error, ErrorKind};
use serde::Serialize;
use std::fmt;

/// A domain error on its way to the client.
pub struct ApiError(pub Error);

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        ApiError(e)
    }
}

impl fmt::Debug for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Body<'a> {
    error_code: i64,
    error_name: &'a str,
    error_message: &'a str,
    error_details: &'a serde_json::Map<String, serde_json::Value>,
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        StatusCode::from_u16(self.0.kind().status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    }

    fn error_response(&self) -> HttpResponse {
        let e = &self.0;
        if e.kind() == ErrorKind::TooManyRequests {
            // Refusals come in floods (a throttled guesser); the request log has each one.
            return self.render();
        }
        if e.kind().status() >= 500 {
            // The cause goes to the log only; `Display` of the error includes it.
            tracing::error!(error = %e, "request failed");
        } else {
            tracing::info!(
                error_name = e.kind().name(),
                message = e.message(),
                "request refused"
            );
        }
        self.render()
    }
}

impl ApiError {
    /// The response, without logging (the request log still records it): for refusals that
    /// come in floods, such as rate limits.
    pub fn render(&self) -> HttpResponse {
        let e = &self.0;
        let body = Body {
            error_code: e.kind().code(),
            error_name: e.kind().name(),
            error_message: e.message(),
            error_details: e.details(),
        };
        let mut response = HttpResponse::build(self.status_code());
        if let Some(Ok(seconds)) = e
            .details()
            .get("retryAfterSeconds")
            .map(|v| HeaderValue::from_str(&v.to_string()))
        {
            response.insert_header((header::RETRY_AFTER, seconds));
        }
        if e.kind() == ErrorKind::NotAuthenticated || e.kind() == ErrorKind::BadCredentialsException
        {
            response.insert_header((
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"roomlink\""),
            ));
        }
        let mut response = response.json(body);
        // For metrics: the catalog name of the failure.
        response.extensions_mut().insert(e.kind());
        response
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

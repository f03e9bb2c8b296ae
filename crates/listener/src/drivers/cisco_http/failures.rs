//! From an HTTP answer or a transport error to the driver's failure, with what an operator
//! needs to see (the request and the answer's head, cookies redacted).

use super::Reply;
use crate::driver::{Device, DriverFailure};
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use roomlink_listener_protocol::failure::FailureKind;

/// `HTTP/1.1 401 Unauthorized` and the headers worth showing (cookies redacted).
pub(super) fn response_head(status: StatusCode, headers: &HeaderMap) -> String {
    let mut text = format!(
        "HTTP/1.1 {} {}",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    let shown = [
        ("content-type", "Content-Type"),
        ("location", "Location"),
        ("www-authenticate", "WWW-Authenticate"),
        ("retry-after", "Retry-After"),
    ];
    for (name, title) in shown {
        for value in headers.get_all(name) {
            text.push_str(&format!("\n{title}: {}", value.to_str().unwrap_or("?")));
        }
    }
    if headers.contains_key("set-cookie") {
        text.push_str("\nSet-Cookie: [redacted]");
    }
    text
}

/// The `SessionId` a `Set-Cookie` header gives.
pub(super) fn session_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.split(';').next())
        .filter_map(|pair| pair.trim().strip_prefix("SessionId="))
        .find(|id| !id.is_empty())
        .map(str::to_owned)
}

pub(super) fn refused_login(device: &Device, reply: Reply) -> DriverFailure {
    DriverFailure::new(
        FailureKind::BadCredentials,
        format!(
            "{} refused the login of user {:?}",
            device.address,
            device.username()
        ),
    )
    .cause(format!("HTTP {}", reply.status))
    .exchange(Some(reply.request_text), Some(reply.response_text))
}

pub(super) fn http_failure(device: &Device, reply: Reply) -> DriverFailure {
    let code = reply.status.as_u16();
    let (kind, message) = match code {
        403 => (
            FailureKind::Misprovisioned,
            format!("{} forbids this to the user (role)", device.address),
        ),
        404 | 405 => (
            FailureKind::Misprovisioned,
            format!(
                "{} has no Cisco XML API at this address and port",
                device.address
            ),
        ),
        503 => (
            FailureKind::ServerError,
            format!("{} is busy (rate limit, HTTP 503)", device.address),
        ),
        _ => (
            FailureKind::ServerError,
            format!("{} answered HTTP {code}", device.address),
        ),
    };
    DriverFailure::new(kind, message)
        .cause(format!("HTTP {}", reply.status))
        .exchange(Some(reply.request_text), Some(reply.response_text))
}

pub(super) fn not_the_api(device: &Device, reply: Reply) -> DriverFailure {
    DriverFailure::new(
        FailureKind::Misprovisioned,
        format!(
            "{} did not answer as a Cisco codec's XML API",
            device.address
        ),
    )
    .cause("the answer is not the expected XML")
    .exchange(Some(reply.request_text), Some(reply.response_text))
}

pub(super) fn error_chain(error: &reqwest::Error) -> Vec<String> {
    let mut causes = vec![error.to_string()];
    let mut source = std::error::Error::source(error);
    while let Some(e) = source {
        let text = e.to_string();
        if !causes.contains(&text) {
            causes.push(text);
        }
        source = e.source();
    }
    causes
}

/// The TLS error under a request error, if the failure was TLS's.
pub(super) fn rustls_error(error: &reqwest::Error) -> Option<&rustls::Error> {
    let mut next: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(error);
    while let Some(e) = next {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        // io::Error's `source` skips the error it wraps (and connectors nest io::Errors).
        next = match e
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            Some(inner) => Some(inner as &(dyn std::error::Error + 'static)),
            None => e.source(),
        };
    }
    None
}

/// A TLS error in words (a pin mismatch says which fingerprint was seen).
pub(super) fn tls_cause(error: &rustls::Error) -> String {
    match error {
        rustls::Error::InvalidCertificate(rustls::CertificateError::Other(other)) => {
            other.0.to_string()
        }
        other => other.to_string(),
    }
}

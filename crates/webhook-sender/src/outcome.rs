//! What an attempt came to, in the words recorded with a delivery. The words are this
//! crate's own: the client's error messages may name the URL, and a URL can carry a
//! receiver's token.

use crate::target::Refused;
use roomlink_domain::webhook::AttemptOutcome;
use std::error::Error as _;
use std::time::Duration;

/// The outcome of an answer with `status`: delivered for a 2xx, failed otherwise.
pub fn answered(status: u16) -> AttemptOutcome {
    let error = match status {
        200..=299 => None,
        300..=399 => Some(format!("HTTP {status}: redirects are not followed")),
        _ => Some(format!("HTTP {status}")),
    };
    AttemptOutcome {
        status: Some(status),
        error,
    }
}

/// An attempt that got no answer, for `why`.
pub fn failed(why: impl Into<String>) -> AttemptOutcome {
    AttemptOutcome {
        status: None,
        error: Some(why.into()),
    }
}

/// An attempt the client could not complete. `error` has had its URL removed already.
pub fn transport(error: &reqwest::Error, timeout: Duration) -> AttemptOutcome {
    failed(transport_words(error, timeout))
}

fn transport_words(error: &reqwest::Error, timeout: Duration) -> String {
    if error.is_builder() {
        // Only the headers can be wrong here: the URL was parsed already.
        return "the request could not be built: the event id is not a valid header value"
            .to_owned();
    }
    if error.is_timeout() {
        return format!("timed out after {}", duration_words(timeout));
    }
    let mut source = error.source();
    while let Some(cause) = source {
        if let Some(refused) = cause.downcast_ref::<Refused>() {
            return refused.0.clone();
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return io_words(io);
        }
        source = cause.source();
    }
    if error.is_connect() {
        "the connection failed".to_owned()
    } else if error.is_body() {
        "sending the body failed".to_owned()
    } else {
        "no valid answer came (the connection closed or the answer was not HTTP)".to_owned()
    }
}

fn io_words(io: &std::io::Error) -> String {
    use std::io::ErrorKind::*;
    match io.kind() {
        // What rustls found wrong (a certificate, a protocol version): it never saw the
        // URL's path or query, only the host name.
        InvalidData if io.get_ref().is_some() => format!("the TLS handshake failed: {io}"),
        ConnectionRefused => "connection refused".to_owned(),
        ConnectionReset => "connection reset by the receiver".to_owned(),
        ConnectionAborted | BrokenPipe | UnexpectedEof => {
            "the connection closed without an answer".to_owned()
        }
        TimedOut => "the connection timed out".to_owned(),
        // ErrorKind's own words ("network unreachable", ...) name no URL.
        other => format!("the connection failed: {other}"),
    }
}

/// `10 s`, `1.5 s`, `300 ms`.
pub fn duration_words(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms >= 1_000 && ms.is_multiple_of(1_000) {
        format!("{} s", ms / 1_000)
    } else if ms >= 1_000 {
        format!("{:.1} s", duration.as_secs_f64())
    } else {
        format!("{ms} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_2xx_is_delivered() {
        assert!(answered(200).delivered() && answered(204).delivered());
        assert_eq!(answered(500).error.as_deref(), Some("HTTP 500"));
        assert_eq!(
            answered(302).error.as_deref(),
            Some("HTTP 302: redirects are not followed")
        );
        assert!(!answered(302).delivered() && !answered(404).delivered());
        assert!(!failed("connection refused").delivered());
    }

    #[test]
    fn says_durations_as_people_do() {
        assert_eq!(duration_words(Duration::from_secs(10)), "10 s");
        assert_eq!(duration_words(Duration::from_millis(1_500)), "1.5 s");
        assert_eq!(duration_words(Duration::from_millis(300)), "300 ms");
    }
}

//! HTTP as every reader does it: one client configuration, bounded answers, failure messages
//! that name the calendar and the host but never a credential, a URL or a body, and the one
//! request loop that rides out throttling and server errors.
//!
//! The request loop's rules ([`send`]), the same for every calendar system:
//! - 429 and 503: wait what `Retry-After` asks (in seconds) when it is at most
//!   [`MAX_RETRY_AFTER`], and retry, at most [`THROTTLE_RETRIES`] times; without a
//!   `Retry-After`, wait [`THROTTLE_WAIT`]. A longer `Retry-After` (or an HTTP date), or
//!   throttling past the retries, fails at once saying "throttled" and the `Retry-After`: a
//!   read behind a room's request should not hang for minutes, and the next read tries again.
//! - Any other 5xx: one retry after [`SERVER_ERROR_WAIT`], then a failure naming the status.
//! - Transport failures (cannot connect, no answer within [`TIMEOUT`]) fail at once.
//! - Any other status is the caller's to read.

use crate::pace::Pace;
use roomlink_domain::error::Error;
use std::fmt::Display;
use std::time::Duration;

/// The most an answer may hold (a room's week is a few hundred kilobytes at most).
pub(crate) const MAX_BODY: usize = 16 * 1024 * 1024;
pub(crate) const TIMEOUT: Duration = Duration::from_secs(15);

/// The longest `Retry-After` waited for.
pub(crate) const MAX_RETRY_AFTER: Duration = Duration::from_secs(10);
/// How many times one request is retried after 429 or 503.
pub(crate) const THROTTLE_RETRIES: u32 = 2;
/// The wait after a 429 or 503 without `Retry-After`.
pub(crate) const THROTTLE_WAIT: Duration = Duration::from_secs(1);
/// The wait before the one retry after another 5xx.
pub(crate) const SERVER_ERROR_WAIT: Duration = Duration::from_millis(500);

/// A client that follows no redirect (credentials go to the configured server only) and gives
/// up on a request after [`TIMEOUT`].
pub(crate) fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_default()
}

/// A URL from a calendar account (`what` names it: "base URL", "token URL"): http(s), without
/// credentials in it.
pub(crate) fn account_url(text: &str, what: &str) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(text)
        .map_err(|e| format!("the account's {what} is not a URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https")
        || !url.username().is_empty()
        || url.password().is_some()
        || url.cannot_be_a_base()
    {
        return Err(format!(
            "the account's {what} must be an http(s) URL without credentials in it"
        ));
    }
    Ok(url)
}

/// `url`'s host, for failure messages.
pub(crate) fn host(url: &reqwest::Url) -> String {
    url.host_str().unwrap_or("?").to_owned()
}

/// Whether a link an API answered may be followed with its token: the same scheme, host and
/// port as the account's `base`, and no credentials in it.
pub(crate) fn on_same_server(link: &reqwest::Url, base: &reqwest::Url) -> bool {
    link.username().is_empty() && link.password().is_none() && same_origin(link, base)
}

/// Whether `a` and `b` have the same scheme, host and port.
fn same_origin(a: &reqwest::Url, b: &reqwest::Url) -> bool {
    a.scheme() == b.scheme()
        && a.host() == b.host()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// What a reader's failures say: `"{service} {host}, calendar {calendarId}: {what}"`.
pub(crate) struct Failures<'a> {
    /// "Microsoft Graph", "Google Calendar".
    pub service: &'static str,
    pub calendar_id: &'a str,
}

impl Failures<'_> {
    /// A failure before any server is involved (the account's settings).
    pub(crate) fn account(&self, what: impl Display) -> Error {
        Error::calendar_server(
            self.calendar_id,
            format!("{}, calendar {}: {what}", self.service, self.calendar_id),
        )
    }

    /// A failure of the calendar API at `host`.
    pub(crate) fn api(&self, host: &str, what: impl Display) -> Error {
        Error::calendar_server(
            self.calendar_id,
            format!(
                "{} {host}, calendar {}: {what}",
                self.service, self.calendar_id
            ),
        )
    }

    /// A failure of the token endpoint at `host`.
    pub(crate) fn token(&self, host: &str, what: impl Display) -> Error {
        Error::calendar_server(
            self.calendar_id,
            format!(
                "{} token endpoint {host}, calendar {}: {what}",
                self.service, self.calendar_id
            ),
        )
    }

    /// The API at `host` answered 404 for the calendar.
    pub(crate) fn no_calendar(&self, host: &str, status: reqwest::StatusCode) -> Error {
        Error::calendar_server(
            self.calendar_id,
            format!(
                "{} {host} has no calendar {} ({status})",
                self.service, self.calendar_id
            ),
        )
    }
}

/// What went wrong on the way, without the URL (reqwest's messages include it).
pub(crate) fn describe_transport(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        format!("no answer within {} s", TIMEOUT.as_secs())
    } else if e.is_connect() {
        "cannot connect".to_owned()
    } else {
        "the request failed".to_owned()
    }
}

/// The answer's body as text, at most `max` bytes of it.
pub(crate) async fn read_limited(
    mut response: reqwest::Response,
    max: usize,
) -> Result<String, String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| describe_transport(&e))? {
        if body.len() + chunk.len() > max {
            return Err(if max >= 1 << 20 {
                format!("answered more than {} MiB", max >> 20)
            } else {
                format!("answered more than {} KiB", max >> 10)
            });
        }
        body.extend_from_slice(&chunk);
    }
    String::from_utf8(body).map_err(|_| "answered text that is not UTF-8".to_owned())
}

/// A `Retry-After` header as this loop reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RetryAfter {
    Absent,
    Seconds(u64),
    /// An HTTP date or anything else that is not delta-seconds.
    Unreadable,
}

impl RetryAfter {
    fn of(response: &reqwest::Response) -> Self {
        match response.headers().get(reqwest::header::RETRY_AFTER) {
            None => RetryAfter::Absent,
            Some(value) => value
                .to_str()
                .ok()
                .map(str::trim)
                .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|v| v.parse().ok())
                .map_or(RetryAfter::Unreadable, RetryAfter::Seconds),
        }
    }

    /// How long to wait before retrying, if this asks for a wait short enough.
    fn wait(self) -> Option<Duration> {
        match self {
            RetryAfter::Absent => Some(THROTTLE_WAIT),
            RetryAfter::Seconds(s) => {
                Some(Duration::from_secs(s)).filter(|wait| *wait <= MAX_RETRY_AFTER)
            }
            RetryAfter::Unreadable => None,
        }
    }
}

impl Display for RetryAfter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RetryAfter::Absent => f.write_str("no Retry-After"),
            RetryAfter::Seconds(s) => write!(f, "Retry-After: {s} s"),
            RetryAfter::Unreadable => f.write_str("a Retry-After that is not in seconds"),
        }
    }
}

/// Sends the request `build` makes to `host` when `pace` gives it a turn, again as the
/// module's rules say, and hands back the first answer that is neither throttling nor a server
/// error. `Err` says what failed (no URL in it). Throttling holds the whole host (see
/// [`Pace::hold`]), so the retry waits its turn behind the `Retry-After`.
pub(crate) async fn send(
    pace: &Pace,
    host: &str,
    build: impl Fn() -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, String> {
    let mut throttled = 0;
    let mut server_errors = 0;
    loop {
        pace.turn(host).await?;
        let response = build().send().await.map_err(|e| describe_transport(&e))?;
        let status = response.status();
        let wait = match status.as_u16() {
            429 | 503 => {
                let retry_after = RetryAfter::of(&response);
                // Every request to the host waits, this one's retry included (its next turn).
                match retry_after {
                    RetryAfter::Seconds(s) => pace.hold(host, Duration::from_secs(s)),
                    RetryAfter::Absent => pace.hold(host, THROTTLE_WAIT),
                    RetryAfter::Unreadable => {}
                }
                match retry_after.wait() {
                    Some(_) if throttled < THROTTLE_RETRIES => {
                        throttled += 1;
                        Duration::ZERO
                    }
                    _ => return Err(format!("throttled ({status}, {retry_after})")),
                }
            }
            500..=599 if server_errors == 0 => {
                server_errors += 1;
                SERVER_ERROR_WAIT
            }
            500..=599 => return Err(format!("answered {status}")),
            _ => return Ok(response),
        };
        drop(response);
        tracing::debug!(%status, wait_ms = wait.as_millis(), "calendar request retried");
        tokio::time::sleep(wait).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_urls_are_http_without_credentials() {
        assert!(account_url("https://graph.microsoft.com/v1.0", "base URL").is_ok());
        for bad in [
            "https://user:pw@graph.microsoft.com/v1.0",
            "https://user@graph.microsoft.com/",
            "file:///etc/passwd",
            "mailto:x@example.com",
            "graph.microsoft.com",
        ] {
            let e = account_url(bad, "base URL").unwrap_err();
            assert!(!e.contains("pw@"), "{e}");
            assert!(e.contains("base URL"), "{e}");
        }
    }

    #[test]
    fn origins() {
        let url = |s: &str| reqwest::Url::parse(s).unwrap();
        let base = url("https://graph.microsoft.com/v1.0");
        assert!(on_same_server(
            &url("https://graph.microsoft.com:443/v1.0/users/x/calendarView?$skip=10"),
            &base,
        ));
        for other in [
            "http://graph.microsoft.com/v1.0",
            "https://graph.microsoft.com:8443/v1.0",
            "https://evil.example/v1.0",
            "https://graph.microsoft.com.evil.example/v1.0",
            "https://user:pw@graph.microsoft.com/v1.0",
        ] {
            assert!(!on_same_server(&url(other), &base), "{other}");
        }
    }

    #[test]
    fn retry_after_waits() {
        assert_eq!(RetryAfter::Absent.wait(), Some(THROTTLE_WAIT));
        assert_eq!(
            RetryAfter::Seconds(10).wait(),
            Some(Duration::from_secs(10))
        );
        assert_eq!(RetryAfter::Seconds(11).wait(), None);
        assert_eq!(RetryAfter::Seconds(3600).wait(), None);
        assert_eq!(RetryAfter::Unreadable.wait(), None);
        assert_eq!(RetryAfter::Seconds(3600).to_string(), "Retry-After: 3600 s");
    }
}

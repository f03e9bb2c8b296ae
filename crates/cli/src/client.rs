//! The roomlink API over HTTP (blocking: a command does one thing at a time), and the one
//! error type every command returns.

use reqwest::Url;
use reqwest::blocking::{Client as Http, RequestBuilder, Response};
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use serde_json::Value;
use std::fmt;
use std::time::Duration;

/// Why a command failed. Shown to the user as one line; never holds a secret.
#[derive(Debug)]
pub enum CliError {
    /// A catalog error body from the service.
    Api {
        status: u16,
        name: String,
        code: Option<i64>,
        message: String,
    },
    /// Anything else: bad input, an unreadable file, an unreachable service.
    Other(String),
}

impl CliError {
    pub fn other(message: impl Into<String>) -> Self {
        CliError::Other(message.into())
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Api {
                status,
                name,
                code,
                message,
            } => {
                write!(f, "{name}")?;
                if let Some(code) = code {
                    write!(f, " ({code})")?;
                }
                write!(f, ": {message} [HTTP {status}]")
            }
            CliError::Other(message) => f.write_str(message),
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(e: std::io::Error) -> Self {
        CliError::Other(e.to_string())
    }
}

/// A reqwest failure without its URL: a path may hold a token (`token delete VALUE`).
fn transport(e: reqwest::Error) -> CliError {
    let e = e.without_url();
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else {
        "request failed"
    };
    // The chain of causes says why (refused, DNS, TLS) without naming the URL.
    let mut message = format!("{kind}: {e}");
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    CliError::Other(message)
}

/// How requests authenticate.
#[derive(Clone)]
pub enum Auth {
    Token(String),
    Basic { username: String, password: String },
    None,
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Auth::Token(_) => f.write_str("Token(<redacted>)"),
            Auth::Basic { username, .. } => write!(f, "Basic({username}, <redacted>)"),
            Auth::None => f.write_str("None"),
        }
    }
}

pub struct Client {
    base: Url,
    http: Http,
    auth: Auth,
}

impl Client {
    pub fn new(base: &str, auth: Auth, timeout: Duration) -> Result<Client, CliError> {
        let mut base = Url::parse(base.trim())
            .map_err(|e| CliError::other(format!("the service URL '{base}' is not valid: {e}")))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(CliError::other(format!(
                "the service URL must start with http:// or https://, not {}://",
                base.scheme()
            )));
        }
        // Paths are appended as segments below; a trailing slash would add an empty one.
        if base.path().ends_with('/') {
            let trimmed = base.path().trim_end_matches('/').to_owned();
            base.set_path(&trimmed);
        }
        let http = Http::builder()
            .timeout(timeout)
            .user_agent(concat!("roomlinkctl/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(transport)?;
        Ok(Client { base, http, auth })
    }

    pub fn auth(&self) -> &Auth {
        &self.auth
    }

    /// The URL of `segments` under the base (each percent-encoded), with a query.
    pub fn url(&self, segments: &[&str], query: &[(&str, &str)]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(segments);
        }
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        url
    }

    pub fn request(&self, method: reqwest::Method, url: Url) -> RequestBuilder {
        let request = self.http.request(method, url);
        match &self.auth {
            Auth::Token(token) => request.header("X-Access-Token", token),
            Auth::Basic { username, password } => request.basic_auth(username, Some(password)),
            Auth::None => request,
        }
    }

    /// Sends; a non-2xx answer becomes [`CliError::Api`] (or a short `Other` if not a catalog body).
    pub fn send(&self, request: RequestBuilder) -> Result<Response, CliError> {
        let response = request.send().map_err(transport)?;
        if response.status().is_success() {
            return Ok(response);
        }
        let unauthorized = response.status() == reqwest::StatusCode::UNAUTHORIZED;
        match api_error(response) {
            // The usual first mistake is the right token sent to the wrong service (roomlinkctl
            // talks to 127.0.0.1:8080 unless told otherwise): say where it went.
            CliError::Api {
                status,
                name,
                code,
                message,
            } if unauthorized => Err(CliError::Api {
                status,
                name,
                code,
                message: format!(
                    "{message} (asked {}: set ROOMLINKCTL_URL or --url if that is not your \
                     roomlink, and ROOMLINKCTL_TOKEN or --token for its token)",
                    self.shown_base()
                ),
            }),
            other => Err(other),
        }
    }

    /// The service URL as it may be shown: without any user name or password in it.
    fn shown_base(&self) -> String {
        let mut shown = self.base.clone();
        let _ = shown.set_username("");
        let _ = shown.set_password(None);
        shown.to_string()
    }

    pub fn get_json(&self, segments: &[&str]) -> Result<Value, CliError> {
        let url = self.url(segments, &[]);
        json_body(self.send(self.request(reqwest::Method::GET, url))?)
    }

    /// One page of a paged listing (the audit log, the inventory): its items, and the next
    /// page's cursor (`X-Next-Cursor`) when there is one. `what` names the listing in errors.
    pub fn page(
        &self,
        segments: &[&str],
        query: &[(&str, &str)],
        what: &str,
    ) -> Result<(Vec<Value>, Option<String>), CliError> {
        let url = self.url(segments, query);
        let response = self.send(self.request(reqwest::Method::GET, url))?;
        let next = response
            .headers()
            .get("X-Next-Cursor")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        match json_body(response)? {
            Value::Array(items) => Ok((items, next)),
            _ => Err(CliError::other(format!(
                "the service answered {what} page that is not a list"
            ))),
        }
    }
}

/// The body of a successful answer as JSON (`null` when empty, as for 204).
pub fn json_body(response: Response) -> Result<Value, CliError> {
    let bytes = response.bytes().map_err(transport)?;
    if bytes.is_empty() {
        return Ok(Value::Null);
    }
    serde_json::from_slice(&bytes).map_err(|e| {
        CliError::other(format!(
            "the service answered something that is not JSON: {e}"
        ))
    })
}

fn api_error(response: Response) -> CliError {
    let status = response.status();
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v: &HeaderValue| v.to_str().ok())
        .is_some_and(|v| v.contains("json"));
    let bytes = response.bytes().unwrap_or_default();
    let body: Option<Value> = if is_json {
        serde_json::from_slice(&bytes).ok()
    } else {
        None
    };
    match body {
        Some(body) if body.get("errorName").is_some() => CliError::Api {
            status: status.as_u16(),
            name: body["errorName"].as_str().unwrap_or("Error").to_owned(),
            code: body["errorCode"].as_i64(),
            message: body["errorMessage"]
                .as_str()
                .unwrap_or("(no message)")
                .to_owned(),
        },
        _ => {
            // Not roomlink's catalog (a proxy page?): its first line, briefly.
            let text = String::from_utf8_lossy(&bytes);
            let first = text.lines().next().unwrap_or("").trim();
            let first: String = first.chars().take(200).collect();
            CliError::Other(format!(
                "the service answered HTTP {status} without a catalog error body{}",
                if first.is_empty() {
                    String::new()
                } else {
                    format!(": {first}")
                }
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_encode_segments_and_keep_a_base_path() {
        let c = Client::new("http://h:1/prefix/", Auth::None, Duration::from_secs(1)).unwrap();
        let url = c.url(&["api", "endpoints", "a/b"], &[("meetingid", "1 2&")]);
        assert_eq!(
            url.as_str(),
            "http://h:1/prefix/api/endpoints/a%2Fb?meetingid=1+2%26"
        );
        let c = Client::new("http://h:1", Auth::None, Duration::from_secs(1)).unwrap();
        assert_eq!(c.url(&["api"], &[]).as_str(), "http://h:1/api");
        assert!(Client::new("ftp://h", Auth::None, Duration::from_secs(1)).is_err());
    }

    #[test]
    fn the_service_url_is_shown_without_credentials() {
        let c = Client::new(
            "http://ops:hunter2@h:1/prefix",
            Auth::None,
            Duration::from_secs(1),
        )
        .unwrap();
        assert_eq!(c.shown_base(), "http://h:1/prefix");
    }

    #[test]
    fn secrets_are_redacted_in_debug() {
        let a = Auth::Basic {
            username: "ops".into(),
            password: "hunter2".into(),
        };
        assert!(!format!("{a:?}").contains("hunter2"));
        assert!(!format!("{:?}", Auth::Token("tok".into())).contains("tok"));
    }

    #[test]
    fn catalog_errors_are_one_line() {
        let e = CliError::Api {
            status: 404,
            name: "NotFound".into(),
            code: Some(1),
            message: "Endpoint x was not found.".into(),
        };
        assert_eq!(
            e.to_string(),
            "NotFound (1): Endpoint x was not found. [HTTP 404]"
        );
    }
}

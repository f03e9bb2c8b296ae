//! OAuth 2.0 access tokens for the calendar APIs, their cache, and the one authorized GET both
//! the Microsoft Graph and the Google reader make.
//!
//! Rules:
//! - A token is asked for with the form the reader builds (client credentials, RFC 6749 §4.4;
//!   a JWT bearer assertion, RFC 7523), POSTed to the account's token URL through the same
//!   request loop as the API's ([`crate::http::send`]: throttling and 5xx retried alike).
//! - The answer is `{"access_token", "expires_in", "token_type": "Bearer"}`; the token is kept
//!   until [`EXPIRY_MARGIN`] before it expires (monotonic time), per token URL, client and
//!   secret: an account naming another's client id or service account with a different secret
//!   never rides the other's token. Tokens that live shorter than the margin are used once.
//! - 401 from the API: the cached token is dropped and a new one fetched, once per request; a
//!   second 401, or 400/401/403 from the token endpoint, "refused the account". 403 from the
//!   API (the application lacks the calendar permission) too.
//! - 404 from the API: the calendar does not exist.
//! - Tokens, secrets, assertions and bodies appear in no message and no log line.

use crate::http::{self, Failures, MAX_BODY};
use crate::pace::Pace;
use roomlink_domain::error::Result;
use roomlink_domain::ports::CalendarAccount;
use roomlink_domain::secret::Secret;
use rsa::sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::time::Instant;

/// How long before its expiry a cached token stops being used.
pub(crate) const EXPIRY_MARGIN: Duration = Duration::from_secs(60);
/// The most a token answer may hold.
const MAX_TOKEN_BODY: usize = 64 * 1024;

/// Whose token: the token URL, the client (Graph's application id, Google's service account)
/// and a SHA-256 of the secret (never the secret itself).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct TokenKey {
    token_url: String,
    client: String,
    secret: Vec<u8>,
}

impl TokenKey {
    pub(crate) fn new(token_url: &reqwest::Url, client: &str, secret: &Secret) -> Self {
        TokenKey {
            token_url: token_url.as_str().to_owned(),
            client: client.to_owned(),
            secret: Sha256::digest(secret.expose().as_bytes()).to_vec(),
        }
    }
}

/// How a reader gets a token for one account.
pub(crate) struct Grant<'a> {
    pub token_url: reqwest::Url,
    pub key: TokenKey,
    /// Builds the token request's form body (`application/x-www-form-urlencoded`); called only
    /// when a new token is needed. `Err` says what is wrong with the account's settings.
    pub form: &'a (dyn Fn() -> std::result::Result<String, String> + Send + Sync),
}

/// A 2xx answer of the API.
pub(crate) struct Answer {
    pub body: String,
    /// The `Date` header as sent, if any.
    pub date: Option<String>,
}

struct Cached {
    token: Secret,
    until: Instant,
}

/// An HTTP client with a token cache.
pub(crate) struct OAuthClient {
    http: reqwest::Client,
    pace: Arc<Pace>,
    tokens: Mutex<HashMap<TokenKey, Cached>>,
}

impl OAuthClient {
    pub(crate) fn new(pace: Arc<Pace>) -> Self {
        OAuthClient {
            http: http::client(),
            pace,
            tokens: Mutex::new(HashMap::new()),
        }
    }

    /// GETs `url` with a bearer token (and `headers`), as the module's rules say; the body of
    /// the 2xx answer.
    pub(crate) async fn get(
        &self,
        failures: &Failures<'_>,
        grant: &Grant<'_>,
        url: &reqwest::Url,
        headers: &[(&str, &str)],
    ) -> Result<String> {
        match self.fetch(failures, grant, url, headers, &[]).await? {
            Ok(answer) => Ok(answer.body),
            Err(status) => Err(failures.api(&http::host(url), format!("answered {status}"))),
        }
    }

    /// [`get`](Self::get), but a status in `passed` (410 Gone: an expired change token) is
    /// handed back as `Err(status)` for the caller to decide, and the 2xx answer comes with
    /// its `Date` header (the server's clock).
    pub(crate) async fn fetch(
        &self,
        failures: &Failures<'_>,
        grant: &Grant<'_>,
        url: &reqwest::Url,
        headers: &[(&str, &str)],
        passed: &[u16],
    ) -> Result<std::result::Result<Answer, reqwest::StatusCode>> {
        let host = http::host(url);
        let mut refreshed = false;
        loop {
            let token = self.token(failures, grant).await?;
            let response = http::send(&self.pace, &host, || {
                let mut request = self.http.get(url.clone()).bearer_auth(token.expose());
                for (name, value) in headers {
                    request = request.header(*name, *value);
                }
                request
            })
            .await
            .map_err(|what| failures.api(&host, what))?;
            let status = response.status();
            match status.as_u16() {
                200..=299 => {
                    let date = response
                        .headers()
                        .get(reqwest::header::DATE)
                        .and_then(|d| d.to_str().ok())
                        .map(str::to_owned);
                    let body = http::read_limited(response, MAX_BODY)
                        .await
                        .map_err(|what| failures.api(&host, what))?;
                    return Ok(Ok(Answer { body, date }));
                }
                code if passed.contains(&code) => return Ok(Err(status)),
                401 if !refreshed => {
                    self.forget(&grant.key);
                    refreshed = true;
                }
                401 | 403 => {
                    return Err(failures.api(&host, format!("refused the account ({status})")));
                }
                404 => return Err(failures.no_calendar(&host, status)),
                _ => return Err(failures.api(&host, format!("answered {status}"))),
            }
        }
    }

    /// The cached token for the grant's key, or a new one.
    async fn token(&self, failures: &Failures<'_>, grant: &Grant<'_>) -> Result<Secret> {
        if let Some(token) = self.cached(&grant.key) {
            return Ok(token);
        }
        let host = http::host(&grant.token_url);
        let form = (grant.form)().map_err(|what| failures.account(what))?;
        let response = http::send(&self.pace, &host, || {
            self.http
                .post(grant.token_url.clone())
                .header(
                    reqwest::header::CONTENT_TYPE,
                    "application/x-www-form-urlencoded",
                )
                .header(reqwest::header::ACCEPT, "application/json")
                .body(form.clone())
        })
        .await
        .map_err(|what| failures.token(&host, what))?;
        let status = response.status();
        match status.as_u16() {
            200 => {}
            400 | 401 | 403 => {
                return Err(failures.token(&host, format!("refused the account ({status})")));
            }
            _ => return Err(failures.token(&host, format!("answered {status}"))),
        }
        let body = http::read_limited(response, MAX_TOKEN_BODY)
            .await
            .map_err(|what| failures.token(&host, what))?;
        let (token, lifetime) = token_answer(&body).map_err(|what| failures.token(&host, what))?;
        if let Some(usable) = lifetime.checked_sub(EXPIRY_MARGIN).filter(|d| !d.is_zero()) {
            let now = Instant::now();
            let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
            tokens.retain(|_, cached| cached.until > now);
            tokens.insert(
                grant.key.clone(),
                Cached {
                    token: token.clone(),
                    until: now + usable,
                },
            );
        }
        Ok(token)
    }

    fn cached(&self, key: &TokenKey) -> Option<Secret> {
        let tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        tokens
            .get(key)
            .filter(|cached| cached.until > Instant::now())
            .map(|cached| cached.token.clone())
    }

    fn forget(&self, key: &TokenKey) {
        let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        tokens.remove(key);
    }
}

/// The token and its lifetime from a token endpoint's answer. The `Err` never quotes the body
/// (it holds the token).
fn token_answer(body: &str) -> std::result::Result<(Secret, Duration), String> {
    let unreadable = |what: &str| format!("answered a token {what}");
    let answer: serde_json::Value =
        serde_json::from_str(body).map_err(|_| unreadable("answer that is not JSON"))?;
    let token = answer
        .get("access_token")
        .and_then(serde_json::Value::as_str)
        .filter(|t| !t.is_empty())
        .ok_or_else(|| unreadable("answer without access_token"))?;
    match answer.get("token_type").and_then(serde_json::Value::as_str) {
        Some(kind) if kind.eq_ignore_ascii_case("bearer") => {}
        _ => return Err(unreadable("that is not a Bearer token")),
    }
    // A number, or (Azure AD's v1 endpoints) a string of digits.
    let lifetime = match answer.get("expires_in") {
        Some(serde_json::Value::Number(n)) => n.as_u64(),
        Some(serde_json::Value::String(s)) => s.parse().ok(),
        _ => None,
    }
    .ok_or_else(|| unreadable("answer without a readable expires_in"))?;
    Ok((Secret::new(token), Duration::from_secs(lifetime)))
}

/// What an OAuth account must name, as its reader words it when missing.
pub(crate) struct Required {
    /// Shown after "the account has no token URL", e.g. where to find it.
    pub token_url_hint: &'static str,
    /// The username's meaning: "application (client) id", "service account email".
    pub client: &'static str,
    /// The secret's meaning: "client secret", "private key".
    pub secret: &'static str,
}

/// An OAuth account's parts, checked: the API's base URL, the token URL (also its text, which
/// Google signs as the audience), the client and its secret.
pub(crate) struct OAuthAccount<'a> {
    pub base: reqwest::Url,
    pub token_url: reqwest::Url,
    pub token_url_text: &'a str,
    pub client: &'a str,
    pub secret: &'a Secret,
}

impl<'a> OAuthAccount<'a> {
    pub(crate) fn of(
        account: &'a CalendarAccount,
        failures: &Failures<'_>,
        required: &Required,
    ) -> Result<Self> {
        let base = http::account_url(&account.base_url, "base URL")
            .map_err(|what| failures.account(what))?;
        let token_url_text = account.token_url.as_deref().ok_or_else(|| {
            failures.account(format!(
                "the account has no token URL ({})",
                required.token_url_hint
            ))
        })?;
        let token_url = http::account_url(token_url_text, "token URL")
            .map_err(|what| failures.account(what))?;
        let client = account
            .username
            .as_deref()
            .filter(|id| !id.is_empty())
            .ok_or_else(|| failures.account(format!("the account has no {}", required.client)))?;
        let secret = account
            .secret
            .as_ref()
            .filter(|s| !s.expose().is_empty())
            .ok_or_else(|| failures.account(format!("the account has no {}", required.secret)))?;
        Ok(OAuthAccount {
            base,
            token_url,
            token_url_text,
            client,
            secret,
        })
    }
}

/// The `CalendarReader` of an OAuth reader, whose `run(account, calendar_id, from_ms, to_ms,
/// since)` does the work: a plain read keeps no marks, `events_since` passes the kept one.
macro_rules! calendar_reader {
    ($reader:ty) => {
        #[async_trait::async_trait]
        impl roomlink_domain::ports::CalendarReader for $reader {
            async fn events(
                &self,
                account: &roomlink_domain::ports::CalendarAccount,
                calendar_id: &str,
                from_ms: i64,
                to_ms: i64,
            ) -> roomlink_domain::error::Result<Vec<roomlink_domain::calendar::CalendarEvent>> {
                self.run(
                    account,
                    calendar_id,
                    from_ms,
                    to_ms,
                    crate::readers::Since::NoMarks,
                )
                .await?
                .into_events(calendar_id)
            }

            async fn events_since(
                &self,
                account: &roomlink_domain::ports::CalendarAccount,
                calendar_id: &str,
                from_ms: i64,
                to_ms: i64,
                since: Option<String>,
            ) -> roomlink_domain::error::Result<roomlink_domain::ports::CalendarRead> {
                self.run(
                    account,
                    calendar_id,
                    from_ms,
                    to_ms,
                    crate::readers::Since::Mark(since),
                )
                .await
            }
        }
    };
}
pub(crate) use calendar_reader;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_answers() {
        let (token, lifetime) =
            token_answer(r#"{"token_type":"Bearer","expires_in":3599,"access_token":"eyJ0.a.b"}"#)
                .unwrap();
        assert_eq!(token.expose(), "eyJ0.a.b");
        assert_eq!(lifetime, Duration::from_secs(3599));
        let (_, lifetime) =
            token_answer(r#"{"token_type":"bearer","expires_in":"3600","access_token":"t"}"#)
                .unwrap();
        assert_eq!(lifetime, Duration::from_secs(3600));
        for bad in [
            "not json sekrit",
            r#"{"token_type":"Bearer","expires_in":3599}"#,
            r#"{"token_type":"Bearer","expires_in":3599,"access_token":""}"#,
            r#"{"token_type":"mac","expires_in":3599,"access_token":"sekrit"}"#,
            r#"{"expires_in":3599,"access_token":"sekrit"}"#,
            r#"{"token_type":"Bearer","expires_in":-1,"access_token":"sekrit"}"#,
            r#"{"token_type":"Bearer","access_token":"sekrit"}"#,
        ] {
            let e = token_answer(bad).unwrap_err();
            assert!(!e.contains("sekrit"), "{e}");
        }
    }

    #[test]
    fn keys_differ_by_secret() {
        let url = reqwest::Url::parse("https://login.example/token").unwrap();
        let a = TokenKey::new(&url, "app", &Secret::new("one"));
        assert_eq!(a, TokenKey::new(&url, "app", &Secret::new("one")));
        assert_ne!(a, TokenKey::new(&url, "app", &Secret::new("two")));
        assert_ne!(a, TokenKey::new(&url, "other", &Secret::new("one")));
        assert!(!format!("{a:?}").contains("one"));
    }
}

//! HTTP to the identity provider: one shared client, client authentication, bounded answers,
//! and failures described without a secret.

use super::config::{OAuth2Config, OAuth2ConfigError};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use reqwest::redirect::Policy;
use reqwest::{StatusCode, Url};
use roomlink_domain::Error;
use std::fmt;
use std::time::Duration;

/// Larger answers are refused: introspection and token responses are a few kilobytes.
const MAX_BODY: usize = 1 << 20;

/// An endpoint of the provider, with the form of its URL that may appear in errors.
pub(super) struct Endpoint {
    url: Url,
    /// Scheme, host, port and path: the query could carry a key, so it is left out.
    shown: String,
}

impl Endpoint {
    pub(super) fn parse(key: &'static str, raw: &str) -> Result<Self, OAuth2ConfigError> {
        let invalid = |reason: &str| OAuth2ConfigError::Url {
            key,
            reason: reason.to_owned(),
        };
        let url = Url::parse(raw).map_err(|e| invalid(&e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(invalid("the scheme must be http or https"));
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err(invalid(
                "credentials belong in client_id and client_secret, not in the URL",
            ));
        }
        let host = url.host_str().ok_or_else(|| invalid("no host"))?;
        let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
        let shown = format!("{}://{host}{port}{}", url.scheme(), url.path());
        Ok(Endpoint { url, shown })
    }

    /// An internal error about this endpoint: the message names its URL, never a secret.
    pub(super) fn failure(&self, what: impl fmt::Display) -> Error {
        Error::internal(format!("identity provider {}: {what}", self.shown))
    }
}

/// A complete answer of the provider.
pub(super) struct Answer {
    pub(super) status: StatusCode,
    pub(super) body: Vec<u8>,
}

pub(super) struct Transport {
    http: reqwest::Client,
    /// `Basic` client authentication, marked sensitive so it is never logged by the stack.
    authorization: HeaderValue,
    timeout: Duration,
}

impl Transport {
    pub(super) fn new(config: &OAuth2Config) -> Result<Self, OAuth2ConfigError> {
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout)
            // A redirect could carry the credentials in the form to another host.
            .redirect(Policy::none())
            .user_agent(concat!("roomlink/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| OAuth2ConfigError::Client(describe(&e)))?;
        Ok(Transport {
            http,
            authorization: basic_authorization(&config.client_id, &config.client_secret)?,
            timeout: config.timeout,
        })
    }

    /// POSTs an already encoded `application/x-www-form-urlencoded` body.
    pub(super) async fn post_form(
        &self,
        endpoint: &Endpoint,
        form: String,
    ) -> Result<Answer, Error> {
        let mut response = self
            .http
            .post(endpoint.url.clone())
            .header(AUTHORIZATION, self.authorization.clone())
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(ACCEPT, "application/json")
            .body(form)
            .send()
            .await
            .map_err(|e| self.transport_failure(endpoint, e))?;
        let status = response.status();
        let too_large = || {
            endpoint.failure(format!(
                "HTTP {status} with an answer over {MAX_BODY} bytes"
            ))
        };
        if response
            .content_length()
            .is_some_and(|n| n > MAX_BODY as u64)
        {
            return Err(too_large());
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.transport_failure(endpoint, e))?
        {
            if body.len() + chunk.len() > MAX_BODY {
                return Err(too_large());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Answer { status, body })
    }

    // reqwest's errors never hold the request body (where the token or password travels);
    // the URL is dropped so that only the endpoint's shown form appears.
    fn transport_failure(&self, endpoint: &Endpoint, e: reqwest::Error) -> Error {
        let e = e.without_url();
        if e.is_timeout() {
            endpoint.failure(format_args!(
                "no answer within {} ms ({})",
                self.timeout.as_millis(),
                describe(&e)
            ))
        } else if e.is_connect() {
            endpoint.failure(format_args!("unreachable ({})", describe(&e)))
        } else {
            endpoint.failure(format_args!("request failed ({})", describe(&e)))
        }
    }
}

/// RFC 6749 §2.3.1: client id and secret are form-encoded, then joined for HTTP Basic.
fn basic_authorization(
    client_id: &str,
    client_secret: &str,
) -> Result<HeaderValue, OAuth2ConfigError> {
    let encode = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    let credentials = BASE64.encode(format!("{}:{}", encode(client_id), encode(client_secret)));
    // Base64 is always a valid header value; the error branch only keeps clippy quiet.
    let mut value = HeaderValue::from_str(&format!("Basic {credentials}"))
        .map_err(|_| OAuth2ConfigError::Client("invalid client credentials header".to_owned()))?;
    value.set_sensitive(true);
    Ok(value)
}

/// An error and its sources on one line (reqwest's own text says little).
fn describe(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_credentials_are_form_encoded_before_base64() {
        let value = basic_authorization("room link", "a:b&c").unwrap();
        assert!(value.is_sensitive());
        let expected = format!("Basic {}", BASE64.encode("room+link:a%3Ab%26c"));
        assert_eq!(value.to_str().unwrap(), expected);
    }

    #[test]
    fn endpoints_hide_queries_and_refuse_credentials() {
        let e = Endpoint::parse("token_url", "https://idp.example:8443/t?key=k1").unwrap();
        assert_eq!(e.shown, "https://idp.example:8443/t");
        assert!(Endpoint::parse("token_url", "https://u:p@idp.example/t").is_err());
        assert!(Endpoint::parse("token_url", "ftp://idp.example/t").is_err());
        let Err(err) = Endpoint::parse("introspection_url", "not a url") else {
            panic!("a relative URL was accepted");
        };
        assert!(
            err.to_string()
                .contains("platform.oauth2.introspection_url")
        );
    }
}

//! The companion platform as an OAuth2 identity provider.
//!
//! - Access tokens: token introspection (RFC 7662) at `introspection_url`.
//! - Username and password: the resource owner password grant (RFC 6749 §4.3) at
//!   `token_url`; the issued access token is then introspected, so both paths map the same
//!   claims (see [`ClaimMapping`]).
//!
//! roomlink authenticates as a client with HTTP Basic at both endpoints. Answers are cached
//! for `cache_ttl` under salted SHA-256 digests of the credentials: active and inactive
//! tokens alike (to blunt floods of bad tokens), and accepted passwords only. So a revoked
//! token or a changed password may still work for up to `cache_ttl`.
//!
//! A refusal (inactive token, `invalid_grant`) is `Ok(None)`. Anything else (unreachable,
//! slow, an unexpected status or body, a configured claim missing from an active token) is
//! `Error::internal` with a cause naming the endpoint, and never a token, password or the
//! client secret.

mod cache;
mod claims;
mod config;
mod transport;

pub use config::{ClaimMapping, OAuth2Config, OAuth2ConfigError};

use async_trait::async_trait;
use cache::{Key, TtlCache};
use roomlink_domain::Result;
use roomlink_domain::ports::{PlatformIdentity, PlatformUser};
use roomlink_domain::secret::Secret;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::fmt;
use transport::{Answer, Endpoint, Transport};

/// Bound on each cache; see [`TtlCache`].
const MAX_CACHE_ENTRIES: usize = 10_000;

/// `PlatformIdentity` backed by the platform's OAuth2 provider. Cheap to share.
pub struct OAuth2Platform {
    config: OAuth2Config,
    transport: Transport,
    token_endpoint: Endpoint,
    introspection_endpoint: Endpoint,
    /// Per-process salt of the cache keys, so no plain digest of a password sits in memory.
    salt: [u8; 32],
    tokens: TtlCache<Option<PlatformUser>>,
    passwords: TtlCache<PlatformUser>,
}

impl fmt::Debug for OAuth2Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth2Platform")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl OAuth2Platform {
    /// Checks the configuration and builds the HTTP client; makes no request.
    pub fn new(config: OAuth2Config) -> std::result::Result<Self, OAuth2ConfigError> {
        if config.client_id.is_empty() {
            return Err(OAuth2ConfigError::NoClientId);
        }
        if config.timeout.is_zero() {
            return Err(OAuth2ConfigError::NoTimeout);
        }
        if let Some((key, _)) = config
            .claims
            .entries()
            .into_iter()
            .find(|(_, c)| c.is_empty())
        {
            return Err(OAuth2ConfigError::NoClaim(key));
        }
        let mut salt = [0u8; 32];
        getrandom::fill(&mut salt).map_err(|e| OAuth2ConfigError::Random(e.to_string()))?;
        Ok(OAuth2Platform {
            token_endpoint: Endpoint::parse("token_url", &config.token_url)?,
            introspection_endpoint: Endpoint::parse(
                "introspection_url",
                &config.introspection_url,
            )?,
            transport: Transport::new(&config)?,
            salt,
            tokens: TtlCache::new(config.cache_ttl, MAX_CACHE_ENTRIES),
            passwords: TtlCache::new(config.cache_ttl, MAX_CACHE_ENTRIES),
            config,
        })
    }

    pub fn config(&self) -> &OAuth2Config {
        &self.config
    }

    /// A cache key: the domain tag keeps tokens and passwords apart, the lengths keep
    /// (username, password) pairs from colliding.
    fn key(&self, tag: &[u8], parts: &[&str]) -> Key {
        let mut digest = Sha256::new();
        digest.update(self.salt);
        digest.update(tag);
        for part in parts {
            digest.update((part.len() as u64).to_be_bytes());
            digest.update(part.as_bytes());
        }
        digest.finalize().into()
    }

    /// RFC 7662 §2.1: whether the provider deems the token active, and whose it is.
    async fn introspect_uncached(&self, token: &str) -> Result<Option<PlatformUser>> {
        let endpoint = &self.introspection_endpoint;
        let form = form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .append_pair("token_type_hint", "access_token")
            .finish();
        let answer = self.transport.post_form(endpoint, form).await?;
        if answer.status != reqwest::StatusCode::OK {
            return Err(endpoint.failure(format_args!(
                "introspection answered HTTP {}",
                answer.status
            )));
        }
        let claims = json_object(endpoint, &answer, "introspection")?;
        match claims.get("active").and_then(claims::as_bool) {
            Some(false) => Ok(None),
            Some(true) => claims::to_user(
                &claims,
                &self.config.claims,
                self.config.zero_touch_scope.as_deref(),
            )
            .map(Some)
            .map_err(|e| endpoint.failure(format_args!("active token, but {e}"))),
            None => {
                Err(endpoint.failure("the introspection answer has no boolean `active` member"))
            }
        }
    }

    /// RFC 6749 §4.3: the access token the provider issues for these credentials, or `None`
    /// if it refuses them (`invalid_grant`).
    async fn password_grant(&self, username: &str, password: &Secret) -> Result<Option<String>> {
        let endpoint = &self.token_endpoint;
        // The serializer is not Send: finish it before the await.
        let form = {
            let mut form = form_urlencoded::Serializer::new(String::new());
            form.append_pair("grant_type", "password")
                .append_pair("username", username)
                .append_pair("password", password.expose());
            if let Some(scope) = &self.config.scope {
                form.append_pair("scope", scope);
            }
            form.finish()
        };
        let answer = self.transport.post_form(endpoint, form).await?;
        let status = answer.status;
        if status == reqwest::StatusCode::OK {
            let body = json_object(endpoint, &answer, "token")?;
            return match body.get("access_token").and_then(Value::as_str) {
                Some(token) if !token.is_empty() => Ok(Some(token.to_owned())),
                _ => Err(endpoint.failure("the token answer has no access_token")),
            };
        }
        // RFC 6749 §5.2 says 400; some providers answer invalid_grant with 401.
        if matches!(status.as_u16(), 400 | 401) {
            let code = oauth_error_code(&answer.body);
            if code.as_deref() == Some("invalid_grant") {
                return Ok(None);
            }
            let code = code.unwrap_or_else(|| "no OAuth2 error code".to_owned());
            return Err(endpoint.failure(format_args!(
                "the password grant answered HTTP {status} ({code})"
            )));
        }
        Err(endpoint.failure(format_args!("the password grant answered HTTP {status}")))
    }
}

#[async_trait]
impl PlatformIdentity for OAuth2Platform {
    async fn verify_password(
        &self,
        username: &str,
        password: &Secret,
    ) -> Result<Option<PlatformUser>> {
        // Blank credentials never pass; no need to ask.
        if username.is_empty() || password.expose().is_empty() {
            return Ok(None);
        }
        let key = self.key(b"password", &[username, password.expose()]);
        if let Some(user) = self.passwords.get(&key) {
            return Ok(Some(user));
        }
        let Some(token) = self.password_grant(username, password).await? else {
            // Refusals are not cached: a user who mistyped may retry at once.
            return Ok(None);
        };
        match self.introspect_uncached(&token).await? {
            Some(user) => {
                self.passwords.insert(key, user.clone());
                Ok(Some(user))
            }
            None => Err(self
                .introspection_endpoint
                .failure("the token just issued by the password grant is reported inactive")),
        }
    }

    async fn introspect(&self, token: &Secret) -> Result<Option<PlatformUser>> {
        if token.expose().is_empty() {
            return Ok(None);
        }
        let key = self.key(b"token", &[token.expose()]);
        if let Some(answer) = self.tokens.get(&key) {
            return Ok(answer);
        }
        let answer = self.introspect_uncached(token.expose()).await?;
        self.tokens.insert(key, answer.clone());
        Ok(answer)
    }
}

/// The answer as a JSON object. serde_json's messages can quote the input, so only the
/// position of a syntax error is reported.
fn json_object(endpoint: &Endpoint, answer: &Answer, what: &str) -> Result<Map<String, Value>> {
    match serde_json::from_slice::<Value>(&answer.body) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(endpoint.failure(format_args!(
            "the {what} answer (HTTP {}) is JSON but not an object",
            answer.status
        ))),
        Err(e) => Err(endpoint.failure(format_args!(
            "the {what} answer (HTTP {}) is not JSON (line {}, column {})",
            answer.status,
            e.line(),
            e.column()
        ))),
    }
}

/// The `error` code of an OAuth2 error answer (RFC 6749 §5.2), if it looks like one: a
/// provider could put anything there, and only a plain code is safe to repeat in a log.
fn oauth_error_code(body: &[u8]) -> Option<String> {
    let body: Value = serde_json::from_slice(body).ok()?;
    let code = body.get("error")?.as_str()?;
    let plain = !code.is_empty()
        && code.len() <= 64
        && code.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    plain.then(|| code.to_owned())
}

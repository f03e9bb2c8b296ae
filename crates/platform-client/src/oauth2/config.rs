//! The adapter's configuration: the section `platform.oauth2` of the binary's settings.

use serde::{Deserialize, Deserializer};
use std::fmt;
use std::time::Duration;

/// How to reach the platform's OAuth2 identity provider (section `platform.oauth2`).
///
/// Durations are read in milliseconds (`timeout_ms`, `cache_ttl_ms`), like the binary's other
/// settings, so they can also come from environment variables.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuth2Config {
    /// The token endpoint (RFC 6749 §3.2), for the resource owner password grant.
    pub token_url: String,
    /// The introspection endpoint (RFC 7662).
    pub introspection_url: String,
    /// The client roomlink authenticates as (HTTP Basic) at both endpoints.
    pub client_id: String,
    /// Never printed: the manual `Debug` below redacts it.
    pub client_secret: String,
    /// `scope` requested by the password grant; none = the provider's default.
    #[serde(default)]
    pub scope: Option<String>,
    /// Which introspection claims give the user's fields.
    #[serde(default)]
    pub claims: ClaimMapping,
    /// A scope that, when the token carries it, grants Zero Touch (besides the claim).
    #[serde(default)]
    pub zero_touch_scope: Option<String>,
    /// Bound on each request to the provider, connecting included.
    #[serde(
        rename = "timeout_ms",
        default = "default_timeout",
        deserialize_with = "millis"
    )]
    pub timeout: Duration,
    /// How long an answer is reused; zero disables the cache.
    #[serde(
        rename = "cache_ttl_ms",
        default = "default_cache_ttl",
        deserialize_with = "millis"
    )]
    pub cache_ttl: Duration,
}

impl OAuth2Config {
    /// A configuration with the default claims, timeout and cache lifetime.
    pub fn new(
        token_url: impl Into<String>,
        introspection_url: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        OAuth2Config {
            token_url: token_url.into(),
            introspection_url: introspection_url.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            scope: None,
            claims: ClaimMapping::default(),
            zero_touch_scope: None,
            timeout: default_timeout(),
            cache_ttl: default_cache_ttl(),
        }
    }
}

impl fmt::Debug for OAuth2Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth2Config")
            .field("token_url", &self.token_url)
            .field("introspection_url", &self.introspection_url)
            .field("client_id", &self.client_id)
            .field("client_secret", &"[redacted]")
            .field("scope", &self.scope)
            .field("claims", &self.claims)
            .field("zero_touch_scope", &self.zero_touch_scope)
            .field("timeout", &self.timeout)
            .field("cache_ttl", &self.cache_ttl)
            .finish()
    }
}

/// The introspection claim read for each field of the platform user.
///
/// A name is first looked up as a top-level member (so URI-style names containing dots
/// work), then as a dotted path into nested objects (`"ext.enterprise"`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClaimMapping {
    /// Required: a JSON integer or a numeric string.
    pub platform_id: String,
    /// Required: the platform username (its e-mail address).
    pub username: String,
    /// Required: the enterprise name.
    pub enterprise: String,
    /// Optional boolean (JSON bool or "true"/"false"); absent = false.
    pub enterprise_admin: String,
    /// Optional string.
    pub first_name: String,
    /// Optional string.
    pub last_name: String,
    /// Optional boolean; see also [`OAuth2Config::zero_touch_scope`].
    pub zero_touch: String,
}

impl Default for ClaimMapping {
    fn default() -> Self {
        ClaimMapping {
            platform_id: "platform_id".to_owned(),
            username: "username".to_owned(),
            enterprise: "enterprise".to_owned(),
            enterprise_admin: "enterprise_admin".to_owned(),
            first_name: "given_name".to_owned(),
            last_name: "family_name".to_owned(),
            zero_touch: "zero_touch".to_owned(),
        }
    }
}

impl ClaimMapping {
    /// (setting key, claim name) of each field, for validation.
    pub(super) fn entries(&self) -> [(&'static str, &str); 7] {
        [
            ("platform_id", &self.platform_id),
            ("username", &self.username),
            ("enterprise", &self.enterprise),
            ("enterprise_admin", &self.enterprise_admin),
            ("first_name", &self.first_name),
            ("last_name", &self.last_name),
            ("zero_touch", &self.zero_touch),
        ]
    }
}

/// Why an [`OAuth2Config`] cannot be used. Never quotes the client secret.
#[derive(Debug, thiserror::Error)]
pub enum OAuth2ConfigError {
    #[error("platform.oauth2.{key} is not a usable http(s) URL: {reason}")]
    Url { key: &'static str, reason: String },
    #[error("platform.oauth2.client_id must not be empty")]
    NoClientId,
    #[error("platform.oauth2.timeout_ms must be greater than zero")]
    NoTimeout,
    #[error("platform.oauth2.claims.{0} must name a claim")]
    NoClaim(&'static str),
    #[error("cannot build the identity provider's HTTP client: {0}")]
    Client(String),
    #[error("the operating system's random source failed: {0}")]
    Random(String),
}

fn default_timeout() -> Duration {
    Duration::from_secs(5)
}

fn default_cache_ttl() -> Duration {
    Duration::from_secs(30)
}

fn millis<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    u64::deserialize(d).map(Duration::from_millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Settings {
        platform: Platform,
    }
    #[derive(Deserialize)]
    struct Platform {
        oauth2: OAuth2Config,
    }

    #[test]
    fn reads_the_section_with_defaults() {
        let s: Settings = toml::from_str(
            r#"
[platform.oauth2]
token_url = "https://idp.example/token"
introspection_url = "https://idp.example/introspect"
client_id = "roomlink"
client_secret = "hunter2"
"#,
        )
        .unwrap();
        let c = s.platform.oauth2;
        assert_eq!(c.timeout, Duration::from_secs(5));
        assert_eq!(c.cache_ttl, Duration::from_secs(30));
        assert_eq!(c.claims, ClaimMapping::default());
        assert_eq!(c.scope, None);
        assert_eq!(c.zero_touch_scope, None);
        assert!(!format!("{c:?}").contains("hunter2"));
    }

    #[test]
    fn reads_every_key() {
        let s: Settings = toml::from_str(
            r#"
[platform.oauth2]
token_url = "https://idp.example/token"
introspection_url = "https://idp.example/introspect"
client_id = "roomlink"
client_secret = "hunter2"
scope = "openid roomlink"
zero_touch_scope = "roomlink:zero-touch"
timeout_ms = 1500
cache_ttl_ms = 0
[platform.oauth2.claims]
platform_id = "sub_id"
enterprise = "ext.enterprise"
"#,
        )
        .unwrap();
        let c = s.platform.oauth2;
        assert_eq!(c.timeout, Duration::from_millis(1500));
        assert_eq!(c.cache_ttl, Duration::ZERO);
        assert_eq!(c.claims.platform_id, "sub_id");
        assert_eq!(c.claims.enterprise, "ext.enterprise");
        assert_eq!(c.claims.username, "username", "unset claims keep defaults");
        assert_eq!(c.zero_touch_scope.as_deref(), Some("roomlink:zero-touch"));
    }

    #[test]
    fn rejects_misspelt_keys() {
        let r: Result<Settings, _> = toml::from_str(
            "[platform.oauth2]\ntoken_url=\"a\"\nintrospection_url=\"b\"\nclient_id=\"c\"\nclient_secret=\"d\"\ntimeout=5\n",
        );
        assert!(r.is_err());
    }
}

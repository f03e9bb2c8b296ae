//! Adapters of the domain's `PlatformIdentity` port (the companion meeting platform).
//!
//! - [`StaticPlatform`] reads users from a TOML file (`platform.static_file`): the embedded
//!   default and the test double. Without a file it knows nobody, so platform credentials
//!   are simply refused.
//! - [`OAuth2Platform`] asks the platform's OAuth2 identity provider (`platform.oauth2`):
//!   token introspection (RFC 7662) for platform access tokens, the resource owner password
//!   grant (RFC 6749 §4.3) for usernames and passwords, with configurable claim names
//!   ([`ClaimMapping`]) and a short cache.

mod oauth2;
mod static_file;

pub use oauth2::{ClaimMapping, OAuth2Config, OAuth2ConfigError, OAuth2Platform};
pub use static_file::{PlatformFileError, StaticPlatform};

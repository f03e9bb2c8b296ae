//! Enterprises (tenants) and their service users.

use crate::access::Role;
use crate::enums::shorten;
use crate::error::Error;
use crate::ids::{EnterpriseId, UserId};
use serde::Serialize;

/// The endpoint limit of an enterprise created without `--endpoint-limit`.
pub const DEFAULT_ENDPOINT_LIMIT: u32 = 10_000;

/// Enterprise names: 1 to 64 of `[A-Za-z0-9._-]`, unique; they appear on every token.
pub fn check_enterprise_name(name: &str) -> Result<(), Error> {
    let ok = (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "enterprise name: '{}' must be 1 to 64 letters, digits, '.', '_' or '-'",
            shorten(name)
        )))
    }
}

/// A tenant. `publicKey`, when set, is the key endpoint passwords are sealed to (issue #5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Enterprise {
    pub id: EnterpriseId,
    pub name: String,
    pub endpoint_limit: u32,
    pub public_key: Option<String>,
}

/// Service usernames: 1 to 128 printable characters without ':' (Basic auth splits on it).
pub fn check_username(username: &str) -> Result<(), Error> {
    let ok = (1..=128).contains(&username.chars().count())
        && !username.contains(':')
        && !username
            .chars()
            .any(|c| c.is_control() || c.is_whitespace());
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            "username: must be 1 to 128 characters without ':', spaces or control characters",
        ))
    }
}

/// A service user: signs in with Basic auth; its password is kept as a bcrypt or argon2id hash.
/// Usernames are unique across enterprises, since Basic auth names no enterprise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceUser {
    pub id: UserId,
    pub enterprise_id: EnterpriseId,
    pub username: String,
    pub password_hash: String,
    pub role: Role,
    /// A disabled user cannot sign in (`roomlink admin user disable`); it keeps its name.
    pub disabled: bool,
}

/// What an enterprise owns, counted (for `roomlink admin enterprise show|list|delete`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnterpriseUsage {
    pub endpoints: u64,
    pub listeners: u64,
    pub users: u64,
    /// Stored access tokens, expired ones not yet purged included.
    pub tokens: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_enterprise_name("acme-corp.eu").is_ok());
        assert!(check_enterprise_name("").is_err());
        assert!(check_enterprise_name("a b").is_err());
        assert!(check_username("alice@example.com").is_ok());
        assert!(check_username("a:b").is_err());
        assert!(check_username("").is_err());
    }
}

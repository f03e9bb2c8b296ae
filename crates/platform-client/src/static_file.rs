//! Companion-platform users from a TOML file, as the operator contract describes:
//!
//! ```toml
//! [[users]]
//! username = "alice@example.com"
//! password = "alice-secret"
//! platform_id = 1001
//! enterprise = "acme"
//! enterprise_admin = true
//! first_name = "Alice"
//! last_name = "Liddell"
//! zero_touch = true
//! access_tokens = ["plat-token-alice"]
//! ```

use async_trait::async_trait;
use roomlink_domain::Result;
use roomlink_domain::ports::{PlatformIdentity, PlatformUser};
use roomlink_domain::secret::Secret;
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum PlatformFileError {
    #[error("cannot read the platform users file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the platform users file {path} is not valid: {message}")]
    Parse { path: String, message: String },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    users: Vec<FileUser>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileUser {
    username: String,
    password: String,
    platform_id: i64,
    enterprise: String,
    #[serde(default)]
    enterprise_admin: bool,
    first_name: Option<String>,
    last_name: Option<String>,
    #[serde(default)]
    zero_touch: bool,
    #[serde(default)]
    access_tokens: Vec<String>,
}

impl FileUser {
    fn identity(&self) -> PlatformUser {
        PlatformUser {
            platform_id: self.platform_id,
            username: self.username.clone(),
            enterprise_name: self.enterprise.clone(),
            enterprise_admin: self.enterprise_admin,
            first_name: self.first_name.clone(),
            last_name: self.last_name.clone(),
            zero_touch: self.zero_touch,
        }
    }
}

/// Platform users read once from a file.
#[derive(Debug, Default)]
pub struct StaticPlatform {
    users: Vec<FileUser>,
}

impl StaticPlatform {
    /// Knows no users: every platform credential is refused.
    pub fn empty() -> Self {
        Self::default()
    }

    pub fn load(path: &Path) -> std::result::Result<Self, PlatformFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| PlatformFileError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text).map_err(|message| PlatformFileError::Parse {
            path: path.display().to_string(),
            message,
        })
    }

    /// Parses the file's text. The error never quotes the file (it holds passwords).
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let file: File = toml::from_str(text).map_err(|e| {
            // toml's message quotes the offending line, which may be a password.
            let span = e
                .span()
                .map(|s| format!(" at byte {}", s.start))
                .unwrap_or_default();
            format!("TOML error{span}: expected [[users]] with the documented keys")
        })?;
        let mut seen = std::collections::HashSet::new();
        for user in &file.users {
            if !seen.insert(user.username.as_str()) {
                return Err(format!("user {} appears twice", user.username));
            }
        }
        Ok(StaticPlatform { users: file.users })
    }

    pub fn len(&self) -> usize {
        self.users.len()
    }

    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }
}

/// Compares without an early exit, so timing does not reveal how much of a secret matched.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[async_trait]
impl PlatformIdentity for StaticPlatform {
    async fn verify_password(
        &self,
        username: &str,
        password: &Secret,
    ) -> Result<Option<PlatformUser>> {
        Ok(self
            .users
            .iter()
            .find(|u| u.username == username)
            .filter(|u| constant_time_eq(u.password.as_bytes(), password.expose().as_bytes()))
            .map(FileUser::identity))
    }

    async fn introspect(&self, token: &Secret) -> Result<Option<PlatformUser>> {
        let presented = token.expose().as_bytes();
        Ok(self
            .users
            .iter()
            .find(|u| {
                u.access_tokens
                    .iter()
                    .any(|t| constant_time_eq(t.as_bytes(), presented))
            })
            .map(FileUser::identity))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
[[users]]
username = "alice@example.com"
password = "alice-secret"
platform_id = 1001
enterprise = "acme"
enterprise_admin = true
first_name = "Alice"
last_name = "Liddell"
zero_touch = true
access_tokens = ["plat-token-alice"]

[[users]]
username = "bob@example.com"
password = "bob-secret"
platform_id = 1002
enterprise = "acme"
"#;

    #[tokio::test]
    async fn verifies_passwords_and_tokens() {
        let p = StaticPlatform::parse(FILE).unwrap();
        assert_eq!(p.len(), 2);
        let alice = p
            .verify_password("alice@example.com", &Secret::new("alice-secret"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(alice.platform_id, 1001);
        assert!(alice.enterprise_admin && alice.zero_touch);
        assert_eq!(alice.enterprise_name, "acme");
        let bob = p
            .verify_password("bob@example.com", &Secret::new("bob-secret"))
            .await
            .unwrap()
            .unwrap();
        assert!(!bob.enterprise_admin && !bob.zero_touch);
        assert!(
            p.verify_password("alice@example.com", &Secret::new("nope"))
                .await
                .unwrap()
                .is_none()
        );
        assert!(
            p.verify_password("carol@example.com", &Secret::new("x"))
                .await
                .unwrap()
                .is_none()
        );
        let by_token = p
            .introspect(&Secret::new("plat-token-alice"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(by_token.username, "alice@example.com");
        assert!(
            p.introspect(&Secret::new("plat-token-bob"))
                .await
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn errors_do_not_quote_the_file() {
        let e = StaticPlatform::parse(
            "[[users]]\nusername = \"a\"\npassword = \"hunter2\"\nbogus = 1\n",
        )
        .unwrap_err();
        assert!(!e.contains("hunter2"), "{e}");
        assert!(StaticPlatform::parse("[[users]]\nusername=\"a\"\npassword=\"p\"\nplatform_id=1\nenterprise=\"e\"\n[[users]]\nusername=\"a\"\npassword=\"p\"\nplatform_id=2\nenterprise=\"e\"\n").is_err());
    }

    #[tokio::test]
    async fn empty_knows_nobody() {
        let p = StaticPlatform::empty();
        assert!(p.introspect(&Secret::new("")).await.unwrap().is_none());
    }

    #[test]
    fn load_reports_missing_files() {
        let e = StaticPlatform::load(Path::new("/nonexistent/users.toml")).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/users.toml"));
    }
}

//! Service-user password hashing. New hashes are bcrypt; existing argon2id PHC strings are
//! verified too. Both are slow by design, so every call runs on the low-priority hashing threads
//! of [`crate::hash_pool`], never on the reactor that serves token-authenticated requests.

use crate::hash_pool::HashPool;
use argon2::password_hash::PasswordVerifier;
use async_trait::async_trait;
use roomlink_domain::ports::PasswordHasher;
use roomlink_domain::secret::Secret;
use roomlink_domain::{Error, Result};

/// bcrypt cost of new hashes: about 55 ms of one core per verify on the reference machine.
pub const DEFAULT_BCRYPT_COST: u32 = 10;

#[derive(Debug, Clone, Copy)]
pub struct Passwords {
    bcrypt_cost: u32,
}

impl Default for Passwords {
    fn default() -> Self {
        Passwords::with_bcrypt_cost(DEFAULT_BCRYPT_COST)
    }
}

impl Passwords {
    /// `cost` is clamped to bcrypt's range (4..=31).
    pub fn with_bcrypt_cost(cost: u32) -> Self {
        Passwords {
            bcrypt_cost: cost.clamp(4, 31),
        }
    }

    async fn on_a_core<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T> {
        HashPool::shared()
            .run(work)
            .await
            .ok_or_else(|| Error::internal("password hashing failed"))
    }
}

/// Verifies by the hash's own format; an unknown format never matches.
fn verify_blocking(password: &str, hash: &str) -> bool {
    if hash.starts_with("$2") {
        bcrypt::verify(password, hash).unwrap_or(false)
    } else if hash.starts_with("$argon2") {
        argon2::Argon2::default()
            .verify_password(password.as_bytes(), hash)
            .is_ok()
    } else {
        false
    }
}

#[async_trait]
impl PasswordHasher for Passwords {
    async fn verify(&self, password: Secret, hash: String) -> Result<bool> {
        self.on_a_core(move || verify_blocking(password.expose(), &hash))
            .await
    }

    async fn hash(&self, password: Secret) -> Result<String> {
        let cost = self.bcrypt_cost;
        self.on_a_core(move || bcrypt::hash(password.expose(), cost))
            .await?
            .map_err(Error::internal)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use argon2::password_hash::PasswordHasher as _;

    #[tokio::test]
    async fn bcrypt_round_trip() {
        let p = Passwords::with_bcrypt_cost(4);
        let hash = p.hash(Secret::new("correct horse")).await.unwrap();
        assert!(hash.starts_with("$2"));
        assert!(
            p.verify(Secret::new("correct horse"), hash.clone())
                .await
                .unwrap()
        );
        assert!(!p.verify(Secret::new("wrong"), hash).await.unwrap());
    }

    #[tokio::test]
    async fn argon2id_hashes_are_accepted() {
        let hash = argon2::Argon2::default()
            .hash_password(b"s3cret-pass")
            .unwrap()
            .to_string();
        assert!(hash.starts_with("$argon2id$"));
        let p = Passwords::default();
        assert!(
            p.verify(Secret::new("s3cret-pass"), hash.clone())
                .await
                .unwrap()
        );
        assert!(!p.verify(Secret::new("other"), hash).await.unwrap());
    }

    #[test]
    fn the_domains_unknown_user_hash_is_a_real_bcrypt_hash() {
        // If it were malformed, verify would fail fast and the timing would differ again.
        let hash = roomlink_domain::service::auth::UNKNOWN_USER_HASH;
        assert!(matches!(bcrypt::verify("anything", hash), Ok(false)));
    }

    #[tokio::test]
    async fn unknown_or_garbage_hashes_never_match() {
        let p = Passwords::default();
        for hash in [
            "",
            "plain",
            "$2b$10$short",
            "$argon2id$garbage",
            "$1$md5crypt",
        ] {
            assert!(
                !p.verify(Secret::new("plain"), hash.to_owned())
                    .await
                    .unwrap(),
                "{hash}"
            );
        }
    }
}

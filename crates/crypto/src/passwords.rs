//! Service-user password hashing. New hashes are bcrypt; existing argon2id PHC strings are
//! verified too. Both are slow by design, so every call runs on the low-priority hashing threads
//! of [`crate::hash_pool`], never on the reactor that serves token-authenticated requests. When
//! their queue is full a verify is refused with `TooManyRequests` (Retry-After) at once.
//!
//! Successful verifications are remembered for a short time ([`VerifiedCache`]), so a client
//! sending the same Basic credentials on every request pays for one verify per lifetime, not one
//! per request.

use crate::hash_pool::{HashPool, Refused};
use argon2::password_hash::PasswordVerifier;
use async_trait::async_trait;
use hmac::{KeyInit, Mac};
use roomlink_domain::ports::PasswordHasher;
use roomlink_domain::secret::Secret;
use roomlink_domain::{Error, ErrorKind, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// bcrypt cost of new hashes: about 55 ms of one core per verify on the reference machine.
pub const DEFAULT_BCRYPT_COST: u32 = 10;

/// How long a successful verification is remembered by default (`security.verified_password_cache_secs`).
pub const DEFAULT_VERIFIED_CACHE_SECS: u64 = 60;

#[derive(Clone)]
pub struct Passwords {
    bcrypt_cost: u32,
    verified: Option<Arc<VerifiedCache>>,
}

impl Default for Passwords {
    fn default() -> Self {
        Passwords::with_bcrypt_cost(DEFAULT_BCRYPT_COST)
    }
}

impl Passwords {
    /// `cost` is clamped to bcrypt's range (4..=31). Remembers successful verifications for
    /// [`DEFAULT_VERIFIED_CACHE_SECS`].
    pub fn with_bcrypt_cost(cost: u32) -> Self {
        Passwords {
            bcrypt_cost: cost.clamp(4, 31),
            verified: VerifiedCache::new(Duration::from_secs(DEFAULT_VERIFIED_CACHE_SECS)),
        }
    }

    /// Remembers successful verifications for `lifetime`; zero remembers none.
    pub fn remembering_for(mut self, lifetime: Duration) -> Self {
        self.verified = VerifiedCache::new(lifetime);
        self
    }

    async fn on_a_core<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T> {
        HashPool::shared()
            .run(work)
            .await
            .map_err(|refused| match refused {
                Refused::Busy => Error::new(
                    ErrorKind::TooManyRequests,
                    "Too many password checks are waiting; retry after 1 s, or authenticate with \
                 an access token.",
                )
                .with("retryAfterSeconds", 1)
                .with("limit", "passwordChecks"),
                Refused::Gone => Error::internal("password hashing failed"),
            })
    }
}

/// Credentials verified recently, as keyed hashes.
///
/// What is kept is HMAC-SHA-256, under a random key that exists only in this process's memory,
/// of the stored hash and the password; never the password. Why this is safe:
/// - The key is never written or sent anywhere, so an entry cannot be tested against guessed
///   passwords by anyone who reads the process's entries but not its key (a memory dump holds
///   both, but also every password in flight).
/// - The stored hash is part of the entry: a changed password (a new hash) finds no entry, so
///   the old password stops working at once. A disabled or deleted user is refused by the
///   caller, which reads the user before verifying; the cache only stands in for the hash
///   computation itself.
/// - Only successes are kept. A wrong password is verified in full every time, so guessing is
///   as slow as without the cache, and a hit (fast) can be observed only by someone presenting
///   the right password.
/// - Entries live for a short time and the map is bounded (cleared when full).
struct VerifiedCache {
    key: [u8; 32],
    lifetime: Duration,
    entries: Mutex<HashMap<[u8; 32], Instant>>,
}

impl VerifiedCache {
    const MAX_ENTRIES: usize = 10_000;

    fn new(lifetime: Duration) -> Option<Arc<VerifiedCache>> {
        if lifetime.is_zero() {
            return None;
        }
        let mut key = [0u8; 32];
        // Without randomness there is no safe key: remember nothing.
        getrandom::fill(&mut key).ok()?;
        Some(Arc::new(VerifiedCache {
            key,
            lifetime,
            entries: Mutex::default(),
        }))
    }

    fn digest(&self, password: &str, hash: &str) -> Option<[u8; 32]> {
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(&self.key).ok()?;
        // Length-prefixed, so no two (hash, password) pairs share an input.
        mac.update(&(hash.len() as u64).to_be_bytes());
        mac.update(hash.as_bytes());
        mac.update(password.as_bytes());
        Some(mac.finalize().into_bytes().into())
    }

    fn holds(&self, digest: &[u8; 32]) -> bool {
        let Ok(entries) = self.entries.lock() else {
            return false;
        };
        entries
            .get(digest)
            .is_some_and(|at| at.elapsed() < self.lifetime)
    }

    fn remember(&self, digest: [u8; 32]) {
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= Self::MAX_ENTRIES {
                entries.retain(|_, at| at.elapsed() < self.lifetime);
                if entries.len() >= Self::MAX_ENTRIES {
                    entries.clear();
                }
            }
            entries.insert(digest, Instant::now());
        }
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
        let digest = self
            .verified
            .as_ref()
            .and_then(|cache| Some((cache, cache.digest(password.expose(), &hash)?)));
        if let Some((cache, digest)) = &digest
            && cache.holds(digest)
        {
            return Ok(true);
        }
        let verified = self
            .on_a_core(move || verify_blocking(password.expose(), &hash))
            .await?;
        if verified && let Some((cache, digest)) = digest {
            cache.remember(digest);
        }
        Ok(verified)
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

    #[tokio::test]
    async fn only_successes_are_remembered_and_a_new_hash_is_verified_afresh() {
        let p = Passwords::with_bcrypt_cost(4);
        let cache = p.verified.clone().unwrap();
        let hash = p.hash(Secret::new("right")).await.unwrap();
        assert!(!p.verify(Secret::new("wrong"), hash.clone()).await.unwrap());
        assert!(
            cache.entries.lock().unwrap().is_empty(),
            "a failure is not kept"
        );
        assert!(p.verify(Secret::new("right"), hash.clone()).await.unwrap());
        let digest = cache.digest("right", &hash).unwrap();
        assert!(cache.holds(&digest));
        // The entry is a keyed hash: neither the password nor the stored hash in it.
        assert_ne!(&digest[..5], b"right");
        // A changed password is a new stored hash: the old password no longer matches it.
        let new_hash = p.hash(Secret::new("changed")).await.unwrap();
        assert!(
            !p.verify(Secret::new("right"), new_hash.clone())
                .await
                .unwrap()
        );
        assert!(p.verify(Secret::new("changed"), new_hash).await.unwrap());
        // Another process (another key) has other digests.
        let other = VerifiedCache::new(Duration::from_secs(1)).unwrap();
        assert_ne!(other.digest("right", &hash), Some(digest));
    }

    #[tokio::test]
    async fn entries_expire_and_zero_remembers_nothing() {
        let p = Passwords::with_bcrypt_cost(4).remembering_for(Duration::from_millis(30));
        let hash = p.hash(Secret::new("pw")).await.unwrap();
        assert!(p.verify(Secret::new("pw"), hash.clone()).await.unwrap());
        let cache = p.verified.clone().unwrap();
        let digest = cache.digest("pw", &hash).unwrap();
        assert!(cache.holds(&digest));
        std::thread::sleep(Duration::from_millis(40));
        assert!(!cache.holds(&digest), "expired");
        let none = Passwords::with_bcrypt_cost(4).remembering_for(Duration::ZERO);
        assert!(none.verified.is_none());
    }

    #[test]
    fn the_domains_unknown_user_hash_is_a_real_bcrypt_hash() {
        // If it were malformed, verify would fail fast and the timing would differ again.
        let hash = roomlink_app::auth::UNKNOWN_USER_HASH;
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

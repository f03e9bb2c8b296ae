//! The ports every process wires the same way: time, randomness, password hashing, sealing.

use crate::error::Result;
use crate::secret::{SealedSecret, Secret};
use async_trait::async_trait;
#[cfg(feature = "mock")]
use mockall::automock;

/// Wall-clock time in milliseconds since the Unix epoch. Everything time-dependent (token
/// expiry, pairing heartbeats, status timestamps) reads it here, so tests can fix it.
#[cfg_attr(feature = "mock", automock)]
pub trait Clock: Send + Sync {
    fn now_ms(&self) -> i64;
}

/// Fresh identifiers and secrets from a CSPRNG.
#[cfg_attr(feature = "mock", automock)]
pub trait IdGenerator: Send + Sync {
    /// A new entity id: 24 lower-case hex digits.
    fn entity_id(&self) -> String;
    /// A new access token: 32 characters of `[0-9a-v]` (160 bits).
    fn access_token(&self) -> Secret;
    /// A new pairing code (see `docs/decisions.md` for its alphabet and length).
    fn pairing_code(&self) -> String;
    /// A new listener secret.
    fn listener_secret(&self) -> Secret;
    /// A new webhook signing secret: `whsec_` and the base64 of 32 random bytes (Standard
    /// Webhooks' form, which receivers' libraries decode).
    fn webhook_secret(&self) -> Secret;
}

/// Hashes and verifies service-user passwords. Implementations are CPU-heavy by design and
/// must run off the async reactor.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait PasswordHasher: Send + Sync {
    /// `false` for a wrong password or a hash of an unknown format.
    async fn verify(&self, password: Secret, hash: String) -> Result<bool>;
    async fn hash(&self, password: Secret) -> Result<String>;
}

/// Signs and checks the tickets that open live-update streams ([`crate::live::LiveTicket`]),
/// with a key every instance shares.
#[cfg_attr(feature = "mock", automock)]
pub trait TicketSigner: Send + Sync {
    /// A URL-safe signature of `text` (`[A-Za-z0-9_~-]`).
    fn sign(&self, text: &str) -> Result<String>;
    /// Whether `signature` is [`TicketSigner::sign`]'s of `text`, under a key this instance
    /// holds (the current one, or a previous one during a key rotation).
    fn verify(&self, text: &str, signature: &str) -> bool;
}

/// Seals endpoint passwords and listener secrets for storage.
#[cfg_attr(feature = "mock", automock)]
pub trait SecretSealer: Send + Sync {
    /// Seals `plaintext`: to the enterprise's public key when it has one (then only its
    /// listener can open it), otherwise with the service's own key.
    #[allow(clippy::needless_lifetimes)] // mockall needs the lifetime named
    fn seal<'a>(
        &self,
        plaintext: &Secret,
        enterprise_public_key: Option<&'a str>,
    ) -> Result<SealedSecret>;
    /// Opens a value sealed with the service key; `None` if it was sealed to an enterprise key.
    /// `EncryptionUpdated` if the key that sealed it is no longer available.
    fn open(&self, sealed: &SealedSecret) -> Result<Option<Secret>>;
    /// The key id `seal` would use now. A stored value with another key id is stale.
    #[allow(clippy::needless_lifetimes)] // mockall needs the lifetime named
    fn current_key_id<'a>(&self, enterprise_public_key: Option<&'a str>) -> Result<String>;
    /// Whether `sealed` can be used now: sealed to the enterprise's current public key when it
    /// has one, otherwise under a service key this instance holds (the current one, or a
    /// previous one while a key rotation is re-sealing).
    #[allow(clippy::needless_lifetimes)] // mockall needs the lifetime named
    fn readable<'a>(
        &self,
        sealed: &SealedSecret,
        enterprise_public_key: Option<&'a str>,
    ) -> Result<bool>;
}

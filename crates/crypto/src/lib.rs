//! Adapters of two domain ports that need cryptography:
//! - [`Passwords`]: `PasswordHasher` for service users (bcrypt; argon2id hashes accepted).
//! - [`Sealer`]: `SecretSealer` for endpoint passwords and listener secrets
//!   (XChaCha20-Poly1305 with the service key, or a sealed box to an enterprise's public key),
//!   and `TicketSigner` for live-update tickets (HMAC-SHA256 under a key derived from it).

mod hash_pool;
mod keyring;
mod passwords;
mod sealing;
mod tickets;

pub use keyring::{KeyError, KeyRing, ServiceKey};
pub use passwords::{DEFAULT_BCRYPT_COST, DEFAULT_VERIFIED_CACHE_SECS, Passwords};
pub use sealing::{Sealer, public_key_id};

//! Sealing of endpoint passwords and listener secrets (never hashed: they must reach the room
//! system again; never stored in plaintext).
//!
//! - With the service key: XChaCha20-Poly1305, a fresh 24-byte random nonce per value, the key
//!   id as associated data. Stored as `nonce || ciphertext`, key id `svc-<8 hex>`.
//! - With an enterprise public key (X25519, base64 of 32 bytes): a libsodium-compatible sealed
//!   box; only the holder of the private key (the enterprise's listener) can open it, so
//!   roomlink cannot. Key id `pk-<8 hex>`.
//!
//! A key id is the first 8 hex digits of SHA-256 of the key, so a changed key is detected
//! (`EncryptionUpdated`) without storing the key itself.

use crate::keyring::{KeyRing, ServiceKey, key_digest};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ports::SecretSealer;
use roomlink_domain::secret::{SealedSecret, Secret};

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

const NONCE_LEN: usize = 24;

/// The key id of an enterprise public key (base64 of 32 bytes); `Invalid` if malformed.
pub fn public_key_id(public_key: &str) -> Result<String> {
    parse_public_key(public_key).map(|bytes| key_digest("pk", &bytes))
}

fn parse_public_key(public_key: &str) -> Result<[u8; 32]> {
    BASE64
        .decode(public_key.trim())
        .ok()
        .and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok())
        .ok_or_else(|| {
            Error::invalid("publicKey: must be an X25519 public key, 32 bytes in base64")
        })
}

/// The `SecretSealer` adapter: seals with the ring's current key, opens with any key of it.
pub struct Sealer {
    // Swapped whole on reload (SIGHUP after a rotation); a seal or open in progress keeps the
    // ring it started with.
    ring: RwLock<Arc<KeyRing>>,
    /// The key file, read again when a value under a key this ring lacks is met: another
    /// process (`roomlink admin rotate-key`) wrote a new key there and re-sealed with it.
    file: Option<PathBuf>,
    /// When the file was last read for that reason: at most once per [`REREAD_EVERY`], so
    /// values under a key that is truly gone do not read the file on every request.
    last_reread: Mutex<Option<Instant>>,
}

const REREAD_EVERY: Duration = Duration::from_secs(1);

impl Sealer {
    pub fn new(ring: KeyRing) -> Self {
        Sealer {
            ring: RwLock::new(Arc::new(ring)),
            file: None,
            last_reread: Mutex::new(None),
        }
    }

    /// A sealer whose ring came from `file` (see [`Sealer::reload`] and the field `file`).
    pub fn from_file(ring: KeyRing, file: PathBuf) -> Self {
        Sealer {
            file: Some(file),
            ..Sealer::new(ring)
        }
    }

    /// Uses `ring` from now on.
    pub fn reload(&self, ring: KeyRing) {
        *self.ring.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(ring);
    }

    pub(crate) fn ring(&self) -> Arc<KeyRing> {
        self.ring
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The ring, read again from the key file first when it lacks `key_id` and may have
    /// gained it there.
    pub(crate) fn ring_holding(&self, key_id: &str) -> Arc<KeyRing> {
        let ring = self.ring();
        if ring.key(key_id).is_some() || !key_id.starts_with("svc-") {
            return ring;
        }
        let Some(file) = &self.file else {
            return ring;
        };
        {
            let mut last = self
                .last_reread
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if last.is_some_and(|at| at.elapsed() < REREAD_EVERY) {
                return ring;
            }
            *last = Some(Instant::now());
        }
        match KeyRing::load(file) {
            Ok(fresh) if fresh.key(key_id).is_some() => {
                tracing::info!(
                    file = %file.display(),
                    current = fresh.current().id(),
                    "service key ring reloaded: a value sealed under a key new to this instance was met"
                );
                self.reload(fresh);
                self.ring()
            }
            Ok(_) => ring,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the service key file again");
                ring
            }
        }
    }
}

fn cipher(key: &ServiceKey) -> XChaCha20Poly1305 {
    XChaCha20Poly1305::new(key.bytes().into())
}

impl SecretSealer for Sealer {
    fn seal(
        &self,
        plaintext: &Secret,
        enterprise_public_key: Option<&str>,
    ) -> Result<SealedSecret> {
        if let Some(public_key) = enterprise_public_key {
            let bytes = parse_public_key(public_key)?;
            let ciphertext = crypto_box::PublicKey::from(bytes)
                .seal(&mut crypto_box::aead::OsRng, plaintext.expose().as_bytes())
                .map_err(|_| Error::internal("sealed-box encryption failed"))?;
            return Ok(SealedSecret {
                key_id: key_digest("pk", &bytes),
                ciphertext,
            });
        }
        let ring = self.ring();
        let key = ring.current();
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|e| Error::internal(e.to_string()))?;
        let sealed = cipher(key)
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: plaintext.expose().as_bytes(),
                    aad: key.id().as_bytes(),
                },
            )
            .map_err(|_| Error::internal("encryption failed"))?;
        let mut ciphertext = nonce.to_vec();
        ciphertext.extend_from_slice(&sealed);
        Ok(SealedSecret {
            key_id: key.id().to_owned(),
            ciphertext,
        })
    }

    fn open(&self, sealed: &SealedSecret) -> Result<Option<Secret>> {
        if sealed.key_id.starts_with("pk-") {
            return Ok(None);
        }
        let ring = self.ring_holding(&sealed.key_id);
        let Some(key) = ring.key(&sealed.key_id) else {
            return Err(Error::encryption_updated());
        };
        if sealed.ciphertext.len() < NONCE_LEN {
            return Err(Error::encryption_updated());
        }
        let (nonce, body) = sealed.ciphertext.split_at(NONCE_LEN);
        let plain = cipher(key)
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: body,
                    aad: sealed.key_id.as_bytes(),
                },
            )
            .map_err(|_| Error::encryption_updated())?;
        String::from_utf8(plain)
            .map(|s| Some(Secret::new(s)))
            .map_err(|_| Error::encryption_updated())
    }

    fn current_key_id(&self, enterprise_public_key: Option<&str>) -> Result<String> {
        match enterprise_public_key {
            Some(pk) => public_key_id(pk),
            None => Ok(self.ring().current().id().to_owned()),
        }
    }

    fn readable(&self, sealed: &SealedSecret, enterprise_public_key: Option<&str>) -> Result<bool> {
        Ok(match enterprise_public_key {
            Some(pk) => sealed.key_id == public_key_id(pk)?,
            None => self
                .ring_holding(&sealed.key_id)
                .key(&sealed.key_id)
                .is_some(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyring::KeyError;
    use roomlink_domain::error::ErrorKind;

    fn sealer(byte: u8) -> Sealer {
        Sealer::new(KeyRing::new(ServiceKey::from_bytes([byte; 32]), Vec::new()))
    }

    #[test]
    fn service_key_round_trip_without_plaintext() {
        let s = sealer(7);
        let sealed = s.seal(&Secret::new("endpoint-pw"), None).unwrap();
        assert!(sealed.key_id.starts_with("svc-"));
        assert!(!sealed.ciphertext.windows(11).any(|w| w == b"endpoint-pw"));
        assert_eq!(s.open(&sealed).unwrap().unwrap().expose(), "endpoint-pw");
        let again = s.seal(&Secret::new("endpoint-pw"), None).unwrap();
        assert_ne!(again.ciphertext, sealed.ciphertext, "fresh nonce each time");
    }

    #[test]
    fn another_key_or_tampering_is_encryption_updated() {
        let sealed = sealer(1).seal(&Secret::new("pw"), None).unwrap();
        assert_eq!(
            sealer(2).open(&sealed).unwrap_err().kind(),
            ErrorKind::EncryptionUpdated
        );
        let mut tampered = sealed.clone();
        if let Some(last) = tampered.ciphertext.last_mut() {
            *last ^= 1;
        }
        assert_eq!(
            sealer(1).open(&tampered).unwrap_err().kind(),
            ErrorKind::EncryptionUpdated
        );
    }

    #[test]
    fn public_key_sealing_only_the_private_key_opens() {
        let secret = crypto_box::SecretKey::generate(&mut crypto_box::aead::OsRng);
        let public = BASE64.encode(secret.public_key().as_bytes());
        let s = sealer(3);
        let sealed = s.seal(&Secret::new("room-pw"), Some(&public)).unwrap();
        assert_eq!(sealed.key_id, s.current_key_id(Some(&public)).unwrap());
        assert!(
            s.open(&sealed).unwrap().is_none(),
            "roomlink cannot open it"
        );
        assert_eq!(secret.unseal(&sealed.ciphertext).unwrap(), b"room-pw");
        assert!(s.seal(&Secret::new("x"), Some("not-a-key")).is_err());
    }

    #[test]
    fn after_a_reload_new_values_use_the_new_key_and_old_ones_still_open() {
        let old = ServiceKey::from_bytes([5; 32]);
        let s = Sealer::new(KeyRing::new(ServiceKey::from_bytes([5; 32]), Vec::new()));
        let before = s.seal(&Secret::new("pw"), None).unwrap();
        s.reload(KeyRing::new(ServiceKey::from_bytes([6; 32]), vec![old]));
        let after = s.seal(&Secret::new("pw"), None).unwrap();
        assert_ne!(after.key_id, before.key_id);
        assert_eq!(after.key_id, s.current_key_id(None).unwrap());
        assert_eq!(s.open(&before).unwrap().unwrap().expose(), "pw");
        assert!(s.readable(&before, None).unwrap());
        s.reload(KeyRing::new(ServiceKey::from_bytes([6; 32]), Vec::new()));
        assert!(!s.readable(&before, None).unwrap());
        assert_eq!(
            s.open(&before).unwrap_err().kind(),
            ErrorKind::EncryptionUpdated
        );
    }

    #[test]
    fn a_value_under_a_key_new_to_this_instance_rereads_the_key_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("roomlink.key");
        let ring = KeyRing::load_or_create(&path).unwrap();
        let serving = Sealer::from_file(KeyRing::load(&path).unwrap(), path.clone());
        let rotated = ring.rotated();
        rotated.replace(&path).unwrap();
        // What `rotate-key` does in its own process: seal under the new key.
        let sealed = Sealer::new(KeyRing::load(&path).unwrap())
            .seal(&Secret::new("pw"), None)
            .unwrap();
        assert!(serving.readable(&sealed, None).unwrap());
        assert_eq!(serving.open(&sealed).unwrap().unwrap().expose(), "pw");
        assert_eq!(
            serving.current_key_id(None).unwrap(),
            rotated.current().id()
        );
    }

    #[test]
    fn key_file_is_created_once_with_owner_only_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys/service.key");
        let first = KeyRing::load_or_create(&path).unwrap();
        let second = KeyRing::load_or_create(&path).unwrap();
        assert_eq!(first.current().id(), second.current().id());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(&path, "short").unwrap();
        assert!(matches!(
            KeyRing::load_or_create(&path),
            Err(KeyError::Malformed)
        ));
    }
}

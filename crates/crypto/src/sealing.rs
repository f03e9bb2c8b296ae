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

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ports::SecretSealer;
use roomlink_domain::secret::{SealedSecret, Secret};
use sha2::{Digest, Sha256};
use std::fs;
use std::io::Write;
use std::path::Path;
use zeroize::Zeroizing;

const NONCE_LEN: usize = 24;

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("the service key must be 32 bytes encoded as base64")]
    Malformed,
    #[error("cannot read or create the service key file {path}: {source}")]
    File {
        path: String,
        source: std::io::Error,
    },
}

fn key_digest(prefix: &str, key: &[u8]) -> String {
    let digest = Sha256::digest(key);
    let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}-{hex}")
}

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

/// The service's own 256-bit sealing key.
pub struct ServiceKey {
    key: Zeroizing<[u8; 32]>,
    id: String,
}

impl ServiceKey {
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        let id = key_digest("svc", &bytes);
        ServiceKey {
            key: Zeroizing::new(bytes),
            id,
        }
    }

    pub fn from_base64(text: &str) -> std::result::Result<Self, KeyError> {
        let bytes = Zeroizing::new(
            BASE64
                .decode(text.trim())
                .map_err(|_| KeyError::Malformed)?,
        );
        let key = <[u8; 32]>::try_from(bytes.as_slice()).map_err(|_| KeyError::Malformed)?;
        Ok(Self::from_bytes(key))
    }

    pub fn generate() -> Self {
        let mut bytes = [0u8; 32];
        #[allow(clippy::expect_used)] // no safe key can be made without the OS random source
        getrandom::fill(&mut bytes).expect("the operating system's random source failed");
        Self::from_bytes(bytes)
    }

    /// Reads the key file, or creates it (owner read/write only) with a fresh key.
    pub fn load_or_create(path: &Path) -> std::result::Result<Self, KeyError> {
        let file_error = |source| KeyError::File {
            path: path.display().to_string(),
            source,
        };
        match fs::read_to_string(path) {
            Ok(text) => Self::from_base64(&text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    fs::create_dir_all(dir).map_err(file_error)?;
                }
                let key = Self::generate();
                let mut options = fs::OpenOptions::new();
                options.write(true).create_new(true);
                #[cfg(unix)]
                std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
                let mut file = options.open(path).map_err(file_error)?;
                let encoded = Zeroizing::new(BASE64.encode(*key.key));
                file.write_all(encoded.as_bytes()).map_err(file_error)?;
                file.sync_all().map_err(file_error)?;
                Ok(key)
            }
            Err(e) => Err(file_error(e)),
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }
}

/// The `SecretSealer` adapter.
pub struct Sealer {
    service: ServiceKey,
}

impl Sealer {
    pub fn new(service: ServiceKey) -> Self {
        Sealer { service }
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        XChaCha20Poly1305::new((&*self.service.key).into())
    }
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
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|e| Error::internal(e.to_string()))?;
        let sealed = self
            .cipher()
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: plaintext.expose().as_bytes(),
                    aad: self.service.id.as_bytes(),
                },
            )
            .map_err(|_| Error::internal("encryption failed"))?;
        let mut ciphertext = nonce.to_vec();
        ciphertext.extend_from_slice(&sealed);
        Ok(SealedSecret {
            key_id: self.service.id.clone(),
            ciphertext,
        })
    }

    fn open(&self, sealed: &SealedSecret) -> Result<Option<Secret>> {
        if sealed.key_id.starts_with("pk-") {
            return Ok(None);
        }
        if sealed.key_id != self.service.id || sealed.ciphertext.len() < NONCE_LEN {
            return Err(Error::encryption_updated());
        }
        let (nonce, body) = sealed.ciphertext.split_at(NONCE_LEN);
        let plain = self
            .cipher()
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
            None => Ok(self.service.id.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roomlink_domain::error::ErrorKind;

    fn sealer(byte: u8) -> Sealer {
        Sealer::new(ServiceKey::from_bytes([byte; 32]))
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
    fn key_file_is_created_once_with_owner_only_permissions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys/service.key");
        let first = ServiceKey::load_or_create(&path).unwrap();
        let second = ServiceKey::load_or_create(&path).unwrap();
        assert_eq!(first.id(), second.id());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        fs::write(&path, "short").unwrap();
        assert!(matches!(
            ServiceKey::load_or_create(&path),
            Err(KeyError::Malformed)
        ));
    }
}

//! The two secrets a listener handles: roomlink's shared secret (checked in constant time)
//! and sealed endpoint passwords (opened with the enterprise's private key).

use crate::rooms::CredentialSeen;
use crate::wire::WireCredential;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use sha2::{Digest, Sha256};
use std::path::Path;
use zeroize::Zeroizing;

/// The shared secret, kept only as its SHA-256 digest.
#[derive(Clone)]
pub struct SharedSecret([u8; 32]);

impl SharedSecret {
    pub fn new(secret: &str) -> Self {
        SharedSecret(Sha256::digest(secret.as_bytes()).into())
    }

    /// Compares digests with no early exit: the time taken says nothing about the secret
    /// (and hashing first hides its length).
    pub fn matches(&self, presented: &str) -> bool {
        let presented: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        self.0
            .iter()
            .zip(presented.iter())
            .fold(0u8, |diff, (a, b)| diff | (a ^ b))
            == 0
    }
}

impl std::fmt::Debug for SharedSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedSecret([redacted])")
    }
}

/// The bearer token of an `Authorization` header value, if it is one.
pub fn bearer(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// Reads a private key file: base64 of a 32-byte X25519 secret key.
pub fn load_private_key(path: &Path) -> Result<crypto_box::SecretKey, String> {
    let text = Zeroizing::new(
        std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the private key file {}: {e}", path.display()))?,
    );
    let bytes = Zeroizing::new(
        BASE64
            .decode(text.trim())
            .map_err(|_| format!("{}: the private key is not base64", path.display()))?,
    );
    let key: [u8; 32] = bytes.as_slice().try_into().map_err(|_| {
        format!(
            "{}: the private key must be 32 bytes, not {}",
            path.display(),
            bytes.len()
        )
    })?;
    Ok(crypto_box::SecretKey::from_bytes(key))
}

/// How a credential arrived, opening a sealed one with `key` when there is one. The opened
/// password is wiped at once: a simulated room system accepts any password.
pub fn inspect(
    credential: Option<&WireCredential>,
    key: Option<&crypto_box::SecretKey>,
) -> CredentialSeen {
    match credential {
        None | Some(WireCredential::None) => CredentialSeen::None,
        Some(WireCredential::Plain { .. }) => CredentialSeen::Plain,
        Some(WireCredential::Sealed { ciphertext, .. }) => {
            let opened = key.is_some_and(|key| {
                BASE64
                    .decode(ciphertext)
                    .ok()
                    .and_then(|bytes| key.unseal(&bytes).ok())
                    .map(Zeroizing::new)
                    .is_some()
            });
            if opened {
                CredentialSeen::SealedOpened
            } else {
                CredentialSeen::SealedUnopened
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_secret_matches_only_itself_and_never_prints() {
        let s = SharedSecret::new("listener-secret-1");
        assert!(s.matches("listener-secret-1"));
        assert!(!s.matches("listener-secret-2"));
        assert!(!s.matches(""));
        assert!(!format!("{s:?}").contains("listener"));
    }

    #[test]
    fn bearer_takes_the_token_of_a_bearer_header_only() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("Bearer "), None);
        assert_eq!(bearer("abc"), None);
    }

    #[test]
    fn sealed_credentials_open_only_with_the_right_key() {
        let key = crypto_box::SecretKey::generate(&mut crypto_box::aead::OsRng);
        let other = crypto_box::SecretKey::generate(&mut crypto_box::aead::OsRng);
        let sealed = key
            .public_key()
            .seal(&mut crypto_box::aead::OsRng, b"room-pw")
            .unwrap();
        let credential = WireCredential::Sealed {
            key_id: "pk-1".into(),
            ciphertext: BASE64.encode(&sealed),
        };
        assert_eq!(
            inspect(Some(&credential), Some(&key)),
            CredentialSeen::SealedOpened
        );
        assert_eq!(
            inspect(Some(&credential), Some(&other)),
            CredentialSeen::SealedUnopened
        );
        assert_eq!(
            inspect(Some(&credential), None),
            CredentialSeen::SealedUnopened
        );
        let garbage = WireCredential::Sealed {
            key_id: "pk-1".into(),
            ciphertext: "%%%".into(),
        };
        assert_eq!(
            inspect(Some(&garbage), Some(&key)),
            CredentialSeen::SealedUnopened
        );
        assert_eq!(inspect(None, Some(&key)), CredentialSeen::None);
    }

    #[test]
    fn private_key_files_are_validated() {
        let dir = std::env::temp_dir().join(format!("sim-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.key");
        std::fs::write(&good, format!("{}\n", BASE64.encode([7u8; 32]))).unwrap();
        assert!(load_private_key(&good).is_ok());
        let short = dir.join("short.key");
        std::fs::write(&short, BASE64.encode([7u8; 16])).unwrap();
        assert!(load_private_key(&short).unwrap_err().contains("32 bytes"));
        assert!(load_private_key(&dir.join("missing.key")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

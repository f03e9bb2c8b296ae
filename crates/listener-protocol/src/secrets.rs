//! The two secrets a listener handles: roomlink's shared secret (checked in constant time)
//! and endpoint passwords, in clear or sealed to the enterprise's public key (opened with its
//! private key).

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

/// Why a credential could not be turned into a password.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialProblem {
    /// A sealed password arrived, and this listener has no private key.
    NoPrivateKey,
    /// A sealed password that the private key does not open (another key, or damaged).
    Unopenable,
}

impl std::fmt::Display for CredentialProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CredentialProblem::NoPrivateKey => {
                "the password is sealed to the enterprise's public key and this listener has no private key"
            }
            CredentialProblem::Unopenable => {
                "the sealed password does not open with this listener's private key"
            }
        })
    }
}

/// The password a credential carries: `None` for `none`, the text for `plain`, the opened text
/// for `sealed`. Opened bytes are wiped when dropped.
pub fn password(
    credential: Option<&WireCredential>,
    key: Option<&crypto_box::SecretKey>,
) -> Result<Option<Zeroizing<String>>, CredentialProblem> {
    match credential {
        None | Some(WireCredential::None) => Ok(None),
        Some(WireCredential::Plain { password }) => Ok(Some(Zeroizing::new(password.clone()))),
        Some(WireCredential::Sealed { ciphertext, .. }) => {
            let key = key.ok_or(CredentialProblem::NoPrivateKey)?;
            let sealed = BASE64
                .decode(ciphertext)
                .map_err(|_| CredentialProblem::Unopenable)?;
            let opened = Zeroizing::new(
                key.unseal(&sealed)
                    .map_err(|_| CredentialProblem::Unopenable)?,
            );
            let text = std::str::from_utf8(&opened).map_err(|_| CredentialProblem::Unopenable)?;
            Ok(Some(Zeroizing::new(text.to_owned())))
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
    fn sealed_passwords_open_only_with_the_right_key() {
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
        let opened = password(Some(&credential), Some(&key)).unwrap().unwrap();
        assert_eq!(opened.as_str(), "room-pw");
        assert_eq!(
            password(Some(&credential), Some(&other)).unwrap_err(),
            CredentialProblem::Unopenable
        );
        assert_eq!(
            password(Some(&credential), None).unwrap_err(),
            CredentialProblem::NoPrivateKey
        );
        let garbage = WireCredential::Sealed {
            key_id: "pk-1".into(),
            ciphertext: "%%%".into(),
        };
        assert!(password(Some(&garbage), Some(&key)).is_err());
        assert!(password(None, Some(&key)).unwrap().is_none());
        let plain = WireCredential::Plain {
            password: "pw".into(),
        };
        assert_eq!(
            password(Some(&plain), None).unwrap().unwrap().as_str(),
            "pw"
        );
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

//! Secrets in transit through the domain: a plaintext [`Secret`] that never prints, and the
//! [`SealedSecret`] form that storage keeps.

use std::fmt;

/// A plaintext credential (an endpoint password, a listener secret, a service password).
/// Its `Debug` output is redacted, so it cannot leak through a log line or an error.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }
    /// The plaintext. Call sites are few and deliberate: sealing, hashing, the listener call.
    pub fn expose(&self) -> &str {
        &self.0
    }
    /// Compares with what a peer presented, in time that depends on the lengths only.
    pub fn matches(&self, presented: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), presented.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// A secret sealed by the `SecretSealer` port: the id of the key that sealed it and the
/// ciphertext. Only sealed values reach storage.
#[derive(Clone, PartialEq, Eq)]
pub struct SealedSecret {
    pub key_id: String,
    pub ciphertext: Vec<u8>,
}

impl fmt::Debug for SealedSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SealedSecret(key {}, {} bytes)",
            self.key_id,
            self.ciphertext.len()
        )
    }
}

/// Whether a write changes a stored secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretChange {
    /// Leave the stored value as it is.
    Keep,
    /// Remove the stored value.
    Clear,
    /// Replace it with this plaintext (sealed before it is stored).
    Set(Secret),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print() {
        let s = Secret::new("hunter2");
        assert!(!format!("{s:?}").contains("hunter2"));
        let c = SecretChange::Set(s);
        assert!(!format!("{c:?}").contains("hunter2"));
    }
}

//! The `webhook-signature` header of Standard Webhooks 1.0: `v1,` and the base64 of
//! HMAC-SHA256 over `<id>.<timestamp>.<body>`, keyed with the bytes the secret encodes.

use crate::secret::Secret;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use std::fmt;

/// How the secret is written: receivers strip this prefix and base64-decode the rest.
const PREFIX: &str = "whsec_";

/// The secret is not `whsec_` and base64: nothing can be signed with it. The message never
/// holds the secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidSecret;

impl fmt::Display for InvalidSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the signing secret is not whsec_ followed by base64")
    }
}

impl std::error::Error for InvalidSecret {}

/// The `webhook-signature` value for one attempt (one signature: roomlink rotates no secrets).
pub fn sign(
    secret: &Secret,
    id: &str,
    timestamp: i64,
    body: &str,
) -> Result<String, InvalidSecret> {
    let encoded = secret.expose().strip_prefix(PREFIX).ok_or(InvalidSecret)?;
    let key = STANDARD.decode(encoded).map_err(|_| InvalidSecret)?;
    if key.is_empty() {
        return Err(InvalidSecret);
    }
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|_| InvalidSecret)?;
    // Fed in parts: the same bytes as the formatted content, without copying the body.
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body.as_bytes());
    Ok(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

/// Whether `signature` (a `webhook-signature` header: space-separated `v1,<base64>`
/// entries) holds the signature of this content; compared in constant time. For receivers
/// (`roomlinkctl webhooks listen`).
pub fn verify(secret: &Secret, id: &str, timestamp: i64, body: &str, signature: &str) -> bool {
    let Ok(expected) = sign(secret, id, timestamp, body) else {
        return false;
    };
    signature
        .split_ascii_whitespace()
        .any(|given| constant_time_eq(given.as_bytes(), expected.as_bytes()))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Computed apart from this code, with Python's standard library:
    /// ```text
    /// key = bytes(range(32))
    /// secret = "whsec_" + base64.b64encode(key).decode()
    /// msg = f"{id}.{ts}.{body}".encode()
    /// "v1," + base64.b64encode(hmac.new(key, msg, hashlib.sha256).digest()).decode()
    /// ```
    #[test]
    fn matches_a_vector_computed_independently() {
        let secret = Secret::new("whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=");
        let body = r#"{"type":"room.offline","timestamp":"2026-01-01T00:00:00Z","data":{"endpointId":"ep-1"}}"#;
        assert_eq!(
            sign(&secret, "msg_2Kq7roomlinkKAT", 1_767_225_600, body).unwrap(),
            "v1,u50sjP6zv1SNcfoamNytwMpbnJrAoxDsUWjv6lhskPA="
        );
    }

    /// The vector of Standard Webhooks' reference libraries (their `test_sign`), which
    /// Python's hmac module gives too.
    #[test]
    fn matches_the_reference_libraries_vector() {
        let secret = Secret::new("whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD");
        let body = r#"{"email":"test@example.com","username":"test_user"}"#;
        assert_eq!(
            sign(
                &secret,
                "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk",
                1_649_367_553,
                body
            )
            .unwrap(),
            "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw="
        );
    }

    #[test]
    fn every_part_of_the_content_changes_the_signature() {
        let secret = Secret::new("whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=");
        let base = sign(&secret, "msg_1", 1, "{}").unwrap();
        assert_ne!(sign(&secret, "msg_2", 1, "{}").unwrap(), base);
        assert_ne!(sign(&secret, "msg_1", 2, "{}").unwrap(), base);
        assert_ne!(sign(&secret, "msg_1", 1, "{ }").unwrap(), base);
        let other = Secret::new("whsec_AQECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=");
        assert_ne!(sign(&other, "msg_1", 1, "{}").unwrap(), base);
    }

    #[test]
    fn verifies_its_own_signature_among_several_and_nothing_else() {
        let secret = Secret::new("whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=");
        let good = sign(&secret, "msg_1", 1, "{}").unwrap();
        assert!(verify(&secret, "msg_1", 1, "{}", &good));
        assert!(verify(
            &secret,
            "msg_1",
            1,
            "{}",
            &format!("v1,b2xk {good}")
        ));
        assert!(!verify(&secret, "msg_1", 1, "{ }", &good));
        assert!(!verify(&secret, "msg_1", 2, "{}", &good));
        assert!(!verify(&secret, "msg_1", 1, "{}", ""));
    }

    /// The error is a unit: its words are fixed, so they cannot carry the secret.
    #[test]
    fn refuses_a_secret_that_is_not_whsec_and_base64() {
        for bad in [
            "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
            "whsec_not*base64!",
            "whsec_",
        ] {
            assert_eq!(
                sign(&Secret::new(bad), "msg_1", 1, "{}"),
                Err(InvalidSecret),
                "{bad}"
            );
        }
    }
}

//! `TicketSigner` for live-update tickets: HMAC-SHA256 under a key derived from the service
//! key (never the sealing key itself: one key, one use), so every instance sharing the key
//! file checks every other's tickets. A signature is `<key id>~<base64url of the tag>`; the
//! key id lets a ticket issued just before a key rotation pass while the previous key is kept.

use crate::keyring::ServiceKey;
use crate::sealing::Sealer;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ports::TicketSigner;
use sha2::Sha256;

/// What the service key is mixed with to make the ticket key.
const PURPOSE: &[u8] = b"roomlink live-update tickets v1";

fn tag(key: &ServiceKey, text: &str) -> Option<Hmac<Sha256>> {
    let mut derive = Hmac::<Sha256>::new_from_slice(key.bytes()).ok()?;
    derive.update(PURPOSE);
    let ticket_key = derive.finalize().into_bytes();
    let mut mac = Hmac::<Sha256>::new_from_slice(&ticket_key).ok()?;
    mac.update(text.as_bytes());
    Some(mac)
}

impl TicketSigner for Sealer {
    fn sign(&self, text: &str) -> Result<String> {
        let ring = self.ring();
        let key = ring.current();
        let mac = tag(key, text).ok_or_else(|| Error::internal("ticket key"))?;
        Ok(format!(
            "{}~{}",
            key.id(),
            URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
        ))
    }

    fn verify(&self, text: &str, signature: &str) -> bool {
        let Some((key_id, encoded)) = signature.split_once('~') else {
            return false;
        };
        let Ok(expected) = URL_SAFE_NO_PAD.decode(encoded) else {
            return false;
        };
        let ring = self.ring_holding(key_id);
        let Some(key) = ring.key(key_id) else {
            return false;
        };
        // `verify_slice` compares in constant time.
        tag(key, text).is_some_and(|mac| mac.verify_slice(&expected).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keyring::KeyRing;

    fn sealer(byte: u8, previous: Vec<ServiceKey>) -> Sealer {
        Sealer::new(KeyRing::new(ServiceKey::from_bytes([byte; 32]), previous))
    }

    #[test]
    fn a_signature_verifies_under_the_same_key_only() {
        let a = sealer(1, Vec::new());
        let signature = a.sign("ticket").unwrap();
        assert!(
            signature
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_~-".contains(&b)),
            "URL-safe: {signature}"
        );
        assert!(a.verify("ticket", &signature));
        assert!(!a.verify("ticket2", &signature), "another text");
        assert!(
            !a.verify("ticket", &signature.replace('~', "~A")),
            "altered"
        );
        assert!(!a.verify("ticket", "no-tilde"));
        // Another instance with the same key file checks it; one with another key does not.
        assert!(sealer(1, Vec::new()).verify("ticket", &signature));
        assert!(!sealer(2, Vec::new()).verify("ticket", &signature));
    }

    #[test]
    fn a_ticket_signed_before_a_rotation_passes_while_the_previous_key_is_kept() {
        let before = sealer(1, Vec::new()).sign("ticket").unwrap();
        let rotated = sealer(2, vec![ServiceKey::from_bytes([1; 32])]);
        assert!(rotated.verify("ticket", &before));
        assert_ne!(
            rotated.sign("ticket").unwrap(),
            before,
            "signed with the new key"
        );
        assert!(!sealer(2, Vec::new()).verify("ticket", &before), "dropped");
    }
}

//! The two ports every process wires the same way: the system clock and the OS random source.
//! They live here because they need no framework; [`ManualClock`] is the clock of tests.

use crate::ports::{Clock, IdGenerator};
use crate::secret::Secret;
use std::sync::atomic::{AtomicI64, Ordering};

/// The system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[allow(clippy::disallowed_methods)] // the one place that reads the wall clock
    fn now_ms(&self) -> i64 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        i64::try_from(now.as_millis()).unwrap_or(i64::MAX)
    }
}

/// A clock that moves only when told to.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
    pub fn at(ms: i64) -> Self {
        ManualClock(AtomicI64::new(ms))
    }
    pub fn set(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// Identifiers and secrets from the operating system's CSPRNG.
#[derive(Debug, Default, Clone, Copy)]
pub struct RandomIds;

/// Pairing codes avoid look-alike characters (0/O, 1/I/L): people type them.
const PAIRING_ALPHABET: &[u8; 31] = b"23456789ABCDEFGHJKMNPQRSTUVWXYZ";
/// 10 characters of 31: about 49.5 bits.
pub const PAIRING_CODE_LEN: usize = 10;

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    // The OS random source failing is unrecoverable: no safe id can be made without it.
    #[allow(clippy::expect_used)]
    getrandom::fill(&mut buf).expect("the operating system's random source failed");
    buf
}

/// Encodes bytes as base-32 with the alphabet `[0-9a-v]` (5 bits per character).
fn base32(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
    let mut out = String::with_capacity(bytes.len() * 8 / 5 + 1);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &b in bytes {
        acc = (acc << 8) | u32::from(b);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(char::from(ALPHABET[((acc >> bits) & 31) as usize]));
        }
    }
    if bits > 0 {
        out.push(char::from(ALPHABET[((acc << (5 - bits)) & 31) as usize]));
    }
    out
}

/// Standard base64 with padding (RFC 4648 section 4).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

impl IdGenerator for RandomIds {
    fn entity_id(&self) -> String {
        crate::ids::random_entity_id()
    }

    fn access_token(&self) -> Secret {
        Secret::new(base32(&random_bytes::<20>()))
    }

    fn pairing_code(&self) -> String {
        // Rejection sampling keeps every character equally likely.
        let mut code = String::with_capacity(PAIRING_CODE_LEN);
        while code.len() < PAIRING_CODE_LEN {
            for b in random_bytes::<16>() {
                if usize::from(b) < 31 * 8 && code.len() < PAIRING_CODE_LEN {
                    code.push(char::from(PAIRING_ALPHABET[usize::from(b) % 31]));
                }
            }
        }
        code
    }

    fn webhook_secret(&self) -> Secret {
        Secret::new(format!("whsec_{}", base64(&random_bytes::<32>())))
    }

    fn listener_secret(&self) -> Secret {
        Secret::new(base32(&random_bytes::<30>()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn shapes_and_uniqueness() {
        let ids = RandomIds;
        let id = ids.entity_id();
        assert_eq!(id.len(), 24);
        assert!(
            id.bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        let token = ids.access_token();
        assert_eq!(token.expose().len(), 32);
        assert!(
            token
                .expose()
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'v').contains(&b))
        );
        let code = ids.pairing_code();
        assert_eq!(code.len(), PAIRING_CODE_LEN);
        assert!(code.bytes().all(|b| PAIRING_ALPHABET.contains(&b)));
        let many: HashSet<_> = (0..1000)
            .map(|_| ids.access_token().expose().to_owned())
            .collect();
        assert_eq!(many.len(), 1000);
        assert_eq!(ids.listener_secret().expose().len(), 48);
        let secret = ids.webhook_secret();
        assert!(secret.expose().starts_with("whsec_") && secret.expose().len() == 50);
    }

    #[test]
    fn base64_is_rfc_4648() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
        assert_eq!(base64(&[0xfb, 0xff]), "+/8=");
    }

    #[test]
    fn base32_known_values() {
        assert_eq!(base32(&[0xff; 5]), "vvvvvvvv");
        assert_eq!(base32(&[0; 5]), "00000000");
    }

    #[test]
    fn manual_clock_moves_when_told() {
        let c = ManualClock::at(5);
        c.advance(10);
        assert_eq!(c.now_ms(), 15);
        c.set(1);
        assert_eq!(c.now_ms(), 1);
        assert!(SystemClock.now_ms() > 1_700_000_000_000);
    }
}

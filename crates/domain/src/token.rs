//! Access tokens: lifetimes, the stored hash, and the entity.
//!
//! A token value is 32 characters of `[0-9a-v]` (160 random bits), shown once, in the creation
//! response. Storage keeps only its SHA-256 ([`TokenHash`]); a token is found by hashing what
//! the client sent, so no comparison of secret values ever happens.

use crate::access::{RoleSet, ZeroTouchScope};
use crate::enums::{ClientDeviceType, shorten};
use crate::error::Error;
use crate::ids::{EndpointId, EnterpriseId, PairingCodeId, TokenId};
use crate::secret::Secret;
use sha2::{Digest, Sha256};
use std::fmt;

pub const SECOND_MS: i64 = 1_000;
pub const MINUTE_MS: i64 = 60 * SECOND_MS;
pub const HOUR_MS: i64 = 60 * MINUTE_MS;
pub const DAY_MS: i64 = 24 * HOUR_MS;

/// Default lifetime: two weeks (1,209,600,000 ms, as the predecessor's tokens).
pub const DEFAULT_LIFETIME_MS: i64 = 14 * DAY_MS;
/// Zero Touch tokens live one day.
pub const ZERO_TOUCH_LIFETIME_MS: i64 = DAY_MS;
/// The shortest lifetime `duration` may ask for.
pub const MIN_LIFETIME_MS: i64 = MINUTE_MS;
/// The longest lifetime `duration` may ask for (Zero Touch: [`ZERO_TOUCH_LIFETIME_MS`]).
pub const MAX_LIFETIME_MS: i64 = 365 * DAY_MS;

/// The lifetime of a new token. `duration` is a whole number with an optional unit: `s`
/// (seconds, also when no unit is given), `m`, `h`, `d` or `w`; e.g. `3600`, `90m`, `7d`.
/// It must lie within one minute and 365 days; a Zero Touch token may be shortened, never
/// lengthened past one day.
pub fn lifetime_ms(duration: Option<&str>, zero_touch: bool) -> Result<i64, Error> {
    let max = if zero_touch {
        ZERO_TOUCH_LIFETIME_MS
    } else {
        MAX_LIFETIME_MS
    };
    // Taken as written ("" is the default): the API document describes it with a pattern.
    let Some(text) = duration.filter(|d| !d.is_empty()) else {
        return Ok(if zero_touch {
            ZERO_TOUCH_LIFETIME_MS
        } else {
            DEFAULT_LIFETIME_MS
        });
    };
    let invalid = || {
        Error::invalid(format!(
            "duration: '{}' is not a whole number with an optional unit s, m, h, d or w (e.g. 3600, 90m, 7d)",
            shorten(text)
        ))
    };
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let amount: i64 = digits.parse().map_err(|_| invalid())?;
    let unit_ms = match unit.to_ascii_lowercase().as_str() {
        "" | "s" => SECOND_MS,
        "m" => MINUTE_MS,
        "h" => HOUR_MS,
        "d" => DAY_MS,
        "w" => 7 * DAY_MS,
        _ => return Err(invalid()),
    };
    let ms = amount.checked_mul(unit_ms).ok_or_else(invalid)?;
    if !(MIN_LIFETIME_MS..=max).contains(&ms) {
        return Err(Error::invalid(format!(
            "duration: must lie between 1 minute and {} days",
            max / DAY_MS
        )));
    }
    Ok(ms)
}

/// The SHA-256 of a token value, as lower-case hex: what storage keeps and looks up.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct TokenHash(String);

impl TokenHash {
    pub fn of(token: &Secret) -> TokenHash {
        let digest = Sha256::digest(token.expose().as_bytes());
        let mut hex = String::with_capacity(64);
        for byte in digest {
            use fmt::Write;
            let _ = write!(hex, "{byte:02x}");
        }
        TokenHash(hex)
    }
    pub fn from_stored(hex: String) -> TokenHash {
        TokenHash(hex)
    }
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl serde::Serialize for TokenHash {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// Read back from roomlink's own messages (the cluster bus): 64 lower-case hex digits.
impl<'de> serde::Deserialize<'de> for TokenHash {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let hex = String::deserialize(d)?;
        if hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            Ok(TokenHash(hex))
        } else {
            Err(serde::de::Error::custom("not a token hash"))
        }
    }
}

impl fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Even the hash is shortened in logs: enough to correlate, not to look up.
        write!(f, "TokenHash({}…)", &self.0[..self.0.len().min(8)])
    }
}

/// The Zero Touch part of a pairing-code token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairingGrant {
    pub pairing_code_id: PairingCodeId,
    pub endpoint_id: EndpointId,
    pub client_device_type: Option<ClientDeviceType>,
}

/// Everything a token records; the plain form for construction and storage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenParts {
    pub id: TokenId,
    pub hash: TokenHash,
    pub enterprise_id: EnterpriseId,
    pub enterprise_name: String,
    pub creation_date: i64,
    pub expiration_date: i64,
    pub roles: RoleSet,
    pub client_name: Option<String>,
    /// Who created it: the service or platform username.
    pub creator: Option<String>,
    /// The creator's id on the companion platform, when created from platform credentials.
    pub platform_id: Option<i64>,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub pairing: Option<PairingGrant>,
}

/// An access token. Invariants: it expires after it is created, and it carries a pairing
/// grant exactly when its role is ROLE_PAIRINGCODE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessToken(TokenParts);

impl AccessToken {
    pub fn new(parts: TokenParts) -> Result<Self, Error> {
        if parts.expiration_date <= parts.creation_date {
            return Err(Error::invalid("a token must expire after it is created"));
        }
        if parts.roles.is_zero_touch() != parts.pairing.is_some() {
            return Err(Error::invalid(
                "a pairing grant goes with ROLE_PAIRINGCODE, and only with it",
            ));
        }
        Ok(AccessToken(parts))
    }

    pub fn parts(&self) -> &TokenParts {
        &self.0
    }
    pub fn id(&self) -> &TokenId {
        &self.0.id
    }
    pub fn hash(&self) -> &TokenHash {
        &self.0.hash
    }
    pub fn enterprise_id(&self) -> &EnterpriseId {
        &self.0.enterprise_id
    }
    pub fn roles(&self) -> RoleSet {
        self.0.roles
    }
    pub fn expiration_date(&self) -> i64 {
        self.0.expiration_date
    }
    pub fn pairing(&self) -> Option<&PairingGrant> {
        self.0.pairing.as_ref()
    }

    /// Valid until its expiration date (exclusive).
    pub fn is_live(&self, now_ms: i64) -> bool {
        now_ms < self.0.expiration_date
    }

    /// The Zero Touch scope of a pairing-code token.
    pub fn zero_touch_scope(&self) -> Option<ZeroTouchScope> {
        self.0.pairing.as_ref().map(|g| ZeroTouchScope {
            pairing_code_id: g.pairing_code_id.clone(),
            endpoint_id: g.endpoint_id.clone(),
            token_id: self.0.id.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn default_lifetimes() {
        assert_eq!(lifetime_ms(None, false).unwrap(), 1_209_600_000);
        assert_eq!(lifetime_ms(Some(""), false).unwrap(), DEFAULT_LIFETIME_MS);
        assert_eq!(lifetime_ms(None, true).unwrap(), 86_400_000);
    }

    #[test]
    fn durations_with_units() {
        assert_eq!(lifetime_ms(Some("3600"), false).unwrap(), HOUR_MS);
        assert_eq!(lifetime_ms(Some("3600s"), false).unwrap(), HOUR_MS);
        assert_eq!(lifetime_ms(Some("90m"), false).unwrap(), 90 * MINUTE_MS);
        assert_eq!(lifetime_ms(Some("12H"), false).unwrap(), 12 * HOUR_MS);
        assert_eq!(lifetime_ms(Some("7d"), false).unwrap(), 7 * DAY_MS);
        assert_eq!(lifetime_ms(Some("2w"), false).unwrap(), DEFAULT_LIFETIME_MS);
        assert_eq!(lifetime_ms(Some("60"), false).unwrap(), MIN_LIFETIME_MS);
        assert_eq!(lifetime_ms(Some("365d"), false).unwrap(), MAX_LIFETIME_MS);
        assert_eq!(lifetime_ms(Some("2h"), true).unwrap(), 2 * HOUR_MS);
        assert_eq!(lifetime_ms(Some(""), false).unwrap(), DEFAULT_LIFETIME_MS);
    }

    #[test]
    fn out_of_bounds_or_malformed_durations_are_invalid() {
        for (d, zt) in [
            ("59", false),
            ("366d", false),
            ("0", false),
            ("-5m", false),
            ("5y", false),
            ("m", false),
            ("1.5h", false),
            ("99999999999999999999", false),
            ("2d", true),
            ("9223372036854775807w", false),
            (" 5m", false),
            ("5m ", false),
        ] {
            let e = lifetime_ms(Some(d), zt).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Invalid, "{d}");
            assert!(e.message().starts_with("duration:"));
        }
    }

    #[test]
    fn hash_is_sha256_hex_and_redacted_in_debug() {
        let h = TokenHash::of(&Secret::new("abc"));
        assert_eq!(
            h.as_str(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(!format!("{h:?}").contains("ba7816bf8f01cfea414140de"));
    }

    fn parts(roles: RoleSet, pairing: Option<PairingGrant>) -> TokenParts {
        TokenParts {
            id: TokenId::from_trusted("t".into()),
            hash: TokenHash::of(&Secret::new("x")),
            enterprise_id: EnterpriseId::from_trusted("e".into()),
            enterprise_name: "acme".into(),
            creation_date: 1_000,
            expiration_date: 2_000,
            roles,
            client_name: None,
            creator: None,
            platform_id: None,
            first_name: None,
            last_name: None,
            pairing,
        }
    }

    #[test]
    fn invariants_and_expiry() {
        let t = AccessToken::new(parts(RoleSet::read_write(), None)).unwrap();
        assert!(t.is_live(1_999));
        assert!(!t.is_live(2_000), "expired at its expiration date");
        assert!(AccessToken::new(parts(RoleSet::pairing_code(), None)).is_err());
        let grant = PairingGrant {
            pairing_code_id: PairingCodeId::from_trusted("pc".into()),
            endpoint_id: EndpointId::from_trusted("ep".into()),
            client_device_type: None,
        };
        assert!(AccessToken::new(parts(RoleSet::read_only(), Some(grant.clone()))).is_err());
        let zt = AccessToken::new(parts(RoleSet::pairing_code(), Some(grant))).unwrap();
        assert_eq!(zt.zero_touch_scope().unwrap().endpoint_id.as_str(), "ep");
        let mut backwards = parts(RoleSet::read_only(), None);
        backwards.expiration_date = backwards.creation_date;
        assert!(AccessToken::new(backwards).is_err());
    }
}

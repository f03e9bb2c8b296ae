//! The failed-authentication allowance as the instances of a cluster share it.
//!
//! One instance alone keeps its allowances in memory. Several behind a load balancer would
//! each grant the whole allowance, so a guesser spreading attempts over N instances would get N
//! times it: there the allowances live in the shared database instead, one row per
//! [`FailureKey`], holding one number, as GCRA (the "generic cell rate algorithm", a token
//! bucket kept as a single time) does: the theoretical arrival time `tat`, the time at which
//! the bucket would be full again. A failure moves it one interval later, from now at the
//! earliest; the key is spent while `tat` lies more than `burst - 1` intervals ahead. A failure
//! while spent moves nothing, so failing on does not push the refill further away. The rule is
//! here once; the SQL of the database adapters says the same in one statement (so concurrent
//! failures on several instances each count), and the storage contract tests compare them.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use std::net::IpAddr;

/// `burst` failures at once, then one per `interval_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowance {
    interval_ms: i64,
    burst: i64,
}

/// What spending one failure did to a key's `tat`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spend {
    pub tat_ms: i64,
    /// Whether the failure counted: `false` when the key was already spent (the attempt is to
    /// be refused).
    pub counted: bool,
}

impl Allowance {
    /// `per_minute` failures a minute, as many at once; `None` when 0 (the throttle is off).
    pub fn per_minute(per_minute: u32) -> Option<Allowance> {
        (per_minute > 0).then(|| Allowance {
            interval_ms: (60_000 / i64::from(per_minute)).max(1),
            burst: i64::from(per_minute),
        })
    }

    /// How much later one failure makes `tat`.
    pub fn interval_ms(&self) -> i64 {
        self.interval_ms
    }

    /// How far ahead `tat` may lie while failures still count.
    pub fn slack_ms(&self) -> i64 {
        (self.burst - 1).saturating_mul(self.interval_ms)
    }

    /// Milliseconds until a key with this `tat` may fail again; `None` while it may now.
    pub fn refused_for_ms(&self, tat_ms: Option<i64>, now_ms: i64) -> Option<i64> {
        let ahead = tat_ms?.saturating_sub(now_ms);
        (ahead > self.slack_ms()).then(|| ahead - self.slack_ms())
    }

    /// One failure of a key whose `tat` is `tat_ms` (`None`: never failed, or forgotten).
    pub fn spend(&self, tat_ms: Option<i64>, now_ms: i64) -> Spend {
        match tat_ms {
            Some(tat) if self.refused_for_ms(Some(tat), now_ms).is_some() => Spend {
                tat_ms: tat,
                counted: false,
            },
            tat => Spend {
                tat_ms: tat
                    .unwrap_or(now_ms)
                    .max(now_ms)
                    .saturating_add(self.interval_ms),
                counted: true,
            },
        }
    }
}

/// Whole seconds to wait, rounded up and at least 1 (a `Retry-After: 0` invites a hot loop).
pub fn retry_after_secs(wait_ms: i64) -> u64 {
    u64::try_from(wait_ms.max(1)).unwrap_or(1).div_ceil(1000)
}

/// What a failed attempt guessed at an address: whose allowance it spends.
#[derive(Debug, Clone, Copy)]
pub enum Guessed<'a> {
    /// Basic credentials of a user name (case does not matter: a store or the platform may
    /// match either way, and varying it must not buy a fresh allowance).
    User(&'a str),
    /// Access tokens: a token names no account until it is looked up.
    AccessToken,
    /// Companion-platform access tokens.
    PlatformToken,
    /// The shared secret of one listener service.
    Listener(&'a str),
}

/// The key of one allowance: a keyed hash (HMAC-SHA-256, hex) of the address and what was
/// guessed, so the shared table holds neither user names nor addresses, and nobody without
/// the key can tell which key is whose. Every instance derives the hash key from the service
/// key, which they share.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct FailureKey(String);

impl FailureKey {
    pub fn new(hash_key: &[u8; 32], address: IpAddr, guessed: Guessed<'_>) -> FailureKey {
        let mut mac = Hmac::<Sha256>::new_from_slice(hash_key).expect("HMAC takes any key length");
        let address = match address {
            IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
            IpAddr::V6(v6) => v6.octets(),
        };
        mac.update(&address);
        // A tag, then the name's length before the name: no two inputs hash the same bytes.
        let (tag, name) = match guessed {
            Guessed::User(name) => (b'u', Some(name.to_lowercase())),
            Guessed::AccessToken => (b't', None),
            Guessed::PlatformToken => (b'p', None),
            Guessed::Listener(id) => (b'l', Some(id.to_owned())),
        };
        mac.update(&[tag]);
        if let Some(name) = name {
            mac.update(&(name.len() as u64).to_be_bytes());
            mac.update(name.as_bytes());
        }
        let digest = mac.finalize().into_bytes();
        FailureKey(digest.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// 64 hexadecimal digits.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for FailureKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FailureKey({}…)", &self.0[..8])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn per_minute(n: u32) -> Allowance {
        Allowance::per_minute(n).unwrap()
    }

    #[test]
    fn a_burst_counts_then_the_key_is_refused_until_one_interval_refills() {
        let a = per_minute(3); // one every 20 s
        let mut tat = None;
        for _ in 0..3 {
            assert_eq!(a.refused_for_ms(tat, 0), None);
            let spent = a.spend(tat, 0);
            assert!(spent.counted);
            tat = Some(spent.tat_ms);
        }
        assert_eq!(a.refused_for_ms(tat, 0), Some(20_000));
        // Failing on while refused moves nothing.
        let again = a.spend(tat, 5_000);
        assert_eq!((again.counted, Some(again.tat_ms)), (false, tat));
        assert_eq!(a.refused_for_ms(tat, 19_999), Some(1));
        assert_eq!(a.refused_for_ms(tat, 20_000), None);
        // One failure back, one spent.
        let next = a.spend(tat, 20_000);
        assert!(next.counted);
        assert_eq!(a.refused_for_ms(Some(next.tat_ms), 20_000), Some(20_000));
    }

    #[test]
    fn an_idle_key_refills_to_its_burst_and_no_further() {
        let a = per_minute(2);
        let spent = a.spend(None, 0);
        // An hour later the bucket is full: two failures count, the third is refused.
        let mut tat = Some(spent.tat_ms);
        for _ in 0..2 {
            let s = a.spend(tat, 3_600_000);
            assert!(s.counted);
            tat = Some(s.tat_ms);
        }
        assert!(!a.spend(tat, 3_600_000).counted);
    }

    #[test]
    fn it_agrees_with_a_token_bucket_over_random_failures() {
        let mut rng = crate::test_rng::Rng(7);
        for per in [1u32, 2, 5, 30, 600] {
            let a = per_minute(per);
            let (mut tat, mut now) = (None, 0i64);
            // The same bucket kept as tokens, in whole milliseconds' worth.
            let interval = a.interval_ms();
            let full = i64::from(per) * interval;
            let (mut level, mut at) = (full, 0i64);
            for _ in 0..2_000 {
                now += rng.below(3 * interval as usize) as i64;
                level = (level + (now - at)).min(full);
                at = now;
                let spent = a.spend(tat, now);
                assert_eq!(spent.counted, level >= interval, "{per}/min at {now}");
                if spent.counted {
                    level -= interval;
                }
                tat = Some(spent.tat_ms);
            }
        }
    }

    #[test]
    fn keys_differ_by_address_and_guess_but_not_by_the_case_of_a_name() {
        let hash_key = [7u8; 32];
        let a = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1));
        let b = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));
        let key = |address, guessed| FailureKey::new(&hash_key, address, guessed);
        assert_eq!(key(a, Guessed::User("Ops")), key(a, Guessed::User("ops")));
        let distinct = [
            key(a, Guessed::User("ops")),
            key(b, Guessed::User("ops")),
            key(a, Guessed::User("op")),
            key(a, Guessed::Listener("ops")),
            key(a, Guessed::AccessToken),
            key(a, Guessed::PlatformToken),
        ];
        for (i, x) in distinct.iter().enumerate() {
            for y in &distinct[i + 1..] {
                assert_ne!(x, y);
            }
            assert_eq!(x.as_str().len(), 64);
            assert!(!format!("{x:?}").contains(&x.as_str()[8..]));
        }
        // Another hash key, another key: nothing to compare across deployments.
        assert_ne!(
            FailureKey::new(&[8u8; 32], a, Guessed::AccessToken),
            key(a, Guessed::AccessToken)
        );
    }

    #[test]
    fn retry_after_is_whole_seconds_and_never_zero() {
        assert_eq!(retry_after_secs(0), 1);
        assert_eq!(retry_after_secs(1), 1);
        assert_eq!(retry_after_secs(1000), 1);
        assert_eq!(retry_after_secs(1001), 2);
    }
}

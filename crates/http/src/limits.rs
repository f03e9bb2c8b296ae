//! Abuse limits: request rates per client address and per access token, throttling of
//! repeated failed authentication, and a bound on request header size.
//!
//! Rates are token buckets kept in memory per process (several instances each apply their
//! own). A refusal is `TooManyRequests` with `Retry-After`, decided before any password hash
//! or database work, so a flood costs little.

use roomlink_domain::{Error, ErrorKind};
use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash};
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Instant;

/// One token bucket: `rate_per_sec` sustained, up to `burst` at once. A zero rate disables it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub rate_per_sec: f64,
    pub burst: f64,
}

impl Rate {
    pub const OFF: Rate = Rate {
        rate_per_sec: 0.0,
        burst: 0.0,
    };

    fn enabled(self) -> bool {
        self.rate_per_sec > 0.0 && self.burst >= 1.0
    }
}

/// The limits a server applies. `Default` applies none (tests and embedding); the binary's
/// configuration has the documented defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LimitOptions {
    /// Requests per client address.
    pub per_address: Rate,
    /// Requests per access token (Basic-authenticated requests count per address only).
    pub per_token: Rate,
    /// Failed authentications (401) per client address; past it, requests from that address
    /// are refused until the bucket refills.
    pub auth_failures: Rate,
    /// All request headers together, in bytes; 0 disables.
    pub max_header_bytes: usize,
}

impl Default for LimitOptions {
    fn default() -> Self {
        LimitOptions {
            per_address: Rate::OFF,
            per_token: Rate::OFF,
            auth_failures: Rate::OFF,
            max_header_bytes: 0,
        }
    }
}

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

/// Buckets by key. Keys of full (idle) buckets are dropped when the map grows, so memory stays
/// bounded by the number of recently active clients.
struct Buckets<K> {
    rate: Rate,
    map: Mutex<HashMap<K, Bucket>>,
}

const PRUNE_AT: usize = 10_000;

impl<K: Hash + Eq + Copy> Buckets<K> {
    fn new(rate: Rate) -> Self {
        Buckets {
            rate,
            map: Mutex::new(HashMap::new()),
        }
    }

    fn refill(&self, b: &mut Bucket, now: Instant) {
        let elapsed = now.saturating_duration_since(b.updated).as_secs_f64();
        b.tokens = (b.tokens + elapsed * self.rate.rate_per_sec).min(self.rate.burst);
        b.updated = now;
    }

    /// Seconds until one token is available (at least 1), or `None` when one is there now.
    fn wait_secs(&self, tokens: f64) -> Option<u64> {
        (tokens < 1.0).then(|| (((1.0 - tokens) / self.rate.rate_per_sec).ceil() as u64).max(1))
    }

    /// Takes `cost` tokens (0 only looks); `Err(retry_after_secs)` when fewer than one is left.
    fn take(&self, key: K, cost: f64, now: Instant) -> Result<(), u64> {
        if !self.rate.enabled() {
            return Ok(());
        }
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= PRUNE_AT {
            let rate = self.rate;
            map.retain(|_, b| {
                let idle = now.saturating_duration_since(b.updated).as_secs_f64();
                b.tokens + idle * rate.rate_per_sec < rate.burst
            });
        }
        let bucket = map.entry(key).or_insert(Bucket {
            tokens: self.rate.burst,
            updated: now,
        });
        self.refill(bucket, now);
        if let Some(wait) = self.wait_secs(bucket.tokens) {
            return Err(wait);
        }
        bucket.tokens -= cost;
        Ok(())
    }
}

/// Which limit refused a request (the `limit` detail of `TooManyRequests`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Address,
    Token,
    AuthFailures,
}

impl Limit {
    pub fn name(self) -> &'static str {
        match self {
            Limit::Address => "address",
            Limit::Token => "token",
            Limit::AuthFailures => "authFailures",
        }
    }
}

pub struct Limiter {
    options: LimitOptions,
    per_address: Buckets<IpAddr>,
    /// Keyed by a keyed hash of the token, so the map holds no credential.
    per_token: Buckets<u64>,
    auth_failures: Buckets<IpAddr>,
    token_keys: RandomState,
}

impl Limiter {
    pub fn new(options: LimitOptions) -> Limiter {
        Limiter {
            options,
            per_address: Buckets::new(options.per_address),
            per_token: Buckets::new(options.per_token),
            auth_failures: Buckets::new(options.auth_failures),
            token_keys: RandomState::new(),
        }
    }

    /// `RequestHeaderFieldsTooLarge` when the headers exceed the bound.
    pub fn check_headers(&self, header_bytes: usize) -> Result<(), Error> {
        let limit = self.options.max_header_bytes;
        if limit > 0 && header_bytes > limit {
            return Err(Error::new(
                ErrorKind::RequestHeaderFieldsTooLarge,
                format!("The request headers exceed the limit of {limit} bytes."),
            )
            .with("limitBytes", limit));
        }
        Ok(())
    }

    /// Admits a request from `address`, carrying `token` if any, or says which limit refuses.
    pub fn admit(
        &self,
        address: Option<IpAddr>,
        token: Option<&str>,
        now: Instant,
    ) -> Result<(), (Limit, u64)> {
        if let Some(ip) = address {
            // Looking only: a throttled address is refused before its credentials are checked.
            self.auth_failures
                .take(ip, 0.0, now)
                .map_err(|s| (Limit::AuthFailures, s))?;
            self.per_address
                .take(ip, 1.0, now)
                .map_err(|s| (Limit::Address, s))?;
        }
        if let Some(token) = token {
            let key = self.token_keys.hash_one(token);
            self.per_token
                .take(key, 1.0, now)
                .map_err(|s| (Limit::Token, s))?;
        }
        Ok(())
    }

    /// Counts a failed authentication from `address`.
    pub fn failed_authentication(&self, address: IpAddr, now: Instant) {
        // The refusal, if any, comes with the next request.
        let _ = self.auth_failures.take(address, 1.0, now);
    }
}

/// The catalog error for a refusal.
pub fn too_many_requests(limit: Limit, retry_after_secs: u64) -> Error {
    let what = match limit {
        Limit::Address => "requests from this address",
        Limit::Token => "requests with this access token",
        Limit::AuthFailures => "failed authentication attempts from this address",
    };
    Error::new(
        ErrorKind::TooManyRequests,
        format!("Too many {what}; retry after {retry_after_secs} s."),
    )
    .with("retryAfterSeconds", retry_after_secs)
    .with("limit", limit.name())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const IP: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    fn limiter(per_address: Rate, per_token: Rate, auth_failures: Rate) -> Limiter {
        Limiter::new(LimitOptions {
            per_address,
            per_token,
            auth_failures,
            max_header_bytes: 100,
        })
    }

    #[test]
    fn a_bucket_allows_its_burst_then_refills_at_its_rate() {
        let l = limiter(
            Rate {
                rate_per_sec: 2.0,
                burst: 3.0,
            },
            Rate::OFF,
            Rate::OFF,
        );
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(l.admit(Some(IP), None, t0), Ok(()));
        }
        assert_eq!(l.admit(Some(IP), None, t0), Err((Limit::Address, 1)));
        // Half a second at 2/s refills one.
        let t1 = t0 + Duration::from_millis(500);
        assert_eq!(l.admit(Some(IP), None, t1), Ok(()));
        assert!(l.admit(Some(IP), None, t1).is_err());
        // Another address is not affected.
        let other = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));
        assert_eq!(l.admit(Some(other), None, t1), Ok(()));
    }

    #[test]
    fn tokens_are_limited_separately_and_retry_after_reflects_the_rate() {
        let slow = Rate {
            rate_per_sec: 0.1,
            burst: 1.0,
        };
        let l = limiter(Rate::OFF, slow, Rate::OFF);
        let t0 = Instant::now();
        assert_eq!(l.admit(Some(IP), Some("a"), t0), Ok(()));
        assert_eq!(l.admit(Some(IP), Some("a"), t0), Err((Limit::Token, 10)));
        assert_eq!(l.admit(Some(IP), Some("b"), t0), Ok(()));
        assert_eq!(l.admit(Some(IP), None, t0), Ok(()));
    }

    #[test]
    fn failed_authentications_throttle_the_address_only_once_spent() {
        let l = limiter(
            Rate::OFF,
            Rate::OFF,
            Rate {
                rate_per_sec: 1.0 / 60.0,
                burst: 2.0,
            },
        );
        let t0 = Instant::now();
        assert_eq!(l.admit(Some(IP), None, t0), Ok(()));
        l.failed_authentication(IP, t0);
        assert_eq!(l.admit(Some(IP), None, t0), Ok(()));
        l.failed_authentication(IP, t0);
        assert_eq!(l.admit(Some(IP), None, t0), Err((Limit::AuthFailures, 60)));
        assert_eq!(
            l.admit(Some(IP), None, t0 + Duration::from_secs(60)),
            Ok(())
        );
    }

    #[test]
    fn header_bound_and_disabled_limits() {
        let l = Limiter::new(LimitOptions::default());
        let t0 = Instant::now();
        for _ in 0..1000 {
            assert_eq!(l.admit(Some(IP), Some("t"), t0), Ok(()));
        }
        assert!(l.check_headers(1 << 20).is_ok());
        let l = limiter(Rate::OFF, Rate::OFF, Rate::OFF);
        assert!(l.check_headers(100).is_ok());
        let e = l.check_headers(101).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::RequestHeaderFieldsTooLarge);
    }
}

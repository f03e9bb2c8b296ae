//! Abuse limits: request rates per client address and per access token, throttling of
//! repeated failed authentication, and a bound on request header size.
//!
//! Rates are governor's keyed GCRA limiters (a token bucket by another name) kept in memory per
//! process (several instances each apply their own). A refusal is `TooManyRequests` with
//! `Retry-After`, decided before any password hash or database work, so a flood costs little.
//! The failed-authentication throttle is our own ([`throttle`]): see there for why.

mod throttle;

use governor::clock::{Clock, MonotonicClock};
use governor::middleware::NoOpMiddleware;
use governor::state::keyed::DashMapStateStore;
use governor::{Quota, RateLimiter};
use roomlink_domain::{Error, ErrorKind};
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// One token bucket: `rate_per_sec` sustained, up to `burst` at once. A zero rate disables it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub rate_per_sec: f64,
    pub burst: f64,
}

/// governor keeps time in u64 nanoseconds and panics past them: a full bucket must refill
/// within this, whatever the configuration says (a century is "never" for a rate limit).
const MAX_REFILL_SECS: f64 = 100.0 * 365.0 * 86_400.0;

impl Rate {
    pub const OFF: Rate = Rate {
        rate_per_sec: 0.0,
        burst: 0.0,
    };

    fn enabled(self) -> bool {
        self.rate_per_sec > 0.0 && self.burst >= 1.0
    }

    /// The same bucket as a governor quota; `None` when the rate is off.
    fn quota(self) -> Option<Quota> {
        if !self.enabled() {
            return None;
        }
        // A fractional burst rounds down, as a bucket can only hand out whole requests.
        let burst = NonZeroU32::new(self.burst.min(f64::from(u32::MAX)) as u32)?;
        let period = (1.0 / self.rate_per_sec)
            .min(MAX_REFILL_SECS / f64::from(burst.get()))
            .max(1e-9);
        Quota::with_period(Duration::from_secs_f64(period)).map(|q| q.allow_burst(burst))
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

/// Whole seconds to wait, rounded up and at least 1 (a `Retry-After: 0` invites a hot loop).
fn retry_after_secs(wait: Duration) -> u64 {
    (wait.as_secs_f64().ceil() as u64).max(1)
}

/// Checks between two prunings of a keyed limiter.
const PRUNE_EVERY: usize = 4096;

type Keyed<K, C> = RateLimiter<K, DashMapStateStore<K>, C, NoOpMiddleware<<C as Clock>::Instant>>;

/// One keyed limiter (none when its rate is off).
///
/// governor keeps a state per key forever unless told otherwise. Every [`PRUNE_EVERY`] checks,
/// `retain_recent` drops the keys whose bucket is full again (for governor, a full bucket and
/// an absent key are the same), so the map holds the clients active within one refill time plus
/// at most `PRUNE_EVERY` newcomers. Pruning walks the map, so its cost spreads over the checks
/// in between; the map's memory is handed back only when pruning at least halved it, as a map
/// that stays large would grow again at once.
struct Buckets<K: Hash + Eq + Clone, C: Clock> {
    limiter: Option<Keyed<K, C>>,
    checks: AtomicUsize,
}

impl<K: Hash + Eq + Clone, C: Clock + Clone> Buckets<K, C> {
    fn new(rate: Rate, clock: &C) -> Self {
        Buckets {
            limiter: rate
                .quota()
                .map(|quota| RateLimiter::dashmap_with_clock(quota, clock.clone())),
            checks: AtomicUsize::new(0),
        }
    }

    /// Takes one request's token; `Err(retry_after_secs)` when the bucket is empty.
    fn check(&self, key: &K) -> Result<(), u64> {
        let Some(limiter) = &self.limiter else {
            return Ok(());
        };
        if self.checks.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            let before = limiter.len();
            limiter.retain_recent();
            if limiter.len() <= before / 2 {
                limiter.shrink_to_fit();
            }
        }
        limiter
            .check_key(key)
            .map_err(|not_until| retry_after_secs(not_until.wait_time_from(limiter.clock().now())))
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.limiter.as_ref().map_or(0, RateLimiter::len)
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

/// The limits of one server. The clock is governor's: the monotonic one in service, a fake one
/// that tests advance by hand.
pub struct Limiter<C: Clock = MonotonicClock> {
    options: LimitOptions,
    per_address: Buckets<IpAddr, C>,
    /// Keyed by a keyed hash of the token, so the map holds no credential.
    per_token: Buckets<u64, C>,
    auth_failures: throttle::FailureThrottle<C>,
    token_keys: RandomState,
}

impl Limiter {
    pub fn new(options: LimitOptions) -> Limiter {
        Limiter::with_clock(options, MonotonicClock)
    }
}

impl<C: Clock + Clone> Limiter<C> {
    pub fn with_clock(options: LimitOptions, clock: C) -> Limiter<C> {
        Limiter {
            options,
            per_address: Buckets::new(options.per_address, &clock),
            per_token: Buckets::new(options.per_token, &clock),
            auth_failures: throttle::FailureThrottle::new(options.auth_failures, clock),
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
    pub fn admit(&self, address: Option<IpAddr>, token: Option<&str>) -> Result<(), (Limit, u64)> {
        if let Some(ip) = address {
            // Looking only: a throttled address is refused before its credentials are checked.
            self.auth_failures
                .check(ip)
                .map_err(|s| (Limit::AuthFailures, s))?;
            self.per_address
                .check(&ip)
                .map_err(|s| (Limit::Address, s))?;
        }
        if let Some(token) = token {
            let key = self.token_keys.hash_one(token);
            self.per_token.check(&key).map_err(|s| (Limit::Token, s))?;
        }
        Ok(())
    }

    /// Counts a failed authentication from `address`; the refusal, if any, comes with the next
    /// request.
    pub fn failed_authentication(&self, address: IpAddr) {
        self.auth_failures.failed(address);
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
    use governor::clock::FakeRelativeClock;

    const IP: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    fn limiter(
        per_address: Rate,
        per_token: Rate,
        auth_failures: Rate,
    ) -> (Limiter<FakeRelativeClock>, FakeRelativeClock) {
        let clock = FakeRelativeClock::default();
        let options = LimitOptions {
            per_address,
            per_token,
            auth_failures,
            max_header_bytes: 100,
        };
        (Limiter::with_clock(options, clock.clone()), clock)
    }

    #[test]
    fn a_bucket_allows_its_burst_then_refills_at_its_rate() {
        let rate = Rate {
            rate_per_sec: 2.0,
            burst: 3.0,
        };
        let (l, clock) = limiter(rate, Rate::OFF, Rate::OFF);
        for _ in 0..3 {
            assert_eq!(l.admit(Some(IP), None), Ok(()));
        }
        assert_eq!(l.admit(Some(IP), None), Err((Limit::Address, 1)));
        // Half a second at 2/s refills one.
        clock.advance(Duration::from_millis(500));
        assert_eq!(l.admit(Some(IP), None), Ok(()));
        assert!(l.admit(Some(IP), None).is_err());
        // Another address is not affected.
        let other = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));
        assert_eq!(l.admit(Some(other), None), Ok(()));
    }

    #[test]
    fn tokens_are_limited_separately_and_retry_after_reflects_the_rate() {
        let slow = Rate {
            rate_per_sec: 0.1,
            burst: 1.0,
        };
        let (l, clock) = limiter(Rate::OFF, slow, Rate::OFF);
        assert_eq!(l.admit(Some(IP), Some("a")), Ok(()));
        assert_eq!(l.admit(Some(IP), Some("a")), Err((Limit::Token, 10)));
        clock.advance(Duration::from_millis(2500));
        assert_eq!(l.admit(Some(IP), Some("a")), Err((Limit::Token, 8)));
        assert_eq!(l.admit(Some(IP), Some("b")), Ok(()));
        assert_eq!(l.admit(Some(IP), None), Ok(()));
    }

    #[test]
    fn failed_authentications_throttle_the_address_only_once_spent() {
        let per_minute = Rate {
            rate_per_sec: 1.0 / 60.0,
            burst: 2.0,
        };
        let (l, clock) = limiter(Rate::OFF, Rate::OFF, per_minute);
        assert_eq!(l.admit(Some(IP), None), Ok(()));
        l.failed_authentication(IP);
        assert_eq!(l.admit(Some(IP), None), Ok(()));
        l.failed_authentication(IP);
        assert_eq!(l.admit(Some(IP), None), Err((Limit::AuthFailures, 60)));
        clock.advance(Duration::from_secs(60));
        assert_eq!(l.admit(Some(IP), None), Ok(()));
    }

    #[test]
    fn header_bound_and_disabled_limits() {
        let l = Limiter::new(LimitOptions::default());
        for _ in 0..1000 {
            assert_eq!(l.admit(Some(IP), Some("t")), Ok(()));
        }
        assert!(l.check_headers(1 << 20).is_ok());
        let (l, _) = limiter(Rate::OFF, Rate::OFF, Rate::OFF);
        assert!(l.check_headers(100).is_ok());
        let e = l.check_headers(101).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::RequestHeaderFieldsTooLarge);
    }

    #[test]
    fn extreme_rates_neither_panic_nor_switch_the_limit_off() {
        for (rate_per_sec, burst) in [
            (1e-300, 1.0),
            (1e-300, 4e9),
            (1e300, 1.0),
            (f64::MIN_POSITIVE, f64::INFINITY),
        ] {
            let (l, _) = limiter(
                Rate {
                    rate_per_sec,
                    burst,
                },
                Rate::OFF,
                Rate::OFF,
            );
            assert_eq!(l.admit(Some(IP), None), Ok(()), "{rate_per_sec} {burst}");
        }
        let (l, _) = limiter(
            Rate {
                rate_per_sec: 1e-300,
                burst: 1.0,
            },
            Rate::OFF,
            Rate::OFF,
        );
        assert_eq!(l.admit(Some(IP), None), Ok(()));
        assert!(l.admit(Some(IP), None).is_err());
        for off in [f64::NAN, 0.0, -1.0] {
            let rate = Rate {
                rate_per_sec: off,
                burst: 1.0,
            };
            assert_eq!(rate.quota(), None);
        }
    }

    #[test]
    fn idle_keys_are_pruned_so_memory_stays_bounded() {
        let rate = Rate {
            rate_per_sec: 10.0,
            burst: 5.0,
        };
        let (l, clock) = limiter(rate, Rate::OFF, Rate::OFF);
        for i in 0..PRUNE_EVERY as u32 - 1 {
            let ip = IpAddr::V4(std::net::Ipv4Addr::from(i));
            assert_eq!(l.admit(Some(ip), None), Ok(()));
        }
        assert_eq!(l.per_address.len(), PRUNE_EVERY - 1);
        // Once every bucket has refilled, the next pruning forgets them all.
        clock.advance(Duration::from_secs(1));
        assert_eq!(l.admit(Some(IP), None), Ok(()));
        assert_eq!(l.per_address.len(), 1);
    }
}

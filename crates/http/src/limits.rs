//! Abuse limits: request rates per client address and per access token, throttling of
//! repeated failed authentication, and a bound on request header size.
//!
//! Rates are keyed GCRA buckets (a token bucket by another name, [`buckets`]) kept in memory.
//! In a cluster each instance reports the requests it admitted to the others every
//! [`REPORT_EVERY`] ([`Limiter::report`], a `RequestsAdmitted` event on the cluster bus), and
//! charges theirs to its own buckets ([`Limiter::charge`]): the limits then hold for the
//! cluster as a whole, up to what the instances admit within one report's delay. Without the
//! bus (NATS down) each instance applies its own. Failed authentications are counted for the
//! whole cluster in the database where the use cases say so (`roomlink_app::auth_failures`):
//! see `caller::throttled`. A refusal is `TooManyRequests` with
//! `Retry-After`, decided before any password hash or database work, so a flood costs little.
//! The failed-authentication throttle is our own ([`throttle`]): see there for why. It is not
//! applied here before routing but where credentials are checked ([`Limiter::attempt`]), as
//! it counts per credential: see [`Attempt`].

mod buckets;
mod throttle;

use buckets::Buckets;
use governor::clock::{Clock, MonotonicClock};
use roomlink_domain::cluster::{ClusterEvent, EventSink};
use roomlink_domain::throttle::Guessed;
use roomlink_domain::{Error, ErrorKind};
use siphasher::sip::SipHasher13;
use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hash, Hasher};
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

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
    /// Failed authentications (401) per client address and [`Attempt`]: past it, that attempt
    /// from that address is refused until the bucket refills.
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
pub(crate) fn retry_after_secs(wait: Duration) -> u64 {
    (wait.as_secs_f64().ceil() as u64).max(1)
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

/// Credentials a request presents, as the failed-authentication throttle counts them.
///
/// Failures count per client address and, within it, per what they guess: so a guesser
/// behind a NAT or proxy spends its own allowance, not its neighbours'.
#[derive(Debug, Clone, Copy)]
pub enum Attempt<'a> {
    /// Basic credentials of this user name (a service or companion-platform user). A spent
    /// pair is refused before its password is verified, the right one included: refusing the
    /// guessed account at the guessing address is what stops online guessing, and it costs no
    /// password hash.
    Password { username: &'a str },
    /// An access token. A token names no account, so its failures count for the address; a
    /// spent address still gets its tokens looked up (a cache hit or one indexed read), and
    /// only those that fail are refused, so a valid token always passes.
    AccessToken,
    /// A companion-platform access token: like [`Attempt::AccessToken`], in its own bucket.
    PlatformToken,
    /// An outbound listener's shared secret for this listener id: like a password.
    ListenerSecret { listener: &'a str },
}

impl<'a> Attempt<'a> {
    /// What the attempt guesses, as the cluster-wide allowances name it.
    pub fn guessed(self) -> Guessed<'a> {
        match self {
            Attempt::Password { username } => Guessed::User(username),
            Attempt::AccessToken => Guessed::AccessToken,
            Attempt::PlatformToken => Guessed::PlatformToken,
            Attempt::ListenerSecret { listener } => Guessed::Listener(listener),
        }
    }
}

/// An [`Attempt`] from one address, ready to check and count (no credential in it).
#[derive(Debug, Clone, Copy)]
pub struct AttemptKey {
    /// `None` without a peer address (tests driving the app without a socket).
    key: Option<throttle::Key>,
    /// Whether a spent key is refused before verifying (named accounts) or only when
    /// verifying fails (tokens).
    refuse_unverified: bool,
}

/// The limits of one server. The clock is governor's: the monotonic one in service, a fake one
/// that tests advance by hand.
pub struct Limiter<C: Clock = MonotonicClock> {
    options: LimitOptions,
    per_address: Buckets<IpAddr, C>,
    /// Keyed by a keyed hash of the token, so the map holds no credential.
    per_token: Buckets<u64, C>,
    auth_failures: throttle::FailureThrottle<C>,
    /// The hash key for tokens, user names and listener ids in map keys: random per process,
    /// so nobody can aim collisions or recover a name from a hash.
    token_keys: RandomState,
    /// In a cluster: what this instance tells the others.
    sharing: Option<Sharing>,
    /// When the log last said that the cluster-wide allowances could not be asked.
    shared_warned: Mutex<Option<Instant>>,
}

/// How often an instance of a cluster reports the requests it admitted: the delay within which
/// the instances together may admit more than one bucket's worth.
pub const REPORT_EVERY: Duration = Duration::from_millis(50);

/// The most keys of each kind one report holds (a report stays far below NATS's 1 MB message
/// limit); requests of further keys in the same interval count on this instance only.
const MAX_REPORTED_KEYS: usize = 10_000;

/// An instance's part in the cluster's rate limits.
struct Sharing {
    /// This instance's id: its own reports, heard back from the bus, charge nothing.
    instance: String,
    /// The key of the tokens' hash, which every instance must share to name a token alike.
    token_key: [u8; 16],
    admitted: Mutex<Admitted>,
}

/// Requests admitted since the last report.
#[derive(Default)]
struct Admitted {
    addresses: HashMap<IpAddr, u32>,
    tokens: HashMap<u64, u32>,
}

fn count_in<K: Hash + Eq>(counts: &mut HashMap<K, u32>, key: K) {
    if let Some(n) = counts.get_mut(&key) {
        *n = n.saturating_add(1);
    } else if counts.len() < MAX_REPORTED_KEYS {
        counts.insert(key, 1);
    }
}

/// At most one warning per this while the cluster-wide allowances cannot be asked.
const SHARED_WARNING_EVERY: Duration = Duration::from_secs(60);

impl Limiter {
    pub fn new(options: LimitOptions) -> Limiter {
        Limiter::with_clock(options, MonotonicClock)
    }

    /// The limiter of `instance`, one of a cluster's: tokens are hashed with `token_key` (the
    /// same on every instance), and [`Limiter::report`] has the requests to tell the others.
    pub fn in_cluster(options: LimitOptions, instance: String, token_key: [u8; 16]) -> Limiter {
        Limiter::with_clock(options, MonotonicClock).sharing(instance, token_key)
    }
}

impl std::fmt::Debug for Limiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limiter")
            .field("options", &self.options)
            .field("in_cluster", &self.sharing.is_some())
            .finish_non_exhaustive()
    }
}

/// Other instances' reports: their requests count here too.
impl EventSink for Limiter {
    fn apply(&self, event: &ClusterEvent) {
        self.charge(event);
    }
}

impl AttemptKey {
    /// Whether a spent allowance refuses the attempt before its credentials are verified.
    pub fn refuses_unverified(&self) -> bool {
        self.refuse_unverified
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
            sharing: None,
            shared_warned: Mutex::new(None),
        }
    }

    fn sharing(mut self, instance: String, token_key: [u8; 16]) -> Self {
        self.sharing = Some(Sharing {
            instance,
            token_key,
            admitted: Mutex::new(Admitted::default()),
        });
        self
    }

    /// A token's key in the per-token buckets (and in reports, where the key is shared).
    fn token_key(&self, token: &str) -> u64 {
        match &self.sharing {
            Some(sharing) => {
                let mut hasher = SipHasher13::new_with_key(&sharing.token_key);
                hasher.write(token.as_bytes());
                hasher.finish()
            }
            None => self.token_keys.hash_one(token),
        }
    }

    /// In a cluster: the requests admitted since the last report, to send to the other
    /// instances; `None` when there were none (or this instance is alone).
    pub fn report(&self) -> Option<ClusterEvent> {
        let sharing = self.sharing.as_ref()?;
        let admitted = std::mem::take(
            &mut *sharing
                .admitted
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        if admitted.addresses.is_empty() && admitted.tokens.is_empty() {
            return None;
        }
        Some(ClusterEvent::RequestsAdmitted {
            instance: sharing.instance.clone(),
            addresses: admitted.addresses.into_iter().collect(),
            tokens: admitted.tokens.into_iter().collect(),
        })
    }

    /// Charges another instance's report to this instance's buckets (its own report, heard
    /// back, and other events change nothing).
    pub fn charge(&self, event: &ClusterEvent) {
        let ClusterEvent::RequestsAdmitted {
            instance,
            addresses,
            tokens,
        } = event
        else {
            return;
        };
        if self
            .sharing
            .as_ref()
            .is_none_or(|s| s.instance == *instance)
        {
            return;
        }
        for (address, requests) in addresses {
            self.per_address.charge(address, *requests);
        }
        for (token, requests) in tokens {
            self.per_token.charge(token, *requests);
        }
    }

    /// The cluster-wide allowances could not be asked: this instance's own count decides
    /// meanwhile. Says so in the log, at most once a minute.
    pub fn shared_unreachable(&self, error: &Error) {
        let mut warned = self
            .shared_warned
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if warned.is_none_or(|at| at.elapsed() >= SHARED_WARNING_EVERY) {
            *warned = Some(Instant::now());
            tracing::warn!(
                error = %error,
                "cannot reach the cluster-wide failed-authentication allowances; this instance \
                 throttles failed authentications on its own count meanwhile"
            );
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
    /// (The failed-authentication throttle is applied where credentials are checked: see
    /// [`Limiter::attempt`].)
    pub fn admit(&self, address: Option<IpAddr>, token: Option<&str>) -> Result<(), (Limit, u64)> {
        if let Some(ip) = address {
            self.per_address
                .check(&ip)
                .map_err(|s| (Limit::Address, s))?;
        }
        let token = token.map(|token| self.token_key(token));
        if let Some(key) = token {
            self.per_token.check(&key).map_err(|s| (Limit::Token, s))?;
        }
        if let Some(sharing) = &self.sharing {
            let mut admitted = sharing
                .admitted
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some(ip) = address {
                count_in(&mut admitted.addresses, ip);
            }
            if let Some(key) = token {
                count_in(&mut admitted.tokens, key);
            }
        }
        Ok(())
    }

    /// The throttle's key for `attempt` from `address`. User names count case-insensitively,
    /// so that varying the case of a name a store or the platform may match either way does
    /// not buy a fresh allowance.
    pub fn attempt(&self, address: Option<IpAddr>, attempt: Attempt<'_>) -> AttemptKey {
        let kind = match attempt {
            Attempt::Password { username } => {
                throttle::Kind::User(self.token_keys.hash_one(("user", username.to_lowercase())))
            }
            Attempt::AccessToken => throttle::Kind::AccessToken,
            Attempt::PlatformToken => throttle::Kind::PlatformToken,
            Attempt::ListenerSecret { listener } => {
                throttle::Kind::Listener(self.token_keys.hash_one(("listener", listener)))
            }
        };
        AttemptKey {
            key: address.map(|address| throttle::Key { address, kind }),
            refuse_unverified: matches!(
                attempt,
                Attempt::Password { .. } | Attempt::ListenerSecret { .. }
            ),
        }
    }

    /// Before the credentials are verified: `Err(retry_after_secs)` when the attempt is to be
    /// refused unverified (a named account whose allowance from this address is spent).
    /// Spends nothing.
    pub fn before_verifying(&self, attempt: &AttemptKey) -> Result<(), u64> {
        match attempt.key {
            Some(key) if attempt.refuse_unverified => self.auth_failures.check(key),
            _ => Ok(()),
        }
    }

    /// After the credentials failed verification: `Err(retry_after_secs)` when the answer is
    /// to be a refusal rather than the failure, as the allowance was already spent (nothing
    /// more is spent then); else counts the failure, and the refusal, if any, comes with the
    /// next failing attempt.
    pub fn verifying_failed(&self, attempt: &AttemptKey) -> Result<(), u64> {
        let Some(key) = attempt.key else {
            return Ok(());
        };
        self.auth_failures.check(key)?;
        self.auth_failures.failed(key);
        Ok(())
    }
}

/// The catalog error for a refusal.
pub fn too_many_requests(limit: Limit, retry_after_secs: u64) -> Error {
    let what = match limit {
        Limit::Address => "requests from this address",
        Limit::Token => "requests with this access token",
        Limit::AuthFailures => "failed authentication attempts like this one from this address",
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

    fn per_minute(burst: f64) -> Rate {
        Rate {
            rate_per_sec: burst / 60.0,
            burst,
        }
    }

    #[test]
    fn a_password_guesser_is_refused_for_the_guessed_user_only() {
        let (l, clock) = limiter(Rate::OFF, Rate::OFF, per_minute(2.0));
        let guessed = l.attempt(Some(IP), Attempt::Password { username: "x" });
        for _ in 0..2 {
            assert_eq!(l.before_verifying(&guessed), Ok(()));
            assert_eq!(l.verifying_failed(&guessed), Ok(()));
        }
        // Refused before verifying, whatever the password: 2 per minute, one back in 30 s.
        assert_eq!(l.before_verifying(&guessed), Err(30));
        // Another case of the same name is the same account.
        let shouted = l.attempt(Some(IP), Attempt::Password { username: "X" });
        assert_eq!(l.before_verifying(&shouted), Err(30));
        // Other users and tokens from the same address, and the same user from another
        // address, pass.
        let other_address = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));
        for other in [
            l.attempt(Some(IP), Attempt::Password { username: "y" }),
            l.attempt(Some(IP), Attempt::AccessToken),
            l.attempt(Some(IP), Attempt::PlatformToken),
            l.attempt(Some(IP), Attempt::ListenerSecret { listener: "x" }),
            l.attempt(Some(other_address), Attempt::Password { username: "x" }),
        ] {
            assert_eq!(l.before_verifying(&other), Ok(()), "{other:?}");
        }
        // Without an address there is nothing to key by.
        let unknown = l.attempt(None, Attempt::Password { username: "x" });
        assert_eq!(l.before_verifying(&unknown), Ok(()));
        assert_eq!(l.verifying_failed(&unknown), Ok(()));
        // Requests are not limited by any of it.
        assert_eq!(l.admit(Some(IP), None), Ok(()));
        clock.advance(Duration::from_secs(30));
        assert_eq!(l.before_verifying(&guessed), Ok(()));
    }

    #[test]
    fn a_token_guesser_is_refused_only_for_tokens_that_fail() {
        let (l, clock) = limiter(Rate::OFF, Rate::OFF, per_minute(2.0));
        let token = l.attempt(Some(IP), Attempt::AccessToken);
        // Two failures answer as failures.
        assert_eq!(l.verifying_failed(&token), Ok(()));
        assert_eq!(l.verifying_failed(&token), Ok(()));
        // A token is always looked up: a valid one passes however spent the address is...
        assert_eq!(l.before_verifying(&token), Ok(()));
        // ...and one that fails is refused, spending nothing more.
        assert_eq!(l.verifying_failed(&token), Err(30));
        assert_eq!(l.verifying_failed(&token), Err(30));
        // Passwords from the same address are not affected.
        let password = l.attempt(Some(IP), Attempt::Password { username: "y" });
        assert_eq!(l.before_verifying(&password), Ok(()));
        clock.advance(Duration::from_secs(30));
        assert_eq!(l.verifying_failed(&token), Ok(()));
        assert_eq!(l.verifying_failed(&token), Err(30));
    }

    #[test]
    fn the_throttle_keys_hold_no_names() {
        let (l, _) = limiter(Rate::OFF, Rate::OFF, per_minute(2.0));
        let attempt = l.attempt(
            Some(IP),
            Attempt::Password {
                username: "alice-the-admin",
            },
        );
        assert!(!format!("{attempt:?}").contains("alice"));
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
            assert_eq!(rate.cell(), None);
        }
    }

    #[test]
    fn instances_of_a_cluster_charge_each_others_requests() {
        let rate = Rate {
            rate_per_sec: 1.0,
            burst: 4.0,
        };
        let clock = FakeRelativeClock::default();
        let options = LimitOptions {
            per_address: rate,
            per_token: rate,
            ..LimitOptions::default()
        };
        let instance = |name: &str| {
            Limiter::with_clock(options, clock.clone()).sharing(name.to_owned(), [5; 16])
        };
        let (a, b) = (instance("a"), instance("b"));
        assert!(a.report().is_none());
        // Three requests on a, with a token; b hears of them.
        for _ in 0..3 {
            assert_eq!(a.admit(Some(IP), Some("t")), Ok(()));
        }
        let report = a.report().unwrap();
        assert!(a.report().is_none(), "a report is sent once");
        // Its own report, heard back, charges nothing.
        a.charge(&report);
        assert_eq!(a.admit(Some(IP), None), Ok(()));
        assert!(a.admit(Some(IP), None).is_err());
        // b has one request of the address's four left, and of the token's (hashed alike).
        b.charge(&report);
        assert_eq!(b.admit(Some(IP), Some("t")), Ok(()));
        assert_eq!(b.admit(Some(IP), None), Err((Limit::Address, 1)));
        let other = IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 2));
        assert_eq!(b.admit(Some(other), Some("t")), Err((Limit::Token, 1)));
        // Charges beyond the bucket are debt: with the request just refused for its token
        // (which took its address's place), ten seconds of requests, less the three of slack.
        b.charge(&ClusterEvent::RequestsAdmitted {
            instance: "c".into(),
            addresses: vec![(other, 9)],
            tokens: vec![],
        });
        assert_eq!(b.admit(Some(other), None), Err((Limit::Address, 7)));
        clock.advance(Duration::from_secs(7));
        assert_eq!(b.admit(Some(other), None), Ok(()));
        // Alone, a limiter reports nothing and ignores reports.
        let (alone, _) = limiter(rate, rate, Rate::OFF);
        assert_eq!(alone.admit(Some(IP), None), Ok(()));
        assert!(alone.report().is_none());
        alone.charge(&report);
        assert_eq!(alone.admit(Some(IP), None), Ok(()));
    }

    #[test]
    fn idle_keys_are_pruned_so_memory_stays_bounded() {
        let rate = Rate {
            rate_per_sec: 10.0,
            burst: 5.0,
        };
        let (l, clock) = limiter(rate, Rate::OFF, Rate::OFF);
        for i in 0..buckets::PRUNE_EVERY as u32 - 1 {
            let ip = IpAddr::V4(std::net::Ipv4Addr::from(i));
            assert_eq!(l.admit(Some(ip), None), Ok(()));
        }
        assert_eq!(l.per_address.len(), buckets::PRUNE_EVERY - 1);
        // Once every bucket has refilled, the next pruning forgets them all.
        clock.advance(Duration::from_secs(1));
        assert_eq!(l.admit(Some(IP), None), Ok(()));
        assert_eq!(l.per_address.len(), 1);
    }
}

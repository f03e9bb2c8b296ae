//! The failed-authentication throttle: per [`Key`] (an address and what was guessed there), a
//! bucket that only failed authentications spend and that attempts look at without spending.
//!
//! Our own rather than governor's, because a GCRA limiter can only test and spend at once: it
//! has no way to ask "is this key's allowance spent?" without taking from it, and asking is
//! what every attempt does here.

use super::Rate;
use governor::clock::{Clock, Reference};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Whose failures count together: one client address, and within it one kind of credential
/// (and, for credentials that name an account, that account). A guesser so spends only its
/// own allowance: the neighbours behind the same address (a NAT, a proxy) keep theirs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Key {
    pub address: IpAddr,
    pub kind: Kind,
}

/// What was guessed at an address. Account names are held as a keyed hash (the key is random
/// per process), so the map holds no user name; no variant holds a password, token or secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Kind {
    /// Access tokens: a token names no account until it is looked up.
    AccessToken,
    /// Companion-platform access tokens (the same, at the platform).
    PlatformToken,
    /// Basic credentials of one user name.
    User(u64),
    /// The shared secret of one listener service.
    Listener(u64),
}

/// Maps smaller than this are never pruned.
const MIN_PRUNE_AT: usize = 1024;

/// The most keys remembered. An entry takes under 100 bytes, so with the map's spare capacity
/// this is at most some 20 MB. Only keys with recent failures are held and every failure that
/// is counted went through a credential check, so reaching this takes a flood from very many
/// addresses or user names; past it, failures of keys not yet held go uncounted until pruning
/// frees room, while keys already held (those being throttled) stay throttled.
pub(super) const MAX_KEYS: usize = 100_000;

struct Bucket<I> {
    tokens: f64,
    updated: I,
}

struct State<I> {
    buckets: HashMap<Key, Bucket<I>>,
    /// The size at which the next new key prunes first: twice what the last pruning kept
    /// (within [`MIN_PRUNE_AT`]..=[`MAX_KEYS`]), so pruning costs O(1) per insertion over time
    /// however many keys stay throttled.
    prune_at: usize,
    /// New keys still to drop unpruned after a pruning that left the map full: walking a full
    /// map for every failure would make the bound itself the cost of a flood.
    drop_unpruned: usize,
}

pub(super) struct FailureThrottle<C: Clock> {
    rate: Rate,
    clock: C,
    /// Only keys with recent failures: looking inserts nothing.
    state: Mutex<State<C::Instant>>,
}

impl<C: Clock> FailureThrottle<C> {
    pub(super) fn new(rate: Rate, clock: C) -> Self {
        FailureThrottle {
            rate,
            clock,
            state: Mutex::new(State {
                buckets: HashMap::new(),
                prune_at: MIN_PRUNE_AT,
                drop_unpruned: 0,
            }),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State<C::Instant>> {
        // A panic elsewhere while the lock was held leaves counts that are still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The bucket's tokens at `now`.
    fn tokens(&self, bucket: &Bucket<C::Instant>, now: C::Instant) -> f64 {
        let idle = Duration::from(now.duration_since(bucket.updated)).as_secs_f64();
        (bucket.tokens + idle * self.rate.rate_per_sec).min(self.rate.burst)
    }

    /// `Err(retry_after_secs)` while `key` has spent its allowance; spends nothing.
    pub(super) fn check(&self, key: Key) -> Result<(), u64> {
        if !self.rate.enabled() {
            return Ok(());
        }
        let now = self.clock.now();
        let state = self.state();
        let Some(bucket) = state.buckets.get(&key) else {
            return Ok(());
        };
        let tokens = self.tokens(bucket, now);
        if tokens >= 1.0 {
            return Ok(());
        }
        let wait = (1.0 - tokens) / self.rate.rate_per_sec;
        Err((wait.ceil() as u64).max(1))
    }

    /// Spends one failure of `key`'s allowance (none is left to spend once it is refused).
    pub(super) fn failed(&self, key: Key) {
        if !self.rate.enabled() {
            return;
        }
        let now = self.clock.now();
        let mut state = self.state();
        if !state.buckets.contains_key(&key) && state.buckets.len() >= state.prune_at {
            if state.drop_unpruned > 0 {
                state.drop_unpruned -= 1;
                return;
            }
            // A full bucket is the same as none.
            state
                .buckets
                .retain(|_, b| self.tokens(b, now) < self.rate.burst);
            let kept = state.buckets.len();
            state.prune_at = (kept * 2).clamp(MIN_PRUNE_AT, MAX_KEYS);
            if kept >= MAX_KEYS {
                // Half the map's size in new keys before the next walk: O(1) per failure.
                state.drop_unpruned = MAX_KEYS / 2;
                tracing::warn!(
                    keys = kept,
                    "failed-authentication throttle full: new failures go uncounted for a while"
                );
                return;
            }
        }
        let full = self.rate.burst;
        let bucket = state.buckets.entry(key).or_insert(Bucket {
            tokens: full,
            updated: now,
        });
        let tokens = self.tokens(bucket, now);
        bucket.tokens = if tokens >= 1.0 { tokens - 1.0 } else { tokens };
        bucket.updated = now;
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.state().buckets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use governor::clock::FakeRelativeClock;
    use std::net::Ipv4Addr;

    const A: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));
    const B: IpAddr = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2));

    fn key(address: IpAddr, kind: Kind) -> Key {
        Key { address, kind }
    }

    fn throttle(per_minute: u32) -> (FailureThrottle<FakeRelativeClock>, FakeRelativeClock) {
        let clock = FakeRelativeClock::default();
        let rate = Rate {
            rate_per_sec: f64::from(per_minute) / 60.0,
            burst: f64::from(per_minute),
        };
        (FailureThrottle::new(rate, clock.clone()), clock)
    }

    #[test]
    fn looking_neither_spends_nor_remembers() {
        let (t, _) = throttle(1);
        for _ in 0..10 {
            assert_eq!(t.check(key(A, Kind::AccessToken)), Ok(()));
        }
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn a_spent_key_throttles_only_itself() {
        let (t, clock) = throttle(3);
        let guessed = key(A, Kind::User(1));
        for _ in 0..3 {
            assert_eq!(t.check(guessed), Ok(()));
            t.failed(guessed);
        }
        // 3 per minute: one failure back in 20 s.
        assert_eq!(t.check(guessed), Err(20));
        // The same address with another user name or a token, and the same user name from
        // another address, are not held back.
        for other in [
            key(A, Kind::User(2)),
            key(A, Kind::AccessToken),
            key(A, Kind::PlatformToken),
            key(A, Kind::Listener(1)),
            key(B, Kind::User(1)),
        ] {
            assert_eq!(t.check(other), Ok(()), "{other:?}");
        }
        // Failing on while refused does not push the refill further away.
        t.failed(guessed);
        clock.advance(Duration::from_secs(19));
        assert_eq!(t.check(guessed), Err(1));
        clock.advance(Duration::from_secs(1));
        assert_eq!(t.check(guessed), Ok(()));
        t.failed(guessed);
        assert_eq!(t.check(guessed), Err(20));
    }

    #[test]
    fn refilled_keys_are_forgotten_when_the_map_grows() {
        let (t, clock) = throttle(30);
        for i in 0..MIN_PRUNE_AT as u32 {
            t.failed(key(IpAddr::V4(Ipv4Addr::from(i)), Kind::AccessToken));
        }
        assert_eq!(t.len(), MIN_PRUNE_AT);
        // One failure refills in 2 s.
        clock.advance(Duration::from_secs(2));
        t.failed(key(A, Kind::User(7)));
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn the_map_is_capped_and_keeps_the_keys_it_throttles() {
        let (t, _) = throttle(1);
        let throttled = key(A, Kind::User(0));
        t.failed(throttled);
        for i in 1..MAX_KEYS as u64 {
            t.failed(key(A, Kind::User(i)));
        }
        assert_eq!(t.len(), MAX_KEYS);
        // Nothing has refilled: a new key is not remembered, and the map does not grow.
        let newcomer = key(B, Kind::AccessToken);
        t.failed(newcomer);
        assert_eq!(t.len(), MAX_KEYS);
        assert_eq!(t.check(newcomer), Ok(()));
        // A key already held still counts and stays throttled.
        t.failed(throttled);
        assert_eq!(t.check(throttled), Err(60));
        // The next new keys are dropped without walking the map again.
        for i in 0..MAX_KEYS as u64 / 2 {
            t.failed(key(B, Kind::User(i)));
        }
        assert_eq!(t.len(), MAX_KEYS);
    }
}

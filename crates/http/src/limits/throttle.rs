//! The failed-authentication throttle: per client address, a bucket that only failed
//! authentications spend and that every request looks at without spending.
//!
//! Our own rather than governor's, because a GCRA limiter can only test and spend at once: it
//! has no way to ask "is this address's allowance spent?" without taking from it, and asking is
//! what every request does here. (Issue #16 will key it by address and username: only [`Key`]
//! and its two callers change.)

use super::Rate;
use governor::clock::{Clock, Reference};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// Whose failures count together.
pub(super) type Key = IpAddr;

/// Maps smaller than this are never pruned.
const MIN_PRUNE_AT: usize = 1024;

struct Bucket<I> {
    tokens: f64,
    updated: I,
}

struct State<I> {
    buckets: HashMap<Key, Bucket<I>>,
    /// The size at which the next insertion prunes first: twice what the last pruning kept, so
    /// pruning costs O(1) per insertion over time however many addresses stay throttled.
    prune_at: usize,
}

pub(super) struct FailureThrottle<C: Clock> {
    rate: Rate,
    clock: C,
    /// Only addresses with recent failures: looking inserts nothing.
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
            // A full bucket is the same as none.
            state
                .buckets
                .retain(|_, b| self.tokens(b, now) < self.rate.burst);
            state.prune_at = (state.buckets.len() * 2).max(MIN_PRUNE_AT);
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
    fn len(&self) -> usize {
        self.state().buckets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use governor::clock::FakeRelativeClock;
    use std::net::Ipv4Addr;

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
            assert_eq!(t.check(Key::from(Ipv4Addr::LOCALHOST)), Ok(()));
        }
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn refilled_addresses_are_forgotten_when_the_map_grows() {
        let (t, clock) = throttle(30);
        for i in 0..MIN_PRUNE_AT as u32 {
            t.failed(Key::from(Ipv4Addr::from(i)));
        }
        assert_eq!(t.len(), MIN_PRUNE_AT);
        // One failure refills in 2 s.
        clock.advance(Duration::from_secs(2));
        t.failed(Key::from(Ipv4Addr::BROADCAST));
        assert_eq!(t.len(), 1);
    }
}

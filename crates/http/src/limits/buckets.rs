//! Keyed request buckets as GCRA keeps them (a token bucket as one number per key, the
//! "theoretical arrival time" at which the bucket is full again), which, unlike governor's
//! limiters, can also be charged with requests admitted elsewhere: another instance's
//! report may put a key into debt, as the cluster's buckets are one bucket
//! ([`super::Limiter::charge`]).

use super::Rate;
use dashmap::DashMap;
use governor::clock::{Clock, Reference};
use std::hash::Hash;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A full bucket must refill within this, whatever the configuration says (a century is
/// "never" for a rate limit), so that no arithmetic below leaves u64 nanoseconds.
const MAX_REFILL_SECS: f64 = 100.0 * 365.0 * 86_400.0;

/// Checks between two prunings.
pub(super) const PRUNE_EVERY: usize = 4096;

/// One bucket's arithmetic, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Cell {
    /// The time one request takes from the bucket.
    interval_ns: u64,
    /// How far ahead of now a key's time may lie while it is still admitted: `burst - 1`
    /// intervals.
    slack_ns: u64,
}

impl Rate {
    /// The bucket's arithmetic; `None` when the rate is off.
    pub(super) fn cell(self) -> Option<Cell> {
        if !self.enabled() {
            return None;
        }
        // A fractional burst rounds down, as a bucket can only hand out whole requests.
        let burst = self.burst.min(f64::from(u32::MAX)).floor();
        let interval = (1.0 / self.rate_per_sec)
            .min(MAX_REFILL_SECS / burst)
            .max(1e-9);
        let interval_ns = (interval * 1e9) as u64;
        Some(Cell {
            interval_ns,
            slack_ns: interval_ns.saturating_mul(burst as u64 - 1),
        })
    }
}

/// One keyed limit (none when its rate is off).
///
/// Every [`PRUNE_EVERY`] checks, the keys whose bucket is full again are dropped, so the map
/// holds the clients active within one refill time plus at most `PRUNE_EVERY` newcomers; the
/// memory is handed back when pruning at least halved it, as a map that stays large would
/// grow again at once. The map is dashmap's (sharded locks: requests of different keys seldom
/// wait for each other), as governor's keyed limiters keep theirs.
pub(super) struct Buckets<K: Hash + Eq, C: Clock> {
    cell: Option<Cell>,
    clock: C,
    start: C::Instant,
    /// Each key's time, in nanoseconds from `start`. A key whose time is not after now has a
    /// full bucket, the same as no entry.
    times: DashMap<K, u64>,
    checks: AtomicUsize,
}

impl<K: Hash + Eq + Clone, C: Clock + Clone> Buckets<K, C> {
    pub(super) fn new(rate: Rate, clock: &C) -> Self {
        Buckets {
            cell: rate.cell(),
            clock: clock.clone(),
            start: clock.now(),
            times: DashMap::new(),
            checks: AtomicUsize::new(0),
        }
    }

    fn now_ns(&self) -> u64 {
        self.clock.now().duration_since(self.start).as_u64()
    }

    /// Takes one request's place; `Err(retry_after_secs)` when the bucket is empty.
    pub(super) fn check(&self, key: &K) -> Result<(), u64> {
        let Some(cell) = self.cell else {
            return Ok(());
        };
        if self.checks.fetch_add(1, Ordering::Relaxed) % PRUNE_EVERY == PRUNE_EVERY - 1 {
            self.prune();
        }
        let now = self.now_ns();
        let mut time = self.times.entry(key.clone()).or_insert(now);
        let ahead = (*time).max(now) - now;
        if ahead > cell.slack_ns {
            let wait = Duration::from_nanos(ahead - cell.slack_ns);
            return Err(super::retry_after_secs(wait));
        }
        *time = (*time).max(now).saturating_add(cell.interval_ns);
        Ok(())
    }

    /// Charges `requests` admitted elsewhere, however far that puts the key into debt.
    pub(super) fn charge(&self, key: &K, requests: u32) {
        let Some(cell) = self.cell else {
            return;
        };
        let now = self.now_ns();
        let mut time = self.times.entry(key.clone()).or_insert(now);
        let charged = cell.interval_ns.saturating_mul(u64::from(requests));
        *time = (*time).max(now).saturating_add(charged);
    }

    fn prune(&self) {
        let now = self.now_ns();
        let before = self.times.len();
        self.times.retain(|_, time| *time > now);
        if self.times.len() <= before / 2 {
            self.times.shrink_to_fit();
        }
    }

    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.times.len()
    }
}

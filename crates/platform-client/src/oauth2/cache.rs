//! A small time-bounded cache of the provider's answers, keyed by digests of credentials.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A SHA-256 digest: credentials themselves are never kept as keys.
pub(super) type Key = [u8; 32];

/// Entries live `ttl`; at `max_entries` the expired ones go, and if none has expired the
/// whole cache is cleared (cheap, and a flood of distinct credentials cannot grow memory).
pub(super) struct TtlCache<V> {
    ttl: Duration,
    max_entries: usize,
    entries: Mutex<HashMap<Key, (Instant, V)>>,
}

impl<V: Clone> TtlCache<V> {
    pub(super) fn new(ttl: Duration, max_entries: usize) -> Self {
        TtlCache {
            ttl,
            max_entries,
            entries: Mutex::new(HashMap::new()),
        }
    }

    pub(super) fn get(&self, key: &Key) -> Option<V> {
        let mut entries = self.lock();
        match entries.get(key) {
            Some((expires, value)) if Instant::now() < *expires => Some(value.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    pub(super) fn insert(&self, key: Key, value: V) {
        let now = Instant::now();
        // A zero TTL disables the cache; one too large for the clock is not cached either.
        let Some(expires) = now.checked_add(self.ttl).filter(|_| !self.ttl.is_zero()) else {
            return;
        };
        let mut entries = self.lock();
        if entries.len() >= self.max_entries {
            entries.retain(|_, (e, _)| now < *e);
            if entries.len() >= self.max_entries {
                entries.clear();
            }
        }
        entries.insert(key, (expires, value));
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }

    // A panic while holding the lock leaves the map consistent (every operation is one
    // HashMap call), so a poisoned lock is still usable.
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, (Instant, V)>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_expire() {
        let cache = TtlCache::new(Duration::from_millis(30), 10);
        cache.insert([1; 32], "a");
        assert_eq!(cache.get(&[1; 32]), Some("a"));
        assert_eq!(cache.get(&[2; 32]), None);
        std::thread::sleep(Duration::from_millis(50));
        assert_eq!(cache.get(&[1; 32]), None);
        assert_eq!(cache.len(), 0, "an expired entry is dropped when read");
    }

    #[test]
    fn size_is_bounded() {
        let cache = TtlCache::new(Duration::from_secs(60), 3);
        for i in 0..3 {
            cache.insert([i; 32], i);
        }
        assert_eq!(cache.len(), 3);
        cache.insert([9; 32], 9);
        assert_eq!(cache.len(), 1, "full of live entries: cleared");
        assert_eq!(cache.get(&[9; 32]), Some(9));
    }

    #[test]
    fn zero_ttl_disables() {
        let cache = TtlCache::new(Duration::ZERO, 3);
        cache.insert([1; 32], 1);
        assert_eq!(cache.get(&[1; 32]), None);
    }
}

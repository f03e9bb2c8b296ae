//! The answer of `GET /api/endpoints/status`, kept serialized per enterprise.
//!
//! Building it reads every endpoint and every stored status; monitoring dashboards ask for it
//! far more often than it changes. This instance drops a snapshot whenever it writes something
//! that changes it (a status, an endpoint created or deleted) and tells the other instances on
//! the event bus; without a bus, their writes show within [`STATUS_SNAPSHOT_TTL_MS`].

use roomlink_domain::cluster::{ClusterEvent, EventBus, LocalBus};
use roomlink_domain::ids::EnterpriseId;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How long a snapshot may be served before it is rebuilt.
pub const STATUS_SNAPSHOT_TTL_MS: i64 = 1_000;

struct Snapshot {
    taken_at: i64,
    json: Arc<str>,
}

pub struct StatusSnapshots {
    entries: Mutex<HashMap<EnterpriseId, Snapshot>>,
    /// Bumped by every invalidation: a snapshot built across one is not kept.
    generation: AtomicU64,
    events: Arc<dyn EventBus>,
}

impl Default for StatusSnapshots {
    fn default() -> Self {
        StatusSnapshots::new(Arc::new(LocalBus::default()))
    }
}

impl StatusSnapshots {
    pub fn new(events: Arc<dyn EventBus>) -> Self {
        StatusSnapshots {
            entries: Mutex::default(),
            generation: AtomicU64::new(0),
            events,
        }
    }

    /// A fresh snapshot of the enterprise's statuses, if there is one at `now`.
    pub fn get(&self, enterprise: &EnterpriseId, now: i64) -> Option<Arc<str>> {
        let entries = self.entries.lock().ok()?;
        let s = entries.get(enterprise)?;
        (now.saturating_sub(s.taken_at) < STATUS_SNAPSHOT_TTL_MS && now >= s.taken_at)
            .then(|| s.json.clone())
    }

    /// To be read before building a snapshot and handed to [`StatusSnapshots::put`].
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Keeps a snapshot built from reads that began at `generation`, unless something was
    /// invalidated meanwhile (the snapshot may then predate that write).
    pub fn put(&self, enterprise: &EnterpriseId, generation: u64, taken_at: i64, json: Arc<str>) {
        if let Ok(mut entries) = self.entries.lock()
            && self.generation.load(Ordering::Acquire) == generation
        {
            entries.insert(enterprise.clone(), Snapshot { taken_at, json });
        }
    }

    /// The enterprise's statuses changed here: dropped on this instance and on the others.
    pub fn invalidate(&self, enterprise: &EnterpriseId) {
        self.drop_local(enterprise);
        self.events.publish(ClusterEvent::StatusesChanged {
            enterprise: enterprise.clone(),
        });
    }

    /// The enterprise's statuses changed (here or on another instance).
    pub fn drop_local(&self, enterprise: &EnterpriseId) {
        // Bump under the lock, so no `put` slips between the bump and the removal.
        if let Ok(mut entries) = self.entries.lock() {
            self.generation.fetch_add(1, Ordering::AcqRel);
            entries.remove(enterprise);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_expire_and_invalidation_wins_over_a_slow_build() {
        let s = StatusSnapshots::default();
        let e = EnterpriseId::from_trusted("e".into());
        let g = s.generation();
        s.put(&e, g, 1_000, Arc::from("[1]"));
        assert_eq!(s.get(&e, 1_999).as_deref(), Some("[1]"));
        assert_eq!(s.get(&e, 2_000), None, "expired");
        // A build that began before an invalidation is not kept.
        let g = s.generation();
        s.invalidate(&e);
        s.put(&e, g, 2_000, Arc::from("[stale]"));
        assert_eq!(s.get(&e, 2_000), None);
        let g = s.generation();
        s.put(&e, g, 2_000, Arc::from("[2]"));
        assert_eq!(s.get(&e, 2_001).as_deref(), Some("[2]"));
        s.invalidate(&e);
        assert_eq!(s.get(&e, 2_001), None);
    }
}

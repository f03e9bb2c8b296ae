//! What an admin command tells the running instances.
//!
//! An admin command is no instance: it joins no cluster. Its use cases publish their events
//! (revoked tokens) into an [`Outbox`]; once the command has done its work, [`announce`] sends
//! them to every instance over the cluster bus, when `cluster.nats_url` is set, and waits
//! until NATS has them. Without a bus there is no one to tell: the instances' caches expire
//! on their own (`security.token_cache_ms`).

use roomlink_domain::cluster::{ClusterEvent, EventBus, LocalBus};
use roomlink_domain::ports::IdGenerator;
use roomlink_domain::system::RandomIds;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::settings::Settings;

/// How long an admin command waits for NATS before it gives up telling the instances.
const ANNOUNCE_WITHIN: Duration = Duration::from_secs(5);

/// The events an admin command's use cases published, kept to be sent once it is done.
pub struct Outbox {
    local: Arc<LocalBus>,
    held: Mutex<Vec<ClusterEvent>>,
}

impl Outbox {
    /// Delivers to `local`'s sinks (this process's caches) at once, as an instance's bus does.
    pub fn new(local: Arc<LocalBus>) -> Self {
        Outbox {
            local,
            held: Mutex::new(Vec::new()),
        }
    }

    fn take(&self) -> Vec<ClusterEvent> {
        std::mem::take(&mut *self.held.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl EventBus for Outbox {
    fn publish(&self, event: ClusterEvent) {
        self.local.deliver(&event);
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event);
    }
}

/// Sends what `outbox` holds to every instance. A failure is a warning, not an error: the
/// command's change is made, and the instances catch up when their caches expire.
pub async fn announce(settings: &Settings, outbox: &Outbox) {
    let events = outbox.take();
    let Some(url) = settings.cluster.nats_url.as_deref() else {
        return;
    };
    if events.is_empty() {
        return;
    }
    let name = format!("admin-{}", &RandomIds.entity_id()[..12]);
    let result = roomlink_cluster::announce(
        &crate::nats_settings(settings, url),
        &name,
        &events,
        ANNOUNCE_WITHIN,
    )
    .await;
    match result {
        Ok(()) => tracing::info!(
            events = events.len(),
            "cluster: told the running instances ({} event(s))",
            events.len()
        ),
        Err(e) => tracing::warn!(
            error = %e,
            "cluster: the running instances were not told at once; they refuse the revoked \
             tokens within security.token_cache_ms ({} ms)",
            settings.security.token_cache_ms
        ),
    }
}

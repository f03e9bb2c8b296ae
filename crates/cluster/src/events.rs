//! The event bus over NATS: every instance publishes [`ClusterEvent`]s as JSON on
//! `{prefix}.events` and hands those it hears to its [`LocalBus`].

use crate::redact::JsonError;
use async_nats::Client;
use async_nats::connection::State;
use futures::StreamExt;
use roomlink_domain::cluster::{ClusterEvent, EventBus, LocalBus};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::runtime::Handle;
use tokio::task::JoinHandle;
use tracing::{debug, warn};

/// How long a publication may wait for room in the client's queue.
const PUBLISH_WAIT: Duration = Duration::from_secs(5);

/// How often an outage may warn of the events of one kind it drops.
const DROPPED_WARNING_EVERY: Duration = Duration::from_secs(60);

pub(crate) struct NatsBus {
    pub(crate) client: Client,
    pub(crate) subject: String,
    pub(crate) local: Arc<LocalBus>,
    pub(crate) runtime: Handle,
    pub(crate) dropped: Dropped,
}

/// The events dropped while NATS is disconnected, per kind: the first of a kind warns, then
/// at most one warning a minute with the count since the last. Rate reports alone come every
/// 50 ms per instance under load, and statuses with every poll: a warning each would bury the
/// log under one outage.
#[derive(Default)]
pub(crate) struct Dropped {
    kinds: Mutex<HashMap<&'static str, DroppedKind>>,
}

struct DroppedKind {
    warned_at: Instant,
    since: u64,
}

impl Dropped {
    /// Counts one dropped event of `kind`; answers how many to warn of now, if it is time.
    fn count(&self, kind: &'static str, now: Instant) -> Option<u64> {
        let mut kinds = self.kinds.lock().unwrap_or_else(PoisonError::into_inner);
        match kinds.get_mut(kind) {
            None => {
                kinds.insert(
                    kind,
                    DroppedKind {
                        warned_at: now,
                        since: 0,
                    },
                );
                Some(1)
            }
            Some(dropped) => {
                dropped.since += 1;
                if now.duration_since(dropped.warned_at) < DROPPED_WARNING_EVERY {
                    return None;
                }
                let since = std::mem::take(&mut dropped.since);
                dropped.warned_at = now;
                Some(since)
            }
        }
    }
}

impl EventBus for NatsBus {
    /// Delivers to this instance's sinks at once (whether NATS is up or not), then sends to
    /// the others. While disconnected an event is dropped, not queued: a late `LinkTaken`
    /// could close a listener's newer connection, and caches fall back on their lifetimes.
    fn publish(&self, event: ClusterEvent) {
        self.local.deliver(&event);
        let kind = kind(&event);
        if self.client.connection_state() != State::Connected {
            match self.dropped.count(kind, Instant::now()) {
                Some(dropped) => warn!(
                    kind,
                    dropped, "cluster: NATS is disconnected; events not sent to other instances"
                ),
                None => debug!(kind, "cluster: NATS is disconnected; event not sent"),
            }
            return;
        }
        let payload = match serde_json::to_vec(&event) {
            Ok(payload) => payload,
            Err(e) => {
                warn!(kind, error = %JsonError(&e), "cluster: event not serializable");
                return;
            }
        };
        let (client, subject) = (self.client.clone(), self.subject.clone());
        self.runtime.spawn(async move {
            match tokio::time::timeout(PUBLISH_WAIT, client.publish(subject, payload.into())).await
            {
                Ok(Ok(())) => {}
                Ok(Err(e)) => warn!(kind, error = %e, "cluster: event not published"),
                Err(_) => warn!(kind, "cluster: event not published in time"),
            }
        });
    }
}

/// Hands every event heard on `subscriber` to `local`; a malformed message is skipped.
pub(crate) fn deliver_heard(
    runtime: &Handle,
    mut subscriber: async_nats::Subscriber,
    local: Arc<LocalBus>,
) -> JoinHandle<()> {
    runtime.spawn(async move {
        while let Some(message) = subscriber.next().await {
            match serde_json::from_slice::<ClusterEvent>(&message.payload) {
                Ok(event) => local.deliver(&event),
                Err(e) => warn!(error = %JsonError(&e), "cluster: malformed event skipped"),
            }
        }
        debug!("cluster: event subscription ended");
    })
}

/// The event's name for logs (its fields are ids, but a name is all a log needs).
fn kind(event: &ClusterEvent) -> &'static str {
    match event {
        ClusterEvent::TokenDeleted { .. } => "token_deleted",
        ClusterEvent::StatusesChanged { .. } => "statuses_changed",
        ClusterEvent::ListenerChanged { .. } => "listener_changed",
        ClusterEvent::LinkTaken { .. } => "link_taken",
        ClusterEvent::FleetChanged { .. } => "fleet_changed",
        ClusterEvent::RequestsAdmitted { .. } => "requests_admitted",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outage_warns_once_a_minute_per_kind_with_the_count() {
        let dropped = Dropped::default();
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        assert_eq!(dropped.count("statuses_changed", at(0)), Some(1));
        assert_eq!(
            dropped.count("token_deleted", at(10)),
            Some(1),
            "each kind warns"
        );
        for ms in (50..60_000).step_by(50) {
            assert_eq!(dropped.count("statuses_changed", at(ms)), None, "{ms} ms");
        }
        // The warning a minute later counts every drop since the first one's warning.
        assert_eq!(dropped.count("statuses_changed", at(60_000)), Some(1_200));
        assert_eq!(dropped.count("statuses_changed", at(60_050)), None);
        assert_eq!(dropped.count("token_deleted", at(60_010)), Some(1));
    }
}

//! The event bus over NATS: every instance publishes [`ClusterEvent`]s as JSON on
//! `{prefix}.events` and hands those it hears to its [`LocalBus`].

use crate::redact::JsonError;
use async_nats::Client;
use async_nats::connection::State;
use futures::StreamExt;
use roomlink_domain::cluster::{ClusterEvent, EventBus, LocalBus};
use std::sync::Arc;
use std::time::Duration;
use tokio::runtime::Handle;
use tokio::task::JoinHandle;
use tracing::{debug, warn};

/// How long a publication may wait for room in the client's queue.
const PUBLISH_WAIT: Duration = Duration::from_secs(5);

pub(crate) struct NatsBus {
    pub(crate) client: Client,
    pub(crate) subject: String,
    pub(crate) local: Arc<LocalBus>,
    pub(crate) runtime: Handle,
}

impl EventBus for NatsBus {
    /// Delivers to this instance's sinks at once (whether NATS is up or not), then sends to
    /// the others. While disconnected an event is dropped, not queued: a late `LinkTaken`
    /// could close a listener's newer connection, and caches fall back on their lifetimes.
    fn publish(&self, event: ClusterEvent) {
        self.local.deliver(&event);
        let kind = kind(&event);
        if self.client.connection_state() != State::Connected {
            // Rate reports come every few tens of milliseconds under load: a warning each
            // would flood the log (the events this warns of say enough of the outage).
            if matches!(event, ClusterEvent::RequestsAdmitted { .. }) {
                debug!(kind, "cluster: NATS is disconnected; rate report dropped");
                return;
            }
            warn!(
                kind,
                "cluster: NATS is disconnected; event not sent to other instances"
            );
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

//! Ports of the parts that make several instances one: outbound listeners' connections
//! ([`ListenerLinks`]) and the events that keep every instance's caches true ([`EventBus`]).
//!
//! One instance alone has an in-process implementation of both; several share them through a
//! broker (the `roomlink-cluster` adapter, on NATS). Nothing here carries a secret in a name:
//! listener ids and enterprise ids are routing keys, token hashes are not tokens.

use crate::ids::{EnterpriseId, ListenerServiceId};
use crate::live::LiveTopic;
use crate::token::TokenHash;
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::net::IpAddr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

#[cfg(feature = "mock")]
use mockall::automock;

/// One request of the listener protocol over a listener's own connection: the method, path and
/// JSON body it would have over HTTP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkRequest {
    pub method: String,
    pub path: String,
    /// The JSON body's text, if the request has one. It may hold an endpoint password: never
    /// log it.
    pub body: Option<String>,
}

/// The listener's answer: what it would have answered over HTTP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkAnswer {
    pub status: u16,
    /// The listener's version (`X-Listener-Version` over HTTP).
    pub version: Option<String>,
    /// The JSON body's text (empty when the answer had none).
    pub body: String,
}

/// Why a request over a link got no answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum LinkFailure {
    /// No instance holds a connection of the listener, or it closed before answering.
    Offline,
    /// The deadline passed first.
    TimedOut,
}

/// Sends requests to outbound listeners over their connections, wherever they are held.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait ListenerLinks: Send + Sync {
    /// Sends one request and waits for its answer at most `timeout`.
    async fn exchange(
        &self,
        listener: &ListenerServiceId,
        request: LinkRequest,
        timeout: Duration,
    ) -> Result<LinkAnswer, LinkFailure>;
    /// Whether this instance holds the listener's connection (it then polls its statuses).
    fn held_here(&self, listener: &ListenerServiceId) -> bool;
}

/// Something every instance must learn at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ClusterEvent {
    /// An access token was revoked (deleted, its user disabled, deleted or given a new
    /// password, its enterprise deleted): refuse it everywhere now.
    TokenDeleted { hash: TokenHash },
    /// The enterprise's endpoints or statuses changed: its status snapshot is stale.
    StatusesChanged { enterprise: EnterpriseId },
    /// Something browsers show changed for the enterprise (statuses are told by
    /// `StatusesChanged`): its live-update streams say so.
    FleetChanged {
        enterprise: EnterpriseId,
        topic: LiveTopic,
    },
    /// A listener record was replaced or deleted; `drop_link` when an open connection of it
    /// must close (deleted, made inbound, or given a new secret).
    ListenerChanged {
        listener: ListenerServiceId,
        drop_link: bool,
    },
    /// `instance` now holds the listener's connection: any other instance still holding an
    /// older one closes it (the listener reconnected elsewhere without a close).
    LinkTaken {
        listener: ListenerServiceId,
        instance: String,
    },
    /// Requests `instance` admitted since its last report, per client address and per access
    /// token (a keyed hash of the token, the key shared by the instances): every other
    /// instance charges them to its own rate limits, so that the limits hold for the cluster
    /// as a whole. Sent every few tens of milliseconds while requests come in.
    RequestsAdmitted {
        instance: String,
        addresses: Vec<(IpAddr, u32)>,
        tokens: Vec<(u64, u32)>,
    },
}

/// Told when this instance starts or stops holding a listener's connection (the broker
/// adapter then serves or stops serving requests for it).
pub trait LinkObserver: Send + Sync {
    fn attached(&self, listener: &ListenerServiceId);
    fn detached(&self, listener: &ListenerServiceId);
}

/// Publishes events to every instance, this one included. Fire and forget: an event that
/// cannot be published is logged by the adapter; caches then fall back on their lifetimes.
#[cfg_attr(feature = "mock", automock)]
pub trait EventBus: Send + Sync {
    fn publish(&self, event: ClusterEvent);
}

/// What an instance does with an event from the bus.
pub trait EventSink: Send + Sync {
    fn apply(&self, event: &ClusterEvent);
}

/// The bus of one instance alone: every event goes straight to this process's sinks. The
/// broker adapter fans its received events out through one of these too.
#[derive(Default)]
pub struct LocalBus {
    sinks: RwLock<Vec<Arc<dyn EventSink>>>,
}

impl LocalBus {
    pub fn subscribe(&self, sink: Arc<dyn EventSink>) {
        if let Ok(mut sinks) = self.sinks.write() {
            sinks.push(sink);
        }
    }

    /// Hands `event` to every sink.
    pub fn deliver(&self, event: &ClusterEvent) {
        if let Ok(sinks) = self.sinks.read() {
            for sink in sinks.iter() {
                sink.apply(event);
            }
        }
    }
}

impl EventBus for LocalBus {
    fn publish(&self, event: ClusterEvent) {
        self.deliver(&event);
    }
}

/// Every event a sink was handed, in order: the sink of tests (feature `test-support`).
#[cfg(any(test, feature = "test-support"))]
#[derive(Debug, Default)]
pub struct RecordedEvents(std::sync::Mutex<Vec<ClusterEvent>>);

#[cfg(any(test, feature = "test-support"))]
impl RecordedEvents {
    fn events(&self) -> std::sync::MutexGuard<'_, Vec<ClusterEvent>> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Every event so far.
    pub fn all(&self) -> Vec<ClusterEvent> {
        self.events().clone()
    }

    /// Every event so far, forgotten here.
    pub fn take(&self) -> Vec<ClusterEvent> {
        std::mem::take(&mut *self.events())
    }

    pub fn has(&self, event: &ClusterEvent) -> bool {
        self.events().contains(event)
    }
}

#[cfg(any(test, feature = "test-support"))]
impl EventSink for RecordedEvents {
    fn apply(&self, event: &ClusterEvent) {
        self.events().push(event.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_local_bus_reaches_every_sink_and_events_read_back() {
        let bus = LocalBus::default();
        let (a, b) = (
            Arc::new(RecordedEvents::default()),
            Arc::new(RecordedEvents::default()),
        );
        bus.subscribe(a.clone());
        bus.subscribe(b.clone());
        let event = ClusterEvent::ListenerChanged {
            listener: ListenerServiceId::from_trusted("abc123".into()),
            drop_link: true,
        };
        bus.publish(event.clone());
        assert_eq!(a.all(), vec![event.clone()]);
        assert_eq!(b.all(), vec![event.clone()]);
        let text = serde_json::to_string(&event).unwrap();
        assert_eq!(
            text,
            r#"{"event":"listener_changed","listener":"abc123","drop_link":true}"#
        );
        assert_eq!(serde_json::from_str::<ClusterEvent>(&text).unwrap(), event);
        // A malformed id from the wire is refused, not trusted.
        assert!(
            serde_json::from_str::<ClusterEvent>(
                r#"{"event":"statuses_changed","enterprise":"a b"}"#
            )
            .is_err()
        );
    }
}

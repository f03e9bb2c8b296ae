//! The NATS adapter of the domain's cluster ports ([`roomlink_domain::cluster`]): several
//! roomlink instances behind a load balancer act as one.
//!
//! - [`Cluster::bus`]: an [`EventBus`] reaching every instance. Subject `{prefix}.events`;
//!   payload a `ClusterEvent` as JSON (`{"event":"token_deleted","hash":"..."}`).
//! - [`announce`]: for a process that is no instance (an admin command), the same events
//!   published once, waiting until the NATS server has them.
//! - [`Cluster::links`]: [`ClusterLinks`], the cluster-wide [`ListenerLinks`]. An instance
//!   holding a listener's connection serves `{prefix}.links.{listener_id}` (NATS
//!   request/reply). Request payload `{"request":{"method":..,"path":..,"body":..},
//!   "timeout_ms":..}`; reply payload `{"Ok":{"status":..,"version":..,"body":..}}` or
//!   `{"Err":"Offline"|"TimedOut"}`.
//!
//! Subjects carry ids only (`[A-Za-z0-9_-]`, checked: see [`Subjects`]); payloads may hold
//! endpoint passwords, so they are never logged and production NATS should use TLS.
//! `docs/cluster.md` describes the bus and what a NATS outage does.

mod events;
mod links;
mod redact;
mod settings;
mod subject;

pub use links::ClusterLinks;
pub use settings::{ClusterError, ClusterSettings};
pub use subject::{DEFAULT_PREFIX, Subjects};

use async_nats::Client;
use events::NatsBus;
use roomlink_domain::cluster::{ClusterEvent, EventBus, ListenerLinks, LocalBus};
use roomlink_domain::ids::is_well_formed;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

/// This instance's connection to the cluster.
pub struct Cluster {
    client: Client,
    instance: String,
    subjects: Subjects,
    local: Arc<LocalBus>,
    bus: Arc<NatsBus>,
    runtime: Handle,
    heard: JoinHandle<()>,
}

/// Connects as `instance` (this process's id, `[A-Za-z0-9_-]{1,64}`). Returns at once: the
/// client connects, and reconnects after any outage, in the background, forever.
pub async fn connect(
    settings: &ClusterSettings,
    instance: String,
) -> Result<Cluster, ClusterError> {
    if !is_well_formed(&instance) {
        return Err(ClusterError::InstanceId);
    }
    let subjects = Subjects::new(&settings.subject_prefix).ok_or(ClusterError::SubjectPrefix)?;
    let servers = settings.servers()?;
    let options = settings.options(&instance)?;
    // With retry_on_initial_connect this fails only on bad options (a TLS file, say).
    let client = options
        .connect(servers)
        .await
        .map_err(|e| ClusterError::Connect(e.to_string()))?;
    let runtime = Handle::current();
    let local = Arc::new(LocalBus::default());
    let subscriber = client
        .subscribe(subjects.events())
        .await
        .map_err(|e| ClusterError::Subscribe(e.to_string()))?;
    let heard = events::deliver_heard(&runtime, subscriber, local.clone());
    let bus = Arc::new(NatsBus {
        client: client.clone(),
        subject: subjects.events(),
        local: local.clone(),
        runtime: runtime.clone(),
        dropped: Default::default(),
    });
    Ok(Cluster {
        client,
        instance,
        subjects,
        local,
        bus,
        runtime,
        heard,
    })
}

/// Publishes `events` to every instance and waits, at most `within`, until the NATS server has
/// them. For a process that is no instance and exits right after (an admin command that
/// revoked tokens): it connects as `name`, subscribes to nothing and closes when done.
pub async fn announce(
    settings: &ClusterSettings,
    name: &str,
    events: &[ClusterEvent],
    within: Duration,
) -> Result<(), ClusterError> {
    if !is_well_formed(name) {
        return Err(ClusterError::InstanceId);
    }
    let subjects = Subjects::new(&settings.subject_prefix).ok_or(ClusterError::SubjectPrefix)?;
    let servers = settings.servers()?;
    let options = settings.options(name)?;
    let send = async {
        let client = options
            .connect(servers)
            .await
            .map_err(|e| ClusterError::Connect(e.to_string()))?;
        for event in events {
            let payload =
                serde_json::to_vec(event).map_err(|e| ClusterError::Publish(e.to_string()))?;
            client
                .publish(subjects.events(), payload.into())
                .await
                .map_err(|e| ClusterError::Publish(e.to_string()))?;
        }
        // Returns once the server has answered a ping sent after the events: it has them.
        client
            .flush()
            .await
            .map_err(|e| ClusterError::Publish(e.to_string()))
    };
    tokio::time::timeout(within, send).await.map_err(|_| {
        ClusterError::Publish(format!("NATS did not take the events within {within:?}"))
    })?
}

impl Cluster {
    /// Publishes to every instance, this one included (its sinks are called at once, in the
    /// caller's thread, as the [`LocalBus`] of a single instance does).
    pub fn bus(&self) -> Arc<dyn EventBus> {
        self.bus.clone()
    }

    /// Where events heard from any instance go: subscribe this instance's sinks here.
    pub fn local_bus(&self) -> Arc<LocalBus> {
        self.local.clone()
    }

    /// The cluster-wide links over `local`, the registry of connections held here. Give the
    /// result to the registry as its [`LinkObserver`](roomlink_domain::cluster::LinkObserver).
    pub fn links(&self, local: Arc<dyn ListenerLinks>) -> Arc<ClusterLinks> {
        Arc::new(ClusterLinks {
            client: self.client.clone(),
            local,
            bus: self.bus(),
            subjects: self.subjects.clone(),
            instance: self.instance.clone(),
            runtime: self.runtime.clone(),
            served: Mutex::new(HashMap::new()),
        })
    }

    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// Whether the NATS connection is up now.
    pub fn is_connected(&self) -> bool {
        self.client.connection_state() == async_nats::connection::State::Connected
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.heard.abort();
    }
}

//! A private nats-server per test, fakes of the local registry and of a sink, bounded waits.

use async_trait::async_trait;
use roomlink_cluster::{Cluster, ClusterSettings, connect};
use roomlink_domain::cluster::{
    ClusterEvent, EventBus, LinkAnswer, LinkFailure, LinkRequest, ListenerLinks,
};
use roomlink_domain::ids::ListenerServiceId;
use std::collections::{HashMap, HashSet};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const NATS_SERVER: &str = "/usr/sbin/nats-server";

/// A nats-server on a free loopback port, killed when dropped.
pub struct NatsServer {
    pub port: u16,
    child: Option<Child>,
}

impl NatsServer {
    pub fn start() -> NatsServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut server = NatsServer { port, child: None };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let child = Command::new(NATS_SERVER)
            .args(["-a", "127.0.0.1", "-p", &self.port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kills the server and starts a new one on the same port.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    pub fn stop(&mut self) {
        self.kill();
    }

    pub fn settings(&self) -> ClusterSettings {
        ClusterSettings {
            url: format!("nats://127.0.0.1:{}", self.port),
            ..Default::default()
        }
    }

    pub async fn instance(&self, name: &str) -> Cluster {
        connect(&self.settings(), name.into())
            .await
            .expect("connects")
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Every event a sink was handed.
pub use roomlink_domain::cluster::RecordedEvents as Seen;

/// The local registry: holds some listeners, answers `answer` after each one's delay, and
/// records what it was asked.
pub struct FakeLocal {
    pub held: Mutex<HashSet<String>>,
    pub delays: HashMap<String, Duration>,
    pub seen: Mutex<Vec<(String, LinkRequest, Duration)>>,
}

impl FakeLocal {
    pub fn holding(ids: &[&str]) -> Arc<FakeLocal> {
        Arc::new(FakeLocal {
            held: Mutex::new(ids.iter().map(|s| s.to_string()).collect()),
            delays: HashMap::new(),
            seen: Mutex::new(Vec::new()),
        })
    }

    pub fn slow(id: &str, delay: Duration) -> Arc<FakeLocal> {
        Arc::new(FakeLocal {
            held: Mutex::new([id.to_string()].into()),
            delays: [(id.to_string(), delay)].into(),
            seen: Mutex::new(Vec::new()),
        })
    }

    pub fn requests(&self) -> usize {
        self.seen.lock().unwrap().len()
    }
}

pub fn answer() -> LinkAnswer {
    LinkAnswer {
        status: 200,
        version: Some("3.0.0".into()),
        body: r#"{"state":{"callActive":true}}"#.into(),
    }
}

pub fn join_request() -> LinkRequest {
    LinkRequest {
        method: "POST".into(),
        path: "/v1/commands/join".into(),
        body: Some(r#"{"credential":{"password":"s3cret"}}"#.into()),
    }
}

pub fn id(text: &str) -> ListenerServiceId {
    ListenerServiceId::from_trusted(text.into())
}

#[async_trait]
impl ListenerLinks for FakeLocal {
    async fn exchange(
        &self,
        listener: &ListenerServiceId,
        request: LinkRequest,
        timeout: Duration,
    ) -> Result<LinkAnswer, LinkFailure> {
        let name = listener.as_str().to_string();
        self.seen
            .lock()
            .unwrap()
            .push((name.clone(), request, timeout));
        if !self.held_here(listener) {
            return Err(LinkFailure::Offline);
        }
        if let Some(delay) = self.delays.get(&name) {
            tokio::time::sleep(*delay).await;
        }
        Ok(answer())
    }

    fn held_here(&self, listener: &ListenerServiceId) -> bool {
        self.held.lock().unwrap().contains(listener.as_str())
    }
}

/// Polls `check` every 20 ms until it holds or `limit` passes.
pub async fn eventually(limit: Duration, mut check: impl AsyncFnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if check().await {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Publishes `event` on `bus` until `sink` has it (a subscription made a moment ago may not
/// have reached the server yet); false after `limit`.
pub async fn until_heard(
    bus: &dyn EventBus,
    event: &ClusterEvent,
    sink: &Seen,
    limit: Duration,
) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        bus.publish(event.clone());
        if eventually(Duration::from_millis(200), async || sink.has(event)).await {
            return true;
        }
    }
    false
}

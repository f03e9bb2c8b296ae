//! `roomlink-listener-sim`: a listener service (docs/listener-protocol.md) whose room systems
//! are simulated in memory. It never opens a connection to an endpoint address.
//!
//! - [`api`]: the protocol (`/v1/info`, `/v1/commands/{command}`, `/v1/status`).
//! - [`control`]: the control surface for tests and demos (`/sim/...`).
//! - [`rooms`]: the simulated room systems; [`fault`]: the faults they can be given;
//!   [`inventory`]: what they say about themselves (`readinventory`).
//!
//! [`start`] serves on the current tokio runtime, so tests run the simulator in-process;
//! [`dial_home`] is the outbound mode (the same [`SimState`] may also back a control surface
//! started with [`serve`]).

pub mod api;
pub mod configuration;
pub mod control;
pub mod fault;
pub mod inventory;
pub mod rooms;
pub mod secrets;

pub use roomlink_listener_protocol::secrets::load_private_key;
pub use roomlink_listener_protocol::{version, wire};

use actix_web::dev::ServerHandle;
use actix_web::{App, HttpServer, middleware, web};
use roomlink_listener_protocol::dial_home::{self, DialHomeSettings};
use roomlink_listener_protocol::secrets::SharedSecret;
use roomlink_listener_protocol::server::{BODY_LIMIT, VERSION_HEADER, not_found};
use rooms::Rooms;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use version::{DEFAULT_VERSION, Version};

/// What a simulated listener is.
pub struct SimConfig {
    /// The listener version it reports; it has only the commands of that version.
    pub version: Version,
    /// The shared secret it demands; `None` accepts any (or no) secret.
    pub secret: Option<String>,
    /// The enterprise's private key, to open `sealed` credentials.
    pub private_key: Option<crypto_box::SecretKey>,
    /// Replaces the commands of `version` (a listener built without some command).
    pub commands: Option<Vec<String>>,
    /// The control protocols it supports; `None` means every protocol roomlink knows.
    pub control_protocols: Option<Vec<String>>,
    /// actix worker threads.
    pub workers: usize,
    /// Stop on SIGINT/SIGTERM (the binary); tests stop through the handle.
    pub handle_signals: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            version: DEFAULT_VERSION,
            secret: None,
            private_key: None,
            commands: None,
            control_protocols: None,
            workers: 1,
            handle_signals: false,
        }
    }
}

impl std::fmt::Debug for SimConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimConfig")
            .field("version", &self.version)
            .field("secret", &self.secret.as_ref().map(|_| "[redacted]"))
            .field(
                "private_key",
                &self.private_key.as_ref().map(|_| "[redacted]"),
            )
            .field("commands", &self.commands)
            .field("control_protocols", &self.control_protocols)
            .field("workers", &self.workers)
            .finish()
    }
}

/// Request counters, for tests (`GET /sim/stats`).
#[derive(Debug, Default)]
pub struct Stats {
    pub info: AtomicU64,
    pub commands: AtomicU64,
    pub status: AtomicU64,
    pub status_endpoints: AtomicU64,
}

/// What every handler reaches.
pub struct SimState {
    pub version: Version,
    pub secret: Option<SharedSecret>,
    pub private_key: Option<crypto_box::SecretKey>,
    pub commands: Vec<String>,
    pub control_protocols: Vec<String>,
    pub rooms: Rooms,
    pub stats: Stats,
}

impl SimState {
    pub fn new(config: SimConfig) -> Self {
        let commands = config.commands.unwrap_or_else(|| {
            version::commands_of(config.version)
                .into_iter()
                .map(str::to_owned)
                .collect()
        });
        let control_protocols = config.control_protocols.unwrap_or_else(|| {
            roomlink_domain::enums::ControlProtocol::ALL
                .iter()
                .map(|p| p.as_str().to_owned())
                .collect()
        });
        SimState {
            version: config.version,
            secret: config.secret.as_deref().map(SharedSecret::new),
            private_key: config.private_key,
            commands,
            control_protocols,
            rooms: Rooms::default(),
            stats: Stats::default(),
        }
    }

    pub fn has_command(&self, name: &str) -> bool {
        self.commands.iter().any(|c| c == name)
    }

    pub fn supports_protocol(&self, protocol: &str) -> bool {
        self.control_protocols.iter().any(|p| p == protocol)
    }
}

/// A running simulator.
pub struct SimHandle {
    server: ServerHandle,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl SimHandle {
    /// Stops at once: in-flight requests (a hanging one included) are dropped.
    pub async fn stop(self) {
        self.server.stop(false).await;
        // The task ends with the server; its outcome no longer matters.
        let _ = self.task.await;
    }

    /// Serves until the server stops (a signal, when `handle_signals` is set).
    pub async fn wait(self) -> std::io::Result<()> {
        self.task.await.map_err(std::io::Error::other)?
    }
}

/// Binds `bind` (port 0 picks a free port) and serves on the current tokio runtime.
pub async fn start(bind: &str, config: SimConfig) -> std::io::Result<(SocketAddr, SimHandle)> {
    let workers = config.workers;
    let handle_signals = config.handle_signals;
    let state = Arc::new(SimState::new(config));
    serve(bind, state, Surface::All, workers, handle_signals).await
}

/// What the simulator's HTTP server offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// The protocol (`/v1/...`) and the control surface (`/sim/...`): inbound mode.
    All,
    /// The control surface only: outbound mode, where roomlink's requests come over the socket.
    Control,
}

/// Serves `state` on `bind` (port 0 picks a free port) on the current tokio runtime.
pub async fn serve(
    bind: &str,
    state: Arc<SimState>,
    surface: Surface,
    workers: usize,
    handle_signals: bool,
) -> std::io::Result<(SocketAddr, SimHandle)> {
    let listener = TcpListener::bind(bind)?;
    let addr = listener.local_addr()?;
    let state = web::Data::from(state);
    let mut server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .app_data(web::PayloadConfig::new(BODY_LIMIT))
            .wrap(
                middleware::DefaultHeaders::new().add((VERSION_HEADER, state.version.to_string())),
            )
            .configure(|cfg| {
                if surface == Surface::All {
                    api::configure(cfg);
                }
            })
            .configure(control::configure)
            .default_service(web::to(not_found))
    })
    .workers(workers.max(1))
    .shutdown_timeout(5)
    .listen(listener)?;
    if !handle_signals {
        server = server.disable_signals();
    }
    let server = server.run();
    let handle = server.handle();
    let task = tokio::spawn(server);
    Ok((
        addr,
        SimHandle {
            server: handle,
            task,
        },
    ))
}

/// Outbound mode: keeps the connection to roomlink until `shutdown` completes, answering its
/// requests with the simulated room systems of `state`.
pub async fn dial_home(
    settings: DialHomeSettings,
    state: Arc<SimState>,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), String> {
    let version = state.version;
    dial_home::run(settings, version, state, shutdown).await
}

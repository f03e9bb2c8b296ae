//! From settings to a running listener: secrets read, drivers built, then either the server
//! bound (inbound) or the connection to roomlink kept (outbound).

use crate::LISTENER_VERSION;
use crate::api::{self, ListenerState};
use crate::calendar::Calendars;
use crate::calendar::ews::{ExchangeClient, ExchangeConfig};
use crate::control::Control;
use crate::devices::DeviceTable;
use crate::drivers::Drivers;
use crate::drivers::cisco_http::{self, CiscoHttpDriver, CiscoHttpSettings, Scheme, TlsPolicy};
use crate::drivers::cisco_ssh::{CiscoSshDriver, CiscoSshSettings, HostKeyPolicy};
use crate::drivers::mesh::{MeshDriver, MeshSettings};
use crate::drivers::poly_telnet::{PolyTelnetDriver, PolyTelnetSettings};
use crate::settings::Settings;
use actix_web::dev::ServerHandle;
use actix_web::{App, HttpServer, middleware, web};
use roomlink_listener_protocol::dial_home::{self, DialHomeSettings, ListenerSecret, Timing};
use roomlink_listener_protocol::secrets::{SharedSecret, load_private_key};
use roomlink_listener_protocol::server::{BODY_LIMIT, VERSION_HEADER, not_found};
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;
use zeroize::Zeroizing;

/// The shared secret: `server.secret`, or the first line of `server.secret_file`. roomlink
/// presents it (inbound); the listener presents it (outbound).
pub fn read_secret(settings: &Settings) -> Result<Option<ListenerSecret>, String> {
    if let Some(secret) = &settings.server.secret {
        return ListenerSecret::new(secret).map(Some);
    }
    let Some(path) = &settings.server.secret_file else {
        return Ok(None);
    };
    let text = Zeroizing::new(
        std::fs::read_to_string(path)
            .map_err(|e| format!("server.secret_file: cannot read {}: {e}", path.display()))?,
    );
    ListenerSecret::new(text.lines().next().unwrap_or(""))
        .map(Some)
        .map_err(|e| format!("{e} ({})", path.display()))
}

/// The outbound settings, checked, when `connect.urls` is set.
pub fn dial_home_settings(
    settings: &Settings,
    secret: &ListenerSecret,
) -> Result<Option<DialHomeSettings>, String> {
    let connect = &settings.connect;
    if !connect.outbound() {
        return Ok(None);
    }
    let dial = DialHomeSettings {
        urls: connect.urls.clone(),
        listener_id: connect.listener_id.clone().unwrap_or_default(),
        secret: secret.clone(),
        ca_file: connect.ca_file.clone(),
        timing: Timing::default(),
    };
    dial.check()?;
    Ok(Some(dial))
}

/// The private key for sealed passwords, when configured.
pub fn read_private_key(settings: &Settings) -> Result<Option<crypto_box::SecretKey>, String> {
    settings
        .server
        .private_key_file
        .as_deref()
        .map(load_private_key)
        .transpose()
}

fn millis(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// The drivers, configured from the settings (already checked by [`Settings::check`]).
pub fn drivers(settings: &Settings) -> Result<Drivers, String> {
    let http = &settings.tandberg_http;
    let cisco_http = CiscoHttpDriver::new(CiscoHttpSettings {
        scheme: if http.scheme == "http" {
            Scheme::Http
        } else {
            Scheme::Https
        },
        tls: match http.tls.as_str() {
            "accept-any" => TlsPolicy::AcceptAny,
            "pinned" => TlsPolicy::Pinned(http.pins.clone()),
            _ => TlsPolicy::Verify,
        },
        connect_timeout: millis(http.connect_timeout_ms),
        // The listener bounds every call anyway; one exchange may take as long.
        request_timeout: millis(settings.commands.timeout_ms),
    })
    .map_err(|e| format!("{}: {e}", cisco_http::PROTOCOL))?;
    let ssh = &settings.tandberg_ssh;
    let cisco_ssh = CiscoSshDriver::new(CiscoSshSettings {
        host_keys: if ssh.host_keys == "accept-any" {
            HostKeyPolicy::AcceptAny
        } else {
            HostKeyPolicy::PinOnFirstUse {
                file: ssh.known_hosts_file.clone(),
            }
        },
        legacy_algorithms: ssh.legacy_algorithms,
        connect_timeout: millis(ssh.connect_timeout_ms),
        answer_timeout: millis(settings.commands.timeout_ms),
    });
    let poly = PolyTelnetDriver::new(PolyTelnetSettings {
        connect_timeout: millis(settings.polycom_telnet.connect_timeout_ms),
        answer_timeout: millis(settings.commands.timeout_ms),
    });
    let mesh = MeshDriver::new(MeshSettings {
        connect_timeout: millis(settings.mesh.connect_timeout_ms),
        request_timeout: millis(settings.commands.timeout_ms),
    });
    Ok(Drivers::new(vec![
        Arc::new(cisco_http),
        Arc::new(cisco_ssh),
        Arc::new(poly),
        Arc::new(mesh),
    ]))
}

/// The calendar readers, configured from the settings (already checked).
pub fn calendars(settings: &Settings) -> Result<Calendars, String> {
    let ews = &settings.calendar.exchange;
    let Some(soap_uri) = &ews.soap_uri else {
        return Ok(Calendars::default());
    };
    let exchange = ExchangeClient::new(ExchangeConfig {
        soap_uri: soap_uri.clone(),
        username: ews.username.clone().unwrap_or_default(),
        password: Zeroizing::new(ews.password.clone().unwrap_or_default()),
        domain: ews.domain.clone(),
        connect_timeout: millis(settings.tandberg_http.connect_timeout_ms),
        // Within roomlink's command timeout, as a room system's answer is.
        timeout: millis(settings.commands.timeout_ms),
    })?;
    Ok(Calendars {
        exchange: Some(exchange),
    })
}

/// A running listener.
pub struct Listener {
    pub addr: SocketAddr,
    server: ServerHandle,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    drivers: Drivers,
}

impl Listener {
    /// Stops accepting, lets in-flight requests finish (`graceful`), closes driver sessions.
    pub async fn stop(self, graceful: bool) {
        self.server.stop(graceful).await;
        let _ = self.task.await;
        self.drivers.shutdown().await;
    }

    /// Serves until the server stops (SIGINT/SIGTERM when signals are handled).
    pub async fn wait(self) -> std::io::Result<()> {
        let outcome = self.task.await.map_err(std::io::Error::other)?;
        self.drivers.shutdown().await;
        outcome
    }
}

/// What both modes answer requests with.
fn state(
    settings: Settings,
    secret: Option<SharedSecret>,
    private_key: Option<crypto_box::SecretKey>,
    drivers: Drivers,
) -> Result<ListenerState, String> {
    let calendars = calendars(&settings)?;
    Ok(ListenerState {
        version: LISTENER_VERSION,
        secret,
        private_key,
        drivers,
        control: Control {
            devices: DeviceTable::default(),
            commands: settings.commands.clone(),
            ivr: settings.ivr.clone(),
        },
        calendars,
        settings,
    })
}

/// Binds `settings.server.bind` and serves on the current tokio runtime.
pub async fn start(
    settings: Settings,
    secret: Option<SharedSecret>,
    private_key: Option<crypto_box::SecretKey>,
    drivers: Drivers,
    handle_signals: bool,
) -> std::io::Result<Listener> {
    let listener = TcpListener::bind(&settings.server.bind)?;
    let addr = listener.local_addr()?;
    let workers = settings.server.workers;
    let shutdown_timeout = settings.server.shutdown_timeout_secs;
    let state = web::Data::new(
        state(settings, secret, private_key, drivers.clone()).map_err(std::io::Error::other)?,
    );
    let mut server = HttpServer::new(move || {
        App::new()
            .app_data(state.clone())
            .app_data(web::PayloadConfig::new(BODY_LIMIT))
            .wrap(
                middleware::DefaultHeaders::new()
                    .add((VERSION_HEADER, LISTENER_VERSION.to_string())),
            )
            .configure(api::configure)
            .default_service(web::to(not_found))
    })
    .workers(workers)
    .shutdown_timeout(shutdown_timeout)
    .listen(listener)?;
    if !handle_signals {
        server = server.disable_signals();
    }
    let server = server.run();
    let handle = server.handle();
    let task = tokio::spawn(server);
    Ok(Listener {
        addr,
        server: handle,
        task,
        drivers,
    })
}

/// Outbound mode: keeps the connection to roomlink until `shutdown` completes, answering its
/// requests with the same handling as the HTTP routes; then closes driver sessions.
pub async fn dial_home(
    settings: Settings,
    dial: DialHomeSettings,
    private_key: Option<crypto_box::SecretKey>,
    drivers: Drivers,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), String> {
    // No HTTP secret check: roomlink checked the listener's secret when the socket opened.
    let state = Arc::new(state(settings, None, private_key, drivers.clone())?);
    let outcome = dial_home::run(dial, LISTENER_VERSION, state, shutdown).await;
    drivers.shutdown().await;
    outcome
}

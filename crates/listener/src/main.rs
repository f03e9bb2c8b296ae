//! `roomlink-listener [--config FILE] [--bind ADDR | --connect URL[,URL...] --listener-id ID]
//! [--secret S | --secret-file FILE] [--private-key FILE] [--check]`

use clap::Parser;
use roomlink_listener::settings::Settings;
use roomlink_listener::{LISTENER_VERSION, startup};
use roomlink_listener_protocol::secrets::SharedSecret;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// The roomlink listener service: takes commands from roomlink, drives the room systems.
///
/// Inbound mode (the default): serves HTTP on --bind and roomlink calls it. Outbound mode
/// (--connect): connects out to roomlink over a WebSocket and opens no port.
#[derive(Parser)]
#[command(name = "roomlink-listener", version)]
struct Cli {
    /// TOML configuration file (see docs/drivers.md for every key).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Inbound: address to listen on (overrides server.bind, default 127.0.0.1:9001; port 0
    /// picks a free port).
    #[arg(long, conflicts_with = "connect")]
    bind: Option<String>,
    /// Outbound: roomlink's base URL(s), comma-separated, tried in turn
    /// (https://roomlink.example.com; overrides connect.urls). The listener connects to
    /// {URL}/api/listenerservices/{ID}/connect and opens no port.
    #[arg(long, value_delimiter = ',', value_name = "URL[,URL...]")]
    connect: Vec<String>,
    /// Outbound: the listener's id in roomlink (overrides connect.listener_id).
    #[arg(long, value_name = "ID")]
    listener_id: Option<String>,
    /// The shared secret: the one roomlink presents (inbound), or the one this listener
    /// presents (outbound). Visible in the process list: prefer --secret-file.
    #[arg(long, conflicts_with = "secret_file")]
    secret: Option<String>,
    /// A file whose first line is the shared secret.
    #[arg(long)]
    secret_file: Option<PathBuf>,
    /// File holding base64 of the enterprise's 32-byte X25519 private key (opens sealed passwords).
    #[arg(long)]
    private_key: Option<PathBuf>,
    /// Validate the configuration, print a summary and exit (0: valid, 1: refused).
    #[arg(long)]
    check: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let settings = match load(&cli) {
        Ok(settings) => settings,
        Err(reason) => {
            let _ = writeln!(std::io::stderr(), "roomlink-listener: {reason}");
            return ExitCode::FAILURE;
        }
    };
    init_logs(&settings);
    match run(cli.check, settings) {
        Ok(()) => ExitCode::SUCCESS,
        Err(reason) => {
            let _ = writeln!(std::io::stderr(), "roomlink-listener: {reason}");
            ExitCode::FAILURE
        }
    }
}

fn load(cli: &Cli) -> Result<Settings, String> {
    let mut settings =
        Settings::load(cli.config.as_deref(), std::env::vars().collect()).map_err(|e| e.0)?;
    if let Some(bind) = &cli.bind {
        settings.server.bind = bind.clone();
    }
    if !cli.connect.is_empty() {
        settings.connect.urls = cli
            .connect
            .iter()
            .map(|u| u.trim().to_owned())
            .filter(|u| !u.is_empty())
            .collect();
    }
    if let Some(id) = &cli.listener_id {
        settings.connect.listener_id = Some(id.clone());
    }
    if let Some(secret) = &cli.secret {
        settings.server.secret = Some(secret.clone());
        settings.server.secret_file = None;
    }
    if let Some(file) = &cli.secret_file {
        settings.server.secret_file = Some(file.clone());
        settings.server.secret = None;
    }
    if let Some(key) = &cli.private_key {
        settings.server.private_key_file = Some(key.clone());
    }
    settings.check().map_err(|e| e.0)?;
    Ok(settings)
}

fn init_logs(settings: &Settings) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        tracing_subscriber::EnvFilter::new(format!("{},actix_server=warn", settings.log.level))
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stdout)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()));
    if settings.log.format == "json" {
        builder.json().init();
    } else {
        builder.init();
    }
}

fn run(check: bool, settings: Settings) -> anyhow::Result<()> {
    let secret = startup::read_secret(&settings).map_err(anyhow::Error::msg)?;
    let Some(secret) = secret else {
        anyhow::bail!(
            "no listener secret: set --secret-file FILE (or server.secret_file, or ROOMLINK_LISTENER__SERVER__SECRET); roomlink shows it once when the listener is registered"
        );
    };
    let dial = startup::dial_home_settings(&settings, &secret).map_err(anyhow::Error::msg)?;
    let private_key = startup::read_private_key(&settings).map_err(anyhow::Error::msg)?;
    let drivers = startup::drivers(&settings).map_err(anyhow::Error::msg)?;
    // Built here so a bad Exchange configuration is refused before anything starts.
    startup::calendars(&settings).map_err(anyhow::Error::msg)?;
    if check {
        let mut out = std::io::stdout();
        writeln!(out, "configuration ok")?;
        match &dial {
            Some(dial) => {
                writeln!(out, "mode: outbound (no listening port)")?;
                writeln!(out, "listener id: {}", dial.listener_id)?;
                let urls = dial.connect_urls().map_err(anyhow::Error::msg)?;
                writeln!(out, "connect: {}", urls.join(", "))?;
            }
            None => {
                writeln!(out, "mode: inbound")?;
                writeln!(out, "bind: {}", settings.server.bind)?;
            }
        }
        writeln!(out, "drivers: {}", drivers.protocols().join(", "))?;
        writeln!(
            out,
            "sealed passwords: {}",
            if private_key.is_some() {
                "opened with the private key"
            } else {
                "refused (no private key)"
            }
        )?;
        writeln!(
            out,
            "exchange calendars: {}",
            match &settings.calendar.exchange.soap_uri {
                Some(uri) => format!("read through {uri} (HTTP Basic)"),
                None => "none (readcalendar answers calendar_not_configured)".to_owned(),
            }
        )?;
        let clusters: Vec<&str> = settings.bridges.keys().map(String::as_str).collect();
        writeln!(
            out,
            "bridges: {}",
            if clusters.is_empty() {
                "none (joins will be refused: set bridges.prod)".to_owned()
            } else {
                clusters.join(", ")
            }
        )?;
        return Ok(());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let protocols = drivers.protocols().join(",");
    if let Some(dial) = dial {
        return runtime.block_on(async {
            let urls = dial.connect_urls().map_err(anyhow::Error::msg)?;
            // One machine-readable line, as in inbound mode.
            writeln!(std::io::stdout(), "connecting to {}", urls.join(", "))?;
            std::io::stdout().flush()?;
            tracing::info!(version = %LISTENER_VERSION, drivers = %protocols,
                listener_id = %dial.listener_id, "listener started (outbound)");
            startup::dial_home(
                settings,
                dial,
                private_key,
                drivers,
                roomlink_listener_protocol::dial_home::stop_signal(),
            )
            .await
            .map_err(anyhow::Error::msg)?;
            tracing::info!("listener stopped");
            Ok(())
        });
    }
    let secret = SharedSecret::new(secret.expose());
    runtime.block_on(async {
        let bind = settings.server.bind.clone();
        let listener = startup::start(settings, Some(secret), private_key, drivers, true)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {bind}: {e}"))?;
        // One machine-readable line, so scripts and tests can find a port chosen by the OS.
        writeln!(std::io::stdout(), "listening on http://{}", listener.addr)?;
        std::io::stdout().flush()?;
        tracing::info!(addr = %listener.addr, version = %LISTENER_VERSION, drivers = %protocols,
            "listener started");
        listener.wait().await?;
        tracing::info!("listener stopped");
        Ok(())
    })
}

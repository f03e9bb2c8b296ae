//! `roomlink-listener-sim --bind 127.0.0.1:PORT [--version X.Y.Z] [--secret S] [--private-key FILE]`
//! or, outbound, `roomlink-listener-sim --connect URL[,URL...] --listener-id ID[,ID...] --secret S
//! [--bind ADDR (the /sim control surface only)] ...`

use clap::Parser;
use futures::FutureExt;
use roomlink_listener_protocol::dial_home::{DialHomeSettings, ListenerSecret, Timing};
use roomlink_listener_sim::version::{DEFAULT_VERSION, Version};
use roomlink_listener_sim::{
    SimConfig, SimState, Surface, dial_home, load_private_key, serve, start,
};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

/// A simulated listener service with simulated room systems.
///
/// Inbound mode: serves the protocol and the /sim control surface on --bind. Outbound mode
/// (--connect): connects out to roomlink over a WebSocket, one connection per --listener-id, all
/// over the same simulated rooms; --bind, when given, serves only the /sim control surface.
#[derive(Parser)]
// `--version` is the simulated listener's version, so clap's own version flag is off.
#[command(name = "roomlink-listener-sim", disable_version_flag = true)]
struct Cli {
    /// Address to listen on (port 0 picks a free port; the bound address is printed).
    /// Required unless --connect is given.
    #[arg(long, required_unless_present = "connect")]
    bind: Option<String>,
    /// Outbound: roomlink's base URL(s), comma-separated, tried in turn; the simulator connects
    /// to {URL}/api/listenerservices/{ID}/connect.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "URL[,URL...]",
        requires = "listener_id"
    )]
    connect: Vec<String>,
    /// Outbound: the listener's id in roomlink. Several ids (comma-separated, or the flag
    /// repeated) run one connection each from this process, all with the same --secret and
    /// the same simulated rooms.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "ID[,ID...]",
        requires = "connect"
    )]
    listener_id: Vec<String>,
    /// The listener version to report, X.Y.Z; commands newer than it are absent.
    #[arg(long, default_value_t = DEFAULT_VERSION)]
    version: Version,
    /// The shared secret: inbound, the one roomlink must present (without it any secret is
    /// accepted); outbound, the one the simulator presents (required). Visible in the process
    /// list: prefer --secret-file.
    #[arg(long, conflicts_with = "secret_file")]
    secret: Option<String>,
    /// A file whose first line is the shared secret.
    #[arg(long, value_name = "FILE")]
    secret_file: Option<PathBuf>,
    /// File holding base64 of the enterprise's 32-byte X25519 private key (opens sealed passwords).
    #[arg(long)]
    private_key: Option<PathBuf>,
}

fn main() -> ExitCode {
    // Everything it logs goes to stdout, after the "listening on" line, so `> sim.log` keeps
    // the whole log in the file; stderr is only for the reason it could not start.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                // actix-server's start-up lines would come before "listening on"; quiet by
                // default so that line stays the first (RUST_LOG brings them back).
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,actix_server=warn")),
        )
        .with_writer(std::io::stdout)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .init();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(reason) => {
            eprintln!("roomlink-listener-sim: {reason}");
            ExitCode::FAILURE
        }
    }
}

fn run(mut cli: Cli) -> anyhow::Result<()> {
    if let Some(file) = cli.secret_file.take() {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| anyhow::anyhow!("cannot read --secret-file {}: {e}", file.display()))?;
        cli.secret = Some(text.lines().next().unwrap_or_default().trim().to_owned());
    }
    if !cli.connect.is_empty() && cli.secret.is_none() {
        anyhow::bail!("--connect needs --secret-file (or --secret)");
    }
    let private_key = cli
        .private_key
        .as_deref()
        .map(load_private_key)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let outbound = outbound_settings(&cli)?;
    let outbound = (!outbound.is_empty()).then_some(outbound);
    let config = SimConfig {
        version: cli.version,
        // Outbound, roomlink checks the secret the simulator presents, not the other way round.
        secret: if outbound.is_some() {
            None
        } else {
            cli.secret.clone()
        },
        private_key,
        workers: 2,
        handle_signals: outbound.is_none(),
        ..SimConfig::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let Some(dial) = outbound else {
            let bind = cli.bind.as_deref().unwrap_or_default();
            let (addr, handle) = start(bind, config)
                .await
                .map_err(|e| anyhow::anyhow!("cannot listen on {bind}: {e}"))?;
            // One machine-readable line, so scripts and tests can find a port chosen by the OS.
            writeln!(std::io::stdout(), "listening on http://{addr}")?;
            std::io::stdout().flush()?;
            tracing::info!(%addr, version = %cli.version, "listener simulator started");
            handle.wait().await?;
            return Ok(());
        };
        let workers = config.workers;
        let state = Arc::new(SimState::new(config));
        let control = match &cli.bind {
            Some(bind) => {
                let (addr, handle) =
                    serve(bind, Arc::clone(&state), Surface::Control, workers, false)
                        .await
                        .map_err(|e| anyhow::anyhow!("cannot listen on {bind}: {e}"))?;
                writeln!(std::io::stdout(), "control surface on http://{addr}")?;
                Some(handle)
            }
            None => None,
        };
        let urls = dial[0].connect_urls().map_err(anyhow::Error::msg)?;
        if dial.len() == 1 {
            writeln!(std::io::stdout(), "connecting to {}", urls.join(", "))?;
        } else {
            let bases = dial[0].urls.join(", ");
            writeln!(
                std::io::stdout(),
                "connecting {} listeners to {bases}",
                dial.len()
            )?;
        }
        std::io::stdout().flush()?;
        let ids: Vec<&str> = dial.iter().map(|d| d.listener_id.as_str()).collect();
        tracing::info!(version = %cli.version, listener_ids = %ids.join(","),
            "listener simulator started (outbound)");
        // One dial-home loop per id, all in this task, all stopped by the same signal.
        let stop = roomlink_listener_protocol::dial_home::stop_signal()
            .boxed_local()
            .shared();
        let loops = dial
            .into_iter()
            .map(|settings| dial_home(settings, Arc::clone(&state), stop.clone()));
        for ended in futures::future::join_all(loops).await {
            ended.map_err(anyhow::Error::msg)?;
        }
        if let Some(control) = control {
            control.stop().await;
        }
        tracing::info!("listener simulator stopped");
        Ok(())
    })
}

/// The outbound settings, checked, one per --listener-id, when --connect is given (empty
/// otherwise).
fn outbound_settings(cli: &Cli) -> anyhow::Result<Vec<DialHomeSettings>> {
    let urls: Vec<String> = cli
        .connect
        .iter()
        .map(|u| u.trim().to_owned())
        .filter(|u| !u.is_empty())
        .collect();
    if urls.is_empty() {
        return Ok(Vec::new());
    }
    let secret = ListenerSecret::new(cli.secret.as_deref().unwrap_or_default())
        .map_err(anyhow::Error::msg)?;
    let ids: Vec<String> = cli
        .listener_id
        .iter()
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty())
        .collect();
    if ids.is_empty() {
        anyhow::bail!("--connect needs --listener-id");
    }
    let mut seen = std::collections::HashSet::new();
    let mut all = Vec::with_capacity(ids.len());
    for id in ids {
        if !seen.insert(id.clone()) {
            anyhow::bail!("--listener-id {id} is given twice");
        }
        let settings = DialHomeSettings {
            urls: urls.clone(),
            listener_id: id,
            secret: secret.clone(),
            ca_file: None,
            timing: Timing::default(),
        };
        settings.check().map_err(anyhow::Error::msg)?;
        all.push(settings);
    }
    Ok(all)
}

//! `roomlink-listener-sim --bind 127.0.0.1:PORT [--version X.Y.Z] [--secret S] [--private-key FILE]`

use clap::Parser;
use roomlink_listener_sim::version::{DEFAULT_VERSION, Version};
use roomlink_listener_sim::{SimConfig, load_private_key, start};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// A simulated listener service with simulated room systems.
#[derive(Parser)]
// `--version` is the simulated listener's version, so clap's own version flag is off.
#[command(name = "roomlink-listener-sim", disable_version_flag = true)]
struct Cli {
    /// Address to listen on (port 0 picks a free port; the bound address is printed).
    #[arg(long)]
    bind: String,
    /// The listener version to report, X.Y.Z; commands newer than it are absent.
    #[arg(long, default_value_t = DEFAULT_VERSION)]
    version: Version,
    /// The shared secret roomlink must present; without it any secret is accepted.
    #[arg(long)]
    secret: Option<String>,
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

fn run(cli: Cli) -> anyhow::Result<()> {
    let private_key = cli
        .private_key
        .as_deref()
        .map(load_private_key)
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let config = SimConfig {
        version: cli.version,
        secret: cli.secret,
        private_key,
        workers: 2,
        handle_signals: true,
        ..SimConfig::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let (addr, handle) = start(&cli.bind, config)
            .await
            .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", cli.bind))?;
        // One machine-readable line, so scripts and tests can find a port chosen by the OS.
        writeln!(std::io::stdout(), "listening on http://{addr}")?;
        std::io::stdout().flush()?;
        tracing::info!(%addr, version = %cli.version, "listener simulator started");
        handle.wait().await?;
        Ok(())
    })
}

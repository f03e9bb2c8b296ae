//! `roomlink-device-emu`: see the crate documentation. Prints one line per listening front end
//! (`cisco-http listening on 127.77.0.1:PORT`), logs to stdout, stops on SIGINT or SIGTERM.
//!
//! File descriptors: each device address holds one listening socket per front end, plus one per
//! open connection. `--count 1000` with three front ends needs about 3,000 plus connections;
//! the soft `RLIMIT_NOFILE` of the machines this runs on (20,000) is enough, so the limit is not
//! raised here (`ulimit -n` before starting otherwise).

use anyhow::Context;
use clap::Parser;
use roomlink_device_emu::device::DeviceDefaults;
use roomlink_device_emu::{EmuConfig, start};
use std::io::Write;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(
    name = "roomlink-device-emu",
    about = "Emulated room systems (Cisco xAPI over HTTP(S) and SSH, Poly Telnet API, a Mesh driver server) on consecutive loopback addresses"
)]
struct Args {
    /// The first device address; the others follow it (127.77.0.1, 127.77.0.2, ...).
    #[arg(long, default_value = "127.77.0.1")]
    host: Ipv4Addr,
    /// How many devices (addresses).
    #[arg(long, default_value_t = 1)]
    count: u32,
    /// Cisco XML API over HTTP on this port (0: any free port).
    #[arg(long, value_name = "PORT")]
    cisco_http: Option<u16>,
    /// Cisco XML API over HTTPS (self-signed certificate made at start) on this port.
    #[arg(long, value_name = "PORT")]
    cisco_https: Option<u16>,
    /// Cisco xAPI over SSH on this port.
    #[arg(long, value_name = "PORT")]
    cisco_ssh: Option<u16>,
    /// The Poly Telnet API on this port.
    #[arg(long, value_name = "PORT")]
    poly_telnet: Option<u16>,
    /// A Relay Mesh driver server on this port (first address only; the device is in the path).
    #[arg(long, value_name = "PORT")]
    mesh: Option<u16>,
    /// Do not enforce the codecs' Basic-auth rate limit (1 request/s per device, queue 30).
    #[arg(long)]
    no_basic_rate_limit: bool,
    /// The control surface (`/emu/devices/...`) on the first address, on this port.
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    control: u16,
    /// The user every device accepts.
    #[arg(long, default_value = "admin")]
    username: String,
    /// A file holding the password every device accepts (first line).
    #[arg(long, value_name = "FILE", conflicts_with = "password")]
    password_file: Option<PathBuf>,
    /// The password every device accepts (visible to other local users: prefer --password-file).
    #[arg(long)]
    password: Option<String>,
    /// How long a dialled call takes to connect.
    #[arg(long, value_name = "MS", default_value_t = 300)]
    connect_after_ms: u64,
}

fn password(args: &Args) -> anyhow::Result<String> {
    if let Some(path) = &args.password_file {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the password file {}", path.display()))?;
        let first = text.lines().next().unwrap_or("").to_owned();
        anyhow::ensure!(
            !first.is_empty(),
            "the password file {} is empty",
            path.display()
        );
        return Ok(first);
    }
    Ok(args
        .password
        .clone()
        .unwrap_or_else(|| DeviceDefaults::default().password))
}

async fn stopped() -> anyhow::Result<&'static str> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).context("cannot watch SIGTERM")?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => Ok("SIGINT"),
        _ = term.recv() => Ok("SIGTERM"),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stdout)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .init();
    let args = Args::parse();
    anyhow::ensure!(
        [
            args.cisco_http,
            args.cisco_https,
            args.cisco_ssh,
            args.poly_telnet,
            args.mesh
        ]
        .iter()
        .any(Option::is_some),
        "nothing to emulate: give one or more of --cisco-http, --cisco-https, --cisco-ssh, --poly-telnet, --mesh (each with a PORT, 0 for any free port)"
    );
    let config = EmuConfig {
        first_host: args.host,
        count: args.count,
        defaults: DeviceDefaults {
            username: args.username.clone(),
            password: password(&args)?,
            connect_after: Duration::from_millis(args.connect_after_ms),
        },
        cisco_http: args.cisco_http,
        cisco_https: args.cisco_https,
        cisco_basic_rate_limit: !args.no_basic_rate_limit,
        cisco_ssh: args.cisco_ssh,
        poly_telnet: args.poly_telnet,
        mesh: args.mesh,
        control: Some(args.control),
    };
    let emulator = start(config).await.context("cannot start the emulator")?;
    {
        let mut out = std::io::stdout().lock();
        for line in emulator.listening_lines() {
            writeln!(out, "{line}")?;
        }
        out.flush()?;
    }
    tracing::info!(
        devices = emulator.hosts.len(),
        first = %emulator.hosts[0],
        "emulating"
    );
    let signal = stopped().await?;
    tracing::info!(signal, "stopping");
    emulator.stop();
    Ok(())
}

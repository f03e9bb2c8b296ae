//! `cargo xtask demo [--release] [--exit-after-setup]`: a running roomlink to play with.
//!
//! Builds `roomlink`, `roomlink-listener-sim` and `roomlinkctl`, starts the simulator and the
//! service (SQLite in `target/demo`, with its own `roomlink.toml`), creates an enterprise, a
//! read-write service user, a token, a listener service, a webhook subscription with its local
//! receiver (`roomlinkctl webhooks listen`, writing `alerts.log`) and a few endpoints, one of
//! them missing its touch panel, and prints commands to try. The processes then run until
//! Ctrl-C, when they get SIGTERM and are waited for.
//!
//! Ctrl-C reaches the whole foreground process group, and std offers no way to catch it. So
//! the services run in their own process group and, once set up, this process replaces itself
//! with a small `sh` supervisor (same pid, still their parent) that traps the signal, sends them
//! SIGTERM and reports where the data lives.
//!
//! - `processes`: starting, watching, stopping and supervising the two services;
//! - `setup`: the admin commands and API calls that create the demo data;
//! - `browser`: `cargo xtask console-test`, the web console's browser test on the same setup;
//! - `guide`: the demo's configuration file and what it prints for the person running it.

pub mod browser;
mod guide;
mod processes;
mod setup;

use processes::{Roomlink, Services};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};

const ENTERPRISE: &str = "demo";
const USERNAME: &str = "demo-ops";

struct Options {
    release: bool,
    exit_after_setup: bool,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        release: false,
        exit_after_setup: false,
    };
    for arg in args {
        match arg.as_str() {
            "--release" => options.release = true,
            "--exit-after-setup" => options.exit_after_setup = true,
            other => {
                return Err(format!(
                    "demo: unknown argument {other}\n\
                     usage: cargo xtask demo [--release] [--exit-after-setup]"
                ));
            }
        }
    }
    Ok(options)
}

/// Runs the demo; `args` are the arguments after `demo`.
pub fn run(args: &[String]) -> Result<(), String> {
    let options = parse(args)?;
    if !cfg!(unix) {
        return Err("the demo needs a Unix-like system (signals, process groups, sh)".into());
    }
    let profile = if options.release { "release" } else { "debug" };
    let mut build = vec![
        "build",
        "-p",
        "roomlink",
        "-p",
        "roomlink-listener-sim",
        "-p",
        "roomlink-cli",
    ];
    if options.release {
        build.push("--release");
    }
    crate::cargo(&build)?;

    let target = crate::target_dir();
    let bin = target.join(profile);
    let dir = target.join("demo");
    fresh_directory(&dir)?;
    let port = free_port()?;
    let roomlink = Roomlink {
        bin: bin.join("roomlink"),
        config: dir.join("roomlink.toml"),
        dir: dir.clone(),
    };
    std::fs::write(&roomlink.config, guide::config_file(&dir, port))
        .map_err(|e| format!("cannot write {}: {e}", roomlink.config.display()))?;
    let password = setup::random_hex(12);
    let listener_secret = setup::random_hex(24);

    // Dropping `services` (an error below) stops whatever has started.
    let mut services = Services::default();
    eprintln!("demo: starting the listener simulator");
    let sim = processes::start_simulator(
        &mut services,
        &bin.join("roomlink-listener-sim"),
        &listener_secret,
        &dir,
    )?;
    eprintln!("demo: creating enterprise {ENTERPRISE} and service user {USERNAME}");
    setup::enterprise_and_user(&roomlink, &password)?;
    eprintln!("demo: starting roomlink");
    let api = format!("127.0.0.1:{port}");
    processes::start_roomlink(&mut services, &roomlink, &api)?;
    eprintln!("demo: token, listener service and endpoints");
    // A local receiver of the rooms' alerts: subscribed before the rooms exist, so the degraded
    // room's first event reaches it.
    let alerts = format!("127.0.0.1:{}", free_port()?);
    let data = setup::demo_data(&api, &sim, &listener_secret, &password, |token| {
        let secret = setup::subscribe_alerts(&api, token, &format!("http://{alerts}/alerts"))?;
        processes::start_alert_receiver(
            &mut services,
            &bin.join("roomlinkctl"),
            &alerts,
            &secret,
            &dir,
        )
    })?;
    let docs = setup::serves_docs(&api);

    guide::print_next_steps(&guide::Demo {
        api,
        sim,
        password,
        data,
        docs,
        alerts,
        roomlink: &roomlink,
    })
    .map_err(|e| format!("cannot write to stdout: {e}"))?;

    if options.exit_after_setup {
        eprintln!("demo: --exit-after-setup: stopping both processes (SIGTERM)");
        services.stop_all()?;
        let _ = std::fs::remove_file(dir.join("demo.pid"));
        eprintln!("demo: stopped; the data stays in {}", dir.display());
        return Ok(());
    }
    processes::supervise(services, &dir)
}

/// Empties `dir` for a new demo and claims it with a pid file.
fn fresh_directory(dir: &Path) -> Result<(), String> {
    refuse_if_running(dir)?;
    if dir.exists() {
        std::fs::remove_dir_all(dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    std::fs::write(dir.join("demo.pid"), std::process::id().to_string())
        .map_err(|e| format!("cannot write the pid file: {e}"))
}

/// A previous demo that still runs owns the directory: do not wipe its database.
fn refuse_if_running(dir: &Path) -> Result<(), String> {
    let Ok(pid) = std::fs::read_to_string(dir.join("demo.pid")) else {
        return Ok(());
    };
    let pid = pid.trim();
    let alive = Command::new("kill")
        .args(["-0", pid])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if alive && pid != std::process::id().to_string() {
        return Err(format!(
            "another demo seems to run (pid {pid}, {}); stop it first",
            dir.join("demo.pid").display()
        ));
    }
    Ok(())
}

fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        let o = parse(&args(&["--release", "--exit-after-setup"])).unwrap();
        assert!(o.release && o.exit_after_setup);
        let o = parse(&args(&[])).unwrap();
        assert!(!o.release && !o.exit_after_setup);
        assert!(parse(&args(&["--nope"])).is_err());
    }
}

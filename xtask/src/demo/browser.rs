//! `cargo xtask console-test [--release]`: the web console in a real browser.
//!
//! Starts what `cargo xtask demo` starts (the listener simulator and `roomlink serve` on a free
//! loopback port, SQLite in `target/console-test/`, the demo enterprise, user, listener and
//! rooms), adds a read-only user, installs the console's npm packages when
//! `crates/http/console/node_modules` is missing (`npm ci`), and runs
//! `crates/http/console/test/console.test.mjs`: playwright-core driving Debian's Chromium
//! (`/usr/bin/chromium`, headless). The screenshots go to `docs/console/`. Both services are
//! stopped afterwards, whatever the outcome.

use super::processes::{self, Roomlink, Services};
use super::{ENTERPRISE, USERNAME, free_port, fresh_directory, guide, setup};
use std::path::Path;
use std::process::Command;

const CHROMIUM: &str = "/usr/bin/chromium";
/// The read-only user the test signs in as too.
const VIEWER: &str = "demo-viewer";

pub fn run(args: &[String]) -> Result<(), String> {
    let release = match args {
        [] => false,
        [flag] if flag == "--release" => true,
        _ => return Err("usage: cargo xtask console-test [--release]".into()),
    };
    if !Path::new(CHROMIUM).exists() {
        return Err(format!(
            "{CHROMIUM} is missing: install it with `apt-get install -y chromium`"
        ));
    }
    let console = crate::project_root().join("crates/http/console");
    if !console.join("node_modules").exists() {
        eprintln!("console-test: npm ci in {}", console.display());
        run_in(&console, "npm", &["ci", "--no-audit", "--no-fund"])?;
    }
    if release {
        crate::cargo(&[
            "build",
            "--release",
            "-p",
            "roomlink",
            "-p",
            "roomlink-listener-sim",
        ])?;
    } else {
        crate::build_debug_binaries()?;
    }

    let target = crate::target_dir();
    let bin = target.join(if release { "release" } else { "debug" });
    let dir = target.join("console-test");
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
    let viewer_password = setup::random_hex(12);
    let listener_secret = setup::random_hex(24);

    let mut services = Services::default();
    let sim = processes::start_simulator(
        &mut services,
        &bin.join("roomlink-listener-sim"),
        &listener_secret,
        &dir,
    )?;
    setup::enterprise_and_user(&roomlink, &password)?;
    setup::admin(
        &roomlink,
        &[
            "admin",
            "user",
            "create",
            "--enterprise",
            ENTERPRISE,
            "--username",
            VIEWER,
            "--role",
            "ROLE_READONLY",
            "--password-stdin",
        ],
        &format!("{viewer_password}\n"),
    )?;
    let api = format!("127.0.0.1:{port}");
    processes::start_roomlink(&mut services, &roomlink, &api)?;
    // No alert receiver: the test subscribes its own.
    let data = setup::demo_data(&api, &sim, &listener_secret, &password, |_| Ok(()))?;
    let rooms: Vec<String> = data
        .rooms
        .iter()
        .map(|r| format!("{}={}={}", r.id, r.name, r.address))
        .collect();

    eprintln!("console-test: running the browser test against http://{api}/console/");
    let status = Command::new("node")
        .arg("test/console.test.mjs")
        .current_dir(&console)
        .env("CONSOLE_BASE", format!("http://{api}"))
        .env("CONSOLE_SIM", format!("http://{sim}"))
        .env("CONSOLE_USER", USERNAME)
        .env("CONSOLE_PASSWORD", &password)
        .env("CONSOLE_VIEWER", VIEWER)
        .env("CONSOLE_VIEWER_PASSWORD", &viewer_password)
        .env("CONSOLE_ROOMS", rooms.join(";"))
        .env("CONSOLE_CHROMIUM", CHROMIUM)
        .env(
            "CONSOLE_SCREENSHOTS",
            crate::project_root().join("docs/console"),
        )
        .status()
        .map_err(|e| format!("cannot run node: {e}"));
    let stopped = services.stop_all();
    let _ = std::fs::remove_file(dir.join("demo.pid"));
    match status? {
        s if s.success() => {
            stopped?;
            eprintln!("console-test: ok (screenshots in docs/console/)");
            Ok(())
        }
        s => Err(format!(
            "the browser test failed ({s}); roomlink's log: {}",
            dir.join("roomlink.log").display()
        )),
    }
}

fn run_in(dir: &Path, program: &str, args: &[&str]) -> Result<(), String> {
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .status()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` failed ({status})", args.join(" ")))
    }
}

//! The OpenAPI document and what is checked against it:
//!
//! - `openapi`: writes `docs/openapi.json` from `roomlink_http::openapi_json` (the test
//!   `crates/http/tests/openapi.rs` fails when it is stale).
//! - `reference-page`: renders `/api/docs/` of a throwaway service in headless Chromium, checks
//!   that the operations are listed and writes `docs/reference-page.png`.
//! - `conformance [--max-examples N] [--mode positive|negative|all] [--phases LIST]`: runs
//!   schemathesis against a throwaway service with a read-write token, every check on: no server
//!   error, responses and statuses as documented, schema-valid data accepted and invalid data
//!   refused, created records reachable through the links. By default both modes and every
//!   phase (examples, coverage, fuzzing, stateful); the answers the hooks list
//!   (`xtask/conformance/hooks.py`) are the only failures allowed.
//!
//! The throwaway service is a debug build on a temporary SQLite database at a free loopback
//! port, stopped (SIGTERM) and removed afterwards.

use crate::{http, project_root};
use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CHROMIUM: &str = "/usr/bin/chromium";
const PYTHON: &str = "python3.11";
/// The major version whose command line and `schemathesis.toml` keys the task uses.
const SCHEMATHESIS: &str = "schemathesis>=4,<5";
/// schemathesis's test phases, all run by default.
const PHASES: [&str; 4] = ["examples", "coverage", "fuzzing", "stateful"];
/// For each request to the throwaway service.
const HTTP_TIMEOUT: Duration = Duration::from_secs(10);

pub fn openapi() -> Result<(), String> {
    let output = Command::new(env!("CARGO"))
        .args(["run", "-q", "-p", "roomlink-http", "--example", "openapi"])
        .current_dir(project_root())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !output.status.success() || output.stdout.is_empty() {
        return Err("the openapi example failed".to_owned());
    }
    let path = project_root().join("docs/openapi.json");
    std::fs::write(&path, &output.stdout)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    eprintln!("openapi: wrote {}", path.display());
    Ok(())
}

pub fn reference_page() -> Result<(), String> {
    if !Path::new(CHROMIUM).exists() {
        return Err(format!(
            "{CHROMIUM} is missing: install it with `apt-get install -y chromium`"
        ));
    }
    let service = Throwaway::start()?;
    let url = format!("{}/api/docs/", service.base);
    let profile = service.dir.join("chromium-profile");
    let chromium = |extra: &[&str]| -> Result<std::process::Output, String> {
        Command::new(CHROMIUM)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--virtual-time-budget=10000",
                "--window-size=1280,2000",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(extra)
            .arg(&url)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run {CHROMIUM}: {e}"))
    };
    let dom = chromium(&["--dump-dom"])?;
    let dom = String::from_utf8_lossy(&dom.stdout);
    let expected = [
        "/api/endpoints/{id}/join",
        "/api/auth/accesstokens",
        "/api/endpoints/csv",
        "/api/listenerservices/{id}",
    ];
    let missing: Vec<_> = expected.iter().filter(|p| !dom.contains(*p)).collect();
    if !missing.is_empty() {
        return Err(format!(
            "the rendered reference page does not list {missing:?} ({} bytes of DOM)",
            dom.len()
        ));
    }
    let png = project_root().join("docs/reference-page.png");
    let shot = chromium(&[&format!("--screenshot={}", png.display())])?;
    if !shot.status.success() || !png.exists() {
        return Err(format!(
            "chromium could not take the screenshot: {}",
            String::from_utf8_lossy(&shot.stderr)
        ));
    }
    service.stop()?;
    eprintln!(
        "reference-page: {url} lists the operations; wrote {}",
        png.display()
    );
    Ok(())
}

pub fn conformance(args: &[String]) -> Result<(), String> {
    let mut max_examples = "30".to_owned();
    let mut mode = "all".to_owned();
    let mut phases = PHASES.join(",");
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--phases" => {
                phases = args
                    .next()
                    .filter(|list| list.split(',').all(|p| PHASES.contains(&p)))
                    .ok_or_else(|| format!("--phases needs a comma-separated list of {PHASES:?}"))?
                    .clone();
            }
            "--mode" => {
                mode = args
                    .next()
                    .filter(|m| ["positive", "negative", "all"].contains(&m.as_str()))
                    .ok_or("--mode needs positive, negative or all")?
                    .clone();
            }
            "--max-examples" => {
                max_examples = args
                    .next()
                    .filter(|n| n.parse::<u32>().is_ok())
                    .ok_or("--max-examples needs a number")?
                    .clone();
            }
            other => return Err(format!("conformance: unknown argument {other}")),
        }
    }
    ensure_schemathesis()?;
    let mut service = Throwaway::start()?;
    service.admin(
        &["enterprise", "create", "conformance", "--create-database"],
        "",
    )?;
    let password = "conformance-password";
    service.admin(
        &[
            "user",
            "create",
            "--enterprise",
            "conformance",
            "--username",
            "checker",
            "--role",
            "ROLE_READWRITE",
            "--password-stdin",
        ],
        &format!("{password}\n"),
    )?;
    let answer = http::request(
        &service.address,
        "POST",
        "/api/auth/accesstokens",
        &[("Authorization", &http::basic("checker", password))],
        b"",
        HTTP_TIMEOUT,
    )?
    .ok("create an access token")?;
    let token = answer.json_string("accessToken")?;
    let settings = project_root().join("xtask/conformance");
    let (base, dir) = (service.base.clone(), service.dir.clone());
    let schemathesis = || {
        let mut command = Command::new(PYTHON);
        command
            .args(["-m", "schemathesis.cli", "--config-file"])
            .arg(settings.join("schemathesis.toml"))
            .arg("run")
            .arg(format!("{base}/api/openapi.json"))
            .args([
                "--url",
                &base,
                // Every check; the hooks drop only the answers they list (spec-mandated 5xx,
                // state-dependent refusals), each for the operations it is listed for.
                "--checks",
                "all",
                "--phases",
                &phases,
                "--max-examples",
                &max_examples,
                "--mode",
                &mode,
                "--max-response-time",
                "10",
                "--request-timeout",
                "10",
                "--workers",
                "2",
                "--generation-database",
                "none",
                "--no-color",
                "--suppress-health-check",
                "all",
                "-H",
                &format!("X-Access-Token: {token}"),
                // Token creation takes Basic credentials (the token header goes unused there).
                "--auth",
                &format!("checker:{password}"),
            ])
            .env("SCHEMATHESIS_HOOKS", settings.join("hooks.py"))
            .current_dir(&dir);
        run_teed(command)
    };
    let mut run = schemathesis();
    if let Ok((false, output)) = &run
        && let Some(why) = internal_error_only(output)
        && service.running()
    {
        // A run whose only findings are schemathesis's own errors (its Hypothesis engine
        // calling a generated case flaky, say) says nothing about roomlink; once more decides.
        // Failures, timeouts, refused connections or a roomlink that died are never retried.
        eprintln!("conformance: schemathesis erred without finding a failure ({why}); once more");
        run = schemathesis();
    }
    let stopped = service.stop();
    let (passed, _) = run?;
    stopped?;
    if passed {
        eprintln!("conformance: ok");
        Ok(())
    } else {
        Err("schemathesis found failures (above)".to_owned())
    }
}

/// Runs `command` with its output shown as it comes and kept: whether it passed, and the output.
fn run_teed(mut command: Command) -> Result<(bool, String), String> {
    use std::io::{BufRead, BufReader};
    let mut child = command
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run schemathesis: {e}"))?;
    let mut kept = String::new();
    let mut shown = std::io::stdout().lock();
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines() {
            let line = line.map_err(|e| format!("schemathesis's output: {e}"))?;
            let _ = writeln!(shown, "{line}");
            kept.push_str(&line);
            kept.push('\n');
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("cannot run schemathesis: {e}"))?;
    Ok((status.success(), kept))
}

/// When a failed run found no failure and its summary's errors are all of schemathesis's
/// catch-all kind (`Runtime Error`: its engine's own trouble, not a network error, a timeout, an
/// unhealthy or unavailable server, or a schema error), the final line; otherwise `None`.
fn internal_error_only(output: &str) -> Option<&str> {
    let last = output.lines().rev().find(|line| !line.trim().is_empty())?;
    let counts = last.trim_matches(|c: char| c == '=' || c.is_whitespace());
    if !counts.contains("error") || counts.contains("failure") {
        return None;
    }
    let summary = &output[output.rfind("\nErrors:\n")? + "\nErrors:\n".len()..];
    let mut titles = summary
        .lines()
        .map_while(|line| line.trim_start().strip_prefix("🚫 "))
        .map(|group| group.rsplit_once(':').map_or(group, |(title, _)| title))
        .peekable();
    titles.peek()?;
    titles
        .all(|title| title == "Runtime Error")
        .then_some(counts)
}

/// Installs schemathesis from PyPI when it is missing.
fn ensure_schemathesis() -> Result<(), String> {
    let present = Command::new(PYTHON)
        .args(["-c", "import schemathesis"])
        .stderr(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {PYTHON}: {e}"))?;
    if present.success() {
        return Ok(());
    }
    eprintln!("$ {PYTHON} -m pip install --quiet '{SCHEMATHESIS}'");
    let installed = Command::new(PYTHON)
        .args(["-m", "pip", "install", "--quiet", SCHEMATHESIS])
        .status()
        .map_err(|e| format!("cannot run pip: {e}"))?;
    if installed.success() {
        Ok(())
    } else {
        Err("pip could not install schemathesis".to_owned())
    }
}

/// A roomlink process for one task: debug build, temporary SQLite database, loopback port.
struct Throwaway {
    child: Option<Child>,
    bin: PathBuf,
    dir: PathBuf,
    address: String,
    base: String,
}

impl Throwaway {
    fn start() -> Result<Throwaway, String> {
        crate::build_debug_binaries()?;
        let bin = crate::target_dir().join("debug/roomlink");
        let dir = std::env::temp_dir().join(format!("roomlink-xtask-{}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("cannot find a free port: {e}"))?
            .port();
        let address = format!("127.0.0.1:{port}");
        let mut service = Throwaway {
            child: None,
            bin,
            base: format!("http://{address}"),
            address,
            dir,
        };
        let log = std::fs::File::create(service.dir.join("roomlink.log"))
            .map_err(|e| format!("cannot create the log: {e}"))?;
        let child = service
            .command()
            .arg("serve")
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", service.bin.display()))?;
        service.child = Some(child);
        service.wait_until_ready()?;
        Ok(service)
    }

    /// `roomlink` with this service's configuration only (none from the caller's environment).
    fn command(&self) -> Command {
        let mut command = Command::new(&self.bin);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("ROOMLINK__") {
                command.env_remove(key);
            }
        }
        command
            .current_dir(&self.dir)
            .env(
                "ROOMLINK__DATABASE__URL",
                format!("sqlite://{}", self.dir.join("roomlink.db").display()),
            )
            .env("ROOMLINK__SERVER__BIND", &self.address)
            .env("ROOMLINK__SERVER__WORKERS", "2")
            .env("ROOMLINK__SECURITY__BCRYPT_COST", "4")
            // Checkers send many requests without credentials on purpose.
            .env("ROOMLINK__LIMITS__AUTH_FAILURES_PER_MINUTE", "0")
            // Generated calendar accounts may name any host; the service is to reach loopback
            // only (a refused connection there is the CalendarServerException case).
            .env("ROOMLINK__CALENDAR__ALLOWED_HOSTS", "127.0.0.1")
            // Webhook targets: no generated host is ever looked up in DNS (loopback only).
            .env("ROOMLINK__WEBHOOKS__ALLOWED_HOSTS", "127.0.0.1")
            .env("ROOMLINK__WEBHOOKS__ALLOW_NETWORKS", "loopback")
            .env("ROOMLINK__LOG__LEVEL", "warn");
        command
    }

    fn admin(&self, args: &[&str], stdin: &str) -> Result<(), String> {
        let mut child = self
            .command()
            .arg("admin")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run roomlink admin: {e}"))?;
        if let Some(mut input) = child.stdin.take() {
            input
                .write_all(stdin.as_bytes())
                .map_err(|e| format!("roomlink admin: {e}"))?;
        }
        let output = child
            .wait_with_output()
            .map_err(|e| format!("roomlink admin: {e}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "roomlink admin {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr).trim()
            ))
        }
    }

    fn wait_until_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if http::request(&self.address, "GET", "/readyz", &[], b"", HTTP_TIMEOUT)
                .is_ok_and(|r| r.status == 200)
            {
                return Ok(());
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                return Err(format!(
                    "roomlink exited ({status}); its log is {}",
                    self.dir.join("roomlink.log").display()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Err("roomlink did not become ready within 60 s".to_owned())
    }

    /// SIGTERM (in-flight requests finish), then the directory goes.
    /// Whether the service is still running (it did not exit or die).
    fn running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
    }

    fn stop(mut self) -> Result<(), String> {
        self.shut_down()
    }

    fn shut_down(&mut self) -> Result<(), String> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(15);
        let result = loop {
            match child.try_wait() {
                Ok(Some(_)) => break Ok(()),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(100))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break Err("roomlink did not stop on SIGTERM; killed".to_owned());
                }
            }
        };
        let _ = std::fs::remove_dir_all(&self.dir);
        result
    }
}

impl Drop for Throwaway {
    fn drop(&mut self) {
        let _ = self.shut_down();
    }
}

#[cfg(test)]
mod tests {
    use super::internal_error_only;

    const TAIL: &str = "\n======= SUMMARY =======\n\nErrors:\n  🚫 Runtime Error: 1\n\n";

    #[test]
    fn only_runtime_errors_without_failures_are_schemathesis_s_own() {
        let own = format!("{TAIL}================ 1 error in 95.20s ================\n");
        assert_eq!(internal_error_only(&own), Some("1 error in 95.20s"));
        let failed = format!("{TAIL}=== 2 failures, 1 error in 95.20s ===\n");
        assert_eq!(internal_error_only(&failed), None);
        let network =
            "\nErrors:\n  🚫 Runtime Error: 1\n  🚫 Network Error: 3\n\n== 4 errors in 9.00s ==\n";
        assert_eq!(internal_error_only(network), None);
        assert_eq!(
            internal_error_only("== No issues found in 9.00s ==\n"),
            None
        );
        assert_eq!(
            internal_error_only("== 1 error in 9.00s ==\n"),
            None,
            "no summary"
        );
    }
}

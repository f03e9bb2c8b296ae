//! `cargo xtask fuzz [--seconds N] [--target NAME]...`: runs the cargo-fuzz targets of `fuzz/`
//! (each for N seconds, default 30), installing cargo-fuzz first when it is missing.
//!
//! The toolchain is stable, so libFuzzer's `-Z` flags are allowed with `RUSTC_BOOTSTRAP=1`.
//! AddressSanitizer is used when it builds; otherwise the targets build with
//! `--sanitizer none` (the Rust code is `unsafe`-free, so a panic is what is being looked for).
//! The committed seeds in `fuzz/corpus/<target>` are read; what the fuzzer learns goes to
//! `fuzz/target/corpus-work/<target>` (not committed); crashes go to `fuzz/artifacts/<target>`.
//! Targets run side by side, one per core; each one's output goes to
//! `fuzz/target/logs/<target>.log`.

use crate::project_root;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

/// Every target in `fuzz/Cargo.toml`.
const TARGETS: [&str; 11] = [
    "csv_plan",
    "csv_export",
    "patch_merge",
    "listener_protocol",
    "platform_file",
    "cisco_xml",
    "cisco_tsh",
    "poly_lines",
    "ews_soap",
    "ical",
    "calendar_json",
];

const DEFAULT_SECONDS: u64 = 30;

struct Options {
    seconds: u64,
    targets: Vec<String>,
}

fn parse(args: &[String]) -> Result<Options, String> {
    let mut options = Options {
        seconds: DEFAULT_SECONDS,
        targets: Vec::new(),
    };
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--seconds" => {
                options.seconds = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|&n| n > 0)
                    .ok_or("--seconds needs a whole number of seconds above 0")?;
            }
            "--target" => {
                let name = args.next().ok_or("--target needs a target name")?;
                if !TARGETS.contains(&name.as_str()) {
                    return Err(format!(
                        "no fuzz target '{name}'; the targets are {}",
                        TARGETS.join(", ")
                    ));
                }
                options.targets.push(name.clone());
            }
            other => {
                return Err(format!(
                    "unknown argument '{other}'; usage: cargo xtask fuzz [--seconds N] [--target NAME]..."
                ));
            }
        }
    }
    if options.targets.is_empty() {
        options.targets = TARGETS.iter().map(|t| (*t).to_owned()).collect();
    }
    Ok(options)
}

pub fn run(args: &[String]) -> Result<(), String> {
    let options = parse(args)?;
    let root = project_root();
    ensure_cargo_fuzz(&root)?;

    let sanitizer = if cargo_fuzz(&root, &["build", "--fuzz-dir", "fuzz"])? {
        "address"
    } else {
        eprintln!(
            "fuzz: the AddressSanitizer build failed (the errors above); trying --sanitizer none, \
             which fails the same way if the targets themselves do not compile"
        );
        if !cargo_fuzz(
            &root,
            &["build", "--fuzz-dir", "fuzz", "--sanitizer", "none"],
        )? {
            return Err("the fuzz targets do not build".to_owned());
        }
        "none"
    };

    let failed = run_targets(&root, sanitizer, &options)?;
    if failed.is_empty() {
        eprintln!(
            "fuzz: {} ran {} s each without a failure (sanitizer: {sanitizer})",
            options.targets.join(", "),
            options.seconds
        );
        Ok(())
    } else {
        Err(format!(
            "fuzz targets failed: {}; the inputs are in fuzz/artifacts/<target>/ (replay one with \
             `RUSTC_BOOTSTRAP=1 cargo fuzz run --fuzz-dir fuzz --sanitizer {sanitizer} <target> <file>`)",
            failed.join(", ")
        ))
    }
}

/// Runs every target for its time, as many at once as there are cores (a fuzzer is one
/// process on one core), each one's output in `fuzz/target/logs/<target>.log`: its last line
/// is printed when it passes, its end when it fails. Returns the targets that failed.
fn run_targets(root: &Path, sanitizer: &str, options: &Options) -> Result<Vec<String>, String> {
    let logs = root.join("fuzz/target/logs");
    std::fs::create_dir_all(&logs).map_err(|e| format!("cannot create {}: {e}", logs.display()))?;
    let at_once = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut waiting: VecDeque<&String> = options.targets.iter().collect();
    let mut running: Vec<(&String, Child, PathBuf)> = Vec::new();
    let mut failed = Vec::new();
    while !waiting.is_empty() || !running.is_empty() {
        while running.len() < at_once
            && let Some(target) = waiting.pop_front()
        {
            let log = logs.join(format!("{target}.log"));
            running.push((
                target,
                start_target(root, sanitizer, target, options.seconds, &log)?,
                log,
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
        let mut k = 0;
        while k < running.len() {
            let Some(status) = running[k]
                .1
                .try_wait()
                .map_err(|e| format!("cannot wait for cargo fuzz: {e}"))?
            else {
                k += 1;
                continue;
            };
            let (target, _, log) = running.swap_remove(k);
            let output = std::fs::read_to_string(&log).unwrap_or_default();
            if status.success() {
                // libFuzzer ends with `Done N runs in S second(s)`.
                let done = output
                    .lines()
                    .rev()
                    .find(|l| l.starts_with("Done "))
                    .unwrap_or("done");
                eprintln!("fuzz: {target}: {done}");
            } else {
                let lines: Vec<&str> = output.lines().collect();
                eprintln!(
                    "fuzz: {target} FAILED ({status}); the end of {}:\n{}",
                    log.display(),
                    lines[lines.len().saturating_sub(60)..].join("\n")
                );
                failed.push(target.clone());
            }
        }
    }
    Ok(failed)
}

/// `cargo fuzz run` of one target from its committed seeds for `seconds`, output to `log`.
fn start_target(
    root: &Path,
    sanitizer: &str,
    target: &str,
    seconds: u64,
    log: &Path,
) -> Result<Child, String> {
    let work = root.join("fuzz/target/corpus-work").join(target);
    std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display()))?;
    let (work, seeds) = (work.display().to_string(), format!("fuzz/corpus/{target}"));
    let max_time = format!("-max_total_time={seconds}");
    let args: [&str; 10] = [
        "run",
        "--fuzz-dir",
        "fuzz",
        "--sanitizer",
        sanitizer,
        target,
        &work,
        &seeds,
        "--",
        &max_time,
    ];
    eprintln!(
        "$ RUSTC_BOOTSTRAP=1 cargo fuzz {} > {}",
        args.join(" "),
        log.display()
    );
    let out = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out
        .try_clone()
        .map_err(|e| format!("{}: {e}", log.display()))?;
    fuzz_command(root)
        .args(args)
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run cargo fuzz: {e}"))
}

/// `cargo fuzz` from the workspace root. libFuzzer's instrumentation needs -Z flags; the
/// machine has only a stable toolchain.
fn fuzz_command(root: &Path) -> Command {
    let mut command = Command::new(env!("CARGO"));
    command
        .arg("fuzz")
        .current_dir(root)
        .env("RUSTC_BOOTSTRAP", "1");
    command
}

/// Installs cargo-fuzz unless `cargo fuzz` already answers.
fn ensure_cargo_fuzz(root: &Path) -> Result<(), String> {
    let present = Command::new(env!("CARGO"))
        .args(["fuzz", "--version"])
        .current_dir(root)
        .output()
        .is_ok_and(|out| out.status.success());
    if present {
        return Ok(());
    }
    eprintln!("fuzz: cargo-fuzz is missing; installing it");
    crate::cargo(&["install", "cargo-fuzz", "--locked"])
}

/// Runs `cargo fuzz ARGS` from the workspace root; whether it succeeded.
fn cargo_fuzz(root: &Path, args: &[&str]) -> Result<bool, String> {
    eprintln!("$ RUSTC_BOOTSTRAP=1 cargo fuzz {}", args.join(" "));
    fuzz_command(root)
        .args(args)
        .status()
        .map(|status| status.success())
        .map_err(|e| format!("cannot run cargo fuzz: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn defaults_to_every_target_for_thirty_seconds() {
        let o = parse(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.seconds, 30);
        assert_eq!(o.targets, TARGETS);
    }

    #[test]
    fn every_target_of_the_fuzz_crate_is_listed_once() {
        let manifest = std::fs::read_to_string(project_root().join("fuzz/Cargo.toml"))
            .unwrap_or_else(|e| panic!("fuzz/Cargo.toml: {e}"));
        let bins: Vec<&str> = manifest
            .lines()
            .filter_map(|l| l.strip_prefix("name = \""))
            .filter_map(|l| l.strip_suffix('"'))
            .filter(|name| *name != "roomlink-fuzz")
            .collect();
        let mut listed = TARGETS.to_vec();
        listed.sort_unstable();
        listed.dedup();
        assert_eq!(listed.len(), TARGETS.len(), "a target listed twice");
        let mut bins = bins;
        bins.sort_unstable();
        assert_eq!(bins, listed);
    }

    #[test]
    fn reads_seconds_and_targets_and_refuses_the_rest() {
        let o = parse(&args(&["--seconds", "5", "--target", "patch_merge"]))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.seconds, 5);
        assert_eq!(o.targets, ["patch_merge"]);
        for bad in [
            &["--seconds"][..],
            &["--seconds", "0"],
            &["--seconds", "x"],
            &["--target", "nope"],
            &["--verbose"],
        ] {
            assert!(parse(&args(bad)).is_err(), "{bad:?}");
        }
    }
}

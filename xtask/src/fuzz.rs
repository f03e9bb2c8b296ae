//! `cargo xtask fuzz [--seconds N] [--target NAME]...`: runs the cargo-fuzz targets of `fuzz/`
//! (each for N seconds, default 30), installing cargo-fuzz first when it is missing.
//!
//! The toolchain is stable, so libFuzzer's `-Z` flags are allowed with `RUSTC_BOOTSTRAP=1`.
//! AddressSanitizer is used when it builds; otherwise the targets build with
//! `--sanitizer none` (the Rust code is `unsafe`-free, so a panic is what is being looked for).
//! The committed seeds in `fuzz/corpus/<target>` are read; what the fuzzer learns goes to
//! `fuzz/target/corpus-work/<target>` (not committed); crashes go to `fuzz/artifacts/<target>`.

use crate::project_root;
use std::path::Path;
use std::process::Command;

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

    let max_time = format!("-max_total_time={}", options.seconds);
    let mut failed = Vec::new();
    for target in &options.targets {
        let work = root.join("fuzz/target/corpus-work").join(target);
        std::fs::create_dir_all(&work)
            .map_err(|e| format!("cannot create {}: {e}", work.display()))?;
        let seeds = format!("fuzz/corpus/{target}");
        let work = work.display().to_string();
        let ran = cargo_fuzz(
            &root,
            &[
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
            ],
        )?;
        if !ran {
            failed.push(target.clone());
        }
    }
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
    Command::new(env!("CARGO"))
        .arg("fuzz")
        .args(args)
        .current_dir(root)
        // libFuzzer's instrumentation needs -Z flags; the machine has only a stable toolchain.
        .env("RUSTC_BOOTSTRAP", "1")
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

//! `cargo xtask boundaries`: the architecture invariants of `docs/ARCHITECTURE.md` that a
//! machine can check, each on what cargo and the compiler really see rather than on intentions:
//!
//! - **the core is pure**: `cargo tree -p roomlink-domain -e normal` (and the same for
//!   `roomlink-app`) reaches none of [`FORBIDDEN`] (web frameworks, database drivers, HTTP
//!   clients, async runtimes);
//! - **dependencies point inward**: every workspace crate has a layer in [`LAYERS`], and its
//!   normal and build dependencies on workspace crates are the ones its layer allows (rules in
//!   [`layers`]; read from `cargo metadata`). A crate missing from the table fails the check
//!   until someone classifies it;
//! - **no import circles**: no two sibling modules of a workspace crate use each other, directly
//!   or through others (what counts as an edge: [`circles`]);
//! - **small files**: no Rust file of a workspace crate has more than [`MAX_FILE_LINES`] lines;
//! - **no unused dependencies**: every dependency in a manifest is named by its crate's code
//!   (how: [`deps`]).
//!
//! Every check runs and every problem is reported. The tests below run the checks on the real
//! tree under `cargo test` too.

mod circles;
mod deps;
mod layers;
mod source;

use layers::Layer;
use std::process::Command;

/// Every workspace crate and its layer (see [`Layer`]). A new crate goes here, or the check fails.
const LAYERS: [(&str, Layer); 20] = [
    ("roomlink-domain", Layer::Core),
    ("roomlink-app", Layer::Application),
    ("roomlink-memory-store", Layer::TestSupport),
    ("roomlink-store", Layer::Adapter),
    ("roomlink-http", Layer::Driving),
    ("roomlink-crypto", Layer::Adapter),
    ("roomlink-platform", Layer::Adapter),
    ("roomlink-listener-client", Layer::Adapter),
    ("roomlink-calendar", Layer::Adapter),
    ("roomlink-cluster", Layer::Adapter),
    ("roomlink-webhook-sender", Layer::Adapter),
    ("roomlink", Layer::Wiring),
    ("roomlink-cli", Layer::Tool),
    ("roomlink-listener-protocol", Layer::Shared),
    ("roomlink-listener-wire", Layer::Wire),
    ("roomlink-listener", Layer::Tool),
    ("roomlink-listener-sim", Layer::Tool),
    ("roomlink-device-emu", Layer::Tool),
    ("roomlink-bench-peer", Layer::Tool),
    ("xtask", Layer::Automation),
];

/// Crates the domain and the application must never reach through their normal dependencies.
const FORBIDDEN: [&str; 9] = [
    "actix-web",
    "actix-rt",
    "diesel",
    "diesel-async",
    "reqwest",
    "hyper",
    "tokio",
    "tokio-postgres",
    "libsqlite3-sys",
];

/// Runs every check; the error lists every problem found.
pub fn check() -> Result<(), String> {
    let mut problems = Vec::new();
    if let Err(e) = domain_purity() {
        problems.push(e);
    }
    match workspace() {
        Ok(packages) => {
            problems.extend(layers::violations(&packages, &LAYERS));
            problems.extend(import_circles(&packages));
            problems.extend(long_files(&packages));
            problems.extend(deps::unused(&packages, &crate::project_root()));
        }
        Err(e) => problems.push(e),
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "boundaries: {} problem(s)\n{}",
            problems.len(),
            problems.join("\n")
        ))
    }
}

/// The crates that must stay free of I/O frameworks: the core and the application.
const PURE: [&str; 2] = ["roomlink-domain", "roomlink-app"];

fn domain_purity() -> Result<(), String> {
    let mut problems = Vec::new();
    for package in PURE {
        let tree = cargo(&[
            "tree", "-p", package, "-e", "normal", "--prefix", "none", "--format", "{p}",
        ])?;
        let found = violations(&tree);
        if !found.is_empty() {
            problems.push(format!(
                "{package} must stay pure, but depends on: {}",
                found.join(", ")
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// The forbidden crates named in a `cargo tree --prefix none --format {p}` listing.
fn violations(tree: &str) -> Vec<String> {
    let mut found: Vec<String> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| FORBIDDEN.contains(name))
        .map(str::to_owned)
        .collect();
    found.sort();
    found.dedup();
    found
}

fn workspace() -> Result<Vec<layers::Package>, String> {
    layers::packages(&cargo(&["metadata", "--format-version", "1", "--no-deps"])?)
}

/// One message per circle, in every workspace crate's `src/`.
fn import_circles(packages: &[layers::Package]) -> Vec<String> {
    let root = crate::project_root();
    let mut found = Vec::new();
    for package in packages {
        let src = package.dir.join("src");
        let shown = src.strip_prefix(&root).unwrap_or(&src);
        match circles::check_crate(&package.name, &src, shown) {
            Ok(messages) => found.extend(messages),
            Err(e) => found.push(format!("{}: {e}", package.name)),
        }
    }
    found
}

/// The most lines a Rust source file may have: past it, a file holds more than one reader
/// keeps in mind at once, and is split by what its parts do.
const MAX_FILE_LINES: usize = 800;

/// One message per Rust file over [`MAX_FILE_LINES`] in a workspace crate (sources, tests,
/// benches and examples alike).
fn long_files(packages: &[layers::Package]) -> Vec<String> {
    let root = crate::project_root();
    let mut files = Vec::new();
    let mut found = Vec::new();
    for package in packages {
        if let Err(e) = rust_files(&package.dir, &mut files) {
            found.push(e);
        }
    }
    files.sort();
    for file in files {
        let lines = match std::fs::read_to_string(&file) {
            Ok(text) => text.lines().count(),
            Err(e) => {
                found.push(format!("{}: {e}", file.display()));
                continue;
            }
        };
        if lines > MAX_FILE_LINES {
            let shown = file.strip_prefix(&root).unwrap_or(&file);
            found.push(format!(
                "{} has {lines} lines; at most {MAX_FILE_LINES}: split it by what its parts do",
                shown.display()
            ));
        }
    }
    found
}

/// The `.rs` files under `dir`, build output and npm packages left out: the one walk of the
/// checks that read source (circles, file lengths, dependencies).
pub(crate) fn rust_files(
    dir: &std::path::Path,
    into: &mut Vec<std::path::PathBuf>,
) -> Result<(), String> {
    let cannot = |e: std::io::Error| format!("cannot read {}: {e}", dir.display());
    for entry in std::fs::read_dir(dir).map_err(cannot)? {
        let entry = entry.map_err(cannot)?;
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() {
            if name != "target" && name != "node_modules" && name != ".git" {
                rust_files(&path, into)?;
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
    Ok(())
}

/// The standard output of `cargo ARGS` run at the workspace root.
fn cargo(args: &[&str]) -> Result<String, String> {
    let output = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(crate::project_root())
        .output()
        .map_err(|e| format!("cannot run cargo {}: {e}", args[0]))?;
    if !output.status.success() {
        return Err(format!(
            "cargo {} failed: {}",
            args[0],
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    String::from_utf8(output.stdout).map_err(|e| format!("cargo {}: {e}", args[0]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_forbidden_crates_by_exact_name() {
        let tree = "roomlink-domain v0.0.0 (/x)\nserde v1.0.0\ntokio v1.54.1\ntokio-util v0.7.0\ndiesel v2.3.14\n";
        assert_eq!(violations(tree), ["diesel", "tokio"]);
        assert!(violations("roomlink-domain v0.0.0\nserde_json v1\n").is_empty());
    }

    /// The real checks, under plain `cargo test`.
    #[test]
    fn the_domain_and_app_crates_are_pure() {
        domain_purity().unwrap();
    }

    #[test]
    fn every_workspace_crate_keeps_to_its_layer() {
        let packages = workspace().unwrap();
        assert!(packages.iter().any(|p| p.name == "roomlink-domain"));
        let found = layers::violations(&packages, &LAYERS);
        assert!(found.is_empty(), "{}", found.join("\n"));
    }

    #[test]
    fn every_dependency_is_named_by_its_crate() {
        let unused = deps::unused(&workspace().unwrap(), &crate::project_root());
        assert!(unused.is_empty(), "{}", unused.join("\n"));
    }

    #[test]
    fn no_source_file_is_over_the_line_limit() {
        let long = long_files(&workspace().unwrap());
        assert!(long.is_empty(), "{}", long.join("\n"));
    }

    #[test]
    fn no_workspace_crate_has_an_import_circle() {
        let circles = import_circles(&workspace().unwrap());
        assert!(circles.is_empty(), "{}", circles.join("\n"));
    }
}

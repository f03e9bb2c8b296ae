//! The architecture invariant that `roomlink-domain` is pure, checked on the real dependency
//! graph (`cargo tree`), not by reading manifests.

use std::process::Command;

/// Crates the domain must never reach through its normal dependencies.
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

pub fn check() -> Result<(), String> {
    let output = Command::new(env!("CARGO"))
        .args([
            "tree",
            "-p",
            "roomlink-domain",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--format",
            "{p}",
        ])
        .current_dir(crate::project_root())
        .output()
        .map_err(|e| format!("cannot run cargo tree: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo tree failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let tree = String::from_utf8_lossy(&output.stdout);
    let found = violations(&tree);
    if found.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "roomlink-domain must stay pure, but depends on: {}",
            found.join(", ")
        ))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_forbidden_crates_by_exact_name() {
        let tree = "roomlink-domain v0.0.0 (/x)\nserde v1.0.0\ntokio v1.54.1\ntokio-util v0.7.0\ndiesel v2.3.14\n";
        assert_eq!(violations(tree), ["diesel", "tokio"]);
        assert!(violations("roomlink-domain v0.0.0\nserde_json v1\n").is_empty());
    }

    /// The real check, under plain `cargo test`.
    #[test]
    fn the_domain_crate_is_pure() {
        check().unwrap();
    }
}

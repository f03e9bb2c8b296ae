//! "Every dependency is used": a crate's manifest names no dependency its code never names.
//!
//! A dependency counts as used when its crate name (`-` read as `_`, or its rename) appears as
//! a word in any Rust file of the package (sources, tests, benches, examples, build script),
//! which is what `use`, paths and `extern crate` all need. Normal and build dependencies count
//! in any of those files, so a dependency used by tests only shows as used: the check finds
//! dependencies that nothing names at all. A crate needed for its build alone (a bundled C
//! library behind a feature) is listed in `[package.metadata.cargo-machete] ignored`, the
//! convention of the `cargo-machete` tool.

use super::layers::Package;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// One message per dependency that no Rust file of its package names.
pub fn unused(packages: &[Package], shown_from: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for package in packages {
        let mut files = Vec::new();
        if let Err(e) = super::rust_files(&package.dir, &mut files) {
            found.push(e);
            continue;
        }
        let text = read_with_included(files);
        for dependency in &package.dependencies {
            // A crate's dev-dependency on itself turns on features for its own tests.
            if dependency.name == package.name
                || package.used_without_naming.contains(&dependency.name)
            {
                continue;
            }
            let name = dependency
                .rename
                .clone()
                .unwrap_or_else(|| dependency.name.replace('-', "_"));
            if !names_word(&text, &name) {
                let manifest = package.dir.join("Cargo.toml");
                found.push(format!(
                    "{}: the dependency {} is named by none of its Rust files; remove it, or list \
                     it in [package.metadata.cargo-machete] ignored if its build needs it",
                    manifest
                        .strip_prefix(shown_from)
                        .unwrap_or(&manifest)
                        .display(),
                    dependency.name
                ));
            }
        }
    }
    found
}

/// The text of `files` and of every file they include with `#[path = "..."]` (tests share
/// support files across crates that way), each read once.
fn read_with_included(mut files: Vec<PathBuf>) -> String {
    let mut seen = HashSet::new();
    let mut text = String::new();
    while let Some(file) = files.pop() {
        let Ok(file) = file.canonicalize() else {
            continue;
        };
        if !seen.insert(file.clone()) {
            continue;
        }
        let Ok(content) = std::fs::read_to_string(&file) else {
            continue;
        };
        let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        for (at, _) in content.match_indices("#[path = \"") {
            let rest = &content[at + "#[path = \"".len()..];
            if let Some(end) = rest.find('"') {
                files.push(dir.join(&rest[..end]));
            }
        }
        text.push_str(&content);
        text.push('\n');
    }
    text
}

/// Whether `word` stands in `text` between non-identifier characters.
fn names_word(text: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_whole_identifiers() {
        assert!(names_word("use serde_json::Value;", "serde_json"));
        assert!(names_word("x\nserde::Serialize", "serde"));
        assert!(!names_word("use serde_json::Value;", "serde"));
        assert!(!names_word("my_tokio", "tokio"));
        assert!(names_word("#[tokio::test]", "tokio"));
    }
}

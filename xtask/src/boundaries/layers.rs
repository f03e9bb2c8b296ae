//! "Dependencies point inward": each workspace crate has a layer, and the layer says which
//! workspace crates its normal and build dependencies may name. Dev-dependencies are free (tests
//! may start a server or a simulator), except for xtask, which depends on no workspace crate at
//! all.
//!
//! The crates and their dependencies come from `cargo metadata --no-deps`: the manifests as
//! cargo reads them, renames and target-specific tables included.

use serde_json::Value;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Layer {
    /// `roomlink-domain`: the entities, rules, error catalog and ports; no I/O.
    Core,
    /// `roomlink-app`: the use cases over the ports (caches, coalescing, rounds); no I/O.
    Application,
    /// Implements domain ports over one technology (database, HTTP client, crypto, ...).
    Adapter,
    /// An adapter that drives the use cases from outside (the HTTP API): the core and the
    /// application.
    Driving,
    /// Test doubles (the in-memory store): the core only, and only ever a dev-dependency.
    TestSupport,
    /// A protocol's bodies, declared once for both of its sides (the listener protocol's):
    /// no workspace crate; adapters, shared libraries and tools may use it.
    Wire,
    /// The binary that wires the adapters to the domain: it may use every crate.
    Wiring,
    /// A library that programs share (the listener protocol's server side): the core only.
    Shared,
    /// A program of its own (client, listener, simulator, emulator, benchmark peer) that
    /// reuses the domain's rules and the shared libraries.
    Tool,
    /// xtask: the repository's automation. It drives the product through cargo and never
    /// links it, so it builds quickly on a fresh machine; its dependencies come from crates.io.
    Automation,
}

impl Layer {
    fn may_use(self, other: Layer) -> bool {
        match self {
            // Only tests may use test doubles: a normal dependency on one is always wrong.
            _ if other == Layer::TestSupport => false,
            Layer::Wiring => true,
            Layer::Application | Layer::TestSupport => other == Layer::Core,
            Layer::Adapter | Layer::Shared => matches!(other, Layer::Core | Layer::Wire),
            Layer::Driving => matches!(other, Layer::Core | Layer::Application),
            Layer::Tool => matches!(other, Layer::Core | Layer::Shared | Layer::Wire),
            Layer::Core | Layer::Wire | Layer::Automation => false,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Layer::Core => "core",
            Layer::Application => "application",
            Layer::Adapter => "adapter",
            Layer::Driving => "driving adapter",
            Layer::TestSupport => "test support",
            Layer::Wire => "wire",
            Layer::Wiring => "wiring",
            Layer::Shared => "shared",
            Layer::Tool => "tool",
            Layer::Automation => "automation",
        }
    }

    /// The rule, for messages.
    fn rule(self) -> &'static str {
        match self {
            Layer::Core => "the core depends on no other workspace crate",
            Layer::Application => "the application may depend on the core (roomlink-domain) only",
            Layer::Adapter => {
                "an adapter may depend on the core (roomlink-domain) and wire crates only"
            }
            Layer::Driving => {
                "a driving adapter may depend on the core and the application (roomlink-app) only"
            }
            Layer::TestSupport => "test support may depend on the core (roomlink-domain) only",
            Layer::Shared => {
                "a shared library may depend on the core (roomlink-domain) and wire crates only"
            }
            Layer::Wire => "a wire crate depends on no other workspace crate",
            Layer::Tool => {
                "a tool may depend on the core, the shared libraries and wire crates only"
            }
            Layer::Wiring => "the wiring crate may depend on every crate but test support",
            Layer::Automation => {
                "xtask depends on no workspace crate (it drives them through cargo)"
            }
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Normal,
    Build,
    Dev,
}

#[derive(Debug)]
pub struct Dependency {
    /// The package name (not a `package = ` rename).
    pub name: String,
    /// The name the code uses when the manifest renames it (`alias = { package = ... }`).
    pub rename: Option<String>,
    pub kind: Kind,
    /// A path dependency on another member of the workspace.
    pub workspace: bool,
}

#[derive(Debug)]
pub struct Package {
    pub name: String,
    /// The directory of its `Cargo.toml`.
    pub dir: PathBuf,
    pub dependencies: Vec<Dependency>,
    /// Dependencies its code never names on purpose (a crate pulled in for a feature of its
    /// build, such as a bundled C library): `[package.metadata.cargo-machete] ignored`.
    pub used_without_naming: Vec<String>,
}

/// The workspace members in the output of `cargo metadata --format-version 1 --no-deps`.
pub fn packages(metadata: &str) -> Result<Vec<Package>, String> {
    let metadata: Value =
        serde_json::from_str(metadata).map_err(|e| format!("cargo metadata: {e}"))?;
    let text = |value: &Value, key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| format!("cargo metadata: a package without \"{key}\""))
    };
    let list = metadata
        .get("packages")
        .and_then(Value::as_array)
        .ok_or("cargo metadata: no \"packages\"")?;
    let mut packages = Vec::new();
    for package in list {
        let manifest = PathBuf::from(text(package, "manifest_path")?);
        let mut dependencies = Vec::new();
        for dependency in package
            .get("dependencies")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let kind = match dependency.get("kind") {
                Some(Value::String(kind)) if kind == "dev" => Kind::Dev,
                Some(Value::String(kind)) if kind == "build" => Kind::Build,
                Some(Value::Null) | None => Kind::Normal,
                Some(other) => return Err(format!("cargo metadata: dependency kind {other:?}")),
            };
            dependencies.push(Dependency {
                name: text(dependency, "name")?,
                rename: dependency
                    .get("rename")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                kind,
                workspace: dependency.get("path").is_some(),
            });
        }
        let used_without_naming = package
            .get("metadata")
            .and_then(|m| m.get("cargo-machete"))
            .and_then(|m| m.get("ignored"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        packages.push(Package {
            name: text(package, "name")?,
            dir: manifest.parent().map(PathBuf::from).unwrap_or_default(),
            dependencies,
            used_without_naming,
        });
    }
    // `path` is any path dependency: only the members are workspace crates.
    let members: Vec<String> = packages.iter().map(|p| p.name.clone()).collect();
    for dependency in packages.iter_mut().flat_map(|p| &mut p.dependencies) {
        dependency.workspace &= members.contains(&dependency.name);
    }
    Ok(packages)
}

/// One message per crate without a layer in `layers` and per dependency its layer forbids.
pub fn violations(packages: &[Package], layers: &[(&str, Layer)]) -> Vec<String> {
    let layer_of = |name: &str| layers.iter().find(|(n, _)| *n == name).map(|(_, l)| *l);
    let mut found = Vec::new();
    for package in packages {
        let Some(layer) = layer_of(&package.name) else {
            found.push(format!(
                "{} ({}) has no layer: classify it in LAYERS in xtask/src/boundaries.rs \
                 (core, application, adapter, driving, test support, wire, wiring, shared, tool \
                 or automation; see docs/ARCHITECTURE.md)",
                package.name,
                package.dir.display()
            ));
            continue;
        };
        for dependency in &package.dependencies {
            let kind = match dependency.kind {
                Kind::Normal => "dependency",
                Kind::Build => "build-dependency",
                Kind::Dev => "dev-dependency",
            };
            // Not even a dev-dependency: xtask's tests must not build the product either.
            if layer == Layer::Automation && dependency.workspace {
                found.push(format!(
                    "{} has the {kind} {}: {}",
                    package.name,
                    dependency.name,
                    layer.rule()
                ));
                continue;
            }
            // A crate's dev-dependency on itself (to turn on features in tests) is no edge.
            if !dependency.workspace
                || dependency.kind == Kind::Dev
                || dependency.name == package.name
            {
                continue;
            }
            // An unclassified dependency has a message of its own above or below.
            if let Some(other) = layer_of(&dependency.name)
                && !layer.may_use(other)
            {
                found.push(format!(
                    "{} ({}) has the {kind} {} ({}): {}; a dev-dependency would be allowed",
                    package.name,
                    layer.name(),
                    dependency.name,
                    other.name(),
                    layer.rule()
                ));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYERS: [(&str, Layer); 6] = [
        ("domain", Layer::Core),
        ("store", Layer::Adapter),
        ("crypto", Layer::Adapter),
        ("server", Layer::Wiring),
        ("cli", Layer::Tool),
        ("xtask", Layer::Automation),
    ];

    fn package(name: &str, dependencies: &[(&str, Kind, bool)]) -> Package {
        Package {
            name: name.to_owned(),
            dir: PathBuf::from(format!("crates/{name}")),
            dependencies: dependencies
                .iter()
                .map(|(name, kind, workspace)| Dependency {
                    name: (*name).to_owned(),
                    rename: None,
                    kind: *kind,
                    workspace: *workspace,
                })
                .collect(),
            used_without_naming: Vec::new(),
        }
    }

    #[test]
    fn inward_dependencies_pass() {
        use Kind::*;
        let packages = [
            package("domain", &[("serde", Normal, false), ("domain", Dev, true)]),
            package(
                "store",
                &[
                    ("domain", Normal, true),
                    ("crypto", Dev, true),
                    ("store", Dev, true),
                ],
            ),
            package("crypto", &[("domain", Normal, true), ("cc", Build, false)]),
            package(
                "server",
                &[
                    ("domain", Normal, true),
                    ("store", Normal, true),
                    ("cli", Normal, true),
                ],
            ),
            package("cli", &[("domain", Normal, true), ("server", Dev, true)]),
            package(
                "xtask",
                &[("serde_json", Normal, false), ("tempfile", Dev, false)],
            ),
        ];
        assert_eq!(violations(&packages, &LAYERS), Vec::<String>::new());
    }

    #[test]
    fn outward_dependencies_fail() {
        use Kind::*;
        let packages = [
            package("domain", &[("store", Normal, true)]),
            package(
                "store",
                &[("domain", Normal, true), ("crypto", Normal, true)],
            ),
            package("crypto", &[("store", Build, true)]),
            package("cli", &[("server", Normal, true)]),
            package("xtask", &[("domain", Dev, true)]),
        ];
        assert_eq!(
            violations(&packages, &LAYERS),
            [
                "domain (core) has the dependency store (adapter): the core depends on no other \
                 workspace crate; a dev-dependency would be allowed",
                "store (adapter) has the dependency crypto (adapter): an adapter may depend on \
                 the core (roomlink-domain) and wire crates only; a dev-dependency would be allowed",
                "crypto (adapter) has the build-dependency store (adapter): an adapter may depend \
                 on the core (roomlink-domain) and wire crates only; a dev-dependency would be allowed",
                "cli (tool) has the dependency server (wiring): a tool may depend on the core, the \
                 shared libraries and wire crates only; a dev-dependency would be allowed",
                "xtask has the dev-dependency domain: xtask depends on no workspace crate (it \
                 drives them through cargo)",
            ]
        );
    }

    #[test]
    fn the_application_sits_between_the_core_and_the_driving_adapters() {
        use Kind::*;
        let layers = [
            ("domain", Layer::Core),
            ("app", Layer::Application),
            ("http", Layer::Driving),
            ("store", Layer::Adapter),
            ("memory", Layer::TestSupport),
            ("server", Layer::Wiring),
            ("cli", Layer::Tool),
        ];
        let allowed = [
            package("app", &[("domain", Normal, true), ("memory", Dev, true)]),
            package("http", &[("app", Normal, true), ("domain", Normal, true)]),
            package("memory", &[("domain", Normal, true)]),
            package("server", &[("app", Normal, true), ("http", Normal, true)]),
        ];
        assert_eq!(violations(&allowed, &layers), Vec::<String>::new());
        let refused = [
            package("app", &[("store", Normal, true)]),
            package("store", &[("app", Normal, true)]),
            package("cli", &[("app", Normal, true)]),
            package("server", &[("memory", Normal, true)]),
        ];
        assert_eq!(
            violations(&refused, &layers),
            [
                "app (application) has the dependency store (adapter): the application may \
                 depend on the core (roomlink-domain) only; a dev-dependency would be allowed",
                "store (adapter) has the dependency app (application): an adapter may depend on \
                 the core (roomlink-domain) and wire crates only; a dev-dependency would be allowed",
                "cli (tool) has the dependency app (application): a tool may depend on the core, \
                 the shared libraries and wire crates only; a dev-dependency would be allowed",
                "server (wiring) has the dependency memory (test support): the wiring crate may \
                 depend on every crate but test support; a dev-dependency would be allowed",
            ]
        );
    }

    #[test]
    fn an_unclassified_crate_fails_until_it_has_a_layer() {
        let packages = [
            package("nats-bus", &[("store", Kind::Normal, true)]),
            package("store", &[("nats-bus", Kind::Normal, true)]),
        ];
        let found = violations(&packages, &LAYERS);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("nats-bus (crates/nats-bus) has no layer: classify it in LAYERS"),
            "{}",
            found[0]
        );
    }

    #[test]
    fn reads_cargo_metadata() {
        let metadata = r#"{"packages": [
            {"name": "store", "manifest_path": "/w/crates/store/Cargo.toml", "dependencies": [
                {"name": "domain", "kind": null, "path": "/w/crates/domain", "source": null},
                {"name": "crypto", "kind": "dev", "path": "/w/crates/crypto"},
                {"name": "cc", "kind": "build", "source": "registry+https://x"},
                {"name": "vendored", "kind": null, "path": "/elsewhere/vendored"}
            ]},
            {"name": "domain", "manifest_path": "/w/crates/domain/Cargo.toml", "dependencies": []},
            {"name": "crypto", "manifest_path": "/w/crates/crypto/Cargo.toml", "dependencies": []}
        ], "resolve": null, "version": 1}"#;
        let found = packages(metadata).unwrap();
        assert_eq!(found.len(), 3);
        assert_eq!(found[0].name, "store");
        assert_eq!(found[0].dir, PathBuf::from("/w/crates/store"));
        let seen: Vec<(&str, Kind, bool)> = found[0]
            .dependencies
            .iter()
            .map(|d| (d.name.as_str(), d.kind, d.workspace))
            .collect();
        assert_eq!(
            seen,
            [
                ("domain", Kind::Normal, true),
                ("crypto", Kind::Dev, true),
                ("cc", Kind::Build, false),
                ("vendored", Kind::Normal, false),
            ]
        );
        assert!(packages("{}").is_err());
        assert!(packages(r#"{"packages": [{"name": "x"}]}"#).is_err());
        assert!(packages("not json").is_err());
    }
}

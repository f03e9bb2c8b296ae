//! The real binary refuses configuration it cannot mean before doing anything: one line on
//! standard error, a non-zero exit, no secret. (The cases themselves: `settings.rs`'s unit tests.)

#![allow(clippy::unwrap_used)] // test helpers outside #[test] fns: a panic is the failure report

use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_roomlink");

fn migrate(dir: &Path, env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(BIN);
    command
        .current_dir(dir)
        .env_remove("RUST_LOG")
        .env(
            "ROOMLINK__DATABASE__URL",
            format!("sqlite://{}", dir.join("roomlink.db").display()),
        )
        .arg("migrate");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().unwrap()
}

fn refused(dir: &Path, env: &[(&str, &str)]) -> String {
    let output = migrate(dir, env);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let reason = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(reason.trim_end().lines().count(), 1, "{reason}");
    assert!(
        !dir.join("roomlink.db").exists(),
        "refused before touching the database"
    );
    reason
}

#[test]
fn a_misspelt_variable_is_refused_with_the_key_meant() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        refused(dir.path(), &[("ROOMLINK__SERVRE__BIND", "127.0.0.1:0")]),
        "roomlink: configuration: unknown setting servre.bind (from ROOMLINK__SERVRE__BIND); \
         did you mean server.bind?\n"
    );
    let reason = refused(
        dir.path(),
        &[(
            "ROOMLINK__DATABASE__URL",
            "mysql://root:hunter2@db/roomlink",
        )],
    );
    assert!(reason.contains("unsupported scheme 'mysql'"), "{reason}");
    assert!(!reason.contains("hunter2"), "{reason}");
    let reason = refused(
        dir.path(),
        &[("ROOMLINK__LIMITS__ADDRESS_RATE_PER_SEC", "-5")],
    );
    assert!(
        reason.contains("limits.address_rate_per_sec: must be >= 0 (got -5)"),
        "{reason}"
    );

    // Variables that are not roomlink's settings are left alone.
    let ok = migrate(
        dir.path(),
        &[
            ("ROOMLINK_TEST_DATABASE_URL", "postgres://elsewhere"),
            ("ROOMLINK_LISTENER__COMMANDS__TIMEOUT_MS", "5"),
        ],
    );
    assert!(ok.status.success(), "{ok:?}");
}

/// Every `roomlink.toml` shipped in `deploy/` is still accepted by the strict schema.
#[test]
fn the_shipped_configuration_files_are_accepted() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let configmap = std::fs::read_to_string(root.join("deploy/k8s/configmap.yaml")).unwrap();
    // The file is the block under `roomlink.toml: |`, indented by four spaces.
    let embedded: String = configmap
        .lines()
        .skip_while(|line| !line.contains("roomlink.toml: |"))
        .skip(1)
        .map(|line| line.strip_prefix("    ").unwrap_or(line))
        .map(|line| format!("{line}\n"))
        .collect();
    let k8s = dir.path().join("k8s.toml");
    std::fs::write(&k8s, embedded).unwrap();
    for file in [root.join("deploy/systemd/roomlink.toml"), k8s] {
        let output = Command::new(BIN)
            .current_dir(dir.path())
            .env_remove("RUST_LOG")
            .env(
                "ROOMLINK__DATABASE__URL",
                format!("sqlite://{}", dir.path().join("roomlink.db").display()),
            )
            // The k8s file names a key file only its Secret provides.
            .env(
                "ROOMLINK__SECURITY__SERVICE_KEY",
                "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
            )
            .arg("--config")
            .arg(&file)
            .arg("migrate")
            .output()
            .unwrap();
        assert!(output.status.success(), "{}: {output:?}", file.display());
    }
}

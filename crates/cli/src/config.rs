//! Where the service and the credentials come from: flags, then `ROOMLINKCTL_*` variables
//! (clap merges those two), then a TOML file (`--config FILE`, else
//! `$XDG_CONFIG_HOME/roomlinkctl.toml` or `~/.config/roomlinkctl.toml` when it exists).

use crate::client::{Auth, CliError};
use serde::Deserialize;
use std::path::{Path, PathBuf};

pub const DEFAULT_URL: &str = "http://127.0.0.1:8080";

/// The file's keys; every one optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub url: Option<String>,
    pub token: Option<String>,
    pub username: Option<String>,
    pub password: Option<String>,
    /// Seconds before a request is given up.
    pub timeout_secs: Option<u64>,
}

/// What the command line (flags and environment) said.
#[derive(Debug, Default, Clone)]
pub struct Given {
    pub config: Option<PathBuf>,
    pub url: Option<String>,
    pub token: Option<String>,
    pub username: Option<String>,
    pub password: Option<String>,
    pub timeout_secs: Option<u64>,
}

/// The resolved connection settings.
#[derive(Debug)]
pub struct Connection {
    pub url: String,
    pub auth: Auth,
    pub timeout_secs: u64,
}

fn default_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".config")))?;
    Some(base.join("roomlinkctl.toml"))
}

fn read_file(path: &Path) -> Result<ConfigFile, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::other(format!("cannot read {}: {e}", path.display())))?;
    // toml's message quotes the offending line, which could be a password: give the place only.
    toml::from_str(&text).map_err(|e| {
        let place = e
            .span()
            .map(|span| {
                let line = text[..span.start.min(text.len())].lines().count().max(1);
                format!(" near line {line}")
            })
            .unwrap_or_default();
        CliError::other(format!(
            "{} is not a valid roomlinkctl configuration{place} (keys: url, token, username, password, timeout_secs)",
            path.display()
        ))
    })
}

/// Flags and environment win over the file; a token wins over a username and password.
pub fn resolve(given: &Given) -> Result<Connection, CliError> {
    let file = match &given.config {
        Some(path) => read_file(path)?,
        None => match default_path().filter(|p| p.is_file()) {
            Some(path) => read_file(&path)?,
            None => ConfigFile::default(),
        },
    };
    let non_empty = |v: &Option<String>| v.clone().filter(|s| !s.is_empty());
    let url = non_empty(&given.url)
        .or_else(|| non_empty(&file.url))
        .unwrap_or_else(|| DEFAULT_URL.to_owned());
    let token = non_empty(&given.token).or_else(|| non_empty(&file.token));
    let username = non_empty(&given.username).or_else(|| non_empty(&file.username));
    let password = non_empty(&given.password).or_else(|| non_empty(&file.password));
    let auth = match (token, username, password) {
        (Some(token), _, _) => Auth::Token(token),
        (None, Some(username), Some(password)) => Auth::Basic { username, password },
        (None, Some(_), None) => {
            return Err(CliError::other(
                "a username was given without a password (--password or ROOMLINKCTL_PASSWORD)",
            ));
        }
        (None, None, _) => Auth::None,
    };
    Ok(Connection {
        url,
        auth,
        timeout_secs: given.timeout_secs.or(file.timeout_secs).unwrap_or(300),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_the_file_and_tokens_over_passwords() {
        let dir = std::env::temp_dir().join(format!("roomlinkctl-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c.toml");
        std::fs::write(
            &file,
            "url = \"http://file:1\"\nusername = \"ops\"\npassword = \"pw\"\n",
        )
        .unwrap();
        let mut given = Given {
            config: Some(file.clone()),
            ..Given::default()
        };
        let c = resolve(&given).unwrap();
        assert_eq!(c.url, "http://file:1");
        assert!(matches!(c.auth, Auth::Basic { .. }));
        given.url = Some("http://flag:2".into());
        given.token = Some("t".into());
        let c = resolve(&given).unwrap();
        assert_eq!(c.url, "http://flag:2");
        assert!(matches!(c.auth, Auth::Token(_)));

        std::fs::write(&file, "password = \"s3cret\"\ncolour = 1\n").unwrap();
        let e = resolve(&given).unwrap_err().to_string();
        assert!(e.contains("not a valid"), "{e}");
        assert!(!e.contains("s3cret"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

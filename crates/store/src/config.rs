//! Which database to open: the URL, parsed into a backend and a target.

use crate::error::StoreError;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// How to reach the database.
///
/// `url` selects the backend by its scheme: `postgres://…` or `postgresql://…` for PostgreSQL,
/// `sqlite://PATH` for an SQLite file (`sqlite://roomlink.db` is relative to the working
/// directory, `sqlite:///var/lib/roomlink/db.sqlite` absolute). Its `Debug` form hides the
/// password.
#[derive(Clone)]
pub struct DbConfig {
    pub url: String,
    /// The pool's size.
    pub max_connections: usize,
    /// How long to wait for a connection, from the pool or from the server.
    pub connect_timeout: Duration,
    /// Whether a missing SQLite file may be created (with a warning). `false` makes
    /// [`crate::DbStore::connect`] refuse with [`StoreError::NoSqliteDatabase`] instead: for
    /// commands that need existing data, run from the wrong directory.
    pub create_sqlite: bool,
}

impl DbConfig {
    pub const DEFAULT_MAX_CONNECTIONS: usize = 16;
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

    pub fn new(url: impl Into<String>) -> Self {
        DbConfig {
            url: url.into(),
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
            create_sqlite: true,
        }
    }
}

impl fmt::Debug for DbConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DbConfig")
            .field("url", &redact(&self.url))
            .field("max_connections", &self.max_connections)
            .field("connect_timeout", &self.connect_timeout)
            .field("create_sqlite", &self.create_sqlite)
            .finish()
    }
}

/// The database engine behind a [`crate::DbStore`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Postgres,
    Sqlite,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Postgres => "PostgreSQL",
            Backend::Sqlite => "SQLite",
        })
    }
}

/// A parsed database URL.
#[derive(Clone)]
pub(crate) enum Target {
    /// The URL as given: tokio-postgres reads it.
    Postgres(String),
    /// The database file.
    Sqlite(PathBuf),
}

impl Target {
    pub(crate) fn parse(url: &str) -> Result<Target, StoreError> {
        let Some((scheme, rest)) = url.trim().split_once("://") else {
            // Not echoed: it could be a key=value connection string with a password.
            return Err(StoreError::InvalidUrl(
                "the database URL needs a scheme: postgres://…, postgresql://… or sqlite://PATH"
                    .into(),
            ));
        };
        match scheme.to_ascii_lowercase().as_str() {
            "postgres" | "postgresql" => Ok(Target::Postgres(url.trim().to_owned())),
            "sqlite" => {
                // Query parameters are not supported: drop them rather than name a file after them.
                let path = rest.split('?').next().unwrap_or_default();
                if path.is_empty() {
                    return Err(StoreError::InvalidUrl(
                        "sqlite:// needs a file path, e.g. sqlite://roomlink.db".into(),
                    ));
                }
                if path == ":memory:" {
                    // Each pooled connection would get its own empty database.
                    return Err(StoreError::InvalidUrl(
                        "sqlite://:memory: is not supported; name a file".into(),
                    ));
                }
                Ok(Target::Sqlite(PathBuf::from(path)))
            }
            _ => Err(StoreError::UnknownScheme {
                scheme: scheme.chars().take(32).collect(),
            }),
        }
    }

    pub(crate) fn backend(&self) -> Backend {
        match self {
            Target::Postgres(_) => Backend::Postgres,
            Target::Sqlite(_) => Backend::Sqlite,
        }
    }

    /// The target for the startup log: the SQLite file's absolute path, or PostgreSQL's
    /// host, port and database, never the user or password.
    pub(crate) fn summary(&self) -> String {
        match self {
            Target::Postgres(url) => {
                let rest = url.split_once("://").map_or("", |(_, r)| r);
                let rest = rest.split('?').next().unwrap_or_default();
                let (authority, database) = rest.split_once('/').unwrap_or((rest, ""));
                let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
                let host = if host.is_empty() { "localhost" } else { host };
                format!("{host}/{database}")
            }
            Target::Sqlite(path) => absolute(path),
        }
    }

    /// The target as it may appear in logs and errors.
    pub(crate) fn describe(&self) -> String {
        match self {
            Target::Postgres(url) => redact(url),
            Target::Sqlite(path) => path.display().to_string(),
        }
    }
}

/// A path made absolute against the working directory, for messages (as given if that fails).
pub(crate) fn absolute(path: &std::path::Path) -> String {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

/// The URL without its password: `postgres://user:***@host/db`, query parameters (which may
/// hold one too) dropped.
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return "<not a URL>".into();
    };
    let (rest, query) = match rest.split_once('?') {
        Some((rest, _)) => (rest, "?…"),
        None => (rest, ""),
    };
    // The authority ends at the first '/', the userinfo at the authority's last '@'.
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _password)) => format!("{user}:***@{host}"),
            None => format!("{userinfo}@{host}"),
        },
        None => authority.to_owned(),
    };
    format!("{scheme}://{authority}{path}{query}")
}

/// The password in the URL, if any, so error texts can be scrubbed of it.
pub(crate) fn password(url: &str) -> Option<&str> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?']).next()?;
    let userinfo = authority.rsplit_once('@')?.0;
    userinfo
        .split_once(':')
        .map(|(_, p)| p)
        .filter(|p| !p.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes() {
        assert!(matches!(
            Target::parse("postgres://u@h/db"),
            Ok(Target::Postgres(_))
        ));
        assert!(matches!(
            Target::parse("PostgreSQL://u@h/db"),
            Ok(Target::Postgres(_))
        ));
        match Target::parse("sqlite:///var/lib/x.db?mode=rwc") {
            Ok(Target::Sqlite(p)) => assert_eq!(p, PathBuf::from("/var/lib/x.db")),
            _ => panic!("not sqlite"),
        }
        match Target::parse("sqlite://data/x.db") {
            Ok(Target::Sqlite(p)) => assert_eq!(p, PathBuf::from("data/x.db")),
            _ => panic!("not sqlite"),
        }
        for bad in [
            "mysql://h/db",
            "roomlink.db",
            "host=x password=secret",
            "sqlite://",
        ] {
            let e = Target::parse(bad).err().unwrap().to_string();
            assert!(!e.contains("secret"), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
        assert!(
            Target::parse("mysql://h/db")
                .err()
                .unwrap()
                .to_string()
                .contains("'mysql'")
        );
    }

    #[test]
    fn redaction() {
        assert_eq!(
            redact("postgres://bob:s3cr3t@db.example:5432/rl"),
            "postgres://bob:***@db.example:5432/rl"
        );
        assert_eq!(
            redact("postgres://bob:p@ss@db/rl?password=x"),
            "postgres://bob:***@db/rl?…"
        );
        assert_eq!(
            redact("postgres://postgres@127.0.0.1/test"),
            "postgres://postgres@127.0.0.1/test"
        );
        assert_eq!(password("postgres://bob:s3cr3t@db/rl"), Some("s3cr3t"));
        assert_eq!(password("postgres://bob@db/rl"), None);
        let summary = |url: &str| Target::parse(url).ok().unwrap().summary();
        assert_eq!(
            summary("postgres://bob:p@ss@db.example:5433/rl?password=x"),
            "db.example:5433/rl"
        );
        assert_eq!(summary("postgresql://db/rl"), "db/rl");
        assert!(summary("sqlite://x.db").ends_with("/x.db"));
        assert!(summary("sqlite://x.db").starts_with('/'));
        let c = DbConfig::new("postgres://bob:s3cr3t@db/rl");
        assert!(!format!("{c:?}").contains("s3cr3t"));
    }
}

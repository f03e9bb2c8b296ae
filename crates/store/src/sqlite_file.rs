//! Online backup and offline restore of the embedded SQLite database (`roomlink admin
//! backup` / `restore`).
//!
//! A backup is `VACUUM INTO`: one read transaction, so it is a consistent snapshot even while
//! the service writes (WAL mode lets writers go on), and the copy is compact and has no WAL of
//! its own. A restore replaces the database file with a copy of the backup, after keeping the
//! current database beside it (`<db>.before-restore-N`): nothing is lost, even by a restore of
//! the wrong file. Restoring is offline: every instance serving the file must be stopped,
//! since one that keeps its connection open would go on writing to the replaced file.
//!
//! Synchronous diesel connections on a blocking thread, as the migrations (see `migrate`).

use crate::error::StoreError;
use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::Text;
use diesel::sqlite::SqliteConnection;
use std::path::{Path, PathBuf};

/// What `backup` wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackupInfo {
    pub file: PathBuf,
    pub bytes: u64,
}

/// What `restore` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoreInfo {
    /// The database as it was before, when there was one.
    pub kept: Option<PathBuf>,
}

fn refused(message: String) -> StoreError {
    StoreError::SqliteFile(message)
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

fn open(path: &Path) -> Result<SqliteConnection, StoreError> {
    let mut conn = SqliteConnection::establish(&path.to_string_lossy())
        .map_err(|e| refused(format!("cannot open {}: {e}", shown(path))))?;
    conn.batch_execute("PRAGMA busy_timeout = 5000;")
        .map_err(|e| refused(format!("cannot open {}: {e}", shown(path))))?;
    Ok(conn)
}

/// A consistent copy of `db` at `into` (which must not exist).
fn vacuum_into(conn: &mut SqliteConnection, from: &Path, into: &Path) -> Result<(), StoreError> {
    diesel::sql_query("VACUUM INTO ?")
        .bind::<Text, _>(into.to_string_lossy().into_owned())
        .execute(conn)
        .map_err(|e| {
            refused(format!(
                "cannot copy {} to {}: {e}",
                shown(from),
                shown(into)
            ))
        })?;
    Ok(())
}

#[derive(QueryableByName)]
struct Check {
    #[diesel(sql_type = Text)]
    integrity_check: String,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

/// Refuses a file that is not an intact roomlink database.
fn check_roomlink(conn: &mut SqliteConnection, path: &Path) -> Result<(), StoreError> {
    let not_ours =
        |why: String| refused(format!("{} is not a roomlink database: {why}", shown(path)));
    let checks: Vec<Check> = diesel::sql_query("PRAGMA integrity_check")
        .load(conn)
        .map_err(|e| not_ours(e.to_string()))?;
    if checks.first().map(|c| c.integrity_check.as_str()) != Some("ok") {
        return Err(not_ours("SQLite's integrity check failed".to_owned()));
    }
    let tables: Vec<Count> = diesel::sql_query(
        "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' \
         AND name IN ('__diesel_schema_migrations', 'enterprises', 'endpoints')",
    )
    .load(conn)
    .map_err(|e| not_ours(e.to_string()))?;
    if tables.first().map(|c| c.n) != Some(3) {
        return Err(not_ours("it has no roomlink tables".to_owned()));
    }
    Ok(())
}

/// Copies the live database `db` to `into`, online.
pub async fn backup(db: PathBuf, into: PathBuf) -> Result<BackupInfo, StoreError> {
    tokio::task::spawn_blocking(move || {
        if !db.exists() {
            return Err(StoreError::NoSqliteDatabase { path: shown(&db) });
        }
        if into.exists() {
            return Err(refused(format!(
                "{} exists: not overwriting it (choose a new file name)",
                shown(&into)
            )));
        }
        let mut conn = open(&db)?;
        vacuum_into(&mut conn, &db, &into)?;
        drop(conn);
        owner_only(&into)?;
        let mut copy = open(&into)?;
        check_roomlink(&mut copy, &into)?;
        let bytes = std::fs::metadata(&into).map(|m| m.len()).unwrap_or(0);
        Ok(BackupInfo { file: into, bytes })
    })
    .await
    .map_err(|e| refused(format!("the backup did not finish: {e}")))?
}

/// Replaces `db` with the backup `from`; the database it replaces is kept beside it.
pub async fn restore(from: PathBuf, db: PathBuf) -> Result<RestoreInfo, StoreError> {
    tokio::task::spawn_blocking(move || {
        if !from.exists() {
            return Err(refused(format!("no backup at {}", shown(&from))));
        }
        let staged = sibling(&db, "restoring");
        let _ = std::fs::remove_file(&staged);
        let mut backup = open(&from)?;
        check_roomlink(&mut backup, &from)?;
        vacuum_into(&mut backup, &from, &staged)?;
        drop(backup);
        let kept = if db.exists() {
            let kept = free_name(&db)?;
            let mut current = open(&db)?;
            // Everything in the WAL into the file first: the kept copy is complete, and the
            // WAL left behind is empty (it must not be replayed into the restored file).
            current
                .batch_execute("PRAGMA wal_checkpoint(TRUNCATE);")
                .map_err(|e| refused(format!("cannot checkpoint {}: {e}", shown(&db))))?;
            vacuum_into(&mut current, &db, &kept)?;
            drop(current);
            owner_only(&kept)?;
            Some(kept)
        } else {
            None
        };
        for stale in [sibling(&db, "wal"), sibling(&db, "shm")] {
            match std::fs::remove_file(&stale) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(refused(format!("cannot remove {}: {e}", shown(&stale)))),
            }
        }
        std::fs::rename(&staged, &db).map_err(|e| {
            refused(format!(
                "cannot move {} to {}: {e}",
                shown(&staged),
                shown(&db)
            ))
        })?;
        Ok(RestoreInfo { kept })
    })
    .await
    .map_err(|e| refused(format!("the restore did not finish: {e}")))?
}

/// A copy holds password hashes and sealed secrets: readable by its owner only, as the key.
fn owner_only(path: &Path) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| refused(format!("cannot restrict {} to its owner: {e}", shown(path))))?;
    }
    Ok(())
}

/// `<db>-<suffix>` (SQLite's own naming of the WAL and shared-memory files).
fn sibling(db: &Path, suffix: &str) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-");
    name.push(suffix);
    PathBuf::from(name)
}

/// The first `<db>.before-restore-N` that does not exist.
fn free_name(db: &Path) -> Result<PathBuf, StoreError> {
    (1..1000)
        .map(|n| {
            let mut name = db.as_os_str().to_owned();
            name.push(format!(".before-restore-{n}"));
            PathBuf::from(name)
        })
        .find(|p| !p.exists())
        .ok_or_else(|| refused(format!("too many {}.before-restore-N files", shown(db))))
}

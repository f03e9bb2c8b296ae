//! Online backup and offline restore of the embedded SQLite database (`roomlink admin
//! backup` / `restore`).
//!
//! A backup is `VACUUM INTO`: one read transaction, so it is a consistent snapshot even while
//! the service writes (WAL mode lets writers go on), and the copy is compact and has no WAL of
//! its own. A restore replaces the database file with a copy of the backup, after keeping the
//! current database beside it (`<db>.before-restore-N`): nothing is lost, even by a restore of
//! the wrong file. Restoring is offline: every instance serving the file must be stopped,
//! since one that keeps its connection open would go on writing to the replaced file. So a
//! serving instance holds a shared lock on `<db>-lock` ([`ServingLock`]), and a restore takes
//! it exclusively or refuses: while the service runs, a restore cannot happen, and while a
//! restore runs, the service cannot start.
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

/// A consistent copy of `db` at `into` (which must not exist). The copy holds password hashes
/// and sealed secrets, so the file is made readable by its owner only before a byte is written
/// (SQLite writes into an empty file it is given).
fn vacuum_into(conn: &mut SqliteConnection, from: &Path, into: &Path) -> Result<(), StoreError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(into).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => refused(format!(
            "{} exists: not overwriting it (choose a new file name)",
            shown(into)
        )),
        _ => refused(format!("cannot create {}: {e}", shown(into))),
    })?;
    diesel::sql_query("VACUUM INTO ?")
        .bind::<Text, _>(into.to_string_lossy().into_owned())
        .execute(conn)
        .map_err(|e| {
            // Not a copy: nothing half-written is left to be mistaken for one.
            let _ = std::fs::remove_file(into);
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
        let mut conn = open(&db)?;
        vacuum_into(&mut conn, &db, &into)?;
        drop(conn);
        let mut copy = open(&into)?;
        check_roomlink(&mut copy, &into)?;
        let bytes = std::fs::metadata(&into).map(|m| m.len()).unwrap_or(0);
        Ok(BackupInfo { file: into, bytes })
    })
    .await
    .map_err(|e| refused(format!("the backup did not finish: {e}")))?
}

/// Held by every process serving the SQLite file `db`, for as long as it serves: a shared
/// advisory lock (flock) on `<db>-lock`, which the kernel releases when the process ends,
/// however it ends. The file itself stays (removing a lock file races with its next user).
#[derive(Debug)]
pub struct ServingLock {
    _file: std::fs::File,
}

impl ServingLock {
    /// Refuses while a restore of `db` holds the lock.
    pub fn acquire(db: &Path) -> Result<ServingLock, StoreError> {
        // Before the database exists (the first start), its directory may not either.
        if let Some(dir) = db.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| refused(format!("cannot create {}: {e}", shown(dir))))?;
        }
        let (file, path) = lock_file(db)?;
        match file.try_lock_shared() {
            Ok(()) => Ok(ServingLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(refused(format!(
                "a restore of {} is under way (it holds {}): start roomlink when it is done",
                shown(db),
                shown(&path)
            ))),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(refused(format!("cannot lock {}: {e}", shown(&path))))
            }
        }
    }
}

/// `<db>-lock`, created (owner-only) if missing.
fn lock_file(db: &Path) -> Result<(std::fs::File, PathBuf), StoreError> {
    let path = sibling(db, "lock");
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options
        .open(&path)
        .map_err(|e| refused(format!("cannot open {}: {e}", shown(&path))))?;
    Ok((file, path))
}

/// The lock of a restore: exclusive, refused while any process serves `db`.
fn lock_for_restore(db: &Path) -> Result<std::fs::File, StoreError> {
    let (file, path) = lock_file(db)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(refused(format!(
            "roomlink is serving {} (it holds {}): stop every roomlink serving it, then restore",
            shown(db),
            shown(&path)
        ))),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(refused(format!("cannot lock {}: {e}", shown(&path))))
        }
    }
}

/// Replaces `db` with the backup `from`; the database it replaces is kept beside it. Refused
/// while a roomlink serves `db` (see [`ServingLock`]).
pub async fn restore(from: PathBuf, db: PathBuf) -> Result<RestoreInfo, StoreError> {
    tokio::task::spawn_blocking(move || {
        if let Some(dir) = db
            .parent()
            .filter(|d| !d.as_os_str().is_empty() && !d.is_dir())
        {
            return Err(refused(format!(
                "no directory {} for the database",
                shown(dir)
            )));
        }
        // Held until the restored file is in place.
        let _restoring = lock_for_restore(&db)?;
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

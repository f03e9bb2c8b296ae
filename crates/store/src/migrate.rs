//! Embedded migrations, one directory per backend (BYTEA vs BLOB, identity columns).
//!
//! They run on a blocking thread, over a connection of their own: diesel's migration harness
//! is synchronous, and diesel-async's `AsyncMigrationHarness` calls `block_in_place`, which
//! panics on a current-thread runtime (actix's).

use crate::config::Target;
use crate::pool::open_pg;
use diesel::Connection;
use diesel::backend::Backend;
use diesel::connection::SimpleConnection;
use diesel::sqlite::SqliteConnection;
use diesel_async::AsyncPgConnection;
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_migrations::{EmbeddedMigrations, MigrationHarness, embed_migrations};
use std::path::PathBuf;

const POSTGRES: EmbeddedMigrations = embed_migrations!("migrations/postgres");
const SQLITE: EmbeddedMigrations = embed_migrations!("migrations/sqlite");

/// The PostgreSQL advisory lock key that serializes migrations ("roomlink" in ASCII).
const MIGRATION_LOCK: i64 = 0x726f_6f6d_6c69_6e6b;

enum Migrating {
    /// Opened on the runtime, where its I/O task can be spawned; the blocking thread drives
    /// it through the runtime's handle.
    Postgres(Box<AsyncPgConnection>),
    Sqlite(PathBuf),
}

/// Applies the pending migrations; returns their names, or why it failed.
pub(crate) async fn run(target: &Target) -> Result<Vec<String>, String> {
    let migrating = match target {
        Target::Postgres(url) => Migrating::Postgres(Box::new(
            open_pg(url.clone()).await.map_err(|e| e.to_string())?,
        )),
        Target::Sqlite(path) => Migrating::Sqlite(path.clone()),
    };
    tokio::task::spawn_blocking(move || match migrating {
        Migrating::Postgres(conn) => {
            let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::from(*conn);
            // Instances starting together (replicas, a migration Job) take turns: the first
            // migrates, the others wait here and then find nothing pending. The lock is the
            // session's, so it also ends if this process dies.
            conn.batch_execute(&format!("SELECT pg_advisory_lock({MIGRATION_LOCK})"))
                .map_err(|e| e.to_string())?;
            let applied = apply(&mut conn, POSTGRES);
            let unlocked = conn
                .batch_execute(&format!("SELECT pg_advisory_unlock({MIGRATION_LOCK})"))
                .map_err(|e| e.to_string());
            applied.and_then(|names| unlocked.map(|()| names))
        }
        Migrating::Sqlite(path) => {
            let mut conn =
                SqliteConnection::establish(&path.to_string_lossy()).map_err(|e| e.to_string())?;
            conn.batch_execute("PRAGMA busy_timeout = 5000; PRAGMA foreign_keys = ON;")
                .map_err(|e| e.to_string())?;
            apply(&mut conn, SQLITE)
        }
    })
    .await
    .map_err(|e| e.to_string())?
}

fn apply<DB: Backend>(
    harness: &mut impl MigrationHarness<DB>,
    migrations: EmbeddedMigrations,
) -> Result<Vec<String>, String> {
    let pending = harness
        .pending_migrations(migrations)
        .map_err(|e| e.to_string())?;
    let names = pending.iter().map(|m| m.name().to_string()).collect();
    harness
        .run_migrations(&pending)
        .map_err(|e| e.to_string())?;
    Ok(names)
}

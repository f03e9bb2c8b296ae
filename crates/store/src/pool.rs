//! The connection pools, one per backend.

use crate::config::Target;
use crate::error::{DbError, StoreError};
use crate::{Backend, DbConfig};
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::sqlite::SqliteConnection;
use diesel_async::pooled_connection::deadpool::{Hook, HookError, Pool};
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, PoolError, PoolableConnection, RecyclingMethod,
};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use std::future::Future;
use std::time::Duration;

pub(crate) type SqliteConn = SyncConnectionWrapper<SqliteConnection>;

/// Set on every SQLite connection. busy_timeout comes first: switching to WAL takes a lock.
/// foreign_keys is off by default in SQLite and per connection.
const SQLITE_PRAGMAS: &str =
    "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;";

/// A pooled PostgreSQL connection idle longer than this is checked with a query before it is
/// handed out again; one used more recently is not (see [`check_if_idle`]).
const IDLE_CHECK_AFTER: Duration = Duration::from_secs(30);

/// One pool per backend; `db_run!`/`db_tx!` expand one query body for each.
pub(crate) enum DbPool {
    Pg(Pool<AsyncPgConnection>),
    Sqlite(Pool<SqliteConn>),
}

impl DbPool {
    pub(crate) fn build(target: &Target, config: &DbConfig) -> Result<DbPool, StoreError> {
        let size = config.max_connections.max(1);
        let failed =
            |backend, e: diesel_async::pooled_connection::deadpool::BuildError| StoreError::Pool {
                backend,
                reason: e.to_string(),
            };
        match target {
            Target::Postgres(url) => {
                let mut manager = ManagerConfig::default();
                manager.custom_setup = Box::new(|url| Box::pin(open_pg(url.to_owned())));
                // Not a query on every checkout (`Verified`): that doubled the round trips of
                // every request. See `check_if_idle` for what still finds dead connections.
                manager.recycling_method = RecyclingMethod::Fast;
                let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(
                    url, manager,
                );
                Pool::builder(manager)
                    .max_size(size)
                    .pre_recycle(Hook::async_fn(check_if_idle))
                    .build()
                    .map(DbPool::Pg)
                    .map_err(|e| failed(Backend::Postgres, e))
            }
            Target::Sqlite(path) => {
                let mut manager = ManagerConfig::default();
                manager.custom_setup = Box::new(|path| Box::pin(open_sqlite(path.to_owned())));
                // A file cannot go away under an open connection; a check would cost a
                // blocking-thread hop per checkout.
                manager.recycling_method = RecyclingMethod::Fast;
                let manager = AsyncDieselConnectionManager::<SqliteConn>::new_with_config(
                    path.to_string_lossy(),
                    manager,
                );
                Pool::builder(manager)
                    .max_size(size)
                    .build()
                    .map(DbPool::Sqlite)
                    .map_err(|e| failed(Backend::Sqlite, e))
            }
        }
    }
}

/// Whether a pooled PostgreSQL connection may be handed out again. Fast recycling already drops
/// a connection whose socket the server closed (a restart, `pg_terminate_backend`, a crash:
/// tokio-postgres sees the end of the stream and diesel-async reports the connection broken).
/// What it cannot see is a connection that went quiet without a close, such as one a firewall
/// forgot while it sat idle; so a connection idle for [`IDLE_CHECK_AFTER`] answers `SELECT 1`
/// first. Under load connections are never idle that long, and cost no extra round trip.
fn check_if_idle<'a>(
    conn: &'a mut AsyncPgConnection,
    metrics: &'a deadpool::managed::Metrics,
) -> deadpool::managed::HookFuture<'a, PoolError> {
    Box::pin(async move {
        if metrics.last_used() >= IDLE_CHECK_AFTER {
            conn.ping(&RecyclingMethod::Verified)
                .await
                .map_err(|e| HookError::Backend(PoolError::QueryError(e)))?;
        }
        Ok(())
    })
}

/// `AsyncPgConnection::establish`, but a failure keeps its cause ("Connection refused"), which
/// diesel-async's own drops.
pub(crate) async fn open_pg(url: String) -> ConnectionResult<AsyncPgConnection> {
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .map_err(|e| ConnectionError::BadConnection(error_chain(&e)))?;
    let mut conn = AsyncPgConnection::try_from_client_and_connection(client, connection).await?;
    // No JIT compilation: roomlink's statements are short, and the one that reads many rows
    // (a usage question, about 100k) would spend 100 ms compiling to save less.
    conn.batch_execute("SET jit = off")
        .await
        .map_err(|e| ConnectionError::BadConnection(error_chain(&e)))?;
    Ok(conn)
}

/// An error and its causes, on one line.
pub(crate) fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        text = format!("{text}: {c}");
        cause = c.source();
    }
    text
}

async fn open_sqlite(path: String) -> ConnectionResult<SqliteConn> {
    let mut conn = SqliteConn::establish(&path).await?;
    conn.batch_execute(SQLITE_PRAGMAS)
        .await
        .map_err(ConnectionError::CouldntSetupConfiguration)?;
    Ok(conn)
}

/// A pooled connection, or `Unavailable` once `timeout` passes (pool exhausted, server down).
pub(crate) async fn checkout<T, E>(
    get: impl Future<Output = Result<T, E>>,
    timeout: Duration,
) -> Result<T, DbError>
where
    E: std::error::Error + Send + Sync + 'static,
{
    match tokio::time::timeout(timeout, get).await {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(e)) => Err(DbError::Unavailable(Box::new(e))),
        Err(_) => Err(DbError::Unavailable(
            format!("no database connection within {timeout:?}").into(),
        )),
    }
}

/// A PostgreSQL operation's outcome, told apart by the state of its session where diesel-async
/// dropped the SQLSTATE (kind `Unknown`). The server ends a session with an error of its own
/// (57P01 admin_shutdown on a restart or `pg_terminate_backend`, 57P02 crash_shutdown, 57P05
/// idle_session_timeout, …) whose code no longer reaches us and whose message is in the
/// server's language; so one probe on the same connection decides instead: no answer at all
/// means the session is gone and the failure was the server's (`Unavailable`); any answer,
/// even an error, means the session lives and the failure was the statement's (classified as
/// it is). Runs only after such a failure, while the connection is still held.
pub(crate) async fn settle_pg<T>(
    conn: &mut AsyncPgConnection,
    outcome: Result<T, DbError>,
    limit: Duration,
) -> Result<T, DbError> {
    match outcome {
        Err(DbError::Query(e @ DieselError::DatabaseError(DatabaseErrorKind::Unknown, _))) => {
            if session_lives(conn, limit).await {
                Err(DbError::Query(e))
            } else {
                Err(DbError::Unavailable(Box::new(e)))
            }
        }
        other => other,
    }
}

/// Whether the server still answers on this connection. An error answer counts (inside an
/// aborted transaction `SELECT 1` gets 25P02); no answer within `limit` does not.
async fn session_lives(conn: &mut AsyncPgConnection, limit: Duration) -> bool {
    let probe = diesel::sql_query("SELECT 1").execute(conn);
    match tokio::time::timeout(limit, probe).await {
        Ok(Ok(_)) => true,
        Ok(Err(DieselError::DatabaseError(kind, _))) => !matches!(
            kind,
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand
        ),
        Ok(Err(_)) | Err(_) => false,
    }
}

/// SQLite's message for its result code SQLITE_BUSY (its `sqlite3_errstr`). diesel keeps only
/// the message of SQLite errors it does not name, and reading the code from the handle would
/// take `unsafe`, which the workspace forbids. SQLite has no message catalogs: this text is
/// fixed per result code in the library, unlike a PostgreSQL server's.
const SQLITE_BUSY_MESSAGE: &str = "database is locked";

/// A SQLite operation's outcome: still locked by another writer after `busy_timeout` is
/// `Unavailable`, like an exhausted pool.
pub(crate) fn settle_sqlite<T>(outcome: Result<T, DbError>) -> Result<T, DbError> {
    match outcome {
        Err(DbError::Query(DieselError::DatabaseError(DatabaseErrorKind::Unknown, info)))
            if info.message() == SQLITE_BUSY_MESSAGE =>
        {
            Err(DbError::Unavailable(Box::new(DieselError::DatabaseError(
                DatabaseErrorKind::Unknown,
                info,
            ))))
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unknown(message: &str) -> Result<(), DbError> {
        Err(DbError::Query(DieselError::DatabaseError(
            DatabaseErrorKind::Unknown,
            Box::new(message.to_owned()),
        )))
    }

    #[test]
    fn sqlite_still_busy_is_unavailable_and_other_sqlite_failures_are_not() {
        assert!(matches!(
            settle_sqlite(unknown("database is locked")),
            Err(DbError::Unavailable(_))
        ));
        assert!(matches!(
            settle_sqlite(unknown("no such table: endpoints")),
            Err(DbError::Query(_))
        ));
        assert!(matches!(settle_sqlite(Ok(())), Ok(())));
    }
}

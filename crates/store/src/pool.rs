//! The connection pools, one per backend.

use crate::config::Target;
use crate::error::{DbError, StoreError};
use crate::{Backend, DbConfig};
use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;
use diesel_async::pooled_connection::deadpool::Pool;
use diesel_async::pooled_connection::{
    AsyncDieselConnectionManager, ManagerConfig, RecyclingMethod,
};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use std::future::Future;
use std::time::Duration;

pub(crate) type SqliteConn = SyncConnectionWrapper<SqliteConnection>;

/// Set on every SQLite connection. busy_timeout comes first: switching to WAL takes a lock.
/// foreign_keys is off by default in SQLite and per connection.
const SQLITE_PRAGMAS: &str =
    "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON;";

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
                // A server restart leaves dead connections in the pool: check before handing out.
                manager.recycling_method = RecyclingMethod::Verified;
                let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new_with_config(
                    url, manager,
                );
                Pool::builder(manager)
                    .max_size(size)
                    .build()
                    .map(DbPool::Pg)
                    .map_err(|e| failed(Backend::Postgres, e))
            }
            Target::Sqlite(path) => {
                let mut manager = ManagerConfig::default();
                manager.custom_setup = Box::new(|path| Box::pin(open_sqlite(path.to_owned())));
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

/// `AsyncPgConnection::establish`, but a failure keeps its cause ("Connection refused"), which
/// diesel-async's own drops.
pub(crate) async fn open_pg(url: String) -> ConnectionResult<AsyncPgConnection> {
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .map_err(|e| ConnectionError::BadConnection(error_chain(&e)))?;
    AsyncPgConnection::try_from_client_and_connection(client, connection).await
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

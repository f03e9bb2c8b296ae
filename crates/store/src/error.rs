//! Errors: [`StoreError`] for opening and migrating, [`DbError`] inside queries, and how both
//! become catalog errors.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use roomlink_domain::Error;
use std::future::Future;

/// Why the store could not be opened or migrated. One line each, fit for an operator; never
/// contains a password from the URL.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "unsupported database URL scheme '{scheme}': use postgres://…, postgresql://… or sqlite://PATH"
    )]
    UnknownScheme { scheme: String },
    #[error("invalid database URL: {0}")]
    InvalidUrl(String),
    #[error(
        "no SQLite database at {path}: not creating a new one for this command; point to the \
         service's database with --config FILE or ROOMLINK__DATABASE__URL, or run from the \
         service's directory"
    )]
    NoSqliteDatabase { path: String },
    #[error("cannot create the directory of the SQLite database {path}: {reason}")]
    CreateDir { path: String, reason: String },
    #[error("cannot connect to {backend} at {target}: {reason}")]
    Unreachable {
        backend: crate::Backend,
        target: String,
        reason: String,
    },
    #[error("cannot set up the {backend} connection pool: {reason}")]
    Pool {
        backend: crate::Backend,
        reason: String,
    },
    #[error("migrating the {backend} database at {target} failed: {reason}")]
    Migration {
        backend: crate::Backend,
        target: String,
        reason: String,
    },
}

/// A failure inside a store operation: the driver's, the pool's, or a domain error raised by
/// the operation itself (or by a closure it ran). Transactions roll back on any of them.
#[derive(Debug)]
pub(crate) enum DbError {
    Query(DieselError),
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
    Domain(Error),
}

impl From<DieselError> for DbError {
    fn from(e: DieselError) -> Self {
        DbError::Query(e)
    }
}

impl From<Error> for DbError {
    fn from(e: Error) -> Self {
        DbError::Domain(e)
    }
}

impl From<DbError> for Error {
    fn from(e: DbError) -> Self {
        match e {
            DbError::Domain(e) => e,
            DbError::Unavailable(cause) => Error::storage_unavailable(cause),
            DbError::Query(e) if is_unavailable(&e) => Error::storage_unavailable(e),
            DbError::Query(e) => Error::internal(e),
        }
    }
}

impl std::fmt::Display for DbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbError::Query(e) => e.fmt(f),
            DbError::Unavailable(e) => e.fmt(f),
            DbError::Domain(e) => e.fmt(f),
        }
    }
}

/// How PostgreSQL words the errors of SQLSTATE class 57 (its shutdown, restart or crash
/// recovery: `terminating connection due to administrator command`, `the database system is
/// shutting down`, ...). diesel passes on the message, not the code.
const POSTGRES_GOING_AWAY: [&str; 2] = ["terminating connection", "the database system is"];

/// The connection is gone, the server is going down or coming up, or SQLite stayed locked
/// past its busy timeout: try again later.
fn is_unavailable(e: &DieselError) -> bool {
    match e {
        DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
            _,
        ) => true,
        DieselError::DatabaseError(_, info) => {
            let m = info.message();
            m.contains("database is locked")
                || m.contains("database is busy")
                || POSTGRES_GOING_AWAY.iter().any(|p| m.starts_with(p))
        }
        // A connection that broke inside a transaction cannot roll it back.
        DieselError::BrokenTransactionManager => true,
        _ => false,
    }
}

/// Awaits a store operation and turns its failure into a catalog error.
pub(crate) async fn finish<T>(op: impl Future<Output = Result<T, DbError>>) -> Result<T, Error> {
    op.await.map_err(Error::from)
}

/// Whether `e` is a unique violation of the constraint named `constraint` (PostgreSQL) on the
/// `column` of `table` (SQLite names the columns instead: "UNIQUE constraint failed: t.c").
pub(crate) fn is_unique_violation(
    e: &DieselError,
    constraint: &str,
    table: &str,
    column: &str,
) -> bool {
    match e {
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
            info.constraint_name() == Some(constraint)
                || info.message().contains(&format!("{table}.{column}"))
        }
        _ => false,
    }
}

/// `Internal`: a row the store itself wrote no longer makes sense.
pub(crate) fn corrupt(what: impl std::fmt::Display) -> Error {
    Error::internal(format!("stored data is inconsistent: {what}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn database_error(kind: DatabaseErrorKind, message: &str) -> DieselError {
        DieselError::DatabaseError(kind, Box::new(message.to_owned()))
    }

    #[test]
    fn a_server_going_away_is_unavailable_and_other_failures_are_not() {
        for message in [
            "terminating connection due to administrator command",
            "the database system is shutting down",
            "the database system is starting up",
            "database is locked",
        ] {
            let e = Error::from(DbError::Query(database_error(
                DatabaseErrorKind::Unknown,
                message,
            )));
            assert_eq!(
                e.kind(),
                roomlink_domain::ErrorKind::StorageUnavailable,
                "{message}"
            );
        }
        let broken = Error::from(DbError::Query(DieselError::BrokenTransactionManager));
        assert_eq!(
            broken.kind(),
            roomlink_domain::ErrorKind::StorageUnavailable
        );
        let other = Error::from(DbError::Query(database_error(
            DatabaseErrorKind::Unknown,
            "relation \"endpoints\" does not exist",
        )));
        assert_eq!(other.kind(), roomlink_domain::ErrorKind::InternalError);
    }
}

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
         service's directory (a new installation: `roomlink admin enterprise create NAME \
         --create-database`)"
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
    /// `backup` / `restore` refused or failed: a file that exists, is not a roomlink database,
    /// or cannot be written.
    #[error("{0}")]
    SqliteFile(String),
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
            DbError::Query(e) => match classify(&e) {
                Class::Unavailable => Error::storage_unavailable(e),
                Class::Internal => Error::internal(e),
            },
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

/// What a database failure means for the caller. Decided from codes and connection state,
/// never from the server's message: PostgreSQL words its messages in the server's
/// `lc_messages`, so text that reads "terminating connection" on one server reads otherwise on
/// the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// The database is down, going down, coming up, short of resources, or rolled the
    /// transaction back to break a conflict: try again later (503 `StorageUnavailable`).
    Unavailable,
    /// A bug, a broken schema, or a violation the operation did not expect (500
    /// `InternalError`). Violations an operation does expect (a taken name or calendarId, a
    /// listener deleted meanwhile) it maps itself before they get here.
    Internal,
}

/// The class of a PostgreSQL SQLSTATE (the server's "Error Codes" appendix): the one table
/// every query failure, whatever its backend or path, is classified by.
pub(crate) fn class(sqlstate: &str) -> Class {
    match sqlstate.as_bytes() {
        // 08 connection exception; 53 insufficient resources (53300 too_many_connections,
        // 53100 disk_full, 53200 out_of_memory); 57 operator intervention (57P01
        // admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 57014
        // query_canceled, 57P05 idle_session_timeout): the server is not serving us now.
        [b'0', b'8', _, _, _] | [b'5', b'3', _, _, _] | [b'5', b'7', _, _, _] => Class::Unavailable,
        // 40 transaction rollback (40001 serialization_failure, 40P01 deadlock_detected): the
        // server already rolled the transaction back, and running it again is PostgreSQL's
        // documented remedy. The store does not rerun it itself (a transaction's body runs
        // domain closures once), so the caller is told to.
        [b'4', b'0', _, _, _] => Class::Unavailable,
        // 23 integrity constraint violations, 42 syntax or undefined objects, XX internal, …
        _ => Class::Internal,
    }
}

/// The SQLSTATE behind a diesel error kind. diesel-async 0.9 names these codes only; every
/// other SQLSTATE becomes `Unknown` and the code itself is dropped (diesel's
/// `DatabaseErrorInformation` has no accessor for it), which is why `pool::settle_pg` asks the
/// connection whether the session survived. On SQLite the same kinds come from SQLite's own
/// result codes.
fn kind_sqlstate(kind: &DatabaseErrorKind) -> Option<&'static str> {
    Some(match kind {
        DatabaseErrorKind::UniqueViolation => "23505",
        DatabaseErrorKind::ForeignKeyViolation => "23503",
        DatabaseErrorKind::NotNullViolation => "23502",
        DatabaseErrorKind::CheckViolation => "23514",
        DatabaseErrorKind::RestrictViolation => "23001",
        DatabaseErrorKind::ExclusionViolation => "23P01",
        DatabaseErrorKind::SerializationFailure => "40001",
        DatabaseErrorKind::ReadOnlyTransaction => "25006",
        _ => return None,
    })
}

/// The class of a query failure that reached the catalog as it is (see `class`).
fn classify(e: &DieselError) -> Class {
    match e {
        // No SQLSTATE at all: the connection broke (an I/O error, or closed by the server or
        // the network) before or while the command went out.
        DieselError::DatabaseError(
            DatabaseErrorKind::ClosedConnection | DatabaseErrorKind::UnableToSendCommand,
            _,
        ) => Class::Unavailable,
        DieselError::DatabaseError(kind, _) => kind_sqlstate(kind).map_or(Class::Internal, class),
        // A connection that broke inside a transaction cannot roll it back.
        DieselError::BrokenTransactionManager => Class::Unavailable,
        _ => Class::Internal,
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
    use roomlink_domain::ErrorKind;

    fn database_error(kind: DatabaseErrorKind, message: &str) -> DieselError {
        DieselError::DatabaseError(kind, Box::new(message.to_owned()))
    }

    fn catalog(e: DieselError) -> ErrorKind {
        Error::from(DbError::Query(e)).kind()
    }

    #[test]
    fn sqlstates_are_classified_by_the_table() {
        use Class::{Internal, Unavailable};
        for (sqlstate, expected) in [
            ("08000", Unavailable), // connection_exception
            ("08003", Unavailable), // connection_does_not_exist
            ("08006", Unavailable), // connection_failure
            ("08001", Unavailable), // sqlclient_unable_to_establish_sqlconnection
            ("08P01", Unavailable), // protocol_violation
            ("57P01", Unavailable), // admin_shutdown
            ("57P02", Unavailable), // crash_shutdown
            ("57P03", Unavailable), // cannot_connect_now
            ("57P05", Unavailable), // idle_session_timeout
            ("57014", Unavailable), // query_canceled
            ("53000", Unavailable), // insufficient_resources
            ("53100", Unavailable), // disk_full
            ("53200", Unavailable), // out_of_memory
            ("53300", Unavailable), // too_many_connections
            ("40001", Unavailable), // serialization_failure
            ("40P01", Unavailable), // deadlock_detected
            ("23505", Internal),    // unique_violation, unless the operation maps it
            ("23503", Internal),    // foreign_key_violation, likewise
            ("23502", Internal),    // not_null_violation
            ("23514", Internal),    // check_violation
            ("25006", Internal),    // read_only_sql_transaction
            ("25P02", Internal),    // in_failed_sql_transaction
            ("28P01", Internal),    // invalid_password (at connect: every checkout failure is 503)
            ("3D000", Internal),    // invalid_catalog_name (likewise)
            ("42P01", Internal),    // undefined_table
            ("42703", Internal),    // undefined_column
            ("22001", Internal),    // string_data_right_truncation
            ("XX000", Internal),    // internal_error
            ("XX001", Internal),    // data_corrupted
            ("", Internal),
            ("08", Internal), // not a SQLSTATE: five characters or nothing
            ("5730000", Internal),
        ] {
            assert_eq!(class(sqlstate), expected, "{sqlstate:?}");
        }
    }

    #[test]
    fn driver_errors_are_classified_by_kind_and_connection_state() {
        for (e, expected) in [
            (
                database_error(DatabaseErrorKind::ClosedConnection, "x"),
                ErrorKind::StorageUnavailable,
            ),
            (
                database_error(DatabaseErrorKind::UnableToSendCommand, "x"),
                ErrorKind::StorageUnavailable,
            ),
            (
                DieselError::BrokenTransactionManager,
                ErrorKind::StorageUnavailable,
            ),
            (
                database_error(DatabaseErrorKind::SerializationFailure, "x"),
                ErrorKind::StorageUnavailable,
            ),
            (
                database_error(DatabaseErrorKind::UniqueViolation, "x"),
                ErrorKind::InternalError,
            ),
            (
                database_error(DatabaseErrorKind::ForeignKeyViolation, "x"),
                ErrorKind::InternalError,
            ),
            (
                database_error(DatabaseErrorKind::NotNullViolation, "x"),
                ErrorKind::InternalError,
            ),
            (DieselError::NotFound, ErrorKind::InternalError),
        ] {
            let shown = format!("{e:?}");
            assert_eq!(catalog(e), expected, "{shown}");
        }
    }

    /// The words never decide: PostgreSQL's admin_shutdown in English and in German (a server
    /// with `lc_messages = 'de_DE.UTF-8'`) are alike here, and alike to any other failure
    /// whose code diesel-async dropped. Whether the session ended decides (`pool::settle_pg`,
    /// proven against a real server in tests/store/postgres.rs).
    #[test]
    fn message_text_does_not_classify() {
        for message in [
            "terminating connection due to administrator command",
            "Verbindung wird abgebrochen aufgrund von Anweisung des Administrators",
            "the database system is shutting down",
            "relation \"endpoints\" does not exist",
        ] {
            assert_eq!(
                catalog(database_error(DatabaseErrorKind::Unknown, message)),
                ErrorKind::InternalError,
                "{message}"
            );
        }
        let gone = Error::from(DbError::Unavailable(Box::new(database_error(
            DatabaseErrorKind::Unknown,
            "Verbindung wird abgebrochen aufgrund von Anweisung des Administrators",
        ))));
        assert_eq!(gone.kind(), ErrorKind::StorageUnavailable);
    }
}

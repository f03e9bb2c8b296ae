//! roomlink's database adapter: every storage port of `roomlink_domain::ports` on PostgreSQL
//! (diesel-async's `AsyncPgConnection`) or on an embedded SQLite file (`SqliteConnection` behind
//! `SyncConnectionWrapper`), chosen at run time by the URL's scheme.
//!
//! ```no_run
//! # async fn open() -> Result<(), roomlink_store::StoreError> {
//! use roomlink_store::{DbConfig, DbStore};
//! let store = DbStore::connect(&DbConfig::new("sqlite://roomlink.db")).await?;
//! let applied = store.migrate().await?;
//! # Ok(()) }
//! ```
//!
//! Each query is written once, inside `db_run!` (no transaction) or `db_tx!` (a transaction),
//! which expand it for both backends. What must differ (row locks, multi-row inserts) lives in
//! the `Dialect` trait. One contract suite (`tests/store`) checks every guarantee the ports
//! document, against this adapter on both backends and against the in-memory reference adapter.

/// A future running `$body` on a pooled connection `$c` of whichever backend the store uses.
/// The body is compiled once per backend and evaluates to `Result<_, DbError>`.
macro_rules! on_conn {
    ($store:expr, |$c:ident| $body:expr) => {
        async {
            let result: Result<_, $crate::error::DbError> = match &$store.pool {
                $crate::pool::DbPool::Pg(pool) => {
                    let mut conn = $crate::pool::checkout(pool.get(), $store.timeout).await?;
                    // Its own future, so that a `?` inside the body lands here, where the
                    // connection can still be asked what the failure was.
                    let outcome: Result<_, $crate::error::DbError> = async {
                        let $c = &mut *conn;
                        $body
                    }
                    .await;
                    $crate::pool::settle_pg(&mut conn, outcome, $store.timeout).await
                }
                $crate::pool::DbPool::Sqlite(pool) => {
                    let mut conn = $crate::pool::checkout(pool.get(), $store.timeout).await?;
                    let outcome: Result<_, $crate::error::DbError> = async {
                        let $c = &mut *conn;
                        $body
                    }
                    .await;
                    $crate::pool::settle_sqlite(outcome)
                }
            };
            result
        }
    };
}

/// Runs `$body` (see `on_conn!`), without a transaction; evaluates to a
/// `roomlink_domain::Result`.
macro_rules! db_run {
    ($store:expr, |$c:ident| $body:expr) => {
        $crate::error::finish(on_conn!($store, |$c| $body)).await
    };
}

/// Like `db_run!`, inside one transaction: committed if the body returns `Ok`, rolled back
/// otherwise. SQLite transactions begin IMMEDIATE: they take the write lock up front, so two
/// of them never both read and then write (see `dialect::Dialect`). A transaction whose future
/// is dropped half-way leaves its connection flagged as broken, and the pool discards it.
macro_rules! db_tx {
    ($store:expr, |$c:ident| $body:expr) => {
        $crate::error::finish(async {
            match &$store.pool {
                $crate::pool::DbPool::Pg(pool) => {
                    let mut conn = $crate::pool::checkout(pool.get(), $store.timeout).await?;
                    let outcome = diesel_async::AsyncConnection::transaction(
                        &mut *conn,
                        async |$c| -> Result<_, $crate::error::DbError> { $body },
                    )
                    .await;
                    $crate::pool::settle_pg(&mut conn, outcome, $store.timeout).await
                }
                $crate::pool::DbPool::Sqlite(pool) => {
                    let mut conn = $crate::pool::checkout(pool.get(), $store.timeout).await?;
                    let outcome = conn
                        .immediate_transaction(async |$c| -> Result<_, $crate::error::DbError> {
                            $body
                        })
                        .await;
                    $crate::pool::settle_sqlite(outcome)
                }
            }
        })
        .await
    };
}

/// Inside a `db_tx!` body: appends the audit entry `$entry` in the write's own transaction, so
/// the trail holds exactly the writes that were committed.
macro_rules! append_audit {
    ($c:expr, $entry:expr) => {
        diesel::insert_into($crate::schema::audit_log::table)
            .values($crate::models::NewAuditRow::new($entry))
            .execute($c)
            .await
    };
}

/// Inside an endpoint write's transaction: the enterprise's endpoint list changes with it
/// (`EndpointStore::endpoint_list_version`; docs/adr/0003-endpoint-list-cache.md).
macro_rules! bump_list_version {
    ($c:expr, $enterprise:expr) => {
        diesel::update($crate::schema::enterprises::table.find($enterprise))
            .set(
                $crate::schema::enterprises::endpoints_version
                    .eq($crate::schema::enterprises::endpoints_version + 1_i64),
            )
            .execute($c)
            .await
    };
}

/// Inside a write's transaction: adds `$event` (`&roomlink_domain::webhook::Event`) to the
/// outbox of every subscription of enterprise `$enterprise` (`&str`) that wants its type, or
/// only of subscription `$only` (`Option<&str>`) whatever it wants. One `INSERT … SELECT`:
/// nothing is written when no subscription wants it. Evaluates to a `QueryResult<usize>`.
macro_rules! emit_event {
    ($c:expr, $enterprise:expr, $event:expr, $only:expr) => {
        async {
            use diesel::sql_types::{BigInt, Nullable, Text};
            let event: &roomlink_domain::webhook::Event = $event;
            let only: Option<&str> = $only;
            let c = $c;
            let p = |n: usize| $crate::dialect::Dialect::param(&*c, n);
            let sql = format!(
                "INSERT INTO webhook_deliveries (subscription_id, enterprise_id, event_id, \
                 event_type, body, created_ms, state, attempts, next_attempt_ms) \
                 SELECT id, enterprise_id, {}, {}, {}, {}, 'pending', 0, {} \
                 FROM webhook_subscriptions WHERE enterprise_id = {} \
                 AND (({} IS NULL AND event_types LIKE {}) OR id = {})",
                p(1),
                p(2),
                p(3),
                p(4),
                p(4),
                p(5),
                p(6),
                p(7),
                p(6)
            );
            diesel::sql_query(sql)
                .bind::<Text, _>(&event.id)
                .bind::<Text, _>(event.event_type.as_str())
                .bind::<Text, _>(event.body())
                .bind::<BigInt, _>(event.at)
                .bind::<Text, _>($enterprise)
                .bind::<Nullable<Text>, _>(only)
                .bind::<Text, _>(format!("%,{},%", event.event_type.as_str()))
                .execute(c)
                .await
        }
        .await
    };
}

/// Inside a status write's transaction, after `$rows` (`&[StatusRow]`) were written: their
/// endpoints' call sessions follow them (`roomlink_domain::usage::SESSION_RULE`). A call no
/// longer active closes the open session at the time it was seen so; an active call without an
/// open session opens one, credited to roomlink's last join of the room when it was recent
/// (`JoinSource::attributed`); that join is then spent. Each session opened or closed is a
/// `call.started` or `call.ended` event in the same transaction. Evaluates to a
/// `QueryResult<()>`.
macro_rules! follow_sessions {
    ($c:expr, $enterprise:expr, $rows:expr) => {
        async {
            use roomlink_domain::usage::JoinSource;
            use $crate::schema::{call_sessions as cs, endpoint_statuses as es};
            let rows: &[$crate::models::StatusRow] = $rows;
            let enterprise: &str = $enterprise;
            let mut ended: std::collections::BTreeMap<i64, Vec<&str>> = Default::default();
            for row in rows.iter().filter(|r| !r.call_active) {
                ended
                    .entry(row.timestamp)
                    .or_default()
                    .push(&row.endpoint_id);
            }
            for (at, ids) in ended {
                for chunk in ids.chunks($crate::dialect::IN_CHUNK) {
                    // The sessions this closes, for their `call.ended` events.
                    let closing: Vec<(String, i64, String)> = cs::table
                        .filter(cs::enterprise_id.eq(enterprise))
                        .filter(cs::endpoint_id.eq_any(chunk))
                        .filter(cs::ended_ms.is_null())
                        .select((cs::endpoint_id, cs::started_ms, cs::source))
                        .load($c)
                        .await?;
                    if closing.is_empty() {
                        continue;
                    }
                    for (id, started, source) in &closing {
                        let event =
                            roomlink_domain::webhook::Event::call_ended(id, *started, at, source);
                        emit_event!(&mut *$c, enterprise, &event, None)?;
                    }
                    diesel::update(
                        cs::table
                            .filter(cs::enterprise_id.eq(enterprise))
                            .filter(cs::endpoint_id.eq_any(chunk))
                            .filter(cs::ended_ms.is_null()),
                    )
                    .set(cs::ended_ms.eq(at))
                    .execute($c)
                    .await?;
                }
            }
            let active: Vec<&str> = rows
                .iter()
                .filter(|r| r.call_active)
                .map(|r| r.endpoint_id.as_str())
                .collect();
            for chunk in active.chunks($crate::dialect::IN_CHUNK) {
                let open: std::collections::HashSet<String> = cs::table
                    .filter(cs::endpoint_id.eq_any(chunk))
                    .filter(cs::ended_ms.is_null())
                    .select(cs::endpoint_id)
                    .load::<String>($c)
                    .await?
                    .into_iter()
                    .collect();
                let starting: Vec<&str> = chunk
                    .iter()
                    .copied()
                    .filter(|id| !open.contains(*id))
                    .collect();
                if starting.is_empty() {
                    continue;
                }
                let joins: Vec<(String, Option<String>, Option<i64>, i64)> = es::table
                    .filter(es::enterprise_id.eq(enterprise))
                    .filter(es::endpoint_id.eq_any(&starting))
                    .select((es::endpoint_id, es::join_source, es::join_ms, es::timestamp))
                    .load($c)
                    .await?;
                let opening: Vec<(&str, i64, &str)> = joins
                    .iter()
                    .map(|(id, source, at, started)| {
                        let join = source.as_deref().and_then(JoinSource::parse).zip(*at);
                        let source = JoinSource::attributed(join, *started).as_str();
                        (id.as_str(), *started, source)
                    })
                    .collect();
                // One statement for the chunk (the usage rollups follow it once, not once a
                // call); a session opened meanwhile by another writer stands. Text, because
                // diesel has no multi-row INSERT … RETURNING for SQLite.
                let p = |n: usize| $crate::dialect::Dialect::param(&*$c, n);
                let rows: Vec<String> = (0..opening.len())
                    .map(|i| {
                        let b = 4 * i;
                        format!("({}, {}, {}, {})", p(b + 1), p(b + 2), p(b + 3), p(b + 4))
                    })
                    .collect();
                let mut insert = diesel::sql_query(format!(
                    "INSERT INTO call_sessions (enterprise_id, endpoint_id, started_ms, source) \
                     VALUES {} ON CONFLICT DO NOTHING RETURNING endpoint_id, started_ms, source",
                    rows.join(", ")
                ))
                .into_boxed();
                for (id, started, source) in &opening {
                    insert = insert
                        .bind::<diesel::sql_types::Text, _>(enterprise)
                        .bind::<diesel::sql_types::Text, _>(*id)
                        .bind::<diesel::sql_types::BigInt, _>(*started)
                        .bind::<diesel::sql_types::Text, _>(*source);
                }
                let opened: Vec<$crate::usage::OpenedSession> = insert.load($c).await?;
                for session in &opened {
                    let event = roomlink_domain::webhook::Event::call_started(
                        &session.endpoint_id,
                        session.started_ms,
                        &session.source,
                    );
                    emit_event!(&mut *$c, enterprise, &event, None)?;
                }
                diesel::update(es::table.filter(es::endpoint_id.eq_any(&starting)))
                    .set((
                        es::join_source.eq(None::<&str>),
                        es::join_ms.eq(None::<i64>),
                    ))
                    .execute($c)
                    .await?;
            }
            diesel::QueryResult::Ok(())
        }
        .await
    };
}

mod audit;
mod auth_failures;
mod calendars;
mod config;
mod dialect;
mod endpoints;
mod enterprises;
mod error;
mod failures;
mod inventory;
mod lease;
mod links;
mod listeners;
mod migrate;
mod models;
mod pairing;
mod pool;
mod schema;
mod sealed;
mod sqlite_file;
mod statuses;
mod template_assignments;
mod template_jobs;
mod templates;
#[cfg(feature = "testing")]
pub mod testing;
mod tokens;
mod usage;
mod webhooks;

pub use config::{Backend, DbConfig};
pub use error::StoreError;
pub use sqlite_file::{
    BackupInfo, RestoreInfo, ServingLock, backup as backup_sqlite, restore as restore_sqlite,
};

use config::Target;
use diesel_async::RunQueryDsl;
use pool::DbPool;
use roomlink_domain::ports::StoreHealth;
use std::time::Duration;

/// The database adapter: implements every storage port, so it is a `roomlink_domain::ports::Store`.
pub struct DbStore {
    pool: DbPool,
    target: Target,
    timeout: Duration,
    /// The poll lease's own PostgreSQL connection (see `lease`); unused on SQLite.
    lease: tokio::sync::Mutex<Option<lease::LeaseConn>>,
}

impl std::fmt::Debug for DbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DbStore")
            .field("backend", &self.backend())
            .field("target", &self.target.describe())
            .finish()
    }
}

impl DbStore {
    /// Opens the pool and makes one connection to prove the database answers. A missing SQLite
    /// file (and its directory) is created with a warning, or refused when
    /// `config.create_sqlite` is off. Works on any tokio runtime, current-thread too.
    pub async fn connect(config: &DbConfig) -> Result<DbStore, StoreError> {
        let target = Target::parse(&config.url)?;
        if let Target::Sqlite(path) = &target
            && !path.exists()
        {
            // A new file beside the wrong working directory looks like an empty service
            // (and gets a new sealing key): say so, or refuse where data is expected.
            let shown = config::absolute(path);
            if !config.create_sqlite {
                return Err(StoreError::NoSqliteDatabase { path: shown });
            }
            tracing::warn!(path = %shown, "creating new SQLite database at {shown}");
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| StoreError::CreateDir {
                    path: path.display().to_string(),
                    reason: e.to_string(),
                })?;
            }
            // It will hold password hashes and sealed secrets: readable by its owner only, as
            // the key and the backups (SQLite gives its WAL and shared-memory files the same
            // mode, and starts a new database in an empty file).
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            match options.open(path) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(StoreError::SqliteFile(format!(
                        "cannot create {shown}: {e}"
                    )));
                }
            }
        }
        let store = DbStore {
            pool: DbPool::build(&target, config)?,
            timeout: config.connect_timeout,
            target,
            lease: tokio::sync::Mutex::new(None),
        };
        store.check().await.map_err(|e| {
            // The pool's wrapping ("Error occurred while creating a new object") says nothing.
            let reason = match &e {
                error::DbError::Unavailable(e) => {
                    let mut inner: &(dyn std::error::Error + 'static) = e.as_ref();
                    while let Some(cause) = inner.source() {
                        inner = cause;
                    }
                    inner.to_string()
                }
                e => e.to_string(),
            };
            StoreError::Unreachable {
                backend: store.backend(),
                target: store.target.describe(),
                reason: store.scrub(&reason),
            }
        })?;
        Ok(store)
    }

    /// Applies the pending embedded migrations; returns the names applied (empty when the
    /// schema is up to date). Safe on a current-thread runtime: it runs on a blocking thread.
    pub async fn migrate(&self) -> Result<Vec<String>, StoreError> {
        let applied = migrate::run(&self.target)
            .await
            .map_err(|reason| StoreError::Migration {
                backend: self.backend(),
                target: self.target.describe(),
                reason: self.scrub(&reason),
            })?;
        if !applied.is_empty() {
            tracing::debug!(backend = %self.backend(), ?applied, "database migrated");
        }
        Ok(applied)
    }

    pub fn backend(&self) -> Backend {
        self.target.backend()
    }

    /// Which database this is, for logs: the SQLite file's absolute path, or PostgreSQL's
    /// `host:port/database`. Never a user name or password.
    pub fn location(&self) -> String {
        self.target.summary()
    }

    async fn check(&self) -> Result<(), error::DbError> {
        on_conn!(self, |c| {
            diesel::sql_query("SELECT 1").execute(c).await?;
            Ok(())
        })
        .await
    }

    /// A driver's message made fit for an operator: one line, without the URL's password.
    fn scrub(&self, text: &str) -> String {
        let mut line = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Target::Postgres(url) = &self.target
            && let Some(password) = config::password(url)
        {
            line = line.replace(password, "***");
        }
        line
    }
}

#[async_trait::async_trait]
impl StoreHealth for DbStore {
    async fn ping(&self) -> roomlink_domain::Result<()> {
        self.check().await.map_err(|e| match e {
            // Whatever the database says, it is not answering queries.
            error::DbError::Query(e) => roomlink_domain::Error::storage_unavailable(e),
            e => e.into(),
        })
    }

    fn pool_status(&self) -> Option<roomlink_domain::ports::PoolStatus> {
        let status = match &self.pool {
            DbPool::Pg(pool) => pool.status(),
            DbPool::Sqlite(pool) => pool.status(),
        };
        Some(roomlink_domain::ports::PoolStatus {
            max_size: status.max_size,
            size: status.size,
            available: status.available,
            waiting: status.waiting,
        })
    }
}

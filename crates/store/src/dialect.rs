//! What must be said differently to each backend; everything else is written once.
//!
//! - Row locks: PostgreSQL locks rows (`FOR UPDATE`); SQLite has none, but `db_tx!` begins its
//!   transactions IMMEDIATE, which takes the database's write lock up front, so plain reads
//!   inside them are already exclusive.
//! - Many-row INSERTs: PostgreSQL takes all rows in one statement with an array parameter per
//!   column (`unnest`). SQLite has no arrays: it gets multi-row INSERTs within its bind limit,
//!   which diesel builds for SQLite only through its synchronous API, so they run on the wrapped
//!   connection (inside the same transaction).

use crate::models::{
    EndpointColumns, EndpointRow, NewAuditRow, PairedRow, StatusRow, endpoint_upsert_changes,
};
use crate::pool::SqliteConn;
use crate::schema::{audit_log, endpoint_statuses, endpoints, enterprises, paired_statuses};
use diesel::upsert::excluded;
use diesel::{ExpressionMethods, OptionalExtension, QueryDsl, QueryResult, SelectableHelper};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use roomlink_domain::usage::JoinSource;
use std::future::Future;
use std::sync::LazyLock;

/// Ids per `IN (…)` list: far below either backend's bind limit.
pub(crate) const IN_CHUNK: usize = 1_000;

/// SQLite's multi-row statements (and PostgreSQL's status upsert).
macro_rules! insert_endpoints {
    ($rows:expr) => {
        diesel::insert_into(endpoints::table).values($rows)
    };
}

/// Replaces every column but the keys of endpoints that exist (the caller made sure they do).
macro_rules! upsert_endpoints {
    ($rows:expr) => {
        diesel::insert_into(endpoints::table)
            .values($rows)
            .on_conflict(endpoints::id)
            .do_update()
            .set(endpoint_upsert_changes!())
    };
}

macro_rules! upsert_statuses {
    ($rows:expr) => {
        diesel::insert_into(endpoint_statuses::table)
            .values($rows)
            .on_conflict(endpoint_statuses::endpoint_id)
            .do_update()
            .set((
                endpoint_statuses::call_active.eq(excluded(endpoint_statuses::call_active)),
                endpoint_statuses::reserved.eq(excluded(endpoint_statuses::reserved)),
                endpoint_statuses::dialing.eq(excluded(endpoint_statuses::dialing)),
                endpoint_statuses::microphone_muted
                    .eq(excluded(endpoint_statuses::microphone_muted)),
                endpoint_statuses::last_dial_timestamp_millis
                    .eq(excluded(endpoint_statuses::last_dial_timestamp_millis)),
                endpoint_statuses::timestamp.eq(excluded(endpoint_statuses::timestamp)),
            ))
    };
}

/// `Dialect::insert_endpoints` on PostgreSQL: every row in one statement, a parameter per column.
static INSERT_ENDPOINTS_PG: LazyLock<String> = LazyLock::new(|| endpoints_from_arrays(false));

/// `Dialect::upsert_endpoints` on PostgreSQL: as `upsert_endpoints!`, every column but the keys.
static UPSERT_ENDPOINTS_PG: LazyLock<String> = LazyLock::new(|| endpoints_from_arrays(true));

fn endpoints_from_arrays(upsert: bool) -> String {
    let columns = EndpointColumns::PG_COLUMNS;
    let names: Vec<String> = columns
        .iter()
        .map(|(name, _)| format!("\"{name}\""))
        .collect();
    let arrays: Vec<String> = (1..)
        .zip(columns)
        .map(|(n, (_, array))| format!("${n}::{array}"))
        .collect();
    let mut sql = format!(
        "INSERT INTO endpoints ({}) SELECT * FROM unnest({})",
        names.join(", "),
        arrays.join(", ")
    );
    if upsert {
        let changes: Vec<String> = names[2..]
            .iter()
            .map(|name| format!("{name} = EXCLUDED.{name}"))
            .collect();
        sql.push_str(&format!(
            " ON CONFLICT (\"id\") DO UPDATE SET {}",
            changes.join(", ")
        ));
    }
    sql
}

/// `Dialect::write_command_status` on PostgreSQL: the status upsert (with the join it asked
/// for, if any: `$19`) and the audit entry in one statement, with `synchronous_commit` off for
/// its (implicit) transaction. The set_config CTE is referenced by the final INSERT, so it runs;
/// a data-modifying CTE always runs. Every part reads the snapshot from before the statement,
/// so `prev` is the call state the command found, returned for the call sessions to follow.
const COMMAND_STATUS_PG: &str = r#"WITH relaxed AS (SELECT set_config('synchronous_commit', 'off', true)),
prev AS (SELECT "call_active" FROM endpoint_statuses WHERE "endpoint_id" = $1),
status AS (
    INSERT INTO endpoint_statuses ("endpoint_id", "enterprise_id", "call_active", "reserved",
        "dialing", "microphone_muted", "last_dial_timestamp_millis", "timestamp",
        "join_source", "join_ms")
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $19, CASE WHEN $19 IS NULL THEN NULL ELSE $8 END)
    ON CONFLICT ("endpoint_id") DO UPDATE SET
        "call_active" = EXCLUDED."call_active", "reserved" = EXCLUDED."reserved",
        "dialing" = EXCLUDED."dialing", "microphone_muted" = EXCLUDED."microphone_muted",
        "last_dial_timestamp_millis" = EXCLUDED."last_dial_timestamp_millis",
        "timestamp" = EXCLUDED."timestamp",
        "join_source" = COALESCE(EXCLUDED."join_source", endpoint_statuses."join_source"),
        "join_ms" = COALESCE(EXCLUDED."join_ms", endpoint_statuses."join_ms")
)
INSERT INTO audit_log ("enterprise_id", "at_ms", "actor_kind", "actor_id", "actor_username",
    "actor_roles", "operation", "target_id", "outcome", "detail")
SELECT $9, $10, $11, $12, $13, $14, $15, $16, $17, $18 FROM relaxed
RETURNING (SELECT "call_active" FROM prev) AS "previous_call""#;

/// What `COMMAND_STATUS_PG` returns: the call state before the command, `None` for a first status.
#[derive(diesel::QueryableByName)]
struct PreviousCall {
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Bool>)]
    previous_call: Option<bool>,
}

pub(crate) trait Dialect {
    /// The most bind parameters one statement may carry.
    const MAX_BINDS: usize;

    fn max_binds(&self) -> usize {
        Self::MAX_BINDS
    }

    /// The `n`-th bind parameter (from 1) of a statement written as text (`$n` or `?n`), which
    /// may appear more than once.
    fn param(&self, n: usize) -> String;

    /// Inside a transaction: its commit need not wait for the disk flush. For writes whose
    /// loss in a crash of the database server costs nothing but work done again (a webhook
    /// delivery's outcome: the delivery is sent again, and receivers deduplicate on its id).
    /// PostgreSQL: `synchronous_commit = off` for this transaction only (atomic and visible at
    /// once; a server crash may lose the last few hundred milliseconds of such commits).
    /// SQLite: nothing changes.
    fn relax_commit(&mut self) -> impl Future<Output = QueryResult<()>> + Send;

    /// Inside a transaction: the enterprise's endpoint limit, after making sure that no other
    /// transaction adds endpoints to it until this one ends. `None` if no such enterprise.
    fn lock_enterprise(
        &mut self,
        id: &str,
    ) -> impl Future<Output = QueryResult<Option<i64>>> + Send;

    /// Inside a transaction: the endpoint, which no other transaction may change until this
    /// one ends.
    fn lock_endpoint(
        &mut self,
        enterprise: &str,
        id: &str,
    ) -> impl Future<Output = QueryResult<Option<EndpointRow>>> + Send;

    /// Inside a transaction: those of the enterprise's endpoints `ids` names, which no other
    /// transaction may change or delete until this one ends.
    fn lock_endpoints(
        &mut self,
        enterprise: &str,
        ids: &[&str],
    ) -> impl Future<Output = QueryResult<Vec<EndpointRow>>> + Send;

    /// Inside a transaction: the token's PairedStatus, held until this transaction ends.
    fn lock_paired(
        &mut self,
        token: &str,
    ) -> impl Future<Output = QueryResult<Option<PairedRow>>> + Send;

    /// INSERTs all `rows`, in as few statements as the backend allows.
    fn insert_endpoints(
        &mut self,
        rows: &[EndpointRow],
    ) -> impl Future<Output = QueryResult<usize>> + Send;

    /// INSERT … ON CONFLICT (id) DO UPDATE of all `rows`, in as few statements as the backend
    /// allows.
    fn upsert_endpoints(
        &mut self,
        rows: &[EndpointRow],
    ) -> impl Future<Output = QueryResult<usize>> + Send;

    /// One INSERT … ON CONFLICT (endpoint_id) DO UPDATE of all `rows`.
    fn upsert_statuses(
        &mut self,
        rows: &[StatusRow],
    ) -> impl Future<Output = QueryResult<usize>> + Send;

    /// A command's observed status (upsert) and its audit entry, atomically. PostgreSQL: one
    /// statement (one round trip) whose commit does not wait for the disk flush
    /// (`synchronous_commit = off` for that transaction only): atomic and visible at once, but
    /// a crash of the database server itself may lose the last few hundred milliseconds of such
    /// commits. SQLite: one IMMEDIATE transaction, as every write. `join`: the join the command
    /// asked for, remembered with the status for the call session it starts. True when the
    /// call sessions have yet to follow the status (`follow_sessions!`), because the call state
    /// changed; SQLite has them follow in the same transaction.
    fn write_command_status(
        &mut self,
        status: &StatusRow,
        audit: &NewAuditRow<'_>,
        join: Option<JoinSource>,
    ) -> impl Future<Output = QueryResult<bool>> + Send;
}

/// NO KEY UPDATE on the enterprise serialises its endpoint writers without blocking inserts
/// elsewhere that merely reference it (tokens, listeners).
impl Dialect for AsyncPgConnection {
    const MAX_BINDS: usize = 65_535;

    fn param(&self, n: usize) -> String {
        format!("${n}")
    }

    async fn relax_commit(&mut self) -> QueryResult<()> {
        diesel::sql_query("SET LOCAL synchronous_commit = off")
            .execute(self)
            .await
            .map(drop)
    }

    async fn lock_enterprise(&mut self, id: &str) -> QueryResult<Option<i64>> {
        enterprises::table
            .find(id)
            .select(enterprises::endpoint_limit)
            .for_no_key_update()
            .first(self)
            .await
            .optional()
    }

    async fn lock_endpoint(
        &mut self,
        enterprise: &str,
        id: &str,
    ) -> QueryResult<Option<EndpointRow>> {
        endpoints::table
            .filter(endpoints::enterprise_id.eq(enterprise))
            .filter(endpoints::id.eq(id))
            .select(EndpointRow::as_select())
            .for_update()
            .first(self)
            .await
            .optional()
    }

    async fn lock_endpoints(
        &mut self,
        enterprise: &str,
        ids: &[&str],
    ) -> QueryResult<Vec<EndpointRow>> {
        endpoints::table
            .filter(endpoints::enterprise_id.eq(enterprise))
            .filter(endpoints::id.eq_any(ids))
            .select(EndpointRow::as_select())
            .for_update()
            .load(self)
            .await
    }

    async fn lock_paired(&mut self, token: &str) -> QueryResult<Option<PairedRow>> {
        paired_statuses::table
            .find(token)
            .select(PairedRow::as_select())
            .for_update()
            .first(self)
            .await
            .optional()
    }

    async fn insert_endpoints(&mut self, rows: &[EndpointRow]) -> QueryResult<usize> {
        EndpointColumns::new(rows)
            .execute_pg(&INSERT_ENDPOINTS_PG, self)
            .await
    }

    async fn upsert_endpoints(&mut self, rows: &[EndpointRow]) -> QueryResult<usize> {
        EndpointColumns::new(rows)
            .execute_pg(&UPSERT_ENDPOINTS_PG, self)
            .await
    }

    async fn upsert_statuses(&mut self, rows: &[StatusRow]) -> QueryResult<usize> {
        upsert_statuses!(rows).execute(self).await
    }

    async fn write_command_status(
        &mut self,
        status: &StatusRow,
        audit: &NewAuditRow<'_>,
        join: Option<JoinSource>,
    ) -> QueryResult<bool> {
        use diesel::sql_types::{BigInt, Bool, Nullable, Text};
        diesel::sql_query(COMMAND_STATUS_PG)
            .bind::<Text, _>(&status.endpoint_id)
            .bind::<Text, _>(&status.enterprise_id)
            .bind::<Bool, _>(status.call_active)
            .bind::<Bool, _>(status.reserved)
            .bind::<Bool, _>(status.dialing)
            .bind::<Bool, _>(status.microphone_muted)
            .bind::<Nullable<BigInt>, _>(status.last_dial_timestamp_millis)
            .bind::<BigInt, _>(status.timestamp)
            .bind::<Text, _>(audit.enterprise_id)
            .bind::<BigInt, _>(audit.at_ms)
            .bind::<Text, _>(audit.actor_kind)
            .bind::<Text, _>(audit.actor_id)
            .bind::<Nullable<Text>, _>(audit.actor_username)
            .bind::<Text, _>(&audit.actor_roles)
            .bind::<Text, _>(audit.operation)
            .bind::<Nullable<Text>, _>(audit.target_id)
            .bind::<Text, _>(audit.outcome)
            .bind::<Nullable<Text>, _>(audit.detail)
            .bind::<Nullable<Text>, _>(join.map(JoinSource::as_str))
            .get_result::<PreviousCall>(self)
            .await
            .map(|prev| prev.previous_call != Some(status.call_active))
    }
}

impl Dialect for SqliteConn {
    const MAX_BINDS: usize = 32_766;

    fn param(&self, n: usize) -> String {
        format!("?{n}")
    }

    async fn relax_commit(&mut self) -> QueryResult<()> {
        Ok(())
    }

    async fn lock_enterprise(&mut self, id: &str) -> QueryResult<Option<i64>> {
        enterprises::table
            .find(id)
            .select(enterprises::endpoint_limit)
            .first(self)
            .await
            .optional()
    }

    async fn lock_endpoint(
        &mut self,
        enterprise: &str,
        id: &str,
    ) -> QueryResult<Option<EndpointRow>> {
        endpoints::table
            .filter(endpoints::enterprise_id.eq(enterprise))
            .filter(endpoints::id.eq(id))
            .select(EndpointRow::as_select())
            .first(self)
            .await
            .optional()
    }

    async fn lock_endpoints(
        &mut self,
        enterprise: &str,
        ids: &[&str],
    ) -> QueryResult<Vec<EndpointRow>> {
        endpoints::table
            .filter(endpoints::enterprise_id.eq(enterprise))
            .filter(endpoints::id.eq_any(ids))
            .select(EndpointRow::as_select())
            .load(self)
            .await
    }

    async fn lock_paired(&mut self, token: &str) -> QueryResult<Option<PairedRow>> {
        paired_statuses::table
            .find(token)
            .select(PairedRow::as_select())
            .first(self)
            .await
            .optional()
    }

    async fn insert_endpoints(&mut self, rows: &[EndpointRow]) -> QueryResult<usize> {
        let rows = rows.to_vec();
        self.spawn_blocking(move |c| {
            rows.chunks(Self::MAX_BINDS / EndpointRow::COLUMNS)
                .map(|chunk| diesel::RunQueryDsl::execute(insert_endpoints!(chunk), c))
                .sum()
        })
        .await
    }

    async fn upsert_endpoints(&mut self, rows: &[EndpointRow]) -> QueryResult<usize> {
        let rows = rows.to_vec();
        self.spawn_blocking(move |c| {
            rows.chunks(Self::MAX_BINDS / EndpointRow::COLUMNS)
                .map(|chunk| diesel::RunQueryDsl::execute(upsert_endpoints!(chunk), c))
                .sum()
        })
        .await
    }

    async fn upsert_statuses(&mut self, rows: &[StatusRow]) -> QueryResult<usize> {
        let rows = rows.to_vec();
        self.spawn_blocking(move |c| diesel::RunQueryDsl::execute(upsert_statuses!(&rows), c))
            .await
    }

    async fn write_command_status(
        &mut self,
        status: &StatusRow,
        audit: &NewAuditRow<'_>,
        join: Option<JoinSource>,
    ) -> QueryResult<bool> {
        self.immediate_transaction(async |c| {
            let rows = std::slice::from_ref(status);
            c.upsert_statuses(rows).await?;
            if let Some(join) = join {
                diesel::update(endpoint_statuses::table.find(&status.endpoint_id))
                    .set((
                        endpoint_statuses::join_source.eq(join.as_str()),
                        endpoint_statuses::join_ms.eq(status.timestamp),
                    ))
                    .execute(c)
                    .await?;
            }
            follow_sessions!(c, &status.enterprise_id, rows)?;
            diesel::insert_into(audit_log::table)
                .values(audit)
                .execute(c)
                .await?;
            Ok(false)
        })
        .await
    }
}

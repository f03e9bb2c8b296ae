//! UsageStore: the figures of call sessions, summed by the database from its rollups and the
//! sessions at a period's edges, the sessions themselves, and their retention. Sessions are
//! opened and closed by the status writes (`follow_sessions!`); the rollups follow the sessions
//! by the migration `usage_rollups`'s triggers.

use crate::DbStore;
use crate::dialect::Dialect;
use crate::schema::call_sessions;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;
use roomlink_domain::Result;
use roomlink_domain::civil::MS_PER_DAY;
use roomlink_domain::error::Error;
use roomlink_domain::ids::{EndpointId, EnterpriseId};
use roomlink_domain::ports::UsageStore;
use roomlink_domain::usage::rollup::{LONG_CALL_MS, RollupPlan};
use roomlink_domain::usage::{CallSession, JoinSource, UsageGrouping, UsageQuery, UsageTotals};

/// One group as the database sums it.
#[derive(QueryableByName)]
struct GroupRow {
    #[diesel(sql_type = Text)]
    bucket: String,
    #[diesel(sql_type = BigInt)]
    calls: i64,
    #[diesel(sql_type = BigInt)]
    ms_in_call: i64,
    #[diesel(sql_type = BigInt)]
    days_used: i64,
}

/// A call session `follow_sessions!` opened, as its `INSERT … RETURNING` answers.
#[derive(QueryableByName)]
pub(crate) struct OpenedSession {
    #[diesel(sql_type = Text)]
    pub endpoint_id: String,
    #[diesel(sql_type = BigInt)]
    pub started_ms: i64,
    #[diesel(sql_type = Text)]
    pub source: String,
}

/// The group key of a session whose counted part starts at `start` (a column or expression in
/// milliseconds), as `UsageGrouping::bucket_of` numbers it.
fn key_sql(grouping: UsageGrouping, start: &str) -> String {
    let hour = 60 * 60 * 1000;
    match grouping {
        UsageGrouping::Room => "endpoint_id".to_owned(),
        UsageGrouping::Day => format!("CAST({start} / {MS_PER_DAY} AS TEXT)"),
        UsageGrouping::Hour => format!("CAST(({start} / {hour}) % 24 AS TEXT)"),
        // Day 0 of the epoch was a Thursday, 3 days after a Monday.
        UsageGrouping::Weekday => format!("CAST(({start} / {MS_PER_DAY} + 3) % 7 AS TEXT)"),
    }
}

/// The usage query, for either backend, as `roomlink_domain::usage::rollup` divides it: one
/// statement, so that its three parts read one snapshot. `param(n)` is its n-th bind
/// parameter: 1 the enterprise, 2 `from`, 3 `to`, 4 `cap`, 5 and 6 the whole days' first and
/// end milliseconds, 7 `from - LONG_CALL_MS`, 8 `cap - LONG_CALL_MS`. The arithmetic is that
/// of `UsageQuery::counted` and `UsageGrouping::bucket_of`, on whole milliseconds since the
/// epoch (integer division in both backends); the literal in `ended_ms - started_ms > …` is
/// the one of the partial index `call_sessions_long`, so that the planners may use it.
fn usage_sql(
    plan: &RollupPlan,
    grouping: UsageGrouping,
    param: impl Fn(usize) -> String,
) -> String {
    let (ent, from, to, cap) = (param(1), param(2), param(3), param(4));
    let (whole_from, whole_to, from_long, cap_long) = (param(5), param(6), param(7), param(8));
    let long = LONG_CALL_MS;
    // The sessions counted from themselves: started on the first or last partial day, still
    // going from before `from`, or ended after `from` having started before it (short ones at
    // most LONG_CALL_MS before, the long ones by their index).
    let key = key_sql(grouping, "s");
    let mut parts = vec![format!(
        "SELECT {key} AS bucket, COUNT(*) AS calls, CAST(SUM(e - s) AS BIGINT) AS ms_in_call, \
         COUNT(DISTINCT s / {MS_PER_DAY}) AS days_used \
         FROM (SELECT endpoint_id, \
             CASE WHEN started_ms < {from} THEN {from} ELSE started_ms END AS s, \
             CASE WHEN ended_ms IS NULL OR ended_ms > {cap} THEN {cap} ELSE ended_ms END AS e \
             FROM call_sessions WHERE enterprise_id = {ent} AND ( \
                 (started_ms >= {from} AND started_ms < {whole_from}) \
                 OR (started_ms >= {whole_to} AND started_ms < {to}) \
                 OR (ended_ms IS NULL AND started_ms < {from}) \
                 OR (started_ms >= {from_long} AND started_ms < {from} AND ended_ms > {from}) \
                 OR (ended_ms - started_ms > {long} AND started_ms < {from_long} \
                     AND ended_ms > {from}))) AS counted \
         WHERE e > s GROUP BY {key}"
    )];
    // The whole days, from the rollups. The parts stay when there are none (they then read
    // nothing), so that the statement always has all its parameters.
    let (first_day, end_day) = plan.days();
    parts.push(if grouping == UsageGrouping::Room {
        let mut spans: Vec<String> = plan
            .room_spans()
            .iter()
            .map(|r| {
                format!(
                    "(span_days = {} AND first_day >= {} AND first_day < {})",
                    r.span_days, r.first, r.end
                )
            })
            .collect();
        if spans.is_empty() {
            spans.push("1 = 0".to_owned());
        }
        format!(
            "SELECT endpoint_id AS bucket, CAST(SUM(calls) AS BIGINT) AS calls, \
             CAST(SUM(ms) AS BIGINT) AS ms_in_call, CAST(SUM(days) AS BIGINT) AS days_used \
             FROM usage_room_spans WHERE enterprise_id = {ent} AND ({}) \
             GROUP BY endpoint_id",
            spans.join(" OR ")
        )
    } else {
        let key = key_sql(grouping, &format!("(day * {MS_PER_DAY} + hour * 3600000)"));
        format!(
            "SELECT {key} AS bucket, CAST(SUM(calls) AS BIGINT) AS calls, \
             CAST(SUM(ms) AS BIGINT) AS ms_in_call, COUNT(DISTINCT day) AS days_used \
             FROM usage_hours WHERE enterprise_id = {ent} AND day >= {first_day} \
             AND day < {end_day} AND calls > 0 GROUP BY {key}"
        )
    });
    // The whole days' calls that end after `cap` or go on: the rollups hold their whole
    // time, or none yet; counted is up to `cap` (`RollupPlan::made_good`).
    let key = key_sql(grouping, "started_ms");
    parts.push(format!(
        "SELECT {key} AS bucket, 0 AS calls, \
         CAST(SUM((CASE WHEN ended_ms IS NULL OR ended_ms > {cap} THEN {cap} ELSE ended_ms END) \
             - COALESCE(ended_ms, started_ms)) AS BIGINT) AS ms_in_call, 0 AS days_used \
         FROM call_sessions WHERE enterprise_id = {ent} AND ( \
             (ended_ms IS NULL AND started_ms >= {whole_from} AND started_ms < {whole_to}) \
             OR (started_ms >= {whole_from} AND started_ms >= {cap_long} \
                 AND started_ms < {whole_to} AND ended_ms > {cap}) \
             OR (ended_ms - started_ms > {long} AND started_ms >= {whole_from} \
                 AND started_ms < {whole_to} AND started_ms < {cap_long} \
                 AND ended_ms > {cap})) \
         GROUP BY {key}"
    ));
    format!(
        "SELECT bucket, CAST(SUM(calls) AS BIGINT) AS calls, \
         CAST(SUM(ms_in_call) AS BIGINT) AS ms_in_call, \
         CAST(SUM(days_used) AS BIGINT) AS days_used \
         FROM ({}) AS parts GROUP BY bucket",
        parts.join(" UNION ALL ")
    )
}

#[async_trait]
impl UsageStore for DbStore {
    async fn usage(
        &self,
        enterprise: &EnterpriseId,
        query: &UsageQuery,
        now: i64,
    ) -> Result<Vec<UsageTotals>> {
        let plan = RollupPlan::new(query, now);
        let mut totals = db_run!(self, |c| {
            let sql = usage_sql(&plan, query.group_by, |n| c.param(n));
            let rows: Vec<GroupRow> = diesel::sql_query(sql)
                .bind::<Text, _>(enterprise.as_str())
                .bind::<BigInt, _>(plan.from)
                .bind::<BigInt, _>(plan.to)
                .bind::<BigInt, _>(plan.cap)
                .bind::<BigInt, _>(plan.whole_from)
                .bind::<BigInt, _>(plan.whole_to)
                .bind::<BigInt, _>(plan.from.saturating_sub(LONG_CALL_MS))
                .bind::<BigInt, _>(plan.cap.saturating_sub(LONG_CALL_MS))
                .load(c)
                .await?;
            Ok(rows)
        })?
        .into_iter()
        .map(|row| UsageTotals {
            key: row.bucket,
            calls: row.calls.max(0) as u64,
            ms_in_call: row.ms_in_call,
            days_used: row.days_used.max(0) as u64,
        })
        .collect::<Vec<_>>();
        // Byte order, whatever the database's collation.
        totals.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(totals)
    }

    async fn call_sessions(
        &self,
        enterprise: &EnterpriseId,
        from: i64,
        to: i64,
        limit: usize,
    ) -> Result<Vec<CallSession>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows: Vec<(String, i64, Option<i64>, String)> = db_run!(self, |c| {
            let rows = call_sessions::table
                .filter(call_sessions::enterprise_id.eq(enterprise.as_str()))
                .filter(call_sessions::started_ms.lt(to))
                .filter(
                    call_sessions::ended_ms
                        .is_null()
                        .or(call_sessions::ended_ms.gt(from)),
                )
                .order((call_sessions::started_ms, call_sessions::seq))
                .limit(limit)
                .select((
                    call_sessions::endpoint_id,
                    call_sessions::started_ms,
                    call_sessions::ended_ms,
                    call_sessions::source,
                ))
                .load(c)
                .await?;
            Ok(rows)
        })?;
        rows.into_iter()
            .map(|(endpoint, started_ms, ended_ms, source)| {
                Ok(CallSession {
                    endpoint_id: EndpointId::from_trusted(endpoint),
                    started_ms,
                    ended_ms,
                    source: JoinSource::parse(&source).ok_or_else(|| {
                        Error::internal(format!("stored call source {source:?} is not one"))
                    })?,
                })
            })
            .collect()
    }

    async fn purge_call_sessions(&self, cutoff: i64) -> Result<u64> {
        db_run!(self, |c| {
            let n = diesel::delete(call_sessions::table.filter(call_sessions::ended_ms.lt(cutoff)))
                .execute(c)
                .await?;
            Ok(n as u64)
        })
    }
}

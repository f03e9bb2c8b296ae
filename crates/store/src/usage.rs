//! UsageStore: the figures of call sessions, summed by the database, the sessions themselves,
//! and their retention. Sessions are opened and closed by the status writes
//! (`follow_sessions!`).

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

/// The usage query, for either backend: `param(n)` is its n-th bind parameter (1: enterprise,
/// 2: from, 3: to, 4: the end of a session still going, the earlier of `to` and now). The same
/// arithmetic as `UsageQuery::counted` and `UsageGrouping::bucket_of`, on whole milliseconds
/// since the epoch (integer division in both backends).
fn usage_sql(grouping: UsageGrouping, param: impl Fn(usize) -> String) -> String {
    let (ent, from, to, cap) = (param(1), param(2), param(3), param(4));
    let hour = 60 * 60 * 1000;
    let key = match grouping {
        UsageGrouping::Room => "endpoint_id".to_owned(),
        UsageGrouping::Day => format!("CAST(s / {MS_PER_DAY} AS TEXT)"),
        UsageGrouping::Hour => format!("CAST((s / {hour}) % 24 AS TEXT)"),
        // Day 0 of the epoch was a Thursday, 3 days after a Monday.
        UsageGrouping::Weekday => format!("CAST((s / {MS_PER_DAY} + 3) % 7 AS TEXT)"),
    };
    format!(
        "SELECT {key} AS bucket, COUNT(*) AS calls, CAST(SUM(e - s) AS BIGINT) AS ms_in_call, \
         COUNT(DISTINCT s / {MS_PER_DAY}) AS days_used \
         FROM (SELECT endpoint_id, \
             CASE WHEN started_ms < {from} THEN {from} ELSE started_ms END AS s, \
             CASE WHEN ended_ms IS NULL OR ended_ms > {cap} THEN {cap} ELSE ended_ms END AS e \
             FROM call_sessions WHERE enterprise_id = {ent} AND started_ms < {to} \
             AND (ended_ms > {from} OR ended_ms IS NULL)) AS counted \
         WHERE e > s GROUP BY {key}"
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
        let cap = query.to.min(now);
        let mut totals = db_run!(self, |c| {
            let sql = usage_sql(query.group_by, |n| c.param(n));
            let rows: Vec<GroupRow> = diesel::sql_query(sql)
                .bind::<Text, _>(enterprise.as_str())
                .bind::<BigInt, _>(query.from)
                .bind::<BigInt, _>(query.to)
                .bind::<BigInt, _>(cap)
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

//! AuthFailureLedger: the failed-authentication allowances a cluster's instances share, one row
//! per key (`roomlink_domain::throttle`).

use crate::DbStore;
use crate::dialect::Dialect;
use async_trait::async_trait;
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Bool, Text};
use diesel_async::RunQueryDsl;
use roomlink_domain::Result;
use roomlink_domain::ports::AuthFailureLedger;
use roomlink_domain::throttle::{Allowance, FailureKey, Spend};

#[derive(QueryableByName)]
struct Tat {
    #[diesel(sql_type = BigInt)]
    tat_ms: i64,
}

#[derive(QueryableByName)]
struct Spent {
    #[diesel(sql_type = BigInt)]
    tat_ms: i64,
    #[diesel(sql_type = Bool)]
    counted: bool,
}

/// `Allowance::spend` as one statement, so that the row's lock orders concurrent failures:
/// parameters 1 the key, 2 now, 3 the interval, 4 the slack. In an upsert's `SET` (both
/// backends) the table's columns are the row's values before the update, which is how
/// `counted` can say whether that row was spent.
fn spend_sql(c: &impl Dialect) -> String {
    let (key, now, interval, slack) = (c.param(1), c.param(2), c.param(3), c.param(4));
    let fresh = format!("auth_failures.tat_ms - {now} <= {slack}");
    format!(
        "INSERT INTO auth_failures (key, tat_ms, counted) VALUES ({key}, {now} + {interval}, TRUE) \
         ON CONFLICT (key) DO UPDATE SET \
         counted = ({fresh}), \
         tat_ms = CASE WHEN {fresh} THEN \
           (CASE WHEN auth_failures.tat_ms > {now} THEN auth_failures.tat_ms ELSE {now} END) \
           + {interval} \
         ELSE auth_failures.tat_ms END \
         RETURNING tat_ms, counted"
    )
}

#[async_trait]
impl AuthFailureLedger for DbStore {
    async fn failure_tat(&self, key: &FailureKey) -> Result<Option<i64>> {
        db_run!(self, |c| {
            let sql = format!(
                "SELECT tat_ms FROM auth_failures WHERE key = {}",
                c.param(1)
            );
            let row: Option<Tat> = diesel::sql_query(sql)
                .bind::<Text, _>(key.as_str())
                .load::<Tat>(c)
                .await?
                .pop();
            Ok(row.map(|r| r.tat_ms))
        })
    }

    async fn spend_failure(
        &self,
        key: &FailureKey,
        now: i64,
        allowance: Allowance,
    ) -> Result<Spend> {
        db_run!(self, |c| {
            let spent: Spent = diesel::sql_query(spend_sql(c))
                .bind::<Text, _>(key.as_str())
                .bind::<BigInt, _>(now)
                .bind::<BigInt, _>(allowance.interval_ms())
                .bind::<BigInt, _>(allowance.slack_ms())
                .get_result(c)
                .await?;
            Ok(Spend {
                tat_ms: spent.tat_ms,
                counted: spent.counted,
            })
        })
    }

    async fn purge_auth_failures(&self, now: i64) -> Result<u64> {
        db_run!(self, |c| {
            let sql = format!("DELETE FROM auth_failures WHERE tat_ms <= {}", c.param(1));
            let n = diesel::sql_query(sql)
                .bind::<BigInt, _>(now)
                .execute(c)
                .await?;
            Ok(n as u64)
        })
    }
}

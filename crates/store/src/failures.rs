//! FailureStore: recorded control failures, newest first.

use crate::DbStore;
use crate::models::FailureRow;
use crate::schema::failures;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use roomlink_domain::Result;
use roomlink_domain::ids::EnterpriseId;
use roomlink_domain::ports::FailureStore;
use roomlink_domain::status::Failure;

#[async_trait]
impl FailureStore for DbStore {
    async fn record_failure(&self, failure: &Failure) -> Result<()> {
        let row = FailureRow::new(failure)?;
        db_run!(self, |c| {
            diesel::insert_into(failures::table)
                .values(&row)
                .execute(c)
                .await?;
            Ok(())
        })
    }

    async fn failures(&self, enterprise: &EnterpriseId, limit: usize) -> Result<Vec<Failure>> {
        // Newest first means last recorded first, as in the reference adapter.
        db_run!(self, |c| {
            let rows: Vec<FailureRow> = failures::table
                .filter(failures::enterprise_id.eq(enterprise.as_str()))
                .order(failures::seq.desc())
                .limit(i64::try_from(limit).unwrap_or(i64::MAX))
                .select(FailureRow::as_select())
                .load(c)
                .await?;
            Ok(rows
                .into_iter()
                .map(FailureRow::into_domain)
                .collect::<Result<_>>()?)
        })
    }

    async fn purge_failures(&self, cutoff: i64) -> Result<u64> {
        db_run!(self, |c| {
            let n = diesel::delete(failures::table.filter(failures::error_date.lt(cutoff)))
                .execute(c)
                .await?;
            Ok(n as u64)
        })
    }
}

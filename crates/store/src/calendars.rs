//! CalendarAccountStore and AutoJoinStore.

use crate::DbStore;
use crate::error::corrupt;
use crate::schema::{auto_joins, calendar_accounts};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use roomlink_domain::Result;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::calendar::account::CalendarAccountRecord;
use roomlink_domain::calendar::auto_join::{JoinOutcome, Occurrence};
use roomlink_domain::enums::CalendarType;
use roomlink_domain::ids::EndpointId;
use roomlink_domain::ids::EnterpriseId;
use roomlink_domain::ports::{AutoJoinClaim, AutoJoinStore, CalendarAccountStore};
use roomlink_domain::secret::SealedSecret;

#[derive(Queryable, Selectable, Insertable, AsChangeset)]
#[diesel(
    table_name = calendar_accounts,
    primary_key(enterprise_id, calendar_type),
    check_for_backend(diesel::pg::Pg, diesel::sqlite::Sqlite),
    treat_none_as_null = true
)]
struct AccountRow {
    enterprise_id: String,
    calendar_type: String,
    base_url: String,
    username: Option<String>,
    password_key_id: Option<String>,
    password_ciphertext: Option<Vec<u8>>,
    updated_at_ms: i64,
    token_url: Option<String>,
}

impl AccountRow {
    fn new(a: &CalendarAccountRecord) -> Self {
        AccountRow {
            enterprise_id: a.enterprise_id.as_str().to_owned(),
            calendar_type: a.calendar_type.as_str().to_owned(),
            base_url: a.base_url.clone(),
            username: a.username.clone(),
            password_key_id: a.password.as_ref().map(|p| p.key_id.clone()),
            password_ciphertext: a.password.as_ref().map(|p| p.ciphertext.clone()),
            updated_at_ms: a.updated_at_ms,
            token_url: a.token_url.clone(),
        }
    }

    fn into_domain(self) -> Result<CalendarAccountRecord> {
        let what = format!(
            "calendar account {}/{}",
            self.enterprise_id, self.calendar_type
        );
        let calendar_type = CalendarType::parse(&self.calendar_type)
            .map_err(|e| corrupt(format!("{what}: {}", e.message())))?;
        let password = match (self.password_key_id, self.password_ciphertext) {
            (Some(key_id), Some(ciphertext)) => Some(SealedSecret { key_id, ciphertext }),
            (None, None) => None,
            _ => return Err(corrupt(format!("{what}: half a sealed password"))),
        };
        Ok(CalendarAccountRecord {
            enterprise_id: EnterpriseId::from_trusted(self.enterprise_id),
            calendar_type,
            base_url: self.base_url,
            username: self.username,
            password,
            updated_at_ms: self.updated_at_ms,
            token_url: self.token_url,
        })
    }
}

#[async_trait]
impl CalendarAccountStore for DbStore {
    async fn calendar_accounts(
        &self,
        enterprise: &EnterpriseId,
    ) -> Result<Vec<CalendarAccountRecord>> {
        db_run!(self, |c| {
            let rows: Vec<AccountRow> = calendar_accounts::table
                .filter(calendar_accounts::enterprise_id.eq(enterprise.as_str()))
                .order(calendar_accounts::calendar_type)
                .select(AccountRow::as_select())
                .load(c)
                .await?;
            Ok(rows
                .into_iter()
                .map(AccountRow::into_domain)
                .collect::<Result<_>>()?)
        })
    }

    async fn calendar_account(
        &self,
        enterprise: &EnterpriseId,
        calendar_type: CalendarType,
    ) -> Result<Option<CalendarAccountRecord>> {
        db_run!(self, |c| {
            let row: Option<AccountRow> = calendar_accounts::table
                .find((enterprise.as_str(), calendar_type.as_str()))
                .select(AccountRow::as_select())
                .first(c)
                .await
                .optional()?;
            Ok(row.map(AccountRow::into_domain).transpose()?)
        })
    }

    async fn put_calendar_account(
        &self,
        account: &CalendarAccountRecord,
        audit: &AuditEntry,
    ) -> Result<()> {
        let row = AccountRow::new(account);
        db_tx!(self, |c| {
            diesel::insert_into(calendar_accounts::table)
                .values(&row)
                .on_conflict((
                    calendar_accounts::enterprise_id,
                    calendar_accounts::calendar_type,
                ))
                .do_update()
                .set(&row)
                .execute(c)
                .await?;
            append_audit!(c, audit)?;
            Ok(())
        })
    }

    async fn delete_calendar_account(
        &self,
        enterprise: &EnterpriseId,
        calendar_type: CalendarType,
        audit: &AuditEntry,
    ) -> Result<bool> {
        db_tx!(self, |c| {
            let n = diesel::delete(
                calendar_accounts::table.find((enterprise.as_str(), calendar_type.as_str())),
            )
            .execute(c)
            .await?;
            if n > 0 {
                append_audit!(c, audit)?;
            }
            Ok(n > 0)
        })
    }
}

#[derive(Insertable)]
#[diesel(table_name = auto_joins)]
struct ClaimRow<'a> {
    endpoint_id: &'a str,
    event_uid: &'a str,
    start_ms: i64,
    enterprise_id: &'a str,
    holder: &'a str,
    lease_until_ms: i64,
}

#[async_trait]
impl AutoJoinStore for DbStore {
    async fn claim_auto_join(&self, claim: &AutoJoinClaim, now_ms: i64) -> Result<bool> {
        use diesel::query_dsl::methods::FilterDsl;
        use diesel::upsert::excluded;
        let row = ClaimRow {
            endpoint_id: claim.endpoint_id.as_str(),
            event_uid: &claim.occurrence.uid,
            start_ms: claim.occurrence.start_ms,
            enterprise_id: claim.enterprise_id.as_str(),
            holder: &claim.holder,
            lease_until_ms: claim.lease_until_ms,
        };
        // One statement: inserted when new, taken over only when unsettled with its lease
        // lapsed; a row comes back exactly when this caller now holds the claim. Concurrent
        // callers serialize on the primary key, so at most one of them gets a row.
        db_run!(self, |c| {
            let taken: Option<String> = diesel::insert_into(auto_joins::table)
                .values(&row)
                .on_conflict((
                    auto_joins::endpoint_id,
                    auto_joins::event_uid,
                    auto_joins::start_ms,
                ))
                .do_update()
                .set((
                    auto_joins::holder.eq(excluded(auto_joins::holder)),
                    auto_joins::lease_until_ms.eq(excluded(auto_joins::lease_until_ms)),
                ))
                .filter(
                    auto_joins::outcome
                        .is_null()
                        .and(auto_joins::lease_until_ms.lt(now_ms)),
                )
                .returning(auto_joins::holder)
                .get_result(c)
                .await
                .optional()?;
            Ok(taken.is_some())
        })
    }

    async fn settle_auto_join(
        &self,
        endpoint: &EndpointId,
        occurrence: &Occurrence,
        outcome: JoinOutcome,
        now_ms: i64,
    ) -> Result<()> {
        db_run!(self, |c| {
            diesel::update(auto_joins::table.find((
                endpoint.as_str(),
                occurrence.uid.as_str(),
                occurrence.start_ms,
            )))
            .set((
                auto_joins::outcome.eq(outcome.as_str()),
                auto_joins::settled_at_ms.eq(now_ms),
            ))
            .execute(c)
            .await?;
            Ok(())
        })
    }

    async fn purge_auto_joins(&self, before_ms: i64) -> Result<u64> {
        db_run!(self, |c| {
            let n = diesel::delete(auto_joins::table.filter(auto_joins::start_ms.lt(before_ms)))
                .execute(c)
                .await?;
            Ok(n as u64)
        })
    }
}

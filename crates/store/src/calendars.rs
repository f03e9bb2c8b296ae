//! CalendarAccountStore.

use crate::DbStore;
use crate::error::corrupt;
use crate::schema::calendar_accounts;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use roomlink_domain::Result;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::calendar::account::CalendarAccountRecord;
use roomlink_domain::enums::CalendarType;
use roomlink_domain::ids::EnterpriseId;
use roomlink_domain::ports::CalendarAccountStore;
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

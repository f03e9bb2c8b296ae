//! ListenerStore.

use crate::DbStore;
use crate::models::{CheckRow, ListenerRow};
use crate::schema::{endpoints, listener_checks, listener_services};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::upsert::excluded;
use diesel_async::RunQueryDsl;
use roomlink_domain::Result;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::ids::{EnterpriseId, ListenerServiceId};
use roomlink_domain::listener;
use roomlink_domain::listener::{ListenerCheck, ListenerService};
use roomlink_domain::ports::ListenerStore;

#[async_trait]
impl ListenerStore for DbStore {
    async fn insert_listener(&self, listener: &ListenerService, audit: &AuditEntry) -> Result<()> {
        let row = ListenerRow::new(listener);
        db_tx!(self, |c| {
            diesel::insert_into(listener_services::table)
                .values(&row)
                .execute(c)
                .await?;
            append_audit!(c, audit)?;
            Ok(())
        })
    }

    async fn list_listeners(&self, enterprise: &EnterpriseId) -> Result<Vec<ListenerService>> {
        db_run!(self, |c| {
            let rows: Vec<ListenerRow> = listener_services::table
                .filter(listener_services::enterprise_id.eq(enterprise.as_str()))
                .order(listener_services::seq)
                .select(ListenerRow::as_select())
                .load(c)
                .await?;
            Ok(rows
                .into_iter()
                .map(ListenerRow::into_domain)
                .collect::<Result<_>>()?)
        })
    }

    async fn listener(
        &self,
        enterprise: &EnterpriseId,
        id: &ListenerServiceId,
    ) -> Result<Option<ListenerService>> {
        db_run!(self, |c| {
            let row: Option<ListenerRow> = listener_services::table
                .filter(listener_services::enterprise_id.eq(enterprise.as_str()))
                .filter(listener_services::id.eq(id.as_str()))
                .select(ListenerRow::as_select())
                .first(c)
                .await
                .optional()?;
            Ok(row.map(ListenerRow::into_domain).transpose()?)
        })
    }

    async fn listener_by_id(&self, id: &ListenerServiceId) -> Result<Option<ListenerService>> {
        db_run!(self, |c| {
            let row: Option<ListenerRow> = listener_services::table
                .filter(listener_services::id.eq(id.as_str()))
                .select(ListenerRow::as_select())
                .first(c)
                .await
                .optional()?;
            Ok(row.map(ListenerRow::into_domain).transpose()?)
        })
    }

    async fn update_listener(
        &self,
        listener: &ListenerService,
        audit: &AuditEntry,
    ) -> Result<bool> {
        let row = ListenerRow::new(listener);
        db_tx!(self, |c| {
            let n = diesel::update(
                listener_services::table
                    .filter(listener_services::enterprise_id.eq(&row.enterprise_id))
                    .filter(listener_services::id.eq(&row.id)),
            )
            .set(&row)
            .execute(c)
            .await?;
            if n > 0 {
                append_audit!(c, audit)?;
            }
            Ok(n > 0)
        })
    }

    async fn delete_listener(
        &self,
        enterprise: &EnterpriseId,
        id: &ListenerServiceId,
        audit: &AuditEntry,
    ) -> Result<bool> {
        db_tx!(self, |c| {
            let users: i64 = endpoints::table
                .filter(endpoints::enterprise_id.eq(enterprise.as_str()))
                .filter(endpoints::listener_service_id.eq(id.as_str()))
                .count()
                .get_result(c)
                .await?;
            if users > 0 {
                return Err(
                    listener::in_use(id, usize::try_from(users).unwrap_or(usize::MAX)).into(),
                );
            }
            // Its listener_links and listener_checks rows go by ON DELETE CASCADE.
            let n = diesel::delete(
                listener_services::table
                    .filter(listener_services::enterprise_id.eq(enterprise.as_str()))
                    .filter(listener_services::id.eq(id.as_str())),
            )
            .execute(c)
            .await?;
            if n > 0 {
                append_audit!(c, audit)?;
            }
            Ok(n > 0)
        })
    }

    async fn record_check(&self, check: &ListenerCheck) -> Result<()> {
        let row = CheckRow::new(check);
        db_run!(self, |c| {
            let insert = diesel::insert_into(listener_checks::table)
                .values(&row)
                .on_conflict(listener_checks::listener_id)
                .do_update();
            let written = if row.error.is_none() {
                insert
                    .set((
                        listener_checks::checked_ms.eq(excluded(listener_checks::checked_ms)),
                        listener_checks::answered_ms.eq(excluded(listener_checks::answered_ms)),
                        listener_checks::version.eq(excluded(listener_checks::version)),
                        listener_checks::error.eq(None::<String>),
                        listener_checks::error_message.eq(None::<String>),
                    ))
                    .execute(c)
                    .await
            } else {
                // A failed check keeps the last answer's time and version.
                insert
                    .set((
                        listener_checks::checked_ms.eq(excluded(listener_checks::checked_ms)),
                        listener_checks::error.eq(excluded(listener_checks::error)),
                        listener_checks::error_message.eq(excluded(listener_checks::error_message)),
                    ))
                    .execute(c)
                    .await
            };
            match written {
                // The listener was deleted while it was being checked: nothing to record.
                Ok(_)
                | Err(DieselError::DatabaseError(DatabaseErrorKind::ForeignKeyViolation, _)) => {
                    Ok(())
                }
                Err(e) => Err(e.into()),
            }
        })
    }

    async fn checks(&self, enterprise: &EnterpriseId) -> Result<Vec<ListenerCheck>> {
        db_run!(self, |c| {
            let rows: Vec<CheckRow> = listener_checks::table
                .inner_join(listener_services::table)
                .filter(listener_services::enterprise_id.eq(enterprise.as_str()))
                .select(CheckRow::as_select())
                .load(c)
                .await?;
            Ok(rows.into_iter().map(CheckRow::into_domain).collect())
        })
    }
}

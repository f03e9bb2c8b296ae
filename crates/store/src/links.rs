//! LinkStore: outbound listeners' connections, one row per listener.

use crate::DbStore;
use crate::models::LinkRow;
use crate::schema::{listener_links, listener_services};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel::upsert::excluded;
use diesel_async::RunQueryDsl;
use roomlink_domain::Result;
use roomlink_domain::ids::{EnterpriseId, ListenerServiceId};
use roomlink_domain::listener::LinkPresence;
use roomlink_domain::ports::LinkStore;

#[async_trait]
impl LinkStore for DbStore {
    async fn link_up(&self, presence: &LinkPresence) -> Result<()> {
        let row = LinkRow::new(presence);
        db_run!(self, |c| {
            let written = diesel::insert_into(listener_links::table)
                .values(&row)
                .on_conflict(listener_links::listener_id)
                .do_update()
                .set((
                    listener_links::instance.eq(excluded(listener_links::instance)),
                    listener_links::since_ms.eq(excluded(listener_links::since_ms)),
                    listener_links::version.eq(excluded(listener_links::version)),
                    listener_links::seen_ms.eq(excluded(listener_links::seen_ms)),
                ))
                .execute(c)
                .await;
            match written {
                // The listener was deleted while it was connecting: nothing to record.
                Ok(_)
                | Err(DieselError::DatabaseError(DatabaseErrorKind::ForeignKeyViolation, _)) => {
                    Ok(())
                }
                Err(e) => Err(e.into()),
            }
        })
    }

    async fn link_down(
        &self,
        listener: &ListenerServiceId,
        instance: &str,
        since_ms: i64,
    ) -> Result<()> {
        db_run!(self, |c| {
            // A newer connection (another instance, or a later start) has another pair.
            diesel::delete(
                listener_links::table
                    .filter(listener_links::listener_id.eq(listener.as_str()))
                    .filter(listener_links::instance.eq(instance))
                    .filter(listener_links::since_ms.eq(since_ms)),
            )
            .execute(c)
            .await?;
            Ok(())
        })
    }

    async fn links_seen(&self, instance: &str, now_ms: i64) -> Result<()> {
        db_run!(self, |c| {
            diesel::update(listener_links::table.filter(listener_links::instance.eq(instance)))
                .set(listener_links::seen_ms.eq(now_ms))
                .execute(c)
                .await?;
            Ok(())
        })
    }

    async fn links(&self, enterprise: &EnterpriseId) -> Result<Vec<LinkPresence>> {
        db_run!(self, |c| {
            let rows: Vec<LinkRow> = listener_links::table
                .inner_join(listener_services::table)
                .filter(listener_services::enterprise_id.eq(enterprise.as_str()))
                .order(listener_services::seq)
                .select(LinkRow::as_select())
                .load(c)
                .await?;
            Ok(rows.into_iter().map(LinkRow::into_domain).collect())
        })
    }
}

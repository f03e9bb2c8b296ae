//! AuditStore: the trail's own appends (refused requests, control commands), its keyset pages
//! (newest first) and its retention. Successful writes append with `append_audit!` inside their
//! own transactions.

use crate::DbStore;
use crate::models::AuditRow;
use crate::schema::audit_log;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use roomlink_domain::Result;
use roomlink_domain::audit::{AuditEntry, AuditFilter, AuditPage};
use roomlink_domain::endpoint::page::ListPosition;
use roomlink_domain::ids::EnterpriseId;
use roomlink_domain::ports::AuditStore;

#[async_trait]
impl AuditStore for DbStore {
    async fn record_audit(&self, entry: &AuditEntry) -> Result<()> {
        // A failed command's entry is a `command.failed` event, in the same transaction.
        match roomlink_domain::webhook::Event::command_failed(entry) {
            Some(event) => db_tx!(self, |c| {
                append_audit!(c, entry)?;
                emit_event!(&mut *c, entry.enterprise_id.as_str(), &event, None)?;
                Ok(())
            }),
            None => db_run!(self, |c| {
                append_audit!(c, entry)?;
                Ok(())
            }),
        }
    }

    async fn audit_page(
        &self,
        enterprise: &EnterpriseId,
        filter: &AuditFilter,
        before: Option<ListPosition>,
        limit: usize,
    ) -> Result<AuditPage> {
        let before = before.map_or(i64::MAX, |p| p.0);
        // One row more than asked tells whether another page follows.
        let fetch = i64::try_from(limit.saturating_add(1)).unwrap_or(i64::MAX);
        db_run!(self, |c| {
            let mut query = audit_log::table
                .filter(audit_log::enterprise_id.eq(enterprise.as_str()))
                .filter(audit_log::seq.lt(before))
                .order(audit_log::seq.desc())
                .limit(fetch)
                .select(AuditRow::as_select())
                .into_boxed();
            if let Some(target) = &filter.target_id {
                query = query.filter(audit_log::target_id.eq(target));
            }
            if let Some(actor) = &filter.actor {
                query = query.filter(
                    audit_log::actor_id
                        .eq(actor)
                        .or(audit_log::actor_username.eq(actor)),
                );
            }
            if let Some(from) = filter.from {
                query = query.filter(audit_log::at_ms.ge(from));
            }
            if let Some(to) = filter.to {
                query = query.filter(audit_log::at_ms.le(to));
            }
            let rows: Vec<AuditRow> = query.load(c).await?;
            let mut entries = rows
                .into_iter()
                .map(AuditRow::into_domain)
                .collect::<Result<Vec<_>>>()?;
            let more = entries.len() > limit;
            entries.truncate(limit);
            let next = if more {
                entries.last().map(|r| r.position)
            } else {
                None
            };
            Ok(AuditPage { entries, next })
        })
    }

    async fn purge_audit(&self, cutoff: i64) -> Result<u64> {
        db_run!(self, |c| {
            let n = diesel::delete(audit_log::table.filter(audit_log::at_ms.lt(cutoff)))
                .execute(c)
                .await?;
            Ok(n as u64)
        })
    }
}

//! AuditStore of the in-memory store.

use super::MemoryStore;
use async_trait::async_trait;
use roomlink_domain::audit::{AuditEntry, AuditFilter, AuditPage, AuditRecord};
use roomlink_domain::endpoint::page::ListPosition;
use roomlink_domain::error::Result;
use roomlink_domain::ids::EnterpriseId;
use roomlink_domain::ports::AuditStore;

#[async_trait]
impl AuditStore for MemoryStore {
    async fn record_audit(&self, entry: &AuditEntry) -> Result<()> {
        let mut s = self.lock()?;
        s.audit(entry);
        if let Some(event) = roomlink_domain::webhook::Event::command_failed(entry) {
            s.emit(&entry.enterprise_id, &event, None);
        }
        Ok(())
    }

    async fn audit_page(
        &self,
        enterprise: &EnterpriseId,
        filter: &AuditFilter,
        before: Option<ListPosition>,
        limit: usize,
    ) -> Result<AuditPage> {
        let s = self.lock()?;
        let mut entries: Vec<AuditRecord> = s
            .audit
            .iter()
            .rev()
            .filter(|r| before.is_none_or(|b| r.position < b))
            .filter(|r| r.entry.enterprise_id == *enterprise && filter.matches(&r.entry))
            .take(limit.saturating_add(1))
            .cloned()
            .collect();
        let more = entries.len() > limit;
        entries.truncate(limit);
        let next = if more {
            entries.last().map(|r| r.position)
        } else {
            None
        };
        Ok(AuditPage { entries, next })
    }

    async fn purge_audit(&self, cutoff: i64) -> Result<u64> {
        let mut s = self.lock()?;
        let before = s.audit.len();
        s.audit.retain(|r| r.entry.at >= cutoff);
        Ok((before - s.audit.len()) as u64)
    }
}

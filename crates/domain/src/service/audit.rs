//! Recording the audit trail from the use cases, and reading it back.

use super::auth::Principal;
use crate::access::{Operation, Target};
use crate::audit::{AuditEntry, AuditFilter, AuditPage, MAX_AUDIT_PAGE};
use crate::endpoint::page::ListPosition;
use crate::error::Result;
use crate::ports::{AuditStore, Clock};
use std::sync::Arc;

/// What every audited use case shares: the trail and the time.
pub struct Auditor {
    pub store: Arc<dyn AuditStore>,
    pub clock: Arc<dyn Clock>,
}

impl Auditor {
    /// The entry a successful `operation` will record (the store writes it with the change).
    pub fn entry(
        &self,
        principal: &Principal,
        operation: &str,
        target: Option<&str>,
    ) -> AuditEntry {
        AuditEntry::new(principal, operation, target, self.clock.now_ms())
    }

    pub fn op(
        &self,
        principal: &Principal,
        operation: Operation,
        target: Option<&str>,
    ) -> AuditEntry {
        self.entry(principal, operation.name(), target)
    }

    /// Passes `result` through; a failure is recorded on its own, since its write (if any)
    /// was rolled back with the entry the store would have written.
    pub async fn settle<T>(&self, entry: AuditEntry, result: Result<T>) -> Result<T> {
        if let Err(error) = &result {
            self.keep(&entry.failed(error)).await;
        }
        result
    }

    /// Records an action that has no transaction of its own (a control command), with its
    /// outcome, and passes `result` through.
    pub async fn record<T>(&self, entry: AuditEntry, result: Result<T>) -> Result<T> {
        let entry = match &result {
            Ok(_) => entry,
            Err(error) => entry.failed(error),
        };
        self.keep(&entry).await;
        result
    }

    async fn keep(&self, entry: &AuditEntry) {
        // The caller's answer stands either way: when the database refuses this entry it has
        // most likely refused the action too, and the action's own error is the one to report.
        let _ = self.store.record_audit(entry).await;
    }
}

/// `GET /api/auditlog`.
pub struct AuditLog {
    pub store: Arc<dyn AuditStore>,
}

impl AuditLog {
    /// One page, newest first (`limit` clamped to 1..=[`MAX_AUDIT_PAGE`]).
    pub async fn page(
        &self,
        principal: &Principal,
        filter: AuditFilter,
        before: Option<ListPosition>,
        limit: usize,
    ) -> Result<AuditPage> {
        principal.authorize(Operation::ListAuditLog, Target::Enterprise)?;
        let filter = filter.checked()?;
        self.store
            .audit_page(
                &principal.enterprise_id,
                &filter,
                before,
                limit.clamp(1, MAX_AUDIT_PAGE),
            )
            .await
    }
}

//! Recording the audit trail from the use cases, and reading it back.

use super::auth::{Principal, Subject};
use roomlink_domain::access::{Operation, Target};
use roomlink_domain::audit::{
    Actor, ActorKind, AuditEntry, AuditFilter, AuditPage, MAX_AUDIT_PAGE, OK,
};
use roomlink_domain::endpoint::page::ListPosition;
use roomlink_domain::error::Result;
use roomlink_domain::ports::{AuditStore, Clock};
use std::sync::Arc;

/// Who acted: a user by username, a token by its id (with its creator's username), and the
/// roles they acted with.
pub fn actor_of(principal: &Principal) -> Actor {
    let (kind, id) = match &principal.subject {
        Subject::ServiceUser { username, .. } => (ActorKind::ServiceUser, username.clone()),
        Subject::PlatformUser(user) => (ActorKind::PlatformUser, user.username.clone()),
        Subject::Token(token) => (ActorKind::Token, token.id().as_str().to_owned()),
        Subject::Scheduler(job) => (ActorKind::Scheduler, (*job).to_owned()),
    };
    let username = match &principal.subject {
        Subject::Token(_) => principal.username().map(str::to_owned),
        _ => None,
    };
    Actor {
        kind,
        id,
        username,
        roles: principal.roles,
    }
}

/// A successful `operation` by `principal` at `now` (see [`AuditEntry::failed`]).
pub fn entry_of(
    principal: &Principal,
    operation: &str,
    target_id: Option<&str>,
    now: i64,
) -> AuditEntry {
    AuditEntry {
        enterprise_id: principal.enterprise_id.clone(),
        at: now,
        actor: actor_of(principal),
        operation: operation.to_owned(),
        target_id: target_id.map(str::to_owned),
        outcome: OK.to_owned(),
        detail: None,
    }
}

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
        entry_of(principal, operation, target, self.clock.now_ms())
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

#[cfg(test)]
mod tests {
    use super::*;
    use roomlink_domain::access::RoleSet;
    use roomlink_domain::ids::EnterpriseId;

    #[test]
    fn a_service_user_is_named_by_username() {
        let p = Principal {
            enterprise_id: EnterpriseId::from_trusted("e".repeat(24)),
            enterprise_name: "acme".into(),
            roles: RoleSet::read_write(),
            subject: Subject::ServiceUser {
                username: "ops".into(),
                stamp: 0,
            },
        };
        let entry = entry_of(&p, Operation::DeleteEndpoint.name(), Some("abc"), 7);
        assert_eq!(entry.actor.kind, ActorKind::ServiceUser);
        assert_eq!(entry.actor.id, "ops");
        assert_eq!(entry.actor.username, None);
        assert_eq!(entry.operation, "endpoints.delete");
        assert_eq!(entry.enterprise_id, p.enterprise_id);
        assert!(entry.succeeded());
    }
}

//! CalendarAccountStore and AutoJoinStore of the in-memory store.

use super::MemoryStore;
use async_trait::async_trait;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::calendar::account::CalendarAccountRecord;
use roomlink_domain::calendar::auto_join::{JoinOutcome, Occurrence};
use roomlink_domain::enums::CalendarType;
use roomlink_domain::error::Result;
use roomlink_domain::ids::EndpointId;
use roomlink_domain::ids::EnterpriseId;
use roomlink_domain::ports::{AutoJoinClaim, AutoJoinStore, CalendarAccountStore};

#[async_trait]
impl CalendarAccountStore for MemoryStore {
    async fn calendar_accounts(
        &self,
        enterprise: &EnterpriseId,
    ) -> Result<Vec<CalendarAccountRecord>> {
        let mut accounts: Vec<CalendarAccountRecord> = self
            .lock()?
            .calendar_accounts
            .iter()
            .filter(|a| a.enterprise_id == *enterprise)
            .cloned()
            .collect();
        accounts.sort_by_key(|a| a.calendar_type.as_str());
        Ok(accounts)
    }

    async fn calendar_account(
        &self,
        enterprise: &EnterpriseId,
        calendar_type: CalendarType,
    ) -> Result<Option<CalendarAccountRecord>> {
        Ok(self
            .lock()?
            .calendar_accounts
            .iter()
            .find(|a| a.enterprise_id == *enterprise && a.calendar_type == calendar_type)
            .cloned())
    }

    async fn put_calendar_account(
        &self,
        account: &CalendarAccountRecord,
        audit: &AuditEntry,
    ) -> Result<()> {
        let mut s = self.lock()?;
        s.calendar_accounts.retain(|a| {
            !(a.enterprise_id == account.enterprise_id && a.calendar_type == account.calendar_type)
        });
        s.calendar_accounts.push(account.clone());
        s.audit(audit);
        Ok(())
    }

    async fn delete_calendar_account(
        &self,
        enterprise: &EnterpriseId,
        calendar_type: CalendarType,
        audit: &AuditEntry,
    ) -> Result<bool> {
        let mut s = self.lock()?;
        let before = s.calendar_accounts.len();
        s.calendar_accounts
            .retain(|a| !(a.enterprise_id == *enterprise && a.calendar_type == calendar_type));
        let deleted = s.calendar_accounts.len() < before;
        if deleted {
            s.audit(audit);
        }
        Ok(deleted)
    }
}

/// An auto-join claim and, once settled, how it ended.
pub(super) struct Claim {
    pub(super) claim: AutoJoinClaim,
    outcome: Option<JoinOutcome>,
}

impl Claim {
    fn is(&self, endpoint: &EndpointId, occurrence: &Occurrence) -> bool {
        self.claim.endpoint_id == *endpoint && self.claim.occurrence == *occurrence
    }
}

#[async_trait]
impl AutoJoinStore for MemoryStore {
    async fn claim_auto_join(&self, claim: &AutoJoinClaim, now_ms: i64) -> Result<bool> {
        let mut s = self.lock()?;
        let held = s
            .auto_joins
            .iter_mut()
            .find(|c| c.is(&claim.endpoint_id, &claim.occurrence));
        match held {
            None => {
                s.auto_joins.push(Claim {
                    claim: claim.clone(),
                    outcome: None,
                });
                Ok(true)
            }
            Some(c) if c.outcome.is_none() && c.claim.lease_until_ms < now_ms => {
                c.claim = claim.clone();
                Ok(true)
            }
            Some(_) => Ok(false),
        }
    }

    async fn settle_auto_join(
        &self,
        endpoint: &EndpointId,
        occurrence: &Occurrence,
        outcome: JoinOutcome,
        _now_ms: i64,
    ) -> Result<()> {
        let mut s = self.lock()?;
        if let Some(c) = s.auto_joins.iter_mut().find(|c| c.is(endpoint, occurrence)) {
            c.outcome = Some(outcome);
        }
        Ok(())
    }

    async fn purge_auto_joins(&self, before_ms: i64) -> Result<u64> {
        let mut s = self.lock()?;
        let before = s.auto_joins.len();
        s.auto_joins
            .retain(|c| c.claim.occurrence.start_ms >= before_ms);
        Ok((before - s.auto_joins.len()) as u64)
    }
}

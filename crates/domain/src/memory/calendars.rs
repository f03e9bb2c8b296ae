//! CalendarAccountStore of the in-memory store.

use super::MemoryStore;
use crate::audit::AuditEntry;
use crate::calendar::account::CalendarAccountRecord;
use crate::enums::CalendarType;
use crate::error::Result;
use crate::ids::EnterpriseId;
use crate::ports::CalendarAccountStore;
use async_trait::async_trait;

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

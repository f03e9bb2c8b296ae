//! PairingStore, StatusStore, FailureStore, AuthFailureLedger and StoreHealth of the in-memory
//! store.

use super::MemoryStore;
use async_trait::async_trait;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EndpointId, EnterpriseId, PairingCodeId};
use roomlink_domain::pairing::{PairedStatus, PairingCode};
use roomlink_domain::ports::{
    AuthFailureLedger, FailureStore, PairingStore, StatusStore, StoreHealth,
};
use roomlink_domain::status::{EndpointStatus, Failure};
use roomlink_domain::throttle::{Allowance, FailureKey, Spend};
use roomlink_domain::token::AccessToken;
use roomlink_domain::usage::JoinSource;

#[async_trait]
impl PairingStore for MemoryStore {
    async fn current_pairing_code(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
    ) -> Result<Option<PairingCode>> {
        Ok(self
            .lock()?
            .pairing_codes
            .iter()
            .find(|p| p.enterprise_id == *enterprise && p.endpoint_id == *endpoint)
            .cloned())
    }

    async fn pairing_code(
        &self,
        enterprise: &EnterpriseId,
        id: &PairingCodeId,
    ) -> Result<Option<PairingCode>> {
        Ok(self
            .lock()?
            .pairing_codes
            .iter()
            .find(|p| p.enterprise_id == *enterprise && p.id == *id)
            .cloned())
    }

    async fn pairing_code_by_code(&self, code: &str) -> Result<Option<PairingCode>> {
        Ok(self
            .lock()?
            .pairing_codes
            .iter()
            .find(|p| p.code == code)
            .cloned())
    }

    async fn save_pairing_code(&self, code: &PairingCode, audit: &AuditEntry) -> Result<()> {
        let mut s = self.lock()?;
        if s.pairing_codes
            .iter()
            .any(|p| p.code == code.code && p.endpoint_id != code.endpoint_id)
        {
            return Err(Error::internal("pairing code collision"));
        }
        s.pairing_codes.retain(|p| {
            !(p.enterprise_id == code.enterprise_id && p.endpoint_id == code.endpoint_id)
        });
        s.pairing_codes.push(code.clone());
        s.audit(audit);
        Ok(())
    }

    async fn touch_paired(&self, token: &AccessToken, now: i64) -> Result<Option<PairedStatus>> {
        let mut s = self.lock()?;
        let existing = s.paired.iter().position(|p| p.token_id == *token.id());
        let previous = existing.map(|i| s.paired.remove(i));
        let next = PairedStatus::on_use(previous, token, now);
        if let Some(n) = &next {
            s.paired.push(n.clone());
        }
        Ok(next)
    }

    async fn paired(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
        now: i64,
    ) -> Result<Vec<PairedStatus>> {
        Ok(self
            .lock()?
            .paired
            .iter()
            .filter(|p| {
                p.enterprise_id == *enterprise && p.endpoint_id == *endpoint && p.is_live(now)
            })
            .cloned()
            .collect())
    }

    async fn purge_expired_paired(&self, now: i64) -> Result<u64> {
        let mut s = self.lock()?;
        let before = s.paired.len();
        s.paired.retain(|p| p.is_live(now));
        Ok((before - s.paired.len()) as u64)
    }
}

#[async_trait]
impl StatusStore for MemoryStore {
    async fn save_statuses(
        &self,
        enterprise: &EnterpriseId,
        statuses: &[EndpointStatus],
    ) -> Result<()> {
        let mut s = self.lock()?;
        for status in statuses {
            // Only endpoints of this enterprise get a status.
            if s.position(enterprise, &status.endpoint_id).is_some() {
                s.statuses.insert(
                    (enterprise.clone(), status.endpoint_id.clone()),
                    status.clone(),
                );
                s.follow_sessions(enterprise, status);
            }
        }
        Ok(())
    }

    async fn save_command_status(
        &self,
        enterprise: &EnterpriseId,
        status: &EndpointStatus,
        audit: &AuditEntry,
    ) -> Result<()> {
        let mut s = self.lock()?;
        if s.position(enterprise, &status.endpoint_id).is_none() {
            return Err(status.endpoint_id.not_found());
        }
        s.statuses.insert(
            (enterprise.clone(), status.endpoint_id.clone()),
            status.clone(),
        );
        if let Some(join) = JoinSource::of_command(audit) {
            s.joins.insert(
                (enterprise.clone(), status.endpoint_id.clone()),
                (join, status.timestamp),
            );
        }
        s.follow_sessions(enterprise, status);
        s.audit(audit);
        Ok(())
    }

    async fn statuses(&self, enterprise: &EnterpriseId) -> Result<Vec<EndpointStatus>> {
        let s = self.lock()?;
        Ok(s.endpoints
            .iter()
            .filter(|e| e.enterprise_id() == enterprise)
            .filter_map(|e| {
                s.statuses
                    .get(&(enterprise.clone(), e.id().clone()))
                    .cloned()
            })
            .collect())
    }

    async fn status(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
    ) -> Result<Option<EndpointStatus>> {
        Ok(self
            .lock()?
            .statuses
            .get(&(enterprise.clone(), endpoint.clone()))
            .cloned())
    }
}

#[async_trait]
impl FailureStore for MemoryStore {
    async fn record_failure(&self, failure: &Failure) -> Result<()> {
        self.lock()?.failures.push(failure.clone());
        Ok(())
    }

    async fn failures(&self, enterprise: &EnterpriseId, limit: usize) -> Result<Vec<Failure>> {
        Ok(self
            .lock()?
            .failures
            .iter()
            .rev()
            .filter(|f| f.enterprise_id == *enterprise)
            .take(limit)
            .cloned()
            .collect())
    }

    async fn purge_failures(&self, cutoff: i64) -> Result<u64> {
        let mut s = self.lock()?;
        let before = s.failures.len();
        s.failures.retain(|f| f.error_date >= cutoff);
        Ok((before - s.failures.len()) as u64)
    }
}

#[async_trait]
impl AuthFailureLedger for MemoryStore {
    async fn failure_tat(&self, key: &FailureKey) -> Result<Option<i64>> {
        Ok(self.lock()?.auth_failures.get(key).copied())
    }

    async fn spend_failure(
        &self,
        key: &FailureKey,
        now: i64,
        allowance: Allowance,
    ) -> Result<Spend> {
        let mut s = self.lock()?;
        let spent = allowance.spend(s.auth_failures.get(key).copied(), now);
        s.auth_failures.insert(key.clone(), spent.tat_ms);
        Ok(spent)
    }

    async fn purge_auth_failures(&self, now: i64) -> Result<u64> {
        let mut s = self.lock()?;
        let before = s.auth_failures.len();
        s.auth_failures.retain(|_, tat| *tat > now);
        Ok((before - s.auth_failures.len()) as u64)
    }
}

#[async_trait]
impl StoreHealth for MemoryStore {
    async fn ping(&self) -> Result<()> {
        self.lock().map(drop)
    }
}

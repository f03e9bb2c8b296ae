//! EnterpriseStore, UserStore and TokenStore of the in-memory store.

use super::{MemoryStore, State};
use async_trait::async_trait;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::enterprise::{Enterprise, EnterpriseUsage, ServiceUser};
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EnterpriseId, TokenId};
use roomlink_domain::ports::{EnterpriseStore, TokenStore, UserStore};
use roomlink_domain::token::{AccessToken, TokenHash};

#[async_trait]
impl EnterpriseStore for MemoryStore {
    async fn create_enterprise(&self, enterprise: &Enterprise) -> Result<()> {
        let mut s = self.lock()?;
        if s.enterprises.iter().any(|e| e.name == enterprise.name) {
            return Err(Error::invalid(format!(
                "enterprise name: '{}' is taken",
                enterprise.name
            )));
        }
        s.enterprises.push(enterprise.clone());
        Ok(())
    }

    async fn enterprise(&self, id: &EnterpriseId) -> Result<Option<Enterprise>> {
        Ok(self
            .lock()?
            .enterprises
            .iter()
            .find(|e| e.id == *id)
            .cloned())
    }

    async fn enterprise_by_name(&self, name: &str) -> Result<Option<Enterprise>> {
        Ok(self
            .lock()?
            .enterprises
            .iter()
            .find(|e| e.name == name)
            .cloned())
    }

    async fn enterprise_ids(&self) -> Result<Vec<EnterpriseId>> {
        Ok(self
            .lock()?
            .enterprises
            .iter()
            .map(|e| e.id.clone())
            .collect())
    }

    async fn set_public_key(
        &self,
        id: &EnterpriseId,
        public_key: Option<String>,
        audit: &AuditEntry,
    ) -> Result<bool> {
        let mut s = self.lock()?;
        match s.enterprises.iter_mut().find(|e| e.id == *id) {
            Some(e) => {
                e.public_key = public_key;
                s.audit(audit);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    async fn list_enterprises(&self) -> Result<Vec<Enterprise>> {
        let mut all = self.lock()?.enterprises.clone();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(all)
    }

    async fn enterprise_usage(&self, id: &EnterpriseId) -> Result<EnterpriseUsage> {
        let s = self.lock()?;
        let count = |n: usize| n as u64;
        Ok(EnterpriseUsage {
            endpoints: count(s.count_endpoints(id)),
            listeners: count(
                s.listeners
                    .iter()
                    .filter(|l| l.enterprise_id == *id)
                    .count(),
            ),
            users: count(s.users.iter().filter(|u| u.enterprise_id == *id).count()),
            tokens: count(s.tokens.iter().filter(|t| t.enterprise_id() == id).count()),
        })
    }

    async fn set_endpoint_limit(&self, id: &EnterpriseId, limit: u32) -> Result<bool> {
        let mut s = self.lock()?;
        Ok(match s.enterprises.iter_mut().find(|e| e.id == *id) {
            Some(e) => {
                e.endpoint_limit = limit;
                true
            }
            None => false,
        })
    }

    async fn delete_enterprise(&self, id: &EnterpriseId) -> Result<Option<Vec<TokenHash>>> {
        let mut s = self.lock()?;
        let before = s.enterprises.len();
        s.enterprises.retain(|e| e.id != *id);
        if s.enterprises.len() == before {
            return Ok(None);
        }
        let State {
            users,
            tokens,
            endpoints,
            endpoint_positions,
            listeners,
            links,
            pairing_codes,
            paired,
            statuses,
            failures,
            audit,
            calendar_accounts,
            auto_joins,
            sessions,
            joins,
            inventories,
            templates,
            template_jobs,
            template_assignments,
            ..
        } = &mut *s;
        for e in endpoints.iter().filter(|e| e.enterprise_id() == id) {
            endpoint_positions.remove(e.id());
        }
        endpoints.retain(|e| e.enterprise_id() != id);
        users.retain(|u| u.enterprise_id != *id);
        let revoked = tokens
            .iter()
            .filter(|t| t.enterprise_id() == id)
            .map(|t| t.hash().clone())
            .collect();
        tokens.retain(|t| t.enterprise_id() != id);
        listeners.retain(|l| l.enterprise_id != *id);
        links.retain(|link| listeners.iter().any(|l| l.id == link.listener_id));
        pairing_codes.retain(|p| p.enterprise_id != *id);
        paired.retain(|p| p.enterprise_id != *id);
        statuses.retain(|(e, _), _| e != id);
        failures.retain(|f| f.enterprise_id != *id);
        audit.retain(|a| a.entry.enterprise_id != *id);
        calendar_accounts.retain(|a| a.enterprise_id != *id);
        auto_joins.retain(|c| c.claim.enterprise_id != *id);
        sessions.retain(|(e, _)| e != id);
        joins.retain(|(e, _), _| e != id);
        inventories.retain(|(e, _), _| e != id);
        templates.retain(|t| t.enterprise_id != *id);
        template_jobs.retain(|h| h.job.enterprise_id != *id);
        template_assignments.retain(|(e, _), _| e != id);
        Ok(Some(revoked))
    }
}

#[async_trait]
impl UserStore for MemoryStore {
    async fn create_user(&self, user: &ServiceUser) -> Result<()> {
        let mut s = self.lock()?;
        if s.users.iter().any(|u| u.username == user.username) {
            return Err(Error::invalid(format!(
                "username: '{}' is taken",
                user.username
            )));
        }
        s.users.push(user.clone());
        Ok(())
    }

    async fn user_by_username(&self, username: &str) -> Result<Option<ServiceUser>> {
        Ok(self
            .lock()?
            .users
            .iter()
            .find(|u| u.username == username)
            .cloned())
    }

    async fn list_users(&self, enterprise: &EnterpriseId) -> Result<Vec<ServiceUser>> {
        let mut users: Vec<ServiceUser> = self
            .lock()?
            .users
            .iter()
            .filter(|u| u.enterprise_id == *enterprise)
            .cloned()
            .collect();
        users.sort_by(|a, b| a.username.cmp(&b.username));
        Ok(users)
    }

    async fn set_user_disabled(
        &self,
        enterprise: &EnterpriseId,
        username: &str,
        disabled: bool,
    ) -> Result<bool> {
        self.with_user(enterprise, username, |u| u.disabled = disabled)
    }

    async fn set_user_password(
        &self,
        enterprise: &EnterpriseId,
        username: &str,
        password_hash: &str,
    ) -> Result<bool> {
        self.with_user(enterprise, username, |u| {
            u.password_hash = password_hash.to_owned()
        })
    }

    async fn delete_user(&self, enterprise: &EnterpriseId, username: &str) -> Result<bool> {
        let mut s = self.lock()?;
        let before = s.users.len();
        s.users
            .retain(|u| !(u.enterprise_id == *enterprise && u.username == username));
        Ok(s.users.len() != before)
    }
}

#[async_trait]
impl TokenStore for MemoryStore {
    async fn insert_token(&self, token: &AccessToken, audit: &AuditEntry) -> Result<()> {
        let mut s = self.lock()?;
        s.tokens.push(token.clone());
        s.audit(audit);
        Ok(())
    }

    async fn token_by_hash(&self, hash: &TokenHash, now: i64) -> Result<Option<AccessToken>> {
        Ok(self
            .lock()?
            .tokens
            .iter()
            .find(|t| t.hash() == hash && t.is_live(now))
            .cloned())
    }

    async fn token_by_id(
        &self,
        enterprise: &EnterpriseId,
        id: &TokenId,
        now: i64,
    ) -> Result<Option<AccessToken>> {
        Ok(self
            .lock()?
            .tokens
            .iter()
            .find(|t| t.enterprise_id() == enterprise && t.id() == id && t.is_live(now))
            .cloned())
    }

    async fn list_tokens(&self, enterprise: &EnterpriseId, now: i64) -> Result<Vec<AccessToken>> {
        Ok(self
            .lock()?
            .tokens
            .iter()
            .filter(|t| t.enterprise_id() == enterprise && t.is_live(now))
            .cloned()
            .collect())
    }

    async fn delete_token(
        &self,
        enterprise: &EnterpriseId,
        id: &TokenId,
        audit: &AuditEntry,
    ) -> Result<bool> {
        let mut s = self.lock()?;
        let before = s.tokens.len();
        s.tokens
            .retain(|t| !(t.enterprise_id() == enterprise && t.id() == id));
        let deleted = s.tokens.len() != before;
        if deleted {
            s.paired.retain(|p| p.token_id != *id);
            s.audit(audit);
        }
        Ok(deleted)
    }

    async fn purge_expired_tokens(&self, now: i64) -> Result<u64> {
        let mut s = self.lock()?;
        let before = s.tokens.len();
        s.tokens.retain(|t| t.is_live(now));
        Ok((before - s.tokens.len()) as u64)
    }

    async fn delete_user_tokens(
        &self,
        enterprise: &EnterpriseId,
        username: &str,
    ) -> Result<Vec<TokenHash>> {
        let mut s = self.lock()?;
        let (gone, kept): (Vec<AccessToken>, Vec<AccessToken>) =
            std::mem::take(&mut s.tokens).into_iter().partition(|t| {
                t.enterprise_id() == enterprise
                    && t.parts().platform_id.is_none()
                    && t.parts().creator.as_deref() == Some(username)
            });
        s.tokens = kept;
        s.paired
            .retain(|p| !gone.iter().any(|t| *t.id() == p.token_id));
        Ok(gone.iter().map(|t| t.hash().clone()).collect())
    }
}

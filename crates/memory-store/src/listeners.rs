//! ListenerStore, LinkStore and PollLease of the in-memory store.

use super::MemoryStore;
use async_trait::async_trait;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::error::Result;
use roomlink_domain::ids::{EnterpriseId, ListenerServiceId};
use roomlink_domain::listener::{LinkPresence, ListenerCheck, ListenerService};
use roomlink_domain::ports::{LinkStore, ListenerStore, PollLease};

#[async_trait]
impl ListenerStore for MemoryStore {
    async fn insert_listener(&self, listener: &ListenerService, audit: &AuditEntry) -> Result<()> {
        let mut s = self.lock()?;
        s.listeners.push(listener.clone());
        s.audit(audit);
        Ok(())
    }

    async fn list_listeners(&self, enterprise: &EnterpriseId) -> Result<Vec<ListenerService>> {
        Ok(self
            .lock()?
            .listeners
            .iter()
            .filter(|l| l.enterprise_id == *enterprise)
            .cloned()
            .collect())
    }

    async fn listener(
        &self,
        enterprise: &EnterpriseId,
        id: &ListenerServiceId,
    ) -> Result<Option<ListenerService>> {
        Ok(self
            .lock()?
            .listeners
            .iter()
            .find(|l| l.enterprise_id == *enterprise && l.id == *id)
            .cloned())
    }

    async fn update_listener(
        &self,
        listener: &ListenerService,
        audit: &AuditEntry,
    ) -> Result<bool> {
        let mut s = self.lock()?;
        match s
            .listeners
            .iter_mut()
            .find(|l| l.enterprise_id == listener.enterprise_id && l.id == listener.id)
        {
            Some(l) => {
                *l = listener.clone();
                s.audit(audit);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    async fn delete_listener(
        &self,
        enterprise: &EnterpriseId,
        id: &ListenerServiceId,
        audit: &AuditEntry,
    ) -> Result<bool> {
        let mut s = self.lock()?;
        let users = s
            .endpoints
            .iter()
            .filter(|e| {
                e.enterprise_id() == enterprise && e.profile().listener().as_ref() == Some(id)
            })
            .count();
        if users > 0 {
            return Err(roomlink_domain::listener::in_use(id, users));
        }
        let before = s.listeners.len();
        s.listeners
            .retain(|l| !(l.enterprise_id == *enterprise && l.id == *id));
        let deleted = s.listeners.len() != before;
        if deleted {
            s.links.retain(|l| l.listener_id != *id);
            s.checks.retain(|c| c.listener_id != *id);
            s.audit(audit);
        }
        Ok(deleted)
    }

    async fn listener_by_id(&self, id: &ListenerServiceId) -> Result<Option<ListenerService>> {
        Ok(self.lock()?.listeners.iter().find(|l| l.id == *id).cloned())
    }

    async fn record_check(&self, check: &ListenerCheck) -> Result<()> {
        let mut s = self.lock()?;
        if !s.listeners.iter().any(|l| l.id == check.listener_id) {
            return Ok(());
        }
        let mut check = check.clone();
        if let Some(last) = s.checks.iter().find(|c| c.listener_id == check.listener_id)
            && check.error.is_some()
        {
            check.answered_ms = last.answered_ms;
            check.version = last.version.clone();
        }
        s.checks.retain(|c| c.listener_id != check.listener_id);
        s.checks.push(check);
        Ok(())
    }

    async fn checks(&self, enterprise: &EnterpriseId) -> Result<Vec<ListenerCheck>> {
        let s = self.lock()?;
        Ok(s.checks
            .iter()
            .filter(|c| {
                s.listeners
                    .iter()
                    .any(|l| l.id == c.listener_id && l.enterprise_id == *enterprise)
            })
            .cloned()
            .collect())
    }
}

#[async_trait]
impl LinkStore for MemoryStore {
    async fn link_up(&self, presence: &LinkPresence) -> Result<()> {
        let mut s = self.lock()?;
        if !s.listeners.iter().any(|l| l.id == presence.listener_id) {
            return Ok(());
        }
        s.links.retain(|l| l.listener_id != presence.listener_id);
        s.links.push(presence.clone());
        Ok(())
    }

    async fn link_down(
        &self,
        listener: &ListenerServiceId,
        instance: &str,
        since_ms: i64,
    ) -> Result<()> {
        self.lock()?.links.retain(|l| {
            !(l.listener_id == *listener && l.instance == instance && l.since_ms == since_ms)
        });
        Ok(())
    }

    async fn links_seen(&self, instance: &str, now_ms: i64) -> Result<()> {
        for l in self
            .lock()?
            .links
            .iter_mut()
            .filter(|l| l.instance == instance)
        {
            l.seen_ms = now_ms;
        }
        Ok(())
    }

    async fn links(&self, enterprise: &EnterpriseId) -> Result<Vec<LinkPresence>> {
        let s = self.lock()?;
        Ok(s.links
            .iter()
            .filter(|link| {
                s.listeners
                    .iter()
                    .any(|l| l.id == link.listener_id && l.enterprise_id == *enterprise)
            })
            .cloned()
            .collect())
    }
}

/// One process holds the store: it is always the poller.
#[async_trait]
impl PollLease for MemoryStore {
    async fn hold_poll_lease(&self) -> Result<bool> {
        Ok(true)
    }
}

//! The in-memory storage adapter: the reference implementation of every storage port, for
//! tests only (a dev-dependency of the crates that use it; `cargo xtask boundaries` refuses it
//! as a normal dependency).
//!
//! It keeps the same promises as the database adapters (one contract suite checks all of
//! them): scoping by enterprise, atomic limit checks, all-or-nothing CSV uploads. One mutex
//! makes every operation a transaction. Nothing survives the process.

mod audit;
mod calendars;
mod sealed;

use async_trait::async_trait;
use roomlink_domain::audit::{AuditEntry, AuditRecord};
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::endpoint::page::{EndpointPage, ListPosition};
use roomlink_domain::enterprise::{Enterprise, EnterpriseUsage, ServiceUser};
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EndpointId, EnterpriseId, ListenerServiceId, PairingCodeId, TokenId};
use roomlink_domain::listener::{LinkPresence, ListenerCheck, ListenerService};
use roomlink_domain::pairing::{PairedStatus, PairingCode};
use roomlink_domain::ports::{
    CommandContext, CsvApply, EndpointChange, EndpointStore, EnterpriseStore, FailureStore,
    LinkStore, ListenerStore, PairingStore, PollLease, StatusStore, StoreHealth, TokenStore,
    UserStore,
};
use roomlink_domain::rules::csv::{CsvContext, CsvReport};
use roomlink_domain::rules::limit::EndpointLimit;
use roomlink_domain::status::{EndpointStatus, Failure};
use roomlink_domain::token::{AccessToken, TokenHash};
use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

#[derive(Default)]
struct State {
    enterprises: Vec<Enterprise>,
    users: Vec<ServiceUser>,
    tokens: Vec<AccessToken>,
    /// In creation order.
    endpoints: Vec<Endpoint>,
    /// List positions, handed out in creation order when first paged (see `endpoint_page`).
    endpoint_positions: HashMap<EndpointId, i64>,
    next_position: i64,
    /// `EndpointStore::endpoint_list_version` per enterprise (absent: 0).
    list_versions: HashMap<EnterpriseId, u64>,
    listeners: Vec<ListenerService>,
    links: Vec<LinkPresence>,
    checks: Vec<ListenerCheck>,
    pairing_codes: Vec<PairingCode>,
    paired: Vec<PairedStatus>,
    statuses: HashMap<(EnterpriseId, EndpointId), EndpointStatus>,
    failures: Vec<Failure>,
    /// Oldest first, each with its position.
    audit: Vec<AuditRecord>,
    calendar_accounts: Vec<roomlink_domain::calendar::account::CalendarAccountRecord>,
    auto_joins: Vec<calendars::Claim>,
    next_audit: i64,
}

impl State {
    fn list_changed(&mut self, enterprise: &EnterpriseId) {
        *self.list_versions.entry(enterprise.clone()).or_default() += 1;
    }

    fn audit(&mut self, entry: &AuditEntry) {
        self.next_audit += 1;
        self.audit.push(AuditRecord {
            position: ListPosition(self.next_audit),
            entry: entry.clone(),
        });
    }
}

#[derive(Default)]
pub struct MemoryStore {
    state: Mutex<State>,
}

impl MemoryStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> Result<MutexGuard<'_, State>> {
        self.state
            .lock()
            .map_err(|_| Error::internal("memory store lock poisoned"))
    }

    /// Applies `change` to the enterprise's user; `false` if it has no such user.
    fn with_user(
        &self,
        enterprise: &EnterpriseId,
        username: &str,
        change: impl FnOnce(&mut ServiceUser),
    ) -> Result<bool> {
        let mut s = self.lock()?;
        let user = s
            .users
            .iter_mut()
            .find(|u| u.enterprise_id == *enterprise && u.username == username);
        Ok(user.map(change).is_some())
    }
}

impl State {
    fn enterprise(&self, id: &EnterpriseId) -> Result<&Enterprise> {
        self.enterprises
            .iter()
            .find(|e| e.id == *id)
            .ok_or_else(|| Error::internal(format!("no enterprise {id}")))
    }

    fn count_endpoints(&self, enterprise: &EnterpriseId) -> usize {
        self.endpoints
            .iter()
            .filter(|e| e.enterprise_id() == enterprise)
            .count()
    }

    /// `DuplicateCalendarId` if another endpoint of the same enterprise has `endpoint`'s calendarId.
    fn check_calendar(&self, endpoint: &Endpoint) -> Result<()> {
        let Some(calendar) = endpoint.profile().calendar_id() else {
            return Ok(());
        };
        let taken = self.endpoints.iter().any(|e| {
            e.enterprise_id() == endpoint.enterprise_id()
                && e.id() != endpoint.id()
                && e.profile().calendar_id() == Some(calendar)
        });
        if taken {
            Err(Error::duplicate_calendar_id(calendar.as_str()))
        } else {
            Ok(())
        }
    }

    fn position(&self, enterprise: &EnterpriseId, id: &EndpointId) -> Option<usize> {
        self.endpoints
            .iter()
            .position(|e| e.enterprise_id() == enterprise && e.id() == id)
    }
}

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

#[async_trait]
impl EndpointStore for MemoryStore {
    async fn command_context(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
    ) -> Result<Option<CommandContext>> {
        let s = self.lock()?;
        let Some(i) = s.position(enterprise, id) else {
            return Ok(None);
        };
        let endpoint = s.endpoints[i].clone();
        let listener = endpoint.profile().listener().and_then(|l| {
            s.listeners
                .iter()
                .find(|x| x.id == l && x.enterprise_id == *enterprise)
                .cloned()
        });
        let enterprise_public_key = s.enterprise(enterprise)?.public_key.clone();
        Ok(Some(CommandContext {
            endpoint,
            listener,
            enterprise_public_key,
        }))
    }

    async fn endpoint_list_version(&self, enterprise: &EnterpriseId) -> Result<Option<u64>> {
        let s = self.lock()?;
        Ok(s.enterprises
            .iter()
            .any(|e| e.id == *enterprise)
            .then(|| s.list_versions.get(enterprise).copied().unwrap_or(0)))
    }

    async fn list_endpoints(&self, enterprise: &EnterpriseId) -> Result<Vec<Endpoint>> {
        Ok(self
            .lock()?
            .endpoints
            .iter()
            .filter(|e| e.enterprise_id() == enterprise)
            .cloned()
            .collect())
    }

    async fn endpoint_page(
        &self,
        enterprise: &EnterpriseId,
        after: Option<ListPosition>,
        limit: usize,
    ) -> Result<EndpointPage> {
        let mut guard = self.lock()?;
        let s = &mut *guard;
        let mut page = EndpointPage::default();
        let mut last = None;
        // `endpoints` is in creation order, so positions given out lazily, in that order,
        // grow with creation order within each enterprise, as the databases' sequences do.
        for e in s
            .endpoints
            .iter()
            .filter(|e| e.enterprise_id() == enterprise)
        {
            let position = *s
                .endpoint_positions
                .entry(e.id().clone())
                .or_insert_with(|| {
                    s.next_position += 1;
                    s.next_position
                });
            if after.is_some_and(|a| position <= a.0) {
                continue;
            }
            if page.endpoints.len() == limit {
                page.next = last.map(ListPosition);
                break;
            }
            page.endpoints.push(e.clone());
            last = Some(position);
        }
        Ok(page)
    }

    async fn endpoint(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
    ) -> Result<Option<Endpoint>> {
        let s = self.lock()?;
        Ok(s.position(enterprise, id).map(|i| s.endpoints[i].clone()))
    }

    async fn insert_endpoint(&self, endpoint: &Endpoint, audit: &AuditEntry) -> Result<()> {
        let mut s = self.lock()?;
        let limit = EndpointLimit(s.enterprise(endpoint.enterprise_id())?.endpoint_limit);
        limit.admit(s.count_endpoints(endpoint.enterprise_id()), 1)?;
        s.check_calendar(endpoint)?;
        s.endpoints.push(endpoint.clone());
        s.list_changed(endpoint.enterprise_id());
        s.audit(audit);
        Ok(())
    }

    async fn update_endpoint(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
        change: EndpointChange,
        audit: &AuditEntry,
    ) -> Result<Endpoint> {
        let mut s = self.lock()?;
        let i = s.position(enterprise, id).ok_or_else(|| id.not_found())?;
        let updated = change(s.endpoints[i].clone())?;
        if updated.id() != id || updated.enterprise_id() != enterprise {
            return Err(Error::internal(
                "an endpoint change altered the endpoint's identity",
            ));
        }
        s.check_calendar(&updated)?;
        s.endpoints[i] = updated.clone();
        s.list_changed(enterprise);
        s.audit(audit);
        Ok(updated)
    }

    async fn delete_endpoint(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
        audit: &AuditEntry,
    ) -> Result<bool> {
        let mut s = self.lock()?;
        let Some(i) = s.position(enterprise, id) else {
            return Ok(false);
        };
        s.endpoints.remove(i);
        s.pairing_codes
            .retain(|p| !(p.enterprise_id == *enterprise && p.endpoint_id == *id));
        s.paired
            .retain(|p| !(p.enterprise_id == *enterprise && p.endpoint_id == *id));
        s.statuses.remove(&(enterprise.clone(), id.clone()));
        s.list_changed(enterprise);
        s.audit(audit);
        Ok(true)
    }

    async fn bulk_put(
        &self,
        enterprise: &EnterpriseId,
        ids: Vec<EndpointId>,
        apply: CsvApply,
        audit: &AuditEntry,
    ) -> Result<CsvReport> {
        let mut s = self.lock()?;
        let limit = EndpointLimit(s.enterprise(enterprise)?.endpoint_limit);
        let count = s.count_endpoints(enterprise);
        let wanted: HashSet<_> = ids.into_iter().collect();
        let mine = s
            .endpoints
            .iter()
            .filter(|e| e.enterprise_id() == enterprise);
        let ctx = CsvContext {
            existing: mine
                .clone()
                .filter(|e| wanted.contains(e.id()))
                .map(|e| (e.id().clone(), e.clone()))
                .collect(),
            calendar_owners: mine
                .clone()
                .filter_map(|e| {
                    Some((
                        e.profile().calendar_id()?.as_str().to_owned(),
                        e.id().clone(),
                    ))
                })
                .collect(),
            listeners: s
                .listeners
                .iter()
                .filter(|l| l.enterprise_id == *enterprise)
                .map(|l| l.id.clone())
                .collect(),
            capacity: limit.room(count),
        };
        let write = apply(ctx)?;
        let changes = !(write.inserts.is_empty() && write.updates.is_empty());
        // Validate everything before changing anything: all or nothing.
        let mut next = s.endpoints.clone();
        for updated in write.updates {
            let i = next
                .iter()
                .position(|e| e.enterprise_id() == enterprise && e.id() == updated.id())
                .ok_or_else(|| updated.id().not_found())?;
            next[i] = updated;
        }
        limit.admit(count, write.inserts.len())?;
        next.extend(write.inserts);
        let staged = State {
            endpoints: next,
            ..State::default()
        };
        for e in staged
            .endpoints
            .iter()
            .filter(|e| e.enterprise_id() == enterprise)
        {
            staged.check_calendar(e)?;
        }
        s.endpoints = staged.endpoints;
        if changes {
            s.list_changed(enterprise);
        }
        s.audit(&audit.clone().detail(write.report.audit_detail()));
        Ok(write.report)
    }
}

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
impl StoreHealth for MemoryStore {
    async fn ping(&self) -> Result<()> {
        self.lock().map(drop)
    }
}

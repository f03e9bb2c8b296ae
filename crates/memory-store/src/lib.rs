//! The in-memory storage adapter: the reference implementation of every storage port, for
//! tests only (a dev-dependency of the crates that use it; `cargo xtask boundaries` refuses it
//! as a normal dependency).
//!
//! It keeps the same promises as the database adapters (one contract suite checks all of
//! them): scoping by enterprise, atomic limit checks, all-or-nothing CSV uploads. One mutex
//! makes every operation a transaction. Nothing survives the process.

mod audit;
mod calendars;
mod endpoints;
mod inventory;
mod listeners;
mod records;
mod sealed;
mod template_assignments;
mod template_jobs;
mod templates;
mod tenants;
mod usage;
mod webhooks;

use roomlink_domain::audit::{AuditEntry, AuditRecord};
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::endpoint::page::ListPosition;
use roomlink_domain::enterprise::{Enterprise, ServiceUser};
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EndpointId, EnterpriseId};
use roomlink_domain::listener::{LinkPresence, ListenerCheck, ListenerService};
use roomlink_domain::pairing::{PairedStatus, PairingCode};
use roomlink_domain::status::{EndpointStatus, Failure};
use roomlink_domain::token::AccessToken;
use roomlink_domain::usage::{CallSession, JoinSource};
use std::collections::HashMap;
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
    /// Oldest first.
    sessions: Vec<(EnterpriseId, CallSession)>,
    /// Each room's last join by roomlink: its source and when it was asked.
    joins: HashMap<(EnterpriseId, EndpointId), (JoinSource, i64)>,
    /// Each room's inventory record (its listener is read from the endpoint when listed).
    inventories: HashMap<(EnterpriseId, EndpointId), inventory::Stored>,
    webhooks: Vec<webhooks::Held>,
    /// The outbox, oldest first.
    deliveries: Vec<webhooks::Queued>,
    next_delivery: i64,
    /// What the health watch last recorded: (enterprise, (kind, id)) to state.
    health: HashMap<(EnterpriseId, (&'static str, String)), String>,
    /// Rooms' health changes (enterprise, endpoint id, change), oldest first.
    health_history: Vec<(EnterpriseId, String, roomlink_domain::health::HealthChange)>,
    /// Configuration templates, in creation order.
    templates: Vec<roomlink_domain::template::Template>,
    /// Template jobs with their claims, in creation order.
    template_jobs: Vec<template_jobs::Held>,
    /// Each assigned room's template and last drift check.
    template_assignments: HashMap<(EnterpriseId, EndpointId), template_assignments::Held>,
    /// Failed-authentication allowances: each key's `tat`.
    auth_failures: HashMap<roomlink_domain::throttle::FailureKey, i64>,
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

//! EndpointStore of the in-memory store: endpoints, list pages and versions, CSV uploads.

use super::{MemoryStore, State};
use async_trait::async_trait;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::endpoint::page::{EndpointPage, ListPosition};
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EndpointId, EnterpriseId};
use roomlink_domain::ports::{CommandContext, CsvApply, EndpointChange, EndpointStore};
use roomlink_domain::rules::csv::{CsvContext, CsvReport};
use roomlink_domain::rules::limit::EndpointLimit;
use std::collections::HashSet;

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
        s.joins.remove(&(enterprise.clone(), id.clone()));
        s.inventories.remove(&(enterprise.clone(), id.clone()));
        s.template_assignments
            .remove(&(enterprise.clone(), id.clone()));
        s.sessions
            .retain(|(e, session)| !(e == enterprise && session.endpoint_id == *id));
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
        let write = apply(&ctx)?;
        write.check_within(enterprise, &ctx, limit, count)?;
        let changes = !(write.inserts.is_empty() && write.updates.is_empty());
        // The plan decided; stage the write and hold it to the calendarId constraint, as the
        // database's unique index does: all or nothing.
        let mut next = s.endpoints.clone();
        for updated in write.updates {
            let i = next
                .iter()
                .position(|e| e.enterprise_id() == enterprise && e.id() == updated.id())
                .ok_or_else(|| Error::internal("an endpoint of the CSV context vanished"))?;
            next[i] = updated;
        }
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

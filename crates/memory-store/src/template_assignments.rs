//! TemplateAssignmentStore of the in-memory store: one entry per assigned room, keyed as the
//! database keys its rows (by endpoint); the endpoint's name is read when listed. Deleting an
//! endpoint, a template or an enterprise drops its entries with it.

use super::{MemoryStore, State};
use async_trait::async_trait;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::error::Result;
use roomlink_domain::ids::{EndpointId, EnterpriseId, TemplateId};
use roomlink_domain::ports::TemplateAssignmentStore;
use roomlink_domain::template::drift::{Assignment, DriftRecord};
use roomlink_domain::webhook::Event;
use std::collections::HashSet;

/// A room's assignment.
pub(crate) struct Held {
    template: TemplateId,
    assigned_at: i64,
    drift: Option<DriftRecord>,
}

impl Held {
    pub(crate) fn template(&self) -> &TemplateId {
        &self.template
    }
}

impl State {
    /// The assignment of `endpoint` as answers show it, with the endpoint's current name;
    /// `None` when the room has none (or the endpoint is gone).
    fn assignment(&self, enterprise: &EnterpriseId, endpoint: &EndpointId) -> Option<Assignment> {
        let held = self
            .template_assignments
            .get(&(enterprise.clone(), endpoint.clone()))?;
        let i = self.position(enterprise, endpoint)?;
        Some(Assignment {
            endpoint_id: endpoint.clone(),
            name: self.endpoints[i].name().to_owned(),
            template_id: held.template.clone(),
            assigned_at: held.assigned_at,
            drift: held.drift.clone(),
        })
    }
}

#[async_trait]
impl TemplateAssignmentStore for MemoryStore {
    async fn assign_template(
        &self,
        enterprise: &EnterpriseId,
        template: &TemplateId,
        endpoints: &[EndpointId],
        at: i64,
        audit: &AuditEntry,
    ) -> Result<usize> {
        let mut s = self.lock()?;
        if !s
            .templates
            .iter()
            .any(|t| t.enterprise_id == *enterprise && t.id == *template)
        {
            return Err(template.not_found());
        }
        let mut n = 0;
        let mut seen = HashSet::new();
        for id in endpoints {
            // The enterprise's endpoints only, each once, as the database's `IN` list.
            if !seen.insert(id) || s.position(enterprise, id).is_none() {
                continue;
            }
            let key = (enterprise.clone(), id.clone());
            if s.template_assignments
                .get(&key)
                .is_some_and(|held| held.template == *template)
            {
                continue;
            }
            s.template_assignments.insert(
                key,
                Held {
                    template: template.clone(),
                    assigned_at: at,
                    drift: None,
                },
            );
            n += 1;
        }
        s.audit(audit);
        Ok(n)
    }

    async fn unassign_template(
        &self,
        enterprise: &EnterpriseId,
        template: &TemplateId,
        endpoints: &[EndpointId],
        audit: &AuditEntry,
    ) -> Result<usize> {
        let mut s = self.lock()?;
        let mut n = 0;
        for id in endpoints {
            let key = (enterprise.clone(), id.clone());
            if s.template_assignments
                .get(&key)
                .is_some_and(|held| held.template == *template)
            {
                s.template_assignments.remove(&key);
                n += 1;
            }
        }
        s.audit(audit);
        Ok(n)
    }

    async fn assignments(
        &self,
        enterprise: &EnterpriseId,
        template: &TemplateId,
    ) -> Result<Vec<Assignment>> {
        let s = self.lock()?;
        let mut list: Vec<Assignment> = s
            .template_assignments
            .iter()
            .filter(|((e, _), held)| e == enterprise && held.template == *template)
            .filter_map(|((e, id), _)| s.assignment(e, id))
            .collect();
        list.sort_by(|x, y| (&x.name, &x.endpoint_id).cmp(&(&y.name, &y.endpoint_id)));
        Ok(list)
    }

    async fn assignments_of(
        &self,
        enterprise: &EnterpriseId,
        endpoints: &[EndpointId],
    ) -> Result<Vec<Assignment>> {
        let s = self.lock()?;
        let wanted: HashSet<&EndpointId> = endpoints.iter().collect();
        Ok(wanted
            .into_iter()
            .filter_map(|id| s.assignment(enterprise, id))
            .collect())
    }

    async fn save_drift<'a>(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
        template: &TemplateId,
        record: &DriftRecord,
        event: Option<&'a Event>,
    ) -> Result<bool> {
        let mut s = self.lock()?;
        let key = (enterprise.clone(), endpoint.clone());
        let Some(held) = s
            .template_assignments
            .get_mut(&key)
            .filter(|held| held.template == *template)
        else {
            return Ok(false);
        };
        held.drift = Some(record.clone());
        if let Some(event) = event {
            s.emit(enterprise, event, None);
        }
        Ok(true)
    }
}

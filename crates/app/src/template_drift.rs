//! Templates assigned to rooms, and drift (issue #36 item 3; the rules:
//! `roomlink_domain::template::drift`). [`TemplateDrift`] answers for the assignments: assign,
//! unassign, the rooms with their state, a check of every assigned room now
//! ([`super::drift_checks`], which also checks them in the poll rounds), and the re-apply of
//! the template on the drifted ones.

use super::audit::Auditor;
use super::auth::Principal;
use super::control::ControlService;
use super::drift_checks::{CHECK_READS_AT_ONCE, DriftChecks};
use super::template_jobs::TemplateJobs;
use super::template_plans::TemplatePlans;
use roomlink_domain::access::{Operation, Target};
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EndpointId, EnterpriseId, TemplateId};
use roomlink_domain::ports::{Clock, TemplateAssignmentStore, TemplateStore};
use roomlink_domain::template::Template;
use roomlink_domain::template::drift::Assignment;
use roomlink_domain::template::job::TemplateJob;
use roomlink_domain::template::plan::{MAX_PLAN_ROOMS, RoomSelection};
use serde_json::{Map, Value};
use std::sync::Arc;

/// A template and the rooms assigned it, by name.
#[derive(Debug, Clone)]
pub struct TemplateRooms {
    pub template: Template,
    pub rooms: Vec<Assignment>,
}

pub struct TemplateDrift {
    pub templates: Arc<dyn TemplateStore>,
    pub assignments: Arc<dyn TemplateAssignmentStore>,
    pub plans: Arc<TemplatePlans>,
    pub jobs: Arc<TemplateJobs>,
    pub control: Arc<ControlService>,
    pub checks: Arc<DriftChecks>,
    pub clock: Arc<dyn Clock>,
    pub audit: Arc<Auditor>,
}

impl TemplateDrift {
    /// The rooms assigned template `id`, with their last checks.
    pub async fn rooms(&self, principal: &Principal, id: &TemplateId) -> Result<TemplateRooms> {
        principal.authorize(Operation::ListTemplateRooms, Target::Enterprise)?;
        let template = self.template(&principal.enterprise_id, id).await?;
        self.rooms_of(template).await
    }

    /// Assigns template `id` to the rooms `body` chooses (`{"rooms": ...}`, as a plan takes
    /// them), moving each from any other template.
    pub async fn assign(
        &self,
        principal: &Principal,
        id: &TemplateId,
        body: &Map<String, Value>,
    ) -> Result<TemplateRooms> {
        self.change(principal, id, body, Operation::AssignTemplate)
            .await
    }

    /// Ends the assignment of the rooms `body` chooses that are assigned template `id`.
    pub async fn unassign(
        &self,
        principal: &Principal,
        id: &TemplateId,
        body: &Map<String, Value>,
    ) -> Result<TemplateRooms> {
        self.change(principal, id, body, Operation::UnassignTemplate)
            .await
    }

    async fn change(
        &self,
        principal: &Principal,
        id: &TemplateId,
        body: &Map<String, Value>,
        operation: Operation,
    ) -> Result<TemplateRooms> {
        let audit = self.audit.op(principal, operation, Some(id.as_str()));
        let result = async {
            principal.authorize(operation, Target::Enterprise)?;
            let selection = RoomSelection::from_request(body)?;
            let enterprise = &principal.enterprise_id;
            let template = self.template(enterprise, id).await?;
            let rooms: Vec<EndpointId> = self
                .plans
                .rooms(enterprise, &selection)
                .await?
                .iter()
                .map(|e| e.id().clone())
                .collect();
            let entry = audit
                .clone()
                .detail(format!("{} rooms chosen", rooms.len()));
            if operation == Operation::AssignTemplate {
                let at = self.clock.now_ms();
                self.assignments
                    .assign_template(enterprise, id, &rooms, at, &entry)
                    .await?;
            } else {
                self.assignments
                    .unassign_template(enterprise, id, &rooms, &entry)
                    .await?;
            }
            self.rooms_of(template).await
        }
        .await;
        self.audit.settle(audit, result).await
    }

    /// Checks every room assigned template `id` now, and answers with the rooms. `Invalid`
    /// when more rooms are assigned than a plan reads (the poll rounds check them all).
    pub async fn check(&self, principal: &Principal, id: &TemplateId) -> Result<TemplateRooms> {
        principal.authorize(Operation::CheckTemplate, Target::Enterprise)?;
        let enterprise = &principal.enterprise_id;
        let template = Arc::new(self.template(enterprise, id).await?);
        let assigned = self.assignments.assignments(enterprise, id).await?;
        if assigned.len() > MAX_PLAN_ROOMS {
            return Err(Error::invalid(format!(
                "template {id} is assigned {} rooms; a check on request reads at most \
                 {MAX_PLAN_ROOMS} (the poll rounds check every assigned room)",
                assigned.len()
            )));
        }
        let mut work = Vec::with_capacity(assigned.len());
        for assignment in assigned {
            let target = self
                .control
                .target_of(enterprise, &assignment.endpoint_id, "readconfiguration")
                .await;
            work.push((target, assignment, template.clone()));
        }
        self.checks
            .check(enterprise, work, CHECK_READS_AT_ONCE)
            .await?;
        self.rooms_of((*template).clone()).await
    }

    /// Starts applying template `id` to the assigned rooms whose last read found them drifted
    /// (an apply job, as `POST /api/templates/{id}/apply` starts). `Invalid` when none has.
    pub async fn reapply(&self, principal: &Principal, id: &TemplateId) -> Result<TemplateJob> {
        principal.authorize(Operation::ReapplyTemplate, Target::Enterprise)?;
        let enterprise = &principal.enterprise_id;
        self.template(enterprise, id).await?;
        let assigned = self.assignments.assignments(enterprise, id).await?;
        let drifted: Vec<EndpointId> = assigned
            .into_iter()
            .filter(Assignment::drifted)
            .map(|a| a.endpoint_id)
            .collect();
        if drifted.is_empty() {
            return Err(Error::invalid(format!(
                "no room assigned template {id} was found drifted by its last check: there is \
                 nothing to re-apply"
            )));
        }
        self.jobs
            .apply_to(principal, id, Ok(RoomSelection::Endpoints(drifted)))
            .await
    }

    async fn template(&self, enterprise: &EnterpriseId, id: &TemplateId) -> Result<Template> {
        self.templates
            .template(enterprise, id)
            .await?
            .ok_or_else(|| id.not_found())
    }

    async fn rooms_of(&self, template: Template) -> Result<TemplateRooms> {
        let rooms = self
            .assignments
            .assignments(&template.enterprise_id, &template.id)
            .await?;
        Ok(TemplateRooms { template, rooms })
    }
}

//! Checking rooms assigned a template for drift (issue #36 item 3; the rules:
//! `roomlink_domain::template::drift`): in the status poll rounds, as inventory reads are done
//! (of the rooms of a listener that just answered its poll, those whose last check is oldest
//! and at least `templates.drift_check_minutes` old, at most
//! `templates.drift_checks_per_round`), and on request through
//! [`super::template_drift::TemplateDrift::check`].

use super::live::FleetChanges;
use futures::StreamExt;
use roomlink_domain::error::Result;
use roomlink_domain::ids::{EndpointId, EnterpriseId, TemplateId};
use roomlink_domain::inventory::due_for_read;
use roomlink_domain::live::LiveTopic;
use roomlink_domain::ports::{
    Clock, CommandTarget, ListenerTransport, TemplateAssignmentStore, TemplateStore,
};
use roomlink_domain::template::Template;
use roomlink_domain::template::drift::{Assignment, DriftRecord};
use roomlink_domain::template::plan::RoomPlan;
use roomlink_domain::webhook::Event;
use std::collections::HashMap;
use std::sync::Arc;

/// How often assigned rooms are checked, and how many per listener and poll round (0: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DriftRefresh {
    pub interval_ms: i64,
    pub per_round: usize,
}

impl Default for DriftRefresh {
    fn default() -> Self {
        DriftRefresh {
            interval_ms: 60 * 60 * 1000,
            per_round: 20,
        }
    }
}

/// Rooms read at once by a round (per listener) or a check on request: as inventory reads and
/// plans, a listener serializes commands per device, not across them.
const ROUND_READS_AT_ONCE: usize = 4;
pub(crate) const CHECK_READS_AT_ONCE: usize = 8;

pub struct DriftChecks {
    pub templates: Arc<dyn TemplateStore>,
    pub assignments: Arc<dyn TemplateAssignmentStore>,
    pub transport: Arc<dyn ListenerTransport>,
    pub clock: Arc<dyn Clock>,
    pub refresh: DriftRefresh,
    pub changes: Arc<FleetChanges>,
}

impl DriftChecks {
    /// Checks the assigned rooms of one listener's poll batch that are due; returns how many
    /// were checked. Only a storage failure is an error, as for the round's statuses.
    pub async fn refresh(
        &self,
        enterprise: &EnterpriseId,
        targets: &[CommandTarget],
    ) -> Result<usize> {
        if self.refresh.per_round == 0 || targets.is_empty() {
            return Ok(0);
        }
        let ids: Vec<EndpointId> = targets.iter().map(|t| t.endpoint.id().clone()).collect();
        let assigned = self.assignments.assignments_of(enterprise, &ids).await?;
        if assigned.is_empty() {
            return Ok(0);
        }
        let candidates: Vec<(EndpointId, Option<i64>)> = assigned
            .iter()
            .map(|a| (a.endpoint_id.clone(), a.checked_at()))
            .collect();
        let due = due_for_read(
            &candidates,
            self.clock.now_ms(),
            self.refresh.interval_ms,
            self.refresh.per_round,
        );
        let templates = self.templates_of(enterprise, &assigned).await?;
        // By endpoint: a poll batch is a page of rooms, searched once per due room.
        let by_endpoint: HashMap<&EndpointId, &CommandTarget> =
            targets.iter().map(|t| (t.endpoint.id(), t)).collect();
        let work: Vec<(Result<CommandTarget>, Assignment, Arc<Template>)> = assigned
            .into_iter()
            .filter(|a| due.contains(&a.endpoint_id))
            .filter_map(|a| {
                let template = templates.get(&a.template_id)?.clone();
                let target = (*by_endpoint.get(&a.endpoint_id)?).clone();
                Some((Ok(target), a, template))
            })
            .collect();
        let checked = self.check(enterprise, work, ROUND_READS_AT_ONCE).await?;
        Ok(checked)
    }

    /// The templates `assigned` name, each read once; one deleted meanwhile is left out.
    async fn templates_of(
        &self,
        enterprise: &EnterpriseId,
        assigned: &[Assignment],
    ) -> Result<HashMap<TemplateId, Arc<Template>>> {
        let mut templates = HashMap::new();
        for a in assigned {
            if !templates.contains_key(&a.template_id)
                && let Some(t) = self.templates.template(enterprise, &a.template_id).await?
            {
                templates.insert(a.template_id.clone(), Arc::new(t));
            }
        }
        Ok(templates)
    }

    /// Checks each room (with its target, or why there is none) against its template and
    /// saves what came of it; returns how many records were saved.
    pub(crate) async fn check(
        &self,
        enterprise: &EnterpriseId,
        work: Vec<(Result<CommandTarget>, Assignment, Arc<Template>)>,
        at_once: usize,
    ) -> Result<usize> {
        let transport = self.transport.clone();
        let checked: Vec<(Assignment, Arc<Template>, RoomPlan)> = futures::stream::iter(work)
            .map(move |(target, assignment, template)| {
                let transport = transport.clone();
                async move {
                    let plan = read_plan(transport.as_ref(), target, &template).await;
                    (assignment, template, plan)
                }
            })
            .buffer_unordered(at_once.max(1))
            .collect()
            .await;
        let mut saved = 0;
        for (assignment, template, plan) in checked {
            let now = self.clock.now_ms();
            let (record, news) = DriftRecord::after(assignment.drift.as_ref(), &plan, now);
            let event = news.then(|| {
                let keys = record
                    .read
                    .as_ref()
                    .map(|(_, r)| r.keys())
                    .unwrap_or_default();
                Event::template_drifted(
                    assignment.endpoint_id.as_str(),
                    template.id.as_str(),
                    &keys,
                    now,
                )
            });
            // A room unassigned (or moved) while it was read: its answer is about nothing.
            if self
                .assignments
                .save_drift(
                    enterprise,
                    &assignment.endpoint_id,
                    &template.id,
                    &record,
                    event.as_ref(),
                )
                .await?
            {
                saved += 1;
            }
        }
        if saved > 0 {
            self.changes.changed(enterprise, LiveTopic::Drift);
        }
        Ok(saved)
    }
}

/// What the room holds of the template's keys, compared with it; a room that cannot be
/// asked is its unreachable plan. A template without settings has nothing to read.
async fn read_plan(
    transport: &dyn ListenerTransport,
    target: Result<CommandTarget>,
    template: &Template,
) -> RoomPlan {
    if template.settings.is_empty() {
        return RoomPlan::Read(Default::default());
    }
    let keys: Vec<_> = template.settings.iter().map(|(k, _)| k).collect();
    let read = match target {
        Ok(target) => transport.read_configuration(&target, &keys).await,
        Err(e) => Err(e),
    };
    match read {
        Ok(read) => RoomPlan::compare(&template.settings, &read),
        Err(e) => RoomPlan::unreachable(&e),
    }
}

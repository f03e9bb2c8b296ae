//! A template's plan (issue #36 item 2): the chosen rooms read through their listeners
//! (`readconfiguration`, listener 3.4.0) and compared with the template, room by room. Nothing
//! is written; a room that cannot be read is part of the answer, never its failure.

use super::auth::Principal;
use super::control::ControlService;
use futures::StreamExt;
use roomlink_domain::access::{Operation, Target};
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::error::Result;
use roomlink_domain::ids::{EndpointId, EnterpriseId, TemplateId};
use roomlink_domain::ports::{EndpointStore, ListenerStore, TemplateStore};
use roomlink_domain::template::Template;
use roomlink_domain::template::plan::{RoomPlan, RoomSelection, location_matches};
use serde_json::{Map, Value};
use std::sync::Arc;

/// Rooms read at once. A listener serializes commands per device, not across them; a plan of
/// many rooms should not hold every connection of one listener.
const READS_AT_ONCE: usize = 8;

pub struct TemplatePlans {
    pub templates: Arc<dyn TemplateStore>,
    pub endpoints: Arc<dyn EndpointStore>,
    pub listeners: Arc<dyn ListenerStore>,
    pub control: Arc<ControlService>,
}

/// One room of a plan.
#[derive(Debug, Clone)]
pub struct PlannedRoom {
    pub endpoint_id: EndpointId,
    pub name: String,
    pub plan: RoomPlan,
}

/// A template and what applying it to the chosen rooms would do, in the rooms' order.
#[derive(Debug, Clone)]
pub struct TemplatePlan {
    pub template: Template,
    pub rooms: Vec<PlannedRoom>,
}

impl TemplatePlans {
    /// The plan of `body` (`{"rooms": ...}`, [`RoomSelection::from_request`]). `NotFound` for
    /// another enterprise's template, endpoint or listener; `Invalid` for a body that chooses
    /// no rooms, or more than a plan reads. Each room's read failure is its `Unreachable` plan.
    pub async fn plan(
        &self,
        principal: &Principal,
        id: &TemplateId,
        body: &Map<String, Value>,
    ) -> Result<TemplatePlan> {
        principal.authorize(Operation::PlanTemplate, Target::Enterprise)?;
        let selection = &RoomSelection::from_request(body)?;
        let enterprise = &principal.enterprise_id;
        let template = self
            .templates
            .template(enterprise, id)
            .await?
            .ok_or_else(|| id.not_found())?;
        let rooms = self.rooms(enterprise, selection).await?;
        RoomSelection::check_count(rooms.len())?;
        let keys: Vec<_> = template.settings.iter().map(|(k, _)| k).collect();
        let control = self.control.clone();
        let settings = template.settings.clone();
        let enterprise = enterprise.clone();
        let planned = futures::stream::iter(rooms)
            .map(move |endpoint| {
                let (control, keys, settings, enterprise) = (
                    control.clone(),
                    keys.clone(),
                    settings.clone(),
                    enterprise.clone(),
                );
                async move {
                    let id = endpoint.id().clone();
                    let read = match control
                        .target_of(&enterprise, &id, "readconfiguration")
                        .await
                    {
                        Ok(target) => control.transport.read_configuration(&target, &keys).await,
                        Err(e) => Err(e),
                    };
                    let plan = match read {
                        Ok(read) => RoomPlan::compare(&settings, &read),
                        Err(e) => RoomPlan::unreachable(&e),
                    };
                    PlannedRoom {
                        endpoint_id: id,
                        name: endpoint.name().to_owned(),
                        plan,
                    }
                }
            })
            .buffered(READS_AT_ONCE)
            .collect()
            .await;
        Ok(TemplatePlan {
            template,
            rooms: planned,
        })
    }

    /// The chosen endpoints, in the order given (by id) or by name.
    pub(crate) async fn rooms(
        &self,
        enterprise: &EnterpriseId,
        selection: &RoomSelection,
    ) -> Result<Vec<Endpoint>> {
        let mut rooms = match selection {
            RoomSelection::Endpoints(ids) => {
                let mut rooms = Vec::with_capacity(ids.len());
                for id in ids {
                    let endpoint = self
                        .endpoints
                        .endpoint(enterprise, id)
                        .await?
                        .ok_or_else(|| id.not_found())?;
                    rooms.push(endpoint);
                }
                return Ok(rooms);
            }
            RoomSelection::Listener(listener) => {
                if self
                    .listeners
                    .listener(enterprise, listener)
                    .await?
                    .is_none()
                {
                    return Err(listener.not_found());
                }
                let mut rooms = self.endpoints.list_endpoints(enterprise).await?;
                rooms.retain(|e| e.profile().listener().as_ref() == Some(listener));
                rooms
            }
            RoomSelection::Location(location) => {
                let mut rooms = self.endpoints.list_endpoints(enterprise).await?;
                rooms.retain(|e| {
                    location_matches(location, e.profile().location().map(|l| l.as_str()))
                });
                rooms
            }
            RoomSelection::All => self.endpoints.list_endpoints(enterprise).await?,
        };
        rooms.sort_by(|a, b| a.name().cmp(b.name()).then_with(|| a.id().cmp(b.id())));
        Ok(rooms)
    }
}

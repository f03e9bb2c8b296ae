//! `GET /api/health/rooms`: every room's health ([`roomlink_domain::health`]) from what the
//! stores hold (statuses, inventories) and what is known of the listeners.

use super::auth::Principal;
use super::listeners::ListenerAdmin;
use roomlink_domain::access::{Operation, Target};
use roomlink_domain::endpoint::page::MAX_PAGE_SIZE;
use roomlink_domain::error::Result;
use roomlink_domain::health::{
    HISTORY_LIMIT, HealthChange, HealthCounts, HealthPolicy, RoomHealth, RoomObservations,
    room_health,
};
use roomlink_domain::ids::{EndpointId, EnterpriseId, ListenerServiceId};
use roomlink_domain::inventory::{EndpointInventory, InventoryFilter, MAX_PAGE};
use roomlink_domain::listener::ListenerHealth;
use roomlink_domain::ports::{
    Clock, EndpointStore, EnterpriseStore, InventoryStore, StatusStore, WebhookStore,
};
use std::collections::HashMap;
use std::sync::Arc;

pub struct HealthService {
    pub endpoints: Arc<dyn EndpointStore>,
    pub statuses: Arc<dyn StatusStore>,
    pub inventories: Arc<dyn InventoryStore>,
    pub listeners: Arc<ListenerAdmin>,
    pub enterprises: Arc<dyn EnterpriseStore>,
    pub clock: Arc<dyn Clock>,
    pub policy: HealthPolicy,
    /// Where the health watch recorded each room's changes.
    pub history: Arc<dyn WebhookStore>,
    /// The fleet's counts and when they were computed.
    pub fleet: std::sync::Mutex<Option<(i64, HealthCounts)>>,
}

/// One room's health with its name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedRoomHealth {
    pub name: String,
    pub health: RoomHealth,
}

/// The counts of one listener's rooms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerCounts {
    pub listener_id: ListenerServiceId,
    pub name: String,
    pub health: ListenerHealth,
    /// The listener's last contact (an answered check, or its connection).
    pub last_contact: Option<i64>,
    pub counts: HealthCounts,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HealthReport {
    pub at: i64,
    pub counts: HealthCounts,
    /// In the listeners' order (as `GET /api/listenerservices`).
    pub listeners: Vec<ListenerCounts>,
    /// Offline rooms first, then degraded, then ok; by name within each.
    pub rooms: Vec<NamedRoomHealth>,
}

/// How long the fleet's counts (for the metrics) are reused: a scrape every few seconds from
/// several collectors does not each time read every room of every enterprise.
const FLEET_COUNTS_MS: i64 = 30_000;

impl HealthService {
    pub async fn rooms(&self, principal: &Principal) -> Result<HealthReport> {
        principal.authorize(Operation::ReadRoomHealth, Target::Enterprise)?;
        self.report(&principal.enterprise_id).await
    }

    /// The room's health changes as the health watch recorded them, newest first (the last
    /// [`HISTORY_LIMIT`] of [`roomlink_domain::health::HISTORY_DAYS`] days). `NotFound` for an
    /// endpoint that is not the caller's enterprise's.
    pub async fn history(
        &self,
        principal: &Principal,
        id: &EndpointId,
    ) -> Result<Vec<HealthChange>> {
        principal.authorize(Operation::ReadRoomHealthHistory, Target::Endpoint(id))?;
        let enterprise = &principal.enterprise_id;
        if self.endpoints.endpoint(enterprise, id).await?.is_none() {
            return Err(id.not_found());
        }
        self.history
            .health_history(enterprise, id, HISTORY_LIMIT)
            .await
    }

    /// The rooms of every enterprise per state, computed at most every 30 s (the metrics'
    /// gauges).
    pub async fn fleet_counts(&self) -> Result<HealthCounts> {
        let now = self.clock.now_ms();
        if let Some((at, counts)) = *self.lock_fleet()
            && now - at < FLEET_COUNTS_MS
        {
            return Ok(counts);
        }
        let mut all = HealthCounts::default();
        for enterprise in self.enterprises.enterprise_ids().await? {
            let counts = self.report_keeping(&enterprise, |_| false).await?.counts;
            all.ok += counts.ok;
            all.degraded += counts.degraded;
            all.offline += counts.offline;
        }
        *self.lock_fleet() = Some((now, all));
        Ok(all)
    }

    fn lock_fleet(&self) -> std::sync::MutexGuard<'_, Option<(i64, HealthCounts)>> {
        self.fleet
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) async fn report(&self, enterprise: &EnterpriseId) -> Result<HealthReport> {
        self.report_keeping(enterprise, |_| true).await
    }

    /// The enterprise's report with only the rooms `keep` accepts (the counts still count every
    /// room). The rooms are read a page at a time and each is dropped unless kept, so a caller
    /// that keeps few (the health watch, the fleet's counts) holds few however many there are.
    pub(crate) async fn report_keeping(
        &self,
        enterprise: &EnterpriseId,
        keep: impl Fn(&NamedRoomHealth) -> bool,
    ) -> Result<HealthReport> {
        let observed: HashMap<EndpointId, i64> = self
            .statuses
            .statuses(enterprise)
            .await?
            .into_iter()
            .map(|s| (s.endpoint_id, s.timestamp))
            .collect();
        let inventories = self.every_inventory(enterprise).await?;
        let views = self.listeners.views(enterprise).await?;
        let contact: HashMap<ListenerServiceId, (ListenerHealth, Option<i64>)> = views
            .iter()
            .map(|v| {
                (
                    v.listener.id.clone(),
                    (v.contact.health(), v.contact.last_contact_ms()),
                )
            })
            .collect();
        let now = self.clock.now_ms();
        let mut counts = HealthCounts::default();
        let mut per_listener: HashMap<ListenerServiceId, HealthCounts> = HashMap::new();
        let mut rooms: Vec<NamedRoomHealth> = Vec::new();
        let mut after = None;
        loop {
            let page = self
                .endpoints
                .endpoint_page(enterprise, after, MAX_PAGE_SIZE)
                .await?;
            for endpoint in &page.endpoints {
                let listener_id = endpoint.profile().listener();
                let observations = RoomObservations {
                    // A listener id naming no listener counts as none.
                    listener: listener_id.as_ref().and_then(|l| contact.get(l).copied()),
                    last_observed: observed.get(endpoint.id()).copied(),
                    inventory: inventories.get(endpoint.id()),
                };
                let (state, since, reasons) = room_health(&observations, now, &self.policy);
                counts.add(state);
                if let Some(l) = &listener_id {
                    per_listener.entry(l.clone()).or_default().add(state);
                }
                let room = NamedRoomHealth {
                    name: endpoint.name().to_owned(),
                    health: RoomHealth {
                        endpoint_id: endpoint.id().clone(),
                        listener_service_id: listener_id,
                        state,
                        since,
                        reasons,
                    },
                };
                if keep(&room) {
                    rooms.push(room);
                }
            }
            match page.next {
                Some(next) => after = Some(next),
                None => break,
            }
        }
        rooms.sort_by(|a, b| {
            a.health
                .state
                .cmp(&b.health.state)
                .then_with(|| a.name.cmp(&b.name))
        });
        let listeners = views
            .into_iter()
            .map(|v| ListenerCounts {
                counts: per_listener.remove(&v.listener.id).unwrap_or_default(),
                health: v.contact.health(),
                last_contact: v.contact.last_contact_ms(),
                listener_id: v.listener.id,
                name: v.listener.profile.name.as_str().to_owned(),
            })
            .collect();
        Ok(HealthReport {
            at: now,
            counts,
            listeners,
            rooms,
        })
    }

    async fn every_inventory(
        &self,
        enterprise: &EnterpriseId,
    ) -> Result<HashMap<EndpointId, EndpointInventory>> {
        let mut all = HashMap::new();
        let mut after = None;
        loop {
            let page = self
                .inventories
                .inventory_page(enterprise, &InventoryFilter::default(), after, MAX_PAGE)
                .await?;
            all.extend(page.records.into_iter().map(|r| (r.endpoint_id.clone(), r)));
            match page.next {
                Some(next) => after = Some(next),
                None => return Ok(all),
            }
        }
    }
}

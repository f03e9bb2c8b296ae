//! Room inventory: reading what room systems say about themselves during the status poll
//! rounds ([`InventoryReads`]), and answering for it ([`InventoryService`]).

use super::auth::Principal;
use futures::StreamExt;
use roomlink_domain::access::{Operation, Target};
use roomlink_domain::error::{ErrorKind, Result};
use roomlink_domain::ids::{EndpointId, EnterpriseId};
use roomlink_domain::inventory::{
    EndpointInventory, InventoryFilter, InventoryPage, InventoryRead, ReadFailure, due_for_read,
    page_size,
};
use roomlink_domain::ports::{
    Clock, CommandTarget, EndpointStore, InventoryStore, ListenerTransport,
};
use roomlink_domain::rules::csv::export::Inventories;
use std::collections::HashMap;
use std::sync::Arc;

/// How often rooms are read, and how many per listener and round (0: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InventoryRefresh {
    pub interval_ms: i64,
    pub per_round: usize,
}

impl Default for InventoryRefresh {
    fn default() -> Self {
        InventoryRefresh {
            interval_ms: 60 * 60 * 1000,
            per_round: 20,
        }
    }
}

/// Rooms read at once per listener: a listener serializes commands per device, not across
/// them, and a round should not hold one listener's every connection.
const READS_AT_ONCE: usize = 4;

pub struct InventoryReads {
    pub store: Arc<dyn InventoryStore>,
    pub transport: Arc<dyn ListenerTransport>,
    pub clock: Arc<dyn Clock>,
    pub refresh: InventoryRefresh,
    /// Told when a read succeeded (the inventory pages show when each room was read).
    pub changes: Arc<crate::live::FleetChanges>,
}

impl InventoryReads {
    /// Reads the rooms of one listener's poll batch that are due ([`due_for_read`]) and
    /// stores what came of each; returns how many were tried. A listener older than
    /// `readinventory` is left alone (nothing recorded: there is nothing to say about the
    /// rooms). Only a storage failure is an error, as for the statuses of the same round.
    pub async fn refresh(
        &self,
        enterprise: &EnterpriseId,
        targets: &[CommandTarget],
    ) -> Result<usize> {
        if self.refresh.per_round == 0 || targets.is_empty() {
            return Ok(0);
        }
        let ids: Vec<EndpointId> = targets.iter().map(|t| t.endpoint.id().clone()).collect();
        let attempts: HashMap<EndpointId, i64> = self
            .store
            .inventory_attempts(enterprise, &ids)
            .await?
            .into_iter()
            .collect();
        let candidates: Vec<(EndpointId, Option<i64>)> = ids
            .into_iter()
            .map(|id| {
                let at = attempts.get(&id).copied();
                (id, at)
            })
            .collect();
        let now = self.clock.now_ms();
        let due = due_for_read(
            &candidates,
            now,
            self.refresh.interval_ms,
            self.refresh.per_round,
        );
        // Owned targets moved into their futures: borrowed ones make the round's future not
        // provably Send (a higher-ranked lifetime limitation), which its spawn needs.
        let chosen: Vec<CommandTarget> = targets
            .iter()
            .filter(|t| due.contains(t.endpoint.id()))
            .cloned()
            .collect();
        let transport = self.transport.clone();
        let reads = futures::stream::iter(chosen)
            .map(move |target| {
                let transport = transport.clone();
                async move {
                    let outcome = transport.read_inventory(&target).await;
                    (target, outcome)
                }
            })
            .buffer_unordered(READS_AT_ONCE)
            .collect::<Vec<_>>()
            .await;
        let (mut tried, mut read_any) = (0, false);
        for (target, outcome) in reads {
            let read = match outcome {
                Ok(inventory) => InventoryRead::Read(inventory),
                // The listener predates the command: nothing to record about the room.
                Err(e) if e.kind() == ErrorKind::ForwardsCompatibility => continue,
                Err(e) => InventoryRead::Failed(ReadFailure::of(&e)),
            };
            tried += 1;
            read_any |= matches!(read, InventoryRead::Read(_));
            let at = self.clock.now_ms();
            self.store
                .save_inventory(enterprise, target.endpoint.id(), at, &read)
                .await?;
        }
        if read_any {
            self.changes
                .changed(enterprise, roomlink_domain::live::LiveTopic::Inventory);
        }
        Ok(tried)
    }
}

pub struct InventoryService {
    pub store: Arc<dyn InventoryStore>,
    pub endpoints: Arc<dyn EndpointStore>,
}

impl InventoryService {
    /// The endpoint's record; `None` while no read was tried. `NotFound` for an endpoint that
    /// is not the caller's enterprise's.
    pub async fn endpoint_inventory(
        &self,
        principal: &Principal,
        id: &EndpointId,
    ) -> Result<Option<EndpointInventory>> {
        principal.authorize(Operation::GetInventory, Target::Endpoint(id))?;
        let enterprise = &principal.enterprise_id;
        if self.endpoints.endpoint(enterprise, id).await?.is_none() {
            return Err(id.not_found());
        }
        self.store.inventory(enterprise, id).await
    }

    /// The records of those of `endpoints` that have one, by endpoint (for an export that
    /// includes them: the caller has listed the endpoints already).
    pub async fn of_endpoints(
        &self,
        principal: &Principal,
        endpoints: &[EndpointId],
    ) -> Result<Inventories> {
        principal.authorize(Operation::ListInventory, Target::Enterprise)?;
        let records = self
            .store
            .inventories(&principal.enterprise_id, endpoints)
            .await?;
        Ok(records
            .into_iter()
            .map(|r| (r.endpoint_id.clone(), r))
            .collect())
    }

    /// One page of the fleet listing; `limit` as [`page_size`].
    pub async fn page(
        &self,
        principal: &Principal,
        filter: &InventoryFilter,
        after: Option<EndpointId>,
        limit: Option<usize>,
    ) -> Result<InventoryPage> {
        principal.authorize(Operation::ListInventory, Target::Enterprise)?;
        let limit = page_size(limit)?;
        self.store
            .inventory_page(&principal.enterprise_id, filter, after, limit)
            .await
    }
}

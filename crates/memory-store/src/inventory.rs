//! InventoryStore of the in-memory store.

use super::MemoryStore;
use async_trait::async_trait;
use roomlink_domain::error::Result;
use roomlink_domain::ids::{EndpointId, EnterpriseId};
use roomlink_domain::inventory::{
    EndpointInventory, Inventory, InventoryFilter, InventoryPage, InventoryRead, ReadFailure,
};
use roomlink_domain::ports::InventoryStore;
use roomlink_domain::webhook::Event;

/// One endpoint's record without its listener.
#[derive(Clone)]
pub(crate) struct Stored {
    attempted_at: i64,
    read: Option<(i64, Inventory)>,
    failure: Option<ReadFailure>,
}

impl MemoryStore {
    fn record(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
    ) -> Result<Option<EndpointInventory>> {
        let s = self.lock()?;
        let Some(stored) = s.inventories.get(&(enterprise.clone(), id.clone())) else {
            return Ok(None);
        };
        let listener = s
            .endpoints
            .iter()
            .find(|e| e.enterprise_id() == enterprise && e.id() == id)
            .and_then(|e| e.profile().listener());
        Ok(Some(EndpointInventory {
            endpoint_id: id.clone(),
            listener_service_id: listener,
            read_at: stored.read.as_ref().map(|(at, _)| *at),
            attempted_at: stored.attempted_at,
            inventory: stored.read.as_ref().map(|(_, i)| i.clone()),
            last_failure: stored.failure.clone(),
        }))
    }
}

#[async_trait]
impl InventoryStore for MemoryStore {
    async fn save_inventory(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
        at: i64,
        read: &InventoryRead,
    ) -> Result<()> {
        let mut s = self.lock()?;
        if s.position(enterprise, endpoint).is_none() {
            return Ok(());
        }
        let key = (enterprise.clone(), endpoint.clone());
        let last_read = s.inventories.get(&key).and_then(|r| r.read.clone());
        if let InventoryRead::Read(inventory) = read {
            let before = last_read
                .as_ref()
                .map(|(_, i)| (i.software_version.as_deref(), i.listed_model()));
            let after = (
                inventory.software_version.as_deref(),
                inventory.listed_model(),
            );
            if let Some(event) = Event::inventory_changed(endpoint.as_str(), before, after, at) {
                s.emit(enterprise, &event, None);
            }
        }
        let stored = match read {
            InventoryRead::Read(inventory) => Stored {
                attempted_at: at,
                read: Some((at, inventory.clone())),
                failure: None,
            },
            InventoryRead::Failed(failure) => Stored {
                attempted_at: at,
                read: last_read,
                failure: Some(failure.clone()),
            },
        };
        s.inventories.insert(key, stored);
        Ok(())
    }

    async fn inventory(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
    ) -> Result<Option<EndpointInventory>> {
        self.record(enterprise, endpoint)
    }

    async fn inventory_page(
        &self,
        enterprise: &EnterpriseId,
        filter: &InventoryFilter,
        after: Option<EndpointId>,
        limit: usize,
    ) -> Result<InventoryPage> {
        let mut ids: Vec<EndpointId> = {
            let s = self.lock()?;
            s.inventories
                .keys()
                .filter(|(e, id)| e == enterprise && after.as_ref().is_none_or(|a| id > a))
                .map(|(_, id)| id.clone())
                .collect()
        };
        ids.sort();
        let mut records = Vec::new();
        for id in ids {
            let Some(record) = self.record(enterprise, &id)? else {
                continue;
            };
            let inventory = record.inventory.as_ref();
            let keep = filter
                .software_version
                .as_ref()
                .is_none_or(|v| inventory.and_then(|i| i.software_version.as_ref()) == Some(v))
                && filter
                    .model
                    .as_deref()
                    .is_none_or(|m| inventory.and_then(Inventory::listed_model) == Some(m))
                && filter
                    .listener
                    .as_ref()
                    .is_none_or(|l| record.listener_service_id.as_ref() == Some(l));
            if keep {
                records.push(record);
            }
            if records.len() > limit {
                break;
            }
        }
        Ok(InventoryPage::of(records, limit))
    }

    async fn inventories(
        &self,
        enterprise: &EnterpriseId,
        endpoints: &[EndpointId],
    ) -> Result<Vec<EndpointInventory>> {
        let mut found = Vec::new();
        for id in endpoints {
            found.extend(self.record(enterprise, id)?);
        }
        Ok(found)
    }

    async fn inventory_attempts(
        &self,
        enterprise: &EnterpriseId,
        endpoints: &[EndpointId],
    ) -> Result<Vec<(EndpointId, i64)>> {
        let s = self.lock()?;
        Ok(endpoints
            .iter()
            .filter_map(|id| {
                s.inventories
                    .get(&(enterprise.clone(), id.clone()))
                    .map(|r| (id.clone(), r.attempted_at))
            })
            .collect())
    }
}

//! The one place that knows which writes change `GET /api/endpoints/status`: the store's
//! endpoint and status writes, each followed, once committed, by dropping the enterprise's
//! status snapshot here and on the other instances ([`StatusSnapshots::invalidate`]).
//!
//! The use cases write through this instead of the store, so none of them has to remember to
//! invalidate: an endpoint created or deleted adds or removes a status; a CSV upload may create;
//! a command or a poll observes statuses. Replacing or patching an endpoint does not change its
//! status, and reads pass straight through.

use super::snapshots::StatusSnapshots;
use async_trait::async_trait;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::endpoint::page::{EndpointPage, ListPosition};
use roomlink_domain::error::Result;
use roomlink_domain::ids::{EndpointId, EnterpriseId};
use roomlink_domain::ports::{
    CommandContext, CsvApply, EndpointChange, EndpointStore, StatusStore,
};
use roomlink_domain::rules::csv::CsvReport;
use roomlink_domain::status::EndpointStatus;
use std::sync::Arc;

pub struct StatusWrites {
    pub endpoints: Arc<dyn EndpointStore>,
    pub statuses: Arc<dyn StatusStore>,
    pub snapshots: Arc<StatusSnapshots>,
}

impl StatusWrites {
    /// Passes `result` through, dropping the snapshot if the write committed.
    fn committed<T>(&self, enterprise: &EnterpriseId, result: Result<T>) -> Result<T> {
        if result.is_ok() {
            self.snapshots.invalidate(enterprise);
        }
        result
    }
}

#[async_trait]
impl EndpointStore for StatusWrites {
    async fn endpoint_list_version(&self, enterprise: &EnterpriseId) -> Result<Option<u64>> {
        self.endpoints.endpoint_list_version(enterprise).await
    }

    async fn command_context(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
    ) -> Result<Option<CommandContext>> {
        self.endpoints.command_context(enterprise, id).await
    }

    async fn list_endpoints(&self, enterprise: &EnterpriseId) -> Result<Vec<Endpoint>> {
        self.endpoints.list_endpoints(enterprise).await
    }

    async fn endpoint_page(
        &self,
        enterprise: &EnterpriseId,
        after: Option<ListPosition>,
        limit: usize,
    ) -> Result<EndpointPage> {
        self.endpoints.endpoint_page(enterprise, after, limit).await
    }

    async fn endpoint(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
    ) -> Result<Option<Endpoint>> {
        self.endpoints.endpoint(enterprise, id).await
    }

    async fn insert_endpoint(&self, endpoint: &Endpoint, audit: &AuditEntry) -> Result<()> {
        let result = self.endpoints.insert_endpoint(endpoint, audit).await;
        self.committed(endpoint.enterprise_id(), result)
    }

    async fn update_endpoint(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
        change: EndpointChange,
        audit: &AuditEntry,
    ) -> Result<Endpoint> {
        // Its status stays what it was.
        self.endpoints
            .update_endpoint(enterprise, id, change, audit)
            .await
    }

    async fn delete_endpoint(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
        audit: &AuditEntry,
    ) -> Result<bool> {
        let result = self.endpoints.delete_endpoint(enterprise, id, audit).await;
        self.committed(enterprise, result)
    }

    async fn bulk_put(
        &self,
        enterprise: &EnterpriseId,
        ids: Vec<EndpointId>,
        apply: CsvApply,
        audit: &AuditEntry,
    ) -> Result<CsvReport> {
        let result = self.endpoints.bulk_put(enterprise, ids, apply, audit).await;
        self.committed(enterprise, result)
    }
}

#[async_trait]
impl StatusStore for StatusWrites {
    async fn save_statuses(
        &self,
        enterprise: &EnterpriseId,
        statuses: &[EndpointStatus],
    ) -> Result<()> {
        let result = self.statuses.save_statuses(enterprise, statuses).await;
        self.committed(enterprise, result)
    }

    async fn save_command_status(
        &self,
        enterprise: &EnterpriseId,
        status: &EndpointStatus,
        audit: &AuditEntry,
    ) -> Result<()> {
        let result = self
            .statuses
            .save_command_status(enterprise, status, audit)
            .await;
        self.committed(enterprise, result)
    }

    async fn statuses(&self, enterprise: &EnterpriseId) -> Result<Vec<EndpointStatus>> {
        self.statuses.statuses(enterprise).await
    }

    async fn status(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
    ) -> Result<Option<EndpointStatus>> {
        self.statuses.status(enterprise, endpoint).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roomlink_domain::audit::audit_for;
    use roomlink_domain::enterprise::Enterprise;
    use roomlink_domain::ports::EnterpriseStore;
    use roomlink_domain::rules::put;
    use roomlink_memory_store::MemoryStore;

    #[tokio::test]
    async fn committed_status_changing_writes_drop_the_snapshot_and_nothing_else_does() {
        let store = Arc::new(MemoryStore::new());
        let ent = Enterprise {
            id: EnterpriseId::from_trusted("e".repeat(24)),
            name: "acme".into(),
            endpoint_limit: 10,
            public_key: None,
        };
        store.create_enterprise(&ent).await.unwrap();
        let snapshots = Arc::new(StatusSnapshots::default());
        let writes = StatusWrites {
            endpoints: store.clone(),
            statuses: store.clone(),
            snapshots: snapshots.clone(),
        };
        let fresh = || {
            snapshots.put(&ent.id, snapshots.generation(), 0, Arc::from("[]"));
        };
        let dropped = || snapshots.get(&ent.id, 1).is_none();
        let draft = put::insert(serde_json::json!({"name": "r"}).as_object().unwrap()).unwrap();
        let e = Endpoint::new(
            EndpointId::from_trusted("1".repeat(24)),
            ent.id.clone(),
            draft.profile,
            None,
        )
        .unwrap();

        fresh();
        writes
            .insert_endpoint(&e, &audit_for(&ent.id))
            .await
            .unwrap();
        assert!(dropped(), "insert");
        fresh();
        let status = EndpointStatus {
            endpoint_id: e.id().clone(),
            call_active: true,
            reserved: false,
            dialing: false,
            microphone_muted: false,
            last_dial_timestamp_millis: None,
            timestamp: 1,
        };
        writes
            .save_command_status(&ent.id, &status, &audit_for(&ent.id))
            .await
            .unwrap();
        assert!(dropped(), "command status");
        fresh();
        writes.endpoint(&ent.id, e.id()).await.unwrap();
        writes.statuses(&ent.id).await.unwrap();
        assert!(!dropped(), "reads keep it");
        let unknown = EndpointId::from_trusted("2".repeat(24));
        assert!(
            writes
                .save_command_status(
                    &ent.id,
                    &EndpointStatus {
                        endpoint_id: unknown,
                        ..status.clone()
                    },
                    &audit_for(&ent.id)
                )
                .await
                .is_err()
        );
        assert!(!dropped(), "a failed write keeps it");
        writes
            .delete_endpoint(&ent.id, e.id(), &audit_for(&ent.id))
            .await
            .unwrap();
        assert!(dropped(), "delete");
    }
}

//! InventoryStore: each endpoint's last inventory read and last attempt, one row per endpoint.

use crate::DbStore;
use crate::dialect::{Dialect, IN_CHUNK};
use crate::schema::{endpoint_inventories as inv, endpoints};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel_async::RunQueryDsl;
use roomlink_domain::Result;
use roomlink_domain::error::Error;
use roomlink_domain::ids::{EndpointId, EnterpriseId, ListenerServiceId};
use roomlink_domain::inventory::{
    EndpointInventory, Inventory, InventoryFilter, InventoryPage, InventoryRead, ReadFailure,
};
use roomlink_domain::ports::InventoryStore;
use roomlink_domain::webhook::Event;

/// A read replaces the inventory and clears the failure. `INSERT … SELECT` from the endpoint
/// writes nothing for an endpoint that is not the enterprise's (or was deleted meanwhile).
/// Parameters: 1 endpoint, 2 enterprise, 3 at, 4 inventory JSON, 5 model, 6 software version.
fn read_sql(param: impl Fn(usize) -> String) -> String {
    let (id, ent, at, body, model, version) =
        (param(1), param(2), param(3), param(4), param(5), param(6));
    format!(
        "INSERT INTO endpoint_inventories (endpoint_id, enterprise_id, attempted_ms, read_ms, \
         inventory, model, software_version, failure_name, failure_message) \
         SELECT id, enterprise_id, {at}, {at}, {body}, {model}, {version}, \
         CAST(NULL AS TEXT), CAST(NULL AS TEXT) FROM endpoints \
         WHERE id = {id} AND enterprise_id = {ent} \
         ON CONFLICT (endpoint_id) DO UPDATE SET attempted_ms = excluded.attempted_ms, \
         read_ms = excluded.read_ms, inventory = excluded.inventory, model = excluded.model, \
         software_version = excluded.software_version, failure_name = NULL, \
         failure_message = NULL"
    )
}

/// A failure keeps the last good read. Parameters: 1 endpoint, 2 enterprise, 3 at, 4 the
/// error's name, 5 its message.
fn failure_sql(param: impl Fn(usize) -> String) -> String {
    let (id, ent, at, name, message) = (param(1), param(2), param(3), param(4), param(5));
    format!(
        "INSERT INTO endpoint_inventories (endpoint_id, enterprise_id, attempted_ms, read_ms, \
         inventory, model, software_version, failure_name, failure_message) \
         SELECT id, enterprise_id, {at}, CAST(NULL AS BIGINT), CAST(NULL AS TEXT), \
         CAST(NULL AS TEXT), CAST(NULL AS TEXT), {name}, {message} FROM endpoints \
         WHERE id = {id} AND enterprise_id = {ent} \
         ON CONFLICT (endpoint_id) DO UPDATE SET attempted_ms = excluded.attempted_ms, \
         failure_name = excluded.failure_name, failure_message = excluded.failure_message"
    )
}

type Row = (
    String,
    i64,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// The columns a record is made of, with the endpoint's listener.
macro_rules! record_columns {
    () => {
        (
            inv::endpoint_id,
            inv::attempted_ms,
            inv::read_ms,
            inv::inventory,
            inv::failure_name,
            inv::failure_message,
            endpoints::listener_service_id,
        )
    };
}

fn record(row: Row) -> Result<EndpointInventory> {
    let (id, attempted_at, read_at, body, failure_name, failure_message, listener) = row;
    let inventory = body
        .map(|text| serde_json::from_str::<Inventory>(&text))
        .transpose()
        .map_err(|e| Error::internal(format!("a stored inventory is not readable: {e}")))?;
    Ok(EndpointInventory {
        endpoint_id: EndpointId::from_trusted(id),
        listener_service_id: listener.map(ListenerServiceId::from_trusted),
        read_at,
        attempted_at,
        inventory,
        last_failure: failure_name.map(|error_name| ReadFailure {
            error_name,
            error_message: failure_message.unwrap_or_default(),
        }),
    })
}

#[async_trait]
impl InventoryStore for DbStore {
    async fn save_inventory(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
        at: i64,
        read: &InventoryRead,
    ) -> Result<()> {
        match read {
            InventoryRead::Read(inventory) => {
                let body = serde_json::to_string(inventory).map_err(Error::internal)?;
                let after = (
                    inventory.software_version.as_deref(),
                    inventory.listed_model(),
                );
                db_tx!(self, |c| {
                    // What the last good read said, for the `inventory.changed` event.
                    let before: Option<(Option<String>, Option<String>)> = inv::table
                        .filter(inv::endpoint_id.eq(endpoint.as_str()))
                        .filter(inv::enterprise_id.eq(enterprise.as_str()))
                        .filter(inv::read_ms.is_not_null())
                        .select((inv::software_version, inv::model))
                        .first(c)
                        .await
                        .optional()?;
                    let before = before.as_ref().map(|(v, m)| (v.as_deref(), m.as_deref()));
                    if let Some(event) =
                        Event::inventory_changed(endpoint.as_str(), before, after, at)
                    {
                        emit_event!(&mut *c, enterprise.as_str(), &event, None)?;
                    }
                    diesel::sql_query(read_sql(|n| c.param(n)))
                        .bind::<Text, _>(endpoint.as_str())
                        .bind::<Text, _>(enterprise.as_str())
                        .bind::<BigInt, _>(at)
                        .bind::<Text, _>(&body)
                        .bind::<Nullable<Text>, _>(inventory.listed_model())
                        .bind::<Nullable<Text>, _>(inventory.software_version.as_deref())
                        .execute(c)
                        .await?;
                    Ok(())
                })
            }
            InventoryRead::Failed(failure) => db_run!(self, |c| {
                diesel::sql_query(failure_sql(|n| c.param(n)))
                    .bind::<Text, _>(endpoint.as_str())
                    .bind::<Text, _>(enterprise.as_str())
                    .bind::<BigInt, _>(at)
                    .bind::<Text, _>(&failure.error_name)
                    .bind::<Text, _>(&failure.error_message)
                    .execute(c)
                    .await?;
                Ok(())
            }),
        }
    }

    async fn inventory(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
    ) -> Result<Option<EndpointInventory>> {
        let row: Option<Row> = db_run!(self, |c| {
            let row = inv::table
                .inner_join(endpoints::table)
                .filter(inv::enterprise_id.eq(enterprise.as_str()))
                .filter(inv::endpoint_id.eq(endpoint.as_str()))
                .select(record_columns!())
                .first(c)
                .await
                .optional()?;
            Ok(row)
        })?;
        row.map(record).transpose()
    }

    async fn inventory_page(
        &self,
        enterprise: &EnterpriseId,
        filter: &InventoryFilter,
        after: Option<EndpointId>,
        limit: usize,
    ) -> Result<InventoryPage> {
        let rows: Vec<Row> = db_run!(self, |c| {
            let mut query = inv::table
                .inner_join(endpoints::table)
                .filter(inv::enterprise_id.eq(enterprise.as_str()))
                .select(record_columns!())
                .order(inv::endpoint_id)
                .limit(limit as i64 + 1)
                .into_boxed();
            if let Some(after) = &after {
                query = query.filter(inv::endpoint_id.gt(after.as_str()));
            }
            if let Some(version) = &filter.software_version {
                query = query.filter(inv::software_version.eq(version));
            }
            if let Some(model) = &filter.model {
                query = query.filter(inv::model.eq(model));
            }
            if let Some(listener) = &filter.listener {
                query = query.filter(endpoints::listener_service_id.eq(listener.as_str()));
            }
            Ok(query.load(c).await?)
        })?;
        let records = rows.into_iter().map(record).collect::<Result<Vec<_>>>()?;
        Ok(InventoryPage::of(records, limit))
    }

    async fn inventories(
        &self,
        enterprise: &EnterpriseId,
        endpoints: &[EndpointId],
    ) -> Result<Vec<EndpointInventory>> {
        let ids: Vec<&str> = endpoints.iter().map(EndpointId::as_str).collect();
        let mut found = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(IN_CHUNK) {
            let rows: Vec<Row> = db_run!(self, |c| {
                let rows = inv::table
                    .inner_join(endpoints::table)
                    .filter(inv::enterprise_id.eq(enterprise.as_str()))
                    .filter(inv::endpoint_id.eq_any(chunk))
                    .select(record_columns!())
                    .load(c)
                    .await?;
                Ok(rows)
            })?;
            for row in rows {
                found.push(record(row)?);
            }
        }
        Ok(found)
    }

    async fn inventory_attempts(
        &self,
        enterprise: &EnterpriseId,
        endpoints: &[EndpointId],
    ) -> Result<Vec<(EndpointId, i64)>> {
        let ids: Vec<&str> = endpoints.iter().map(EndpointId::as_str).collect();
        let mut found = Vec::with_capacity(ids.len());
        for chunk in ids.chunks(IN_CHUNK) {
            let rows: Vec<(String, i64)> = db_run!(self, |c| {
                let rows = inv::table
                    .filter(inv::enterprise_id.eq(enterprise.as_str()))
                    .filter(inv::endpoint_id.eq_any(chunk))
                    .select((inv::endpoint_id, inv::attempted_ms))
                    .load(c)
                    .await?;
                Ok(rows)
            })?;
            found.extend(
                rows.into_iter()
                    .map(|(id, at)| (EndpointId::from_trusted(id), at)),
            );
        }
        Ok(found)
    }
}

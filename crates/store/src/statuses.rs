//! StatusStore: the last observed status of each endpoint.

use crate::DbStore;
use crate::dialect::{Dialect, IN_CHUNK};
use crate::error::DbError;
use crate::models::{NewAuditRow, StatusRow};
use crate::schema::{endpoint_statuses, endpoints};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::{DatabaseErrorKind, Error as DieselError};
use diesel_async::RunQueryDsl;
use roomlink_domain::Result;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::ids::{EndpointId, EnterpriseId};
use roomlink_domain::ports::StatusStore;
use roomlink_domain::status::EndpointStatus;
use roomlink_domain::usage::JoinSource;
use std::collections::{HashMap, HashSet};

#[async_trait]
impl StatusStore for DbStore {
    async fn save_statuses(
        &self,
        enterprise: &EnterpriseId,
        statuses: &[EndpointStatus],
    ) -> Result<()> {
        // One row per endpoint (the last status wins): an upsert may not touch a row twice.
        let mut index = HashMap::new();
        let mut rows: Vec<StatusRow> = Vec::with_capacity(statuses.len());
        for s in statuses {
            let row = StatusRow::new(enterprise, s);
            match index.get(&row.endpoint_id) {
                Some(&i) => rows[i] = row,
                None => {
                    index.insert(row.endpoint_id.clone(), rows.len());
                    rows.push(row);
                }
            }
        }
        let ent = enterprise.as_str();
        db_tx!(self, |c| {
            // Only endpoints of this enterprise get a status.
            let ids: Vec<&str> = rows.iter().map(|r| r.endpoint_id.as_str()).collect();
            let mut mine = HashSet::new();
            for chunk in ids.chunks(IN_CHUNK) {
                let found: Vec<String> = endpoints::table
                    .filter(endpoints::enterprise_id.eq(ent))
                    .filter(endpoints::id.eq_any(chunk))
                    .select(endpoints::id)
                    .load(c)
                    .await?;
                mine.extend(found);
            }
            let rows: Vec<&StatusRow> = rows
                .iter()
                .filter(|r| mine.contains(&r.endpoint_id))
                .collect();
            for chunk in rows.chunks(c.max_binds() / StatusRow::COLUMNS) {
                let chunk: Vec<StatusRow> = chunk.iter().map(|r| (*r).clone()).collect();
                c.upsert_statuses(&chunk).await?;
                follow_sessions!(c, ent, &chunk)?;
            }
            Ok(())
        })
    }

    async fn save_command_status(
        &self,
        enterprise: &EnterpriseId,
        status: &EndpointStatus,
        audit: &AuditEntry,
    ) -> Result<()> {
        let row = StatusRow::new(enterprise, status);
        let entry = NewAuditRow::new(audit);
        let join = JoinSource::of_command(audit);
        db_run!(self, |c| {
            // The endpoint was read by the command; one deleted since fails the foreign key.
            let follow = c
                .write_command_status(&row, &entry, join)
                .await
                .map_err(|e| match e {
                    DieselError::DatabaseError(DatabaseErrorKind::ForeignKeyViolation, _) => {
                        DbError::Domain(status.endpoint_id.not_found())
                    }
                    e => DbError::Query(e),
                })?;
            // After the status's commit, on its own. The command and its audit entry stand
            // either way: the sessions follow the state, so the room's next observation makes
            // good what this could not.
            if follow
                && let Err(error) =
                    follow_sessions!(c, enterprise.as_str(), std::slice::from_ref(&row))
            {
                tracing::warn!(
                    endpoint = %status.endpoint_id.as_str(),
                    %error,
                    "call session not updated after a command; the next status poll will"
                );
            }
            Ok(())
        })
    }

    async fn statuses(&self, enterprise: &EnterpriseId) -> Result<Vec<EndpointStatus>> {
        db_run!(self, |c| {
            let rows: Vec<StatusRow> = endpoint_statuses::table
                .inner_join(endpoints::table)
                .filter(endpoints::enterprise_id.eq(enterprise.as_str()))
                .filter(endpoint_statuses::enterprise_id.eq(enterprise.as_str()))
                .order(endpoints::seq)
                .select(StatusRow::as_select())
                .load(c)
                .await?;
            Ok(rows.into_iter().map(StatusRow::into_domain).collect())
        })
    }

    async fn status(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
    ) -> Result<Option<EndpointStatus>> {
        db_run!(self, |c| {
            let row: Option<StatusRow> = endpoint_statuses::table
                .filter(endpoint_statuses::enterprise_id.eq(enterprise.as_str()))
                .filter(endpoint_statuses::endpoint_id.eq(endpoint.as_str()))
                .select(StatusRow::as_select())
                .first(c)
                .await
                .optional()?;
            Ok(row.map(StatusRow::into_domain))
        })
    }
}

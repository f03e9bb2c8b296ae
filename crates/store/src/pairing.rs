//! PairingStore: pairing codes and the PairedStatus lifecycle.

use crate::DbStore;
use crate::dialect::Dialect;
use crate::models::{PairedRow, PairingCodeRow};
use crate::schema::{paired_statuses, pairing_codes};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use roomlink_domain::Result;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::ids::{EndpointId, EnterpriseId, PairingCodeId};
use roomlink_domain::pairing::{PAIRED_STATUS_TTL_MS, PairedStatus, PairingCode};
use roomlink_domain::ports::PairingStore;
use roomlink_domain::token::AccessToken;

/// Heartbeats after this are live at `now` (a status lives until heartbeat + TTL, exclusive).
fn live_after(now: i64) -> i64 {
    now.saturating_sub(PAIRED_STATUS_TTL_MS)
}

#[async_trait]
impl PairingStore for DbStore {
    async fn current_pairing_code(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
    ) -> Result<Option<PairingCode>> {
        db_run!(self, |c| {
            let row: Option<PairingCodeRow> = pairing_codes::table
                .filter(pairing_codes::enterprise_id.eq(enterprise.as_str()))
                .filter(pairing_codes::endpoint_id.eq(endpoint.as_str()))
                .select(PairingCodeRow::as_select())
                .first(c)
                .await
                .optional()?;
            Ok(row.map(PairingCodeRow::into_domain))
        })
    }

    async fn pairing_code(
        &self,
        enterprise: &EnterpriseId,
        id: &PairingCodeId,
    ) -> Result<Option<PairingCode>> {
        db_run!(self, |c| {
            let row: Option<PairingCodeRow> = pairing_codes::table
                .filter(pairing_codes::enterprise_id.eq(enterprise.as_str()))
                .filter(pairing_codes::id.eq(id.as_str()))
                .select(PairingCodeRow::as_select())
                .first(c)
                .await
                .optional()?;
            Ok(row.map(PairingCodeRow::into_domain))
        })
    }

    async fn pairing_code_by_code(&self, code: &str) -> Result<Option<PairingCode>> {
        db_run!(self, |c| {
            let row: Option<PairingCodeRow> = pairing_codes::table
                .filter(pairing_codes::code.eq(code))
                .select(PairingCodeRow::as_select())
                .first(c)
                .await
                .optional()?;
            Ok(row.map(PairingCodeRow::into_domain))
        })
    }

    async fn save_pairing_code(&self, code: &PairingCode, audit: &AuditEntry) -> Result<()> {
        let row = PairingCodeRow::new(code);
        db_tx!(self, |c| {
            diesel::delete(
                pairing_codes::table
                    .filter(pairing_codes::enterprise_id.eq(&row.enterprise_id))
                    .filter(pairing_codes::endpoint_id.eq(&row.endpoint_id)),
            )
            .execute(c)
            .await?;
            // A code taken by another endpoint violates UNIQUE (code): Internal, as in the
            // reference adapter (the generator's odds make it a bug, not a client error).
            diesel::insert_into(pairing_codes::table)
                .values(&row)
                .execute(c)
                .await?;
            append_audit!(c, audit)?;
            Ok(())
        })
    }

    async fn touch_paired(&self, token: &AccessToken, now: i64) -> Result<Option<PairedStatus>> {
        db_tx!(self, |c| {
            let previous = c
                .lock_paired(token.id().as_str())
                .await?
                .map(PairedRow::into_domain)
                .transpose()?;
            match PairedStatus::on_use(previous, token, now) {
                Some(next) => {
                    let row = PairedRow::new(&next);
                    // An upsert: two first uses at once both end in one row.
                    diesel::insert_into(paired_statuses::table)
                        .values(&row)
                        .on_conflict(paired_statuses::token_id)
                        .do_update()
                        .set(&row)
                        .execute(c)
                        .await?;
                    Ok(Some(next))
                }
                None => {
                    diesel::delete(paired_statuses::table.find(token.id().as_str()))
                        .execute(c)
                        .await?;
                    Ok(None)
                }
            }
        })
    }

    async fn paired(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
        now: i64,
    ) -> Result<Vec<PairedStatus>> {
        db_run!(self, |c| {
            let rows: Vec<PairedRow> = paired_statuses::table
                .filter(paired_statuses::enterprise_id.eq(enterprise.as_str()))
                .filter(paired_statuses::endpoint_id.eq(endpoint.as_str()))
                .filter(paired_statuses::heartbeat_date.gt(live_after(now)))
                .order((paired_statuses::heartbeat_date, paired_statuses::token_id))
                .select(PairedRow::as_select())
                .load(c)
                .await?;
            Ok(rows
                .into_iter()
                .map(PairedRow::into_domain)
                .collect::<Result<_>>()?)
        })
    }

    async fn purge_expired_paired(&self, now: i64) -> Result<u64> {
        db_run!(self, |c| {
            let n = diesel::delete(
                paired_statuses::table.filter(paired_statuses::heartbeat_date.le(live_after(now))),
            )
            .execute(c)
            .await?;
            Ok(n as u64)
        })
    }
}

//! EndpointStore: the limit check, calendarId uniqueness and the CSV bulk write.
//!
//! The endpoint limit holds under concurrency because every insert counts inside a
//! transaction that first locks the enterprise (`Dialect::lock_enterprise`). calendarIds are
//! unique per enterprise by constraint; its violation becomes `DuplicateCalendarId`.

use crate::DbStore;
use crate::dialect::{Dialect, IN_CHUNK};
use crate::error::{DbError, is_unique_violation};
use crate::models::{EndpointRow, ListenerRow};
use crate::schema::{endpoints, enterprises, listener_services, paired_statuses};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel_async::RunQueryDsl;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::endpoint::page::{EndpointPage, ListPosition};
use roomlink_domain::ids::{EndpointId, EnterpriseId, ListenerServiceId};
use roomlink_domain::ports::{CommandContext, CsvApply, EndpointChange, EndpointStore};
use roomlink_domain::rules::csv::CsvWrite;
use roomlink_domain::rules::csv::{CsvContext, CsvReport};
use roomlink_domain::rules::limit::EndpointLimit;
use roomlink_domain::{Error, Result};
use std::collections::{HashMap, HashSet};

#[async_trait]
impl EndpointStore for DbStore {
    async fn endpoint_list_version(&self, enterprise: &EnterpriseId) -> Result<Option<u64>> {
        db_run!(self, |c| {
            let version: Option<i64> = enterprises::table
                .find(enterprise.as_str())
                .select(enterprises::endpoints_version)
                .first(c)
                .await
                .optional()?;
            // Stored as BIGINT from 0 upwards; only ever incremented.
            Ok(version.map(|v| v.cast_unsigned()))
        })
    }

    async fn command_context(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
    ) -> Result<Option<CommandContext>> {
        db_run!(self, |c| {
            let row: Option<(EndpointRow, Option<String>, Option<ListenerRow>)> = endpoints::table
                .inner_join(enterprises::table.on(enterprises::id.eq(endpoints::enterprise_id)))
                .left_join(
                    listener_services::table.on(listener_services::id
                        .nullable()
                        .eq(endpoints::listener_service_id)
                        .and(listener_services::enterprise_id.eq(endpoints::enterprise_id))),
                )
                .filter(endpoints::enterprise_id.eq(enterprise.as_str()))
                .filter(endpoints::id.eq(id.as_str()))
                .select((
                    EndpointRow::as_select(),
                    enterprises::public_key,
                    // ListenerRow's fields in order (a left join: all null when none).
                    (
                        listener_services::id,
                        listener_services::enterprise_id,
                        listener_services::name,
                        listener_services::base_url,
                        listener_services::asset_id,
                        listener_services::external_id,
                        listener_services::location,
                        listener_services::point_of_contact,
                        listener_services::secret_key_id,
                        listener_services::secret_ciphertext,
                        listener_services::connection,
                    )
                        .nullable(),
                ))
                .first(c)
                .await
                .optional()?;
            let Some((endpoint, public_key, listener)) = row else {
                return Ok(None);
            };
            Ok(Some(CommandContext {
                endpoint: endpoint.into_domain()?,
                listener: listener.map(ListenerRow::into_domain).transpose()?,
                enterprise_public_key: public_key,
            }))
        })
    }

    async fn list_endpoints(&self, enterprise: &EnterpriseId) -> Result<Vec<Endpoint>> {
        db_run!(self, |c| {
            let rows: Vec<EndpointRow> = endpoints::table
                .filter(endpoints::enterprise_id.eq(enterprise.as_str()))
                .order(endpoints::seq)
                .select(EndpointRow::as_select())
                .load(c)
                .await?;
            Ok(rows
                .into_iter()
                .map(EndpointRow::into_domain)
                .collect::<Result<_>>()?)
        })
    }

    async fn endpoint_page(
        &self,
        enterprise: &EnterpriseId,
        after: Option<ListPosition>,
        limit: usize,
    ) -> Result<EndpointPage> {
        let after = after.map_or(i64::MIN, |p| p.0);
        // One row more than asked tells whether another page follows.
        let fetch = i64::try_from(limit.saturating_add(1)).unwrap_or(i64::MAX);
        db_run!(self, |c| {
            let mut rows: Vec<(i64, EndpointRow)> = endpoints::table
                .filter(endpoints::enterprise_id.eq(enterprise.as_str()))
                .filter(endpoints::seq.gt(after))
                .order(endpoints::seq)
                .limit(fetch)
                .select((endpoints::seq, EndpointRow::as_select()))
                .load(c)
                .await?;
            let more = rows.len() > limit;
            rows.truncate(limit);
            let next = if more {
                rows.last().map(|(seq, _)| ListPosition(*seq))
            } else {
                None
            };
            let endpoints = rows
                .into_iter()
                .map(|(_, row)| row.into_domain())
                .collect::<Result<_>>()?;
            Ok(EndpointPage { endpoints, next })
        })
    }

    async fn endpoint(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
    ) -> Result<Option<Endpoint>> {
        db_run!(self, |c| {
            let row: Option<EndpointRow> = endpoints::table
                .filter(endpoints::enterprise_id.eq(enterprise.as_str()))
                .filter(endpoints::id.eq(id.as_str()))
                .select(EndpointRow::as_select())
                .first(c)
                .await
                .optional()?;
            Ok(row.map(EndpointRow::into_domain).transpose()?)
        })
    }

    async fn insert_endpoint(&self, endpoint: &Endpoint, audit: &AuditEntry) -> Result<()> {
        let enterprise = endpoint.enterprise_id().as_str();
        let row = EndpointRow::new(endpoint);
        db_tx!(self, |c| {
            let limit = c
                .lock_enterprise(enterprise)
                .await?
                .ok_or_else(|| no_enterprise(enterprise))?;
            let count: i64 = endpoints::table
                .filter(endpoints::enterprise_id.eq(enterprise))
                .count()
                .get_result(c)
                .await?;
            EndpointLimit::from_stored(limit).admit(stored_count(count), 1)?;
            diesel::insert_into(endpoints::table)
                .values(&row)
                .execute(c)
                .await
                .map_err(|e| calendar_taken(e, || calendar_of(endpoint)))?;
            bump_list_version!(c, enterprise)?;
            append_audit!(c, audit)?;
            Ok(())
        })
    }

    async fn update_endpoint(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
        change: EndpointChange,
        audit: &AuditEntry,
    ) -> Result<Endpoint> {
        db_tx!(self, |c| {
            let current = c
                .lock_endpoint(enterprise.as_str(), id.as_str())
                .await?
                .ok_or_else(|| id.not_found())?
                .into_domain()?;
            let updated = change(current)?;
            if updated.id() != id || updated.enterprise_id() != enterprise {
                return Err(
                    Error::internal("an endpoint change altered the endpoint's identity").into(),
                );
            }
            diesel::update(
                endpoints::table
                    .filter(endpoints::enterprise_id.eq(enterprise.as_str()))
                    .filter(endpoints::id.eq(id.as_str())),
            )
            .set(&EndpointRow::new(&updated))
            .execute(c)
            .await
            .map_err(|e| calendar_taken(e, || calendar_of(&updated)))?;
            bump_list_version!(c, enterprise.as_str())?;
            append_audit!(c, audit)?;
            Ok(updated)
        })
    }

    async fn delete_endpoint(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
        audit: &AuditEntry,
    ) -> Result<bool> {
        db_tx!(self, |c| {
            let deleted = diesel::delete(
                endpoints::table
                    .filter(endpoints::enterprise_id.eq(enterprise.as_str()))
                    .filter(endpoints::id.eq(id.as_str())),
            )
            .execute(c)
            .await?;
            if deleted == 0 {
                return Ok(false);
            }
            // Its status and pairing code go by ON DELETE CASCADE; paired statuses have no
            // foreign key (see the migration).
            diesel::delete(
                paired_statuses::table
                    .filter(paired_statuses::enterprise_id.eq(enterprise.as_str()))
                    .filter(paired_statuses::endpoint_id.eq(id.as_str())),
            )
            .execute(c)
            .await?;
            bump_list_version!(c, enterprise.as_str())?;
            append_audit!(c, audit)?;
            Ok(true)
        })
    }

    async fn bulk_put(
        &self,
        enterprise: &EnterpriseId,
        ids: Vec<EndpointId>,
        apply: CsvApply,
        audit: &AuditEntry,
    ) -> Result<CsvReport> {
        let ent = enterprise.as_str();
        let ids: Vec<&str> = ids.iter().map(EndpointId::as_str).collect();
        db_tx!(self, |c| {
            // Read the context, with the enterprise locked so that it stays true until commit.
            let limit = c
                .lock_enterprise(ent)
                .await?
                .ok_or_else(|| no_enterprise(ent))?;
            let limit = EndpointLimit::from_stored(limit);
            let count: i64 = endpoints::table
                .filter(endpoints::enterprise_id.eq(ent))
                .count()
                .get_result(c)
                .await?;
            let count = stored_count(count);
            let mut existing = HashMap::new();
            for chunk in ids.chunks(IN_CHUNK) {
                // Locked: an endpoint deleted meanwhile must not come back as an update.
                for row in c.lock_endpoints(ent, chunk).await? {
                    let e = row.into_domain()?;
                    existing.insert(e.id().clone(), e);
                }
            }
            let calendars: Vec<(String, String)> = endpoints::table
                .filter(endpoints::enterprise_id.eq(ent))
                .filter(endpoints::calendar_id.is_not_null())
                .select((endpoints::calendar_id.assume_not_null(), endpoints::id))
                .load(c)
                .await?;
            let listeners: Vec<String> = listener_services::table
                .filter(listener_services::enterprise_id.eq(ent))
                .select(listener_services::id)
                .load(c)
                .await?;
            let ctx = CsvContext {
                existing,
                calendar_owners: calendars
                    .iter()
                    .map(|(cal, id)| (cal.clone(), EndpointId::from_trusted(id.clone())))
                    .collect(),
                listeners: listeners
                    .into_iter()
                    .map(ListenerServiceId::from_trusted)
                    .collect(),
                capacity: limit.room(count),
            };
            let mut write = apply(&ctx)?;
            write.check_within(enterprise, &ctx, limit, count)?;
            let report = std::mem::take(&mut write.report);
            let rows = CsvRows::new(write, &calendars);

            // Updated endpoints give up the calendarIds they are leaving first, so that no
            // statement sees a duplicate that the finished upload would not have.
            for chunk in rows.released.chunks(IN_CHUNK) {
                diesel::update(
                    endpoints::table
                        .filter(endpoints::enterprise_id.eq(ent))
                        .filter(endpoints::id.eq_any(chunk)),
                )
                .set(endpoints::calendar_id.eq(None::<String>))
                .execute(c)
                .await?;
            }
            if !rows.updates.is_empty() {
                c.upsert_endpoints(&rows.updates)
                    .await
                    .map_err(|e| calendar_taken(e, || rows.duplicate_calendar(&calendars)))?;
            }
            if !rows.inserts.is_empty() {
                c.insert_endpoints(&rows.inserts)
                    .await
                    .map_err(|e| calendar_taken(e, || rows.duplicate_calendar(&calendars)))?;
            }
            if !(rows.inserts.is_empty() && rows.updates.is_empty()) {
                bump_list_version!(c, ent)?;
            }
            append_audit!(c, &audit.clone().detail(report.audit_detail()))?;
            Ok(report)
        })
    }
}

/// The rows of one CSV upload, ready to write.
struct CsvRows {
    inserts: Vec<EndpointRow>,
    /// One per endpoint.
    updates: Vec<EndpointRow>,
    /// Updated endpoints whose stored calendarId changes.
    released: Vec<String>,
}

impl CsvRows {
    /// `stored`: the enterprise's (calendarId, endpoint id) pairs before the upload.
    fn new(write: CsvWrite, stored: &[(String, String)]) -> CsvRows {
        let stored: HashMap<&str, &str> = stored
            .iter()
            .map(|(cal, id)| (id.as_str(), cal.as_str()))
            .collect();
        // The plan gives one update per endpoint (a later row builds on an earlier one).
        let updates: Vec<EndpointRow> = write.updates.iter().map(EndpointRow::new).collect();
        let released = updates
            .iter()
            .filter(|r| {
                stored
                    .get(r.id.as_str())
                    .is_some_and(|cal| r.calendar_id.as_deref() != Some(*cal))
            })
            .map(|r| r.id.clone())
            .collect();
        CsvRows {
            inserts: write.inserts.iter().map(EndpointRow::new).collect(),
            updates,
            released,
        }
    }

    /// A calendarId two endpoints would share once the upload is written.
    fn duplicate_calendar(&self, stored: &[(String, String)]) -> Option<String> {
        let mut owner: HashMap<&str, Option<&str>> = stored
            .iter()
            .map(|(cal, id)| (id.as_str(), Some(cal.as_str())))
            .collect();
        for r in self.updates.iter().chain(&self.inserts) {
            owner.insert(r.id.as_str(), r.calendar_id.as_deref());
        }
        let mut seen = HashSet::new();
        owner
            .into_values()
            .flatten()
            .find(|cal| !seen.insert(*cal))
            .map(str::to_owned)
    }
}

fn calendar_of(endpoint: &Endpoint) -> Option<String> {
    endpoint
        .profile()
        .calendar_id()
        .map(|c| c.as_str().to_owned())
}

/// `DuplicateCalendarId` if `e` violates the per-enterprise uniqueness of calendarIds.
fn calendar_taken(e: DieselError, calendar: impl FnOnce() -> Option<String>) -> DbError {
    if is_unique_violation(
        &e,
        "endpoints_enterprise_calendar_key",
        "endpoints",
        "calendar_id",
    ) {
        Error::duplicate_calendar_id(&calendar().unwrap_or_default()).into()
    } else {
        e.into()
    }
}

/// A `COUNT(*)` as the limit rule takes it.
fn stored_count(count: i64) -> usize {
    usize::try_from(count).unwrap_or(usize::MAX)
}

fn no_enterprise(id: &str) -> Error {
    Error::internal(format!("no enterprise {id}"))
}

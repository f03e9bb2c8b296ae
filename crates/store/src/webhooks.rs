//! WebhookStore: subscriptions, the outbox of their deliveries, the leases that let one
//! instance at a time deliver a subscription's outbox, and the recorded health states. Events
//! enter the outbox through `emit_event!`, inside the transactions of the writes they report.

use crate::DbStore;
use crate::dialect::{Dialect, IN_CHUNK};
use crate::schema::{
    health_history as hh, health_states as hs, webhook_deliveries as wd,
    webhook_subscriptions as ws,
};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Binary, Text};
use diesel_async::RunQueryDsl;
use roomlink_domain::Result;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::error::Error;
use roomlink_domain::health::{HealthChange, HealthState, RecordedReason};
use roomlink_domain::ids::{EndpointId, EnterpriseId, WebhookId};
use roomlink_domain::ports::{ClaimedWebhook, HealthScope, HealthSubject, WebhookStore};
use roomlink_domain::secret::SealedSecret;
use roomlink_domain::webhook::{
    AttemptOutcome, Delivery, DeliveryPage, DeliveryState, DueDelivery, Event, EventType,
    MAX_SUBSCRIPTIONS, Pause, Subscription, SubscriptionDraft,
};
use std::collections::{HashMap, HashSet};

type SubscriptionRow = (
    String,
    String,
    String,
    String,
    Option<String>,
    i64,
    i64,
    Option<i64>,
    Option<String>,
);

macro_rules! subscription_columns {
    () => {
        (
            ws::id,
            ws::enterprise_id,
            ws::url,
            ws::event_types,
            ws::description,
            ws::created_ms,
            ws::updated_ms,
            ws::paused_ms,
            ws::paused_reason,
        )
    };
}

/// `,room.offline,call.ended,`: what `emit_event!` matches with one LIKE.
pub(crate) fn types_column(types: &[EventType]) -> String {
    let mut text = String::from(",");
    for t in types {
        text.push_str(t.as_str());
        text.push(',');
    }
    text
}

fn subscription(row: SubscriptionRow) -> Subscription {
    let (id, ent, url, types, description, created, updated, paused_ms, paused_reason) = row;
    Subscription {
        id: WebhookId::from_trusted(id),
        enterprise_id: EnterpriseId::from_trusted(ent),
        url,
        // A type a later version no longer knows is dropped, not an error.
        event_types: types.split(',').filter_map(EventType::parse).collect(),
        description,
        created_at: created,
        updated_at: updated,
        paused: paused_ms.map(|at| Pause {
            at,
            reason: paused_reason.unwrap_or_default(),
        }),
    }
}

type DeliveryRow = (
    i64,
    String,
    String,
    String,
    i64,
    String,
    i32,
    Option<i64>,
    Option<i64>,
    Option<i32>,
    Option<String>,
    Option<i64>,
);

macro_rules! delivery_columns {
    () => {
        (
            wd::seq,
            wd::event_id,
            wd::event_type,
            wd::body,
            wd::created_ms,
            wd::state,
            wd::attempts,
            wd::next_attempt_ms,
            wd::last_attempt_ms,
            wd::last_status,
            wd::last_error,
            wd::done_ms,
        )
    };
}

fn delivery(row: DeliveryRow) -> Result<(Delivery, String)> {
    let (
        seq,
        event_id,
        event_type,
        body,
        created,
        state,
        attempts,
        next,
        last,
        status,
        error,
        done,
    ) = row;
    let delivery = Delivery {
        id: seq,
        event_id,
        event_type: EventType::parse(&event_type)
            .ok_or_else(|| Error::internal(format!("unknown event type {event_type}")))?,
        created_at: created,
        state: DeliveryState::parse(&state)
            .ok_or_else(|| Error::internal(format!("unknown delivery state {state}")))?,
        attempts: u32::try_from(attempts).unwrap_or(0),
        next_attempt_at: next,
        last_attempt_at: last,
        last_status: status.and_then(|s| u16::try_from(s).ok()),
        last_error: error,
        delivered_at: if state == "delivered" { done } else { None },
    };
    Ok((delivery, body))
}

/// What a claim hands back.
#[derive(QueryableByName)]
struct ClaimRow {
    #[diesel(sql_type = Text)]
    id: String,
    #[diesel(sql_type = Text)]
    enterprise_id: String,
    #[diesel(sql_type = Text)]
    url: String,
    #[diesel(sql_type = Text)]
    secret_key_id: String,
    #[diesel(sql_type = Binary)]
    secret_ciphertext: Vec<u8>,
    #[diesel(sql_type = BigInt)]
    lease_until_ms: i64,
}

/// Claims unpaused subscriptions whose lease is free or expired and whose oldest pending
/// delivery is due. The outer condition is checked again on each row as it is updated, so
/// two instances claiming at once never both get one. Parameters: 1 owner, 2 now, 3 lease
/// end, 4 limit.
fn claim_sql(param: impl Fn(usize) -> String) -> String {
    let (owner, now, until, limit) = (param(1), param(2), param(3), param(4));
    format!(
        "UPDATE webhook_subscriptions SET lease_owner = {owner}, lease_until_ms = {until} \
         WHERE (lease_until_ms IS NULL OR lease_until_ms <= {now}) AND id IN ( \
           SELECT s.id FROM webhook_subscriptions s \
           WHERE s.paused_ms IS NULL AND (s.lease_until_ms IS NULL OR s.lease_until_ms <= {now}) \
           AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.subscription_id = s.id \
             AND d.state = 'pending' AND d.next_attempt_ms <= {now} \
             AND d.seq = (SELECT MIN(h.seq) FROM webhook_deliveries h \
               WHERE h.subscription_id = s.id AND h.state = 'pending')) \
           ORDER BY s.lease_until_ms LIMIT {limit}) \
         RETURNING id, enterprise_id, url, secret_key_id, secret_ciphertext, lease_until_ms"
    )
}

#[async_trait]
impl WebhookStore for DbStore {
    async fn insert_webhook(
        &self,
        subscription: &Subscription,
        secret: &SealedSecret,
        audit: &AuditEntry,
    ) -> Result<()> {
        let s = subscription;
        db_tx!(self, |c| {
            let held: i64 = ws::table
                .filter(ws::enterprise_id.eq(s.enterprise_id.as_str()))
                .count()
                .get_result(c)
                .await?;
            if usize::try_from(held).unwrap_or(usize::MAX) >= MAX_SUBSCRIPTIONS {
                return Err(Error::limit_reached(
                    WebhookId::ENTITY_CLASS,
                    MAX_SUBSCRIPTIONS as u32,
                )
                .into());
            }
            diesel::insert_into(ws::table)
                .values((
                    ws::id.eq(s.id.as_str()),
                    ws::enterprise_id.eq(s.enterprise_id.as_str()),
                    ws::url.eq(&s.url),
                    ws::event_types.eq(types_column(&s.event_types)),
                    ws::description.eq(s.description.as_deref()),
                    ws::secret_key_id.eq(&secret.key_id),
                    ws::secret_ciphertext.eq(&secret.ciphertext),
                    ws::created_ms.eq(s.created_at),
                    ws::updated_ms.eq(s.updated_at),
                ))
                .execute(c)
                .await?;
            append_audit!(c, audit)?;
            Ok(())
        })
    }

    async fn webhooks(&self, enterprise: &EnterpriseId) -> Result<Vec<Subscription>> {
        let rows: Vec<SubscriptionRow> = db_run!(self, |c| {
            Ok(ws::table
                .filter(ws::enterprise_id.eq(enterprise.as_str()))
                .order((ws::created_ms, ws::id))
                .select(subscription_columns!())
                .load(c)
                .await?)
        })?;
        Ok(rows.into_iter().map(subscription).collect())
    }

    async fn webhook(
        &self,
        enterprise: &EnterpriseId,
        id: &WebhookId,
    ) -> Result<Option<Subscription>> {
        let row: Option<SubscriptionRow> = db_run!(self, |c| {
            Ok(ws::table
                .filter(ws::enterprise_id.eq(enterprise.as_str()))
                .filter(ws::id.eq(id.as_str()))
                .select(subscription_columns!())
                .first(c)
                .await
                .optional()?)
        })?;
        Ok(row.map(subscription))
    }

    async fn update_webhook(
        &self,
        enterprise: &EnterpriseId,
        id: &WebhookId,
        draft: &SubscriptionDraft,
        now: i64,
        audit: &AuditEntry,
    ) -> Result<Option<Subscription>> {
        let row: Option<SubscriptionRow> = db_tx!(self, |c| {
            let n = diesel::update(
                ws::table
                    .filter(ws::enterprise_id.eq(enterprise.as_str()))
                    .filter(ws::id.eq(id.as_str())),
            )
            .set((
                ws::url.eq(&draft.url),
                ws::event_types.eq(types_column(&draft.event_types)),
                ws::description.eq(draft.description.as_deref()),
                ws::updated_ms.eq(now),
            ))
            .execute(c)
            .await?;
            if n == 0 {
                return Ok(None);
            }
            append_audit!(c, audit)?;
            Ok(ws::table
                .filter(ws::id.eq(id.as_str()))
                .select(subscription_columns!())
                .first(c)
                .await
                .optional()?)
        })?;
        Ok(row.map(subscription))
    }

    async fn delete_webhook(
        &self,
        enterprise: &EnterpriseId,
        id: &WebhookId,
        audit: &AuditEntry,
    ) -> Result<bool> {
        db_tx!(self, |c| {
            // Its deliveries go by ON DELETE CASCADE.
            let n = diesel::delete(
                ws::table
                    .filter(ws::enterprise_id.eq(enterprise.as_str()))
                    .filter(ws::id.eq(id.as_str())),
            )
            .execute(c)
            .await?;
            if n > 0 {
                append_audit!(c, audit)?;
            }
            Ok(n > 0)
        })
    }

    async fn set_webhook_paused(
        &self,
        enterprise: &EnterpriseId,
        id: &WebhookId,
        pause: Option<String>,
        now: i64,
        audit: &AuditEntry,
    ) -> Result<Option<Subscription>> {
        let resuming = pause.is_none();
        let row: Option<SubscriptionRow> = db_tx!(self, |c| {
            let n = diesel::update(
                ws::table
                    .filter(ws::enterprise_id.eq(enterprise.as_str()))
                    .filter(ws::id.eq(id.as_str())),
            )
            .set((
                ws::paused_ms.eq(pause.as_ref().map(|_| now)),
                ws::paused_reason.eq(pause.as_deref()),
            ))
            .execute(c)
            .await?;
            if n == 0 {
                return Ok(None);
            }
            if resuming {
                // What waited while it was paused goes now, in order.
                diesel::update(
                    wd::table
                        .filter(wd::subscription_id.eq(id.as_str()))
                        .filter(wd::state.eq(DeliveryState::Pending.as_str())),
                )
                .set(wd::next_attempt_ms.eq(now))
                .execute(c)
                .await?;
            }
            append_audit!(c, audit)?;
            Ok(ws::table
                .filter(ws::id.eq(id.as_str()))
                .select(subscription_columns!())
                .first(c)
                .await
                .optional()?)
        })?;
        Ok(row.map(subscription))
    }

    async fn record_event<'a>(
        &self,
        enterprise: &EnterpriseId,
        event: &Event,
        only: Option<&'a WebhookId>,
    ) -> Result<u64> {
        let only = only.map(WebhookId::as_str);
        let n = db_run!(self, |c| Ok(emit_event!(
            c,
            enterprise.as_str(),
            event,
            only
        )?))?;
        Ok(n as u64)
    }

    async fn deliveries(
        &self,
        enterprise: &EnterpriseId,
        id: &WebhookId,
        before: Option<i64>,
        limit: usize,
    ) -> Result<DeliveryPage> {
        let fetch = i64::try_from(limit.saturating_add(1)).unwrap_or(i64::MAX);
        let rows: Vec<DeliveryRow> = db_run!(self, |c| {
            Ok(wd::table
                .filter(wd::enterprise_id.eq(enterprise.as_str()))
                .filter(wd::subscription_id.eq(id.as_str()))
                .filter(wd::seq.lt(before.unwrap_or(i64::MAX)))
                .order(wd::seq.desc())
                .limit(fetch)
                .select(delivery_columns!())
                .load(c)
                .await?)
        })?;
        let mut deliveries = rows
            .into_iter()
            .map(|r| delivery(r).map(|(d, _)| d))
            .collect::<Result<Vec<_>>>()?;
        let next = if deliveries.len() > limit {
            deliveries.truncate(limit);
            deliveries.last().map(|d| d.id)
        } else {
            None
        };
        Ok(DeliveryPage { deliveries, next })
    }

    async fn claim_webhooks(
        &self,
        owner: &str,
        now: i64,
        lease_ms: i64,
        limit: usize,
    ) -> Result<Vec<ClaimedWebhook>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        // Most rounds find nothing due: a read says so without taking SQLite's write lock
        // or writing anything on PostgreSQL.
        let due = db_run!(self, |c| {
            Ok(wd::table
                .filter(wd::state.eq(DeliveryState::Pending.as_str()))
                .filter(wd::next_attempt_ms.le(now))
                .select(wd::seq)
                .first::<i64>(c)
                .await
                .optional()?)
        })?;
        if due.is_none() {
            return Ok(Vec::new());
        }
        let rows: Vec<ClaimRow> = db_run!(self, |c| {
            Ok(diesel::sql_query(claim_sql(|n| c.param(n)))
                .bind::<Text, _>(owner)
                .bind::<BigInt, _>(now)
                .bind::<BigInt, _>(now + lease_ms)
                .bind::<BigInt, _>(limit)
                .load(c)
                .await?)
        })?;
        Ok(rows
            .into_iter()
            .map(|r| ClaimedWebhook {
                id: WebhookId::from_trusted(r.id),
                enterprise_id: EnterpriseId::from_trusted(r.enterprise_id),
                url: r.url,
                secret: SealedSecret {
                    key_id: r.secret_key_id,
                    ciphertext: r.secret_ciphertext,
                },
                lease_until: r.lease_until_ms,
            })
            .collect())
    }

    async fn due_delivery(&self, id: &WebhookId, now: i64) -> Result<Option<DueDelivery>> {
        let row: Option<DeliveryRow> = db_run!(self, |c| {
            Ok(wd::table
                .filter(wd::subscription_id.eq(id.as_str()))
                .filter(wd::state.eq(DeliveryState::Pending.as_str()))
                .order(wd::seq)
                .select(delivery_columns!())
                .first(c)
                .await
                .optional()?)
        })?;
        let Some(row) = row else { return Ok(None) };
        let (delivery, body) = delivery(row)?;
        Ok(delivery
            .next_attempt_at
            .is_some_and(|t| t <= now)
            .then_some(DueDelivery { delivery, body }))
    }

    async fn record_attempt<'a>(
        &self,
        id: &WebhookId,
        delivery_id: i64,
        at: i64,
        outcome: &AttemptOutcome,
        next_attempt: Option<i64>,
        pause_reason: Option<&'a str>,
    ) -> Result<()> {
        let (state, next, done) = if outcome.delivered() {
            (DeliveryState::Delivered, None, Some(at))
        } else if next_attempt.is_some() {
            (DeliveryState::Pending, next_attempt, None)
        } else {
            (DeliveryState::Failed, None, Some(at))
        };
        let status = outcome.status.map(i32::from);
        db_tx!(self, |c| {
            // Lost in a database crash, an outcome only means the delivery is sent again
            // (at least once, deduplicated on its id); waiting for the flush held a
            // subscription's ordered deliveries to one per disk flush.
            c.relax_commit().await?;
            diesel::update(
                wd::table
                    .filter(wd::seq.eq(delivery_id))
                    .filter(wd::subscription_id.eq(id.as_str())),
            )
            .set((
                wd::attempts.eq(wd::attempts + 1),
                wd::last_attempt_ms.eq(at),
                wd::last_status.eq(status),
                wd::last_error.eq(outcome.error.as_deref()),
                wd::state.eq(state.as_str()),
                wd::next_attempt_ms.eq(next),
                wd::done_ms.eq(done),
            ))
            .execute(c)
            .await?;
            if state == DeliveryState::Failed {
                diesel::update(ws::table.filter(ws::id.eq(id.as_str())))
                    .set((
                        ws::paused_ms.eq(Some(at)),
                        ws::paused_reason.eq(pause_reason),
                    ))
                    .execute(c)
                    .await?;
            }
            Ok(())
        })
    }

    async fn release_webhook(&self, id: &WebhookId, owner: &str) -> Result<()> {
        db_run!(self, |c| {
            diesel::update(
                ws::table
                    .filter(ws::id.eq(id.as_str()))
                    .filter(ws::lease_owner.eq(owner)),
            )
            .set((
                ws::lease_owner.eq(None::<&str>),
                ws::lease_until_ms.eq(None::<i64>),
            ))
            .execute(c)
            .await?;
            Ok(())
        })
    }

    async fn record_health(
        &self,
        enterprise: &EnterpriseId,
        scope: HealthScope,
        subjects: &[HealthSubject],
        now: i64,
    ) -> Result<u64> {
        let ent = enterprise.as_str();
        db_tx!(self, |c| {
            let stored: HashMap<(String, String), String> = hs::table
                .filter(hs::enterprise_id.eq(ent))
                .select((hs::subject_kind, hs::subject_id, hs::state))
                .load::<(String, String, String)>(c)
                .await?
                .into_iter()
                .map(|(kind, id, state)| ((kind, id), state))
                .collect();
            let mut seen = HashSet::with_capacity(subjects.len());
            let mut events = 0u64;
            for subject in subjects {
                let (kind, id) = subject.key();
                let previous = stored.get(&(kind.to_owned(), id.to_owned()));
                let (state, event) = subject.observe(previous.map(String::as_str), now);
                if let Some(change) = subject.room_change(previous.map(String::as_str), now) {
                    let reasons = serde_json::to_string(&change.reasons)
                        .map_err(|e| Error::internal(format!("health reasons: {e}")))?;
                    diesel::insert_into(hh::table)
                        .values((
                            hh::enterprise_id.eq(ent),
                            hh::endpoint_id.eq(id),
                            hh::state.eq(change.state.as_str()),
                            hh::previous_state.eq(change.previous_state.map(HealthState::as_str)),
                            hh::reasons.eq(reasons),
                            hh::changed_ms.eq(now),
                        ))
                        .execute(c)
                        .await?;
                }
                seen.insert((kind, id));
                if previous.map(String::as_str) == Some(state) {
                    continue;
                }
                if !subject.is_healthy() {
                    diesel::insert_into(hs::table)
                        .values((
                            hs::enterprise_id.eq(ent),
                            hs::subject_kind.eq(kind),
                            hs::subject_id.eq(id),
                            hs::state.eq(state),
                            hs::changed_ms.eq(now),
                        ))
                        .on_conflict((hs::enterprise_id, hs::subject_kind, hs::subject_id))
                        .do_update()
                        .set((hs::state.eq(state), hs::changed_ms.eq(now)))
                        .execute(c)
                        .await?;
                } else if previous.is_some() {
                    diesel::delete(
                        hs::table
                            .filter(hs::enterprise_id.eq(ent))
                            .filter(hs::subject_kind.eq(kind))
                            .filter(hs::subject_id.eq(id)),
                    )
                    .execute(c)
                    .await?;
                }
                if let Some(event) = event {
                    events += emit_event!(&mut *c, ent, &event, None)? as u64;
                }
            }
            // A deleted room or listener is forgotten: were it back, it starts afresh.
            for &kind in scope.kinds() {
                let gone: Vec<&str> = stored
                    .keys()
                    .filter(|(k, id)| k == kind && !seen.contains(&(kind, id.as_str())))
                    .map(|(_, id)| id.as_str())
                    .collect();
                for chunk in gone.chunks(IN_CHUNK) {
                    diesel::delete(
                        hs::table
                            .filter(hs::enterprise_id.eq(ent))
                            .filter(hs::subject_kind.eq(kind))
                            .filter(hs::subject_id.eq_any(chunk)),
                    )
                    .execute(c)
                    .await?;
                }
            }
            Ok(events)
        })
    }

    async fn purge_deliveries(&self, cutoff: i64) -> Result<u64> {
        let n = db_run!(self, |c| {
            Ok(diesel::delete(wd::table.filter(wd::done_ms.lt(cutoff)))
                .execute(c)
                .await?)
        })?;
        Ok(n as u64)
    }

    async fn health_history(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
        limit: usize,
    ) -> Result<Vec<HealthChange>> {
        let (ent, id) = (enterprise.as_str(), endpoint.as_str());
        let rows = db_run!(self, |c| {
            Ok(hh::table
                .filter(hh::enterprise_id.eq(ent))
                .filter(hh::endpoint_id.eq(id))
                .order((hh::changed_ms.desc(), hh::id.desc()))
                .limit(i64::try_from(limit).unwrap_or(i64::MAX))
                .select((hh::state, hh::previous_state, hh::reasons, hh::changed_ms))
                .load::<(String, Option<String>, String, i64)>(c)
                .await?)
        })?;
        rows.into_iter()
            .map(|(state, previous, reasons, at)| {
                let unknown = || Error::internal(format!("a stored health state {state:?}"));
                Ok(HealthChange {
                    at,
                    state: HealthState::parse(&state).ok_or_else(unknown)?,
                    previous_state: previous.as_deref().and_then(HealthState::parse),
                    reasons: serde_json::from_str::<Vec<RecordedReason>>(&reasons)
                        .map_err(|e| Error::internal(format!("stored health reasons: {e}")))?,
                })
            })
            .collect()
    }

    async fn purge_health_history(&self, cutoff: i64) -> Result<u64> {
        let n = db_run!(self, |c| {
            Ok(diesel::delete(hh::table.filter(hh::changed_ms.lt(cutoff)))
                .execute(c)
                .await?)
        })?;
        Ok(n as u64)
    }
}

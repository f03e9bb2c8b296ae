//! WebhookStore of the in-memory store: the same outbox, leases and health states as the
//! database adapters, under the one mutex.

use super::{MemoryStore, State};
use async_trait::async_trait;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::error::{Error, Result};
use roomlink_domain::health::HealthChange;
use roomlink_domain::ids::{EndpointId, EnterpriseId, WebhookId};
use roomlink_domain::ports::{ClaimedWebhook, HealthScope, HealthSubject, WebhookStore};
use roomlink_domain::secret::SealedSecret;
use roomlink_domain::webhook::{
    AttemptOutcome, Delivery, DeliveryPage, DeliveryState, DueDelivery, Event, MAX_SUBSCRIPTIONS,
    Pause, Subscription, SubscriptionDraft,
};

pub(crate) struct Held {
    subscription: Subscription,
    secret: SealedSecret,
    lease: Option<(String, i64)>,
}

pub(crate) struct Queued {
    subscription: WebhookId,
    enterprise: EnterpriseId,
    delivery: Delivery,
    body: String,
}

impl State {
    /// Adds `event` to the outbox of the enterprise's subscriptions that want it (or `only`).
    pub(crate) fn emit(
        &mut self,
        enterprise: &EnterpriseId,
        event: &Event,
        only: Option<&WebhookId>,
    ) -> u64 {
        let targets: Vec<WebhookId> = self
            .webhooks
            .iter()
            .map(|h| &h.subscription)
            .filter(|s| s.enterprise_id == *enterprise)
            .filter(|s| match only {
                Some(id) => s.id == *id,
                None => s.wants(event.event_type),
            })
            .map(|s| s.id.clone())
            .collect();
        for subscription in &targets {
            self.next_delivery += 1;
            self.deliveries.push(Queued {
                subscription: subscription.clone(),
                enterprise: enterprise.clone(),
                delivery: Delivery {
                    id: self.next_delivery,
                    event_id: event.id.clone(),
                    event_type: event.event_type,
                    created_at: event.at,
                    state: DeliveryState::Pending,
                    attempts: 0,
                    next_attempt_at: Some(event.at),
                    last_attempt_at: None,
                    last_status: None,
                    last_error: None,
                    delivered_at: None,
                },
                body: event.body(),
            });
        }
        targets.len() as u64
    }

    /// Every subscription's sealed secret, by subscription id (`SealedKind::WebhookSecret`).
    pub(crate) fn webhook_secrets(&self) -> Vec<(String, &SealedSecret)> {
        self.webhooks
            .iter()
            .map(|h| (h.subscription.id.as_str().to_owned(), &h.secret))
            .collect()
    }

    pub(crate) fn replace_webhook_secret(
        &mut self,
        id: &str,
        old: &SealedSecret,
        new: &SealedSecret,
    ) -> bool {
        match self
            .webhooks
            .iter_mut()
            .find(|h| h.subscription.id.as_str() == id && h.secret == *old)
        {
            Some(h) => {
                h.secret = new.clone();
                true
            }
            None => false,
        }
    }

    fn held(&mut self, enterprise: &EnterpriseId, id: &WebhookId) -> Option<&mut Held> {
        self.webhooks
            .iter_mut()
            .find(|h| h.subscription.enterprise_id == *enterprise && h.subscription.id == *id)
    }

    fn head(&self, id: &WebhookId) -> Option<&Queued> {
        self.deliveries
            .iter()
            .filter(|q| q.subscription == *id && q.delivery.state == DeliveryState::Pending)
            .min_by_key(|q| q.delivery.id)
    }
}

#[async_trait]
impl WebhookStore for MemoryStore {
    async fn insert_webhook(
        &self,
        subscription: &Subscription,
        secret: &SealedSecret,
        audit: &AuditEntry,
    ) -> Result<()> {
        let mut s = self.lock()?;
        let held = s
            .webhooks
            .iter()
            .filter(|h| h.subscription.enterprise_id == subscription.enterprise_id)
            .count();
        if held >= MAX_SUBSCRIPTIONS {
            return Err(Error::limit_reached(
                WebhookId::ENTITY_CLASS,
                MAX_SUBSCRIPTIONS as u32,
            ));
        }
        s.webhooks.push(Held {
            subscription: subscription.clone(),
            secret: secret.clone(),
            lease: None,
        });
        s.audit(audit);
        Ok(())
    }

    async fn webhooks(&self, enterprise: &EnterpriseId) -> Result<Vec<Subscription>> {
        let s = self.lock()?;
        let mut all: Vec<Subscription> = s
            .webhooks
            .iter()
            .map(|h| h.subscription.clone())
            .filter(|w| w.enterprise_id == *enterprise)
            .collect();
        all.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        Ok(all)
    }

    async fn webhook(
        &self,
        enterprise: &EnterpriseId,
        id: &WebhookId,
    ) -> Result<Option<Subscription>> {
        Ok(self
            .lock()?
            .held(enterprise, id)
            .map(|h| h.subscription.clone()))
    }

    async fn update_webhook(
        &self,
        enterprise: &EnterpriseId,
        id: &WebhookId,
        draft: &SubscriptionDraft,
        now: i64,
        audit: &AuditEntry,
    ) -> Result<Option<Subscription>> {
        let mut s = self.lock()?;
        let Some(held) = s.held(enterprise, id) else {
            return Ok(None);
        };
        let w = &mut held.subscription;
        w.url.clone_from(&draft.url);
        w.event_types.clone_from(&draft.event_types);
        w.description.clone_from(&draft.description);
        w.updated_at = now;
        let updated = w.clone();
        s.audit(audit);
        Ok(Some(updated))
    }

    async fn delete_webhook(
        &self,
        enterprise: &EnterpriseId,
        id: &WebhookId,
        audit: &AuditEntry,
    ) -> Result<bool> {
        let mut s = self.lock()?;
        if s.held(enterprise, id).is_none() {
            return Ok(false);
        }
        s.webhooks.retain(|h| h.subscription.id != *id);
        s.deliveries.retain(|q| q.subscription != *id);
        s.audit(audit);
        Ok(true)
    }

    async fn set_webhook_paused(
        &self,
        enterprise: &EnterpriseId,
        id: &WebhookId,
        pause: Option<String>,
        now: i64,
        audit: &AuditEntry,
    ) -> Result<Option<Subscription>> {
        let mut s = self.lock()?;
        let resuming = pause.is_none();
        let Some(held) = s.held(enterprise, id) else {
            return Ok(None);
        };
        held.subscription.paused = pause.map(|reason| Pause { at: now, reason });
        let updated = held.subscription.clone();
        if resuming {
            for q in s.deliveries.iter_mut().filter(|q| q.subscription == *id) {
                if q.delivery.state == DeliveryState::Pending {
                    q.delivery.next_attempt_at = Some(now);
                }
            }
        }
        s.audit(audit);
        Ok(Some(updated))
    }

    async fn record_event<'a>(
        &self,
        enterprise: &EnterpriseId,
        event: &Event,
        only: Option<&'a WebhookId>,
    ) -> Result<u64> {
        Ok(self.lock()?.emit(enterprise, event, only))
    }

    async fn deliveries(
        &self,
        enterprise: &EnterpriseId,
        id: &WebhookId,
        before: Option<i64>,
        limit: usize,
    ) -> Result<DeliveryPage> {
        let s = self.lock()?;
        let mut mine: Vec<Delivery> = s
            .deliveries
            .iter()
            .filter(|q| q.enterprise == *enterprise && q.subscription == *id)
            .filter(|q| q.delivery.id < before.unwrap_or(i64::MAX))
            .map(|q| q.delivery.clone())
            .collect();
        mine.sort_by_key(|d| std::cmp::Reverse(d.id));
        let next = if mine.len() > limit {
            mine.truncate(limit);
            mine.last().map(|d| d.id)
        } else {
            None
        };
        Ok(DeliveryPage {
            deliveries: mine,
            next,
        })
    }

    async fn claim_webhooks(
        &self,
        owner: &str,
        now: i64,
        lease_ms: i64,
        limit: usize,
    ) -> Result<Vec<ClaimedWebhook>> {
        let mut s = self.lock()?;
        let due: Vec<WebhookId> = s
            .webhooks
            .iter()
            .filter(|h| h.subscription.paused.is_none())
            .filter(|h| h.lease.as_ref().is_none_or(|(_, until)| *until <= now))
            .map(|h| h.subscription.id.clone())
            .filter(|id| {
                s.head(id)
                    .and_then(|q| q.delivery.next_attempt_at)
                    .is_some_and(|t| t <= now)
            })
            .take(limit)
            .collect();
        let mut claimed = Vec::with_capacity(due.len());
        for h in s
            .webhooks
            .iter_mut()
            .filter(|h| due.contains(&h.subscription.id))
        {
            h.lease = Some((owner.to_owned(), now + lease_ms));
            claimed.push(ClaimedWebhook {
                id: h.subscription.id.clone(),
                enterprise_id: h.subscription.enterprise_id.clone(),
                url: h.subscription.url.clone(),
                secret: h.secret.clone(),
                lease_until: now + lease_ms,
            });
        }
        Ok(claimed)
    }

    async fn due_delivery(&self, id: &WebhookId, now: i64) -> Result<Option<DueDelivery>> {
        let s = self.lock()?;
        Ok(s.head(id)
            .filter(|q| q.delivery.next_attempt_at.is_some_and(|t| t <= now))
            .map(|q| DueDelivery {
                delivery: q.delivery.clone(),
                body: q.body.clone(),
            }))
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
        let mut s = self.lock()?;
        let Some(q) = s
            .deliveries
            .iter_mut()
            .find(|q| q.subscription == *id && q.delivery.id == delivery_id)
        else {
            return Ok(());
        };
        let d = &mut q.delivery;
        d.attempts += 1;
        d.last_attempt_at = Some(at);
        d.last_status = outcome.status;
        d.last_error.clone_from(&outcome.error);
        let failed = if outcome.delivered() {
            d.state = DeliveryState::Delivered;
            d.next_attempt_at = None;
            d.delivered_at = Some(at);
            false
        } else if next_attempt.is_some() {
            d.next_attempt_at = next_attempt;
            false
        } else {
            d.state = DeliveryState::Failed;
            d.next_attempt_at = None;
            true
        };
        if failed && let Some(h) = s.webhooks.iter_mut().find(|h| h.subscription.id == *id) {
            h.subscription.paused = Some(Pause {
                at,
                reason: pause_reason.unwrap_or_default().to_owned(),
            });
        }
        Ok(())
    }

    async fn release_webhook(&self, id: &WebhookId, owner: &str) -> Result<()> {
        let mut s = self.lock()?;
        for h in s.webhooks.iter_mut().filter(|h| h.subscription.id == *id) {
            if h.lease.as_ref().is_some_and(|(o, _)| o == owner) {
                h.lease = None;
            }
        }
        Ok(())
    }

    async fn record_health(
        &self,
        enterprise: &EnterpriseId,
        scope: HealthScope,
        subjects: &[HealthSubject],
        now: i64,
    ) -> Result<u64> {
        let mut s = self.lock()?;
        let mut events = 0;
        let mut seen = Vec::with_capacity(subjects.len());
        for subject in subjects {
            let (kind, id) = subject.key();
            let key = (kind, id.to_owned());
            let previous = s.health.get(&(enterprise.clone(), key.clone()));
            let (state, event) = subject.observe(previous.map(String::as_str), now);
            if let Some(change) = subject.room_change(previous.map(String::as_str), now) {
                s.health_history
                    .push((enterprise.clone(), id.to_owned(), change));
            }
            seen.push(key.clone());
            if subject.is_healthy() {
                s.health.remove(&(enterprise.clone(), key));
            } else {
                s.health.insert((enterprise.clone(), key), state.to_owned());
            }
            if let Some(event) = event {
                events += s.emit(enterprise, &event, None);
            }
        }
        s.health.retain(|(e, key), _| {
            e != enterprise || !scope.kinds().contains(&key.0) || seen.contains(key)
        });
        Ok(events)
    }

    async fn purge_deliveries(&self, cutoff: i64) -> Result<u64> {
        let mut s = self.lock()?;
        let before = s.deliveries.len();
        s.deliveries.retain(|q| {
            q.delivery.state == DeliveryState::Pending
                || q.delivery.last_attempt_at.is_none_or(|t| t >= cutoff)
        });
        Ok((before - s.deliveries.len()) as u64)
    }

    async fn health_history(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
        limit: usize,
    ) -> Result<Vec<HealthChange>> {
        let s = self.lock()?;
        Ok(s.health_history
            .iter()
            .rev()
            .filter(|(e, id, _)| e == enterprise && id == endpoint.as_str())
            .take(limit)
            .map(|(_, _, change)| change.clone())
            .collect())
    }

    async fn purge_health_history(&self, cutoff: i64) -> Result<u64> {
        let mut s = self.lock()?;
        let before = s.health_history.len();
        s.health_history
            .retain(|(_, _, change)| change.at >= cutoff);
        Ok((before - s.health_history.len()) as u64)
    }
}

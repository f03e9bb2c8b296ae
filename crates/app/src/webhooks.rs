//! Webhooks: the subscriptions API (`/api/webhooks`), the delivery rounds every instance runs,
//! and the health watch that turns room and listener health changes into events. The rules
//! are `roomlink_domain::webhook`; the outbox is the store's.

use super::audit::Auditor;
use super::auth::Principal;
use super::health::{HealthService, NamedRoomHealth};
use roomlink_domain::access::{Operation, Target};
use roomlink_domain::calendar::account::AllowedHosts;
use roomlink_domain::error::{Error, Result};
use roomlink_domain::health::HealthState;
use roomlink_domain::ids::{EnterpriseId, WebhookId};
use roomlink_domain::listener::ListenerHealth;
use roomlink_domain::live::LiveTopic;
use roomlink_domain::ports::{
    ClaimedWebhook, Clock, EnterpriseStore, HealthScope, HealthSubject, IdGenerator,
    OutgoingWebhook, PollLease, SecretSealer, WebhookSender, WebhookStore,
};
use roomlink_domain::secret::Secret;
use roomlink_domain::webhook::{
    AttemptOutcome, DeliveryPage, Event, Subscription, SubscriptionDraft, next_attempt,
    pause_reason,
};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The most deliveries one page lists: the API's page bound.
pub const MAX_DELIVERY_PAGE: usize = roomlink_domain::endpoint::page::MAX_PAGE_SIZE;

pub struct WebhookService {
    pub store: Arc<dyn WebhookStore>,
    pub sender: Arc<dyn WebhookSender>,
    pub sealer: Arc<dyn SecretSealer>,
    pub ids: Arc<dyn IdGenerator>,
    pub clock: Arc<dyn Clock>,
    pub audit: Arc<Auditor>,
    /// The hosts subscriptions may name (`webhooks.allowed_hosts`; empty: any).
    pub hosts: AllowedHosts,
}

/// A subscription just created, with its signing secret: shown this once.
pub struct Created {
    pub subscription: Subscription,
    pub secret: Secret,
}

/// Reads `{"url", "eventTypes", "description"}`; any other field is `Invalid` (a typo would
/// otherwise be silently ignored).
fn draft_of(body: &Map<String, Value>) -> Result<SubscriptionDraft> {
    if let Some(other) = body
        .keys()
        .find(|k| !["url", "eventTypes", "description"].contains(&k.as_str()))
    {
        return Err(Error::invalid(format!(
            "{}: is not a field of a webhook (url, eventTypes, description)",
            roomlink_domain::enums::shorten(other)
        )));
    }
    let url = match body.get("url") {
        Some(Value::String(url)) => url.as_str(),
        _ => return Err(Error::invalid("url: a string is required")),
    };
    let types = match body.get("eventTypes") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<String>>>()
            .ok_or_else(|| Error::invalid("eventTypes: must be an array of strings"))?,
        _ => {
            return Err(Error::invalid(
                "eventTypes: an array of event types is required",
            ));
        }
    };
    let description = match body.get("description") {
        None | Some(Value::Null) => None,
        Some(Value::String(d)) => Some(d.as_str()),
        Some(_) => return Err(Error::invalid("description: must be a string")),
    };
    SubscriptionDraft::new(url, &types, description)
}

impl WebhookService {
    /// The target must be on the operator's list, and one deliveries may reach now
    /// (`roomlink_domain::webhook::target`).
    async fn check_target(&self, draft: &SubscriptionDraft) -> Result<()> {
        // Before any name is resolved: a host not on the list costs no lookup.
        if !self.hosts.allows(&draft.url) {
            return Err(Error::invalid(
                "url: the host is not among those subscriptions may name (webhooks.allowed_hosts)",
            ));
        }
        self.sender
            .check_target(&draft.url)
            .await
            .map_err(|why| Error::invalid(format!("url: {why}")))
    }

    pub async fn list(&self, principal: &Principal) -> Result<Vec<Subscription>> {
        principal.authorize(Operation::ListWebhooks, Target::Enterprise)?;
        self.store.webhooks(&principal.enterprise_id).await
    }

    pub async fn get(&self, principal: &Principal, id: &WebhookId) -> Result<Subscription> {
        principal.authorize(Operation::GetWebhook, Target::Enterprise)?;
        self.store
            .webhook(&principal.enterprise_id, id)
            .await?
            .ok_or_else(|| id.not_found())
    }

    pub async fn create(
        &self,
        principal: &Principal,
        body: &Map<String, Value>,
    ) -> Result<Created> {
        let id = WebhookId::from_trusted(self.ids.entity_id());
        let audit = self
            .audit
            .op(principal, Operation::CreateWebhook, Some(id.as_str()));
        let result = async {
            principal.authorize(Operation::CreateWebhook, Target::Enterprise)?;
            let draft = draft_of(body)?;
            self.check_target(&draft).await?;
            let secret = self.ids.webhook_secret();
            // Sealed with the service key, never an enterprise's: roomlink signs with it.
            let sealed = self.sealer.seal(&secret, None)?;
            let now = self.clock.now_ms();
            let subscription = Subscription {
                id,
                enterprise_id: principal.enterprise_id.clone(),
                url: draft.url,
                event_types: draft.event_types,
                description: draft.description,
                created_at: now,
                updated_at: now,
                paused: None,
            };
            self.store
                .insert_webhook(&subscription, &sealed, &audit)
                .await?;
            Ok(Created {
                subscription,
                secret,
            })
        }
        .await;
        self.audit.settle(audit, result).await
    }

    pub async fn update(
        &self,
        principal: &Principal,
        id: &WebhookId,
        body: &Map<String, Value>,
    ) -> Result<Subscription> {
        let audit = self
            .audit
            .op(principal, Operation::UpdateWebhook, Some(id.as_str()));
        let result = async {
            principal.authorize(Operation::UpdateWebhook, Target::Enterprise)?;
            let draft = draft_of(body)?;
            self.check_target(&draft).await?;
            let now = self.clock.now_ms();
            self.store
                .update_webhook(&principal.enterprise_id, id, &draft, now, &audit)
                .await?
                .ok_or_else(|| id.not_found())
        }
        .await;
        self.audit.settle(audit, result).await
    }

    pub async fn delete(&self, principal: &Principal, id: &WebhookId) -> Result<()> {
        let audit = self
            .audit
            .op(principal, Operation::DeleteWebhook, Some(id.as_str()));
        let result = async {
            principal.authorize(Operation::DeleteWebhook, Target::Enterprise)?;
            if self
                .store
                .delete_webhook(&principal.enterprise_id, id, &audit)
                .await?
            {
                Ok(())
            } else {
                Err(id.not_found())
            }
        }
        .await;
        self.audit.settle(audit, result).await
    }

    /// Stops (`pause`) or restarts deliveries; what is pending waits, then goes in order.
    pub async fn set_paused(
        &self,
        principal: &Principal,
        id: &WebhookId,
        pause: bool,
    ) -> Result<Subscription> {
        let operation = if pause {
            Operation::PauseWebhook
        } else {
            Operation::ResumeWebhook
        };
        let audit = self.audit.op(principal, operation, Some(id.as_str()));
        let result = async {
            principal.authorize(operation, Target::Enterprise)?;
            let reason = pause.then(|| format!("paused by {}", audit.actor.id));
            let now = self.clock.now_ms();
            self.store
                .set_webhook_paused(&principal.enterprise_id, id, reason, now, &audit)
                .await?
                .ok_or_else(|| id.not_found())
        }
        .await;
        self.audit.settle(audit, result).await
    }

    /// Queues a `webhook.test` event for this subscription alone: its id.
    pub async fn test(&self, principal: &Principal, id: &WebhookId) -> Result<String> {
        principal.authorize(Operation::TestWebhook, Target::Enterprise)?;
        let event = Event::test(id.as_str(), self.clock.now_ms());
        match self
            .store
            .record_event(&principal.enterprise_id, &event, Some(id))
            .await?
        {
            0 => Err(id.not_found()),
            _ => Ok(event.id),
        }
    }

    pub async fn deliveries(
        &self,
        principal: &Principal,
        id: &WebhookId,
        before: Option<i64>,
        limit: usize,
    ) -> Result<DeliveryPage> {
        principal.authorize(Operation::ListWebhookDeliveries, Target::Enterprise)?;
        if self
            .store
            .webhook(&principal.enterprise_id, id)
            .await?
            .is_none()
        {
            return Err(id.not_found());
        }
        self.store
            .deliveries(
                &principal.enterprise_id,
                id,
                before,
                limit.min(MAX_DELIVERY_PAGE),
            )
            .await
    }
}

/// How deliveries are claimed: how long a claim lasts, how many subscriptions one round takes.
#[derive(Debug, Clone, Copy)]
pub struct DeliveryPolicy {
    /// Longer than an attempt's timeout: a claim outlives the attempts made under it.
    pub lease_ms: i64,
    /// An attempt's timeout (the sender's), so a claim is not used past what is left of it.
    pub attempt_timeout_ms: i64,
    pub subscriptions_per_round: usize,
}

impl Default for DeliveryPolicy {
    fn default() -> Self {
        DeliveryPolicy {
            lease_ms: 60_000,
            attempt_timeout_ms: 10_000,
            subscriptions_per_round: 32,
        }
    }
}

/// What one delivery round did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeliveryRound {
    pub claimed: usize,
    pub attempts: usize,
    pub delivered: usize,
}

/// The delivery rounds of one instance (`owner`). Each claims subscriptions with a delivery
/// due, and sends each one's outbox oldest first until one attempt fails (it waits for its
/// retry, and the ones behind it with it) or the claim runs short.
pub struct WebhookDeliveries {
    pub store: Arc<dyn WebhookStore>,
    pub sender: Arc<dyn WebhookSender>,
    pub sealer: Arc<dyn SecretSealer>,
    pub clock: Arc<dyn Clock>,
    pub owner: String,
    pub policy: DeliveryPolicy,
    pub counts: DeliveryCounts,
}

/// What this instance's attempts came to since it started (`/metrics`).
#[derive(Debug, Default)]
pub struct DeliveryCounts {
    delivered: AtomicU64,
    failed: AtomicU64,
    paused: AtomicU64,
}

/// A reading of [`DeliveryCounts`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeliveryTotals {
    /// Attempts the receiver answered with a 2xx.
    pub delivered: u64,
    /// Attempts that failed (another status, a timeout, a refused target).
    pub failed: u64,
    /// Subscriptions paused because a delivery's retries were spent.
    pub paused: u64,
}

impl DeliveryCounts {
    fn record(&self, delivered: bool, paused: bool) {
        let counter = if delivered {
            &self.delivered
        } else {
            &self.failed
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if paused {
            self.paused.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn totals(&self) -> DeliveryTotals {
        DeliveryTotals {
            delivered: self.delivered.load(Ordering::Relaxed),
            failed: self.failed.load(Ordering::Relaxed),
            paused: self.paused.load(Ordering::Relaxed),
        }
    }
}

impl WebhookDeliveries {
    pub async fn round(&self) -> Result<DeliveryRound> {
        let now = self.clock.now_ms();
        let claims = self
            .store
            .claim_webhooks(
                &self.owner,
                now,
                self.policy.lease_ms,
                self.policy.subscriptions_per_round,
            )
            .await?;
        let mut round = DeliveryRound {
            claimed: claims.len(),
            ..DeliveryRound::default()
        };
        // Subscriptions go side by side; one slow receiver does not hold up the others.
        let drained = futures::future::join_all(claims.into_iter().map(|c| self.drain(c))).await;
        for result in drained {
            let (attempts, delivered) = result?;
            round.attempts += attempts;
            round.delivered += delivered;
        }
        Ok(round)
    }

    async fn drain(&self, claim: ClaimedWebhook) -> Result<(usize, usize)> {
        let secret = self.sealer.open(&claim.secret);
        let (mut attempts, mut delivered) = (0, 0);
        loop {
            let now = self.clock.now_ms();
            if now + self.policy.attempt_timeout_ms >= claim.lease_until {
                break;
            }
            let Some(due) = self.store.due_delivery(&claim.id, now).await? else {
                break;
            };
            let outcome = match &secret {
                Ok(Some(secret)) => {
                    self.sender
                        .send(OutgoingWebhook {
                            url: &claim.url,
                            event_id: &due.delivery.event_id,
                            body: &due.body,
                            secret,
                        })
                        .await
                }
                _ => AttemptOutcome {
                    status: None,
                    error: Some(
                        "the signing secret cannot be opened: the service key that sealed it \
                         is gone (docs/operations.md \"Rotating the service key\")"
                            .to_owned(),
                    ),
                },
            };
            let at = self.clock.now_ms();
            let ok = outcome.delivered();
            let next = if ok {
                None
            } else {
                next_attempt(due.delivery.attempts + 1, at)
            };
            let pause = (!ok && next.is_none()).then(|| pause_reason(&due.delivery, &outcome));
            self.store
                .record_attempt(
                    &claim.id,
                    due.delivery.id,
                    at,
                    &outcome,
                    next,
                    pause.as_deref(),
                )
                .await?;
            self.counts.record(ok, pause.is_some());
            attempts += 1;
            if !ok {
                break;
            }
            delivered += 1;
        }
        self.store.release_webhook(&claim.id, &self.owner).await?;
        Ok((attempts, delivered))
    }
}

/// Compares every room's and listener's health with what was last recorded and queues the
/// events of the changes. One instance at a time (the poll lease holder): two watching at
/// once could both see the same change.
pub struct HealthWatch {
    pub health: Arc<HealthService>,
    pub store: Arc<dyn WebhookStore>,
    pub enterprises: Arc<dyn EnterpriseStore>,
    pub poll_lease: Arc<dyn PollLease>,
    pub clock: Arc<dyn Clock>,
    /// Told when a room's or listener's state changed, for browsers' live updates.
    pub changes: Arc<crate::live::FleetChanges>,
}

impl HealthWatch {
    /// How many events one round made; `None` when another instance watches.
    pub async fn round(&self) -> Result<Option<u64>> {
        if !self.poll_lease.hold_poll_lease().await? {
            return Ok(None);
        }
        let mut events = 0;
        for enterprise in self.enterprises.enterprise_ids().await? {
            events += self.watch(&enterprise).await?;
        }
        Ok(Some(events))
    }

    async fn watch(&self, enterprise: &EnterpriseId) -> Result<u64> {
        // Not watched: a room not yet observed (it waits for its first poll), and one that
        // names no listener service (nothing can reach it: provisioned so, not broken). Left
        // out while the rooms are read, so a large fleet of such rooms is never held at once.
        let watched = |r: &NamedRoomHealth| {
            r.health.state != HealthState::Offline
                || !r
                    .health
                    .reasons
                    .iter()
                    .all(|x| x.code == "neverObserved" || x.code == "noListener")
        };
        let report = self.health.report_keeping(enterprise, watched).await?;
        let rooms = report.rooms.into_iter().map(|r| HealthSubject::Room {
            endpoint_id: r.health.endpoint_id.into_string(),
            name: r.name,
            listener_service_id: r.health.listener_service_id.map(|l| l.into_string()),
            state: r.health.state,
            since: r.health.since,
            reasons: r.health.reasons,
        });
        let listeners = report
            .listeners
            .into_iter()
            .filter(|l| l.health != ListenerHealth::Unknown)
            .map(|l| HealthSubject::Listener {
                id: l.listener_id.into_string(),
                name: l.name,
                health: l.health,
                last_contact: l.last_contact,
            });
        let subjects: Vec<HealthSubject> = rooms.chain(listeners).collect();
        let queued = self
            .store
            .record_health(
                enterprise,
                HealthScope::Fleet,
                &subjects,
                self.clock.now_ms(),
            )
            .await?;
        // After the commit: a page told of the change reads the history that records it.
        self.tell_browsers(enterprise, &subjects);
        Ok(queued)
    }
}

impl HealthWatch {
    /// Tells browsers when a room's state or a listener's health differs from the last round.
    fn tell_browsers(&self, enterprise: &EnterpriseId, subjects: &[HealthSubject]) {
        let (mut rooms, mut listeners) = (Vec::new(), Vec::new());
        for s in subjects {
            match s {
                HealthSubject::Room {
                    endpoint_id,
                    state,
                    reasons,
                    ..
                } => rooms.push((
                    endpoint_id.as_str(),
                    state.as_str(),
                    reasons.iter().map(|r| &r.code).collect::<Vec<_>>(),
                )),
                HealthSubject::Listener { id, health, .. } => {
                    listeners.push((id.as_str(), health.as_str()))
                }
                HealthSubject::Calendar { .. } => {}
            }
        }
        self.changes.observed(enterprise, LiveTopic::Health, &rooms);
        self.changes
            .observed(enterprise, LiveTopic::Listeners, &listeners);
    }
}

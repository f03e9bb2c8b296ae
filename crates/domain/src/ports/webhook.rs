//! Webhooks: the outbox and subscriptions ([`WebhookStore`]) and the wire that delivers
//! ([`WebhookSender`]). docs/operations.md "Webhooks".

use crate::audit::AuditEntry;
use crate::error::Result;
use crate::health::{HealthChange, HealthReason, HealthState};
use crate::ids::{EndpointId, EnterpriseId, WebhookId};
use crate::inventory::ReadFailure;
use crate::listener::ListenerHealth;
use crate::secret::{SealedSecret, Secret};
use crate::webhook::event::{CalendarRef, RoomRef};
use crate::webhook::{
    AttemptOutcome, DeliveryPage, DueDelivery, Event, Subscription, SubscriptionDraft,
};
use async_trait::async_trait;
#[cfg(feature = "mock")]
use mockall::automock;

/// A subscription claimed by one instance until `lease_until`: where to send, with what key.
#[derive(Debug, Clone)]
pub struct ClaimedWebhook {
    pub id: WebhookId,
    pub enterprise_id: EnterpriseId,
    pub url: String,
    pub secret: SealedSecret,
    pub lease_until: i64,
}

/// A calendar's recorded states.
const CALENDAR_UNREADABLE: &str = "unreadable";
const CALENDAR_READABLE: &str = "readable";

/// What the health watch observed of one subject, to compare with what was last recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HealthSubject {
    Room {
        endpoint_id: String,
        name: String,
        listener_service_id: Option<String>,
        state: HealthState,
        since: Option<i64>,
        reasons: Vec<HealthReason>,
    },
    Listener {
        id: String,
        name: String,
        health: ListenerHealth,
        last_contact: Option<i64>,
    },
    /// A room's calendar as an auto-join round read it: `unreadable` says why it could not.
    Calendar {
        endpoint_id: String,
        name: String,
        listener_service_id: Option<String>,
        calendar_type: String,
        calendar_id: String,
        unreadable: Option<ReadFailure>,
    },
}

/// Which subjects one observation covers: recorded states of these kinds that it does not
/// name are forgotten (their room or listener is gone, or no longer in the round). The health
/// watch sees rooms and listeners; auto-join rounds see the calendars of their rooms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealthScope {
    Fleet,
    Calendars,
}

impl HealthScope {
    /// The subject kinds (as [`HealthSubject::key`] names them) it covers.
    pub fn kinds(self) -> &'static [&'static str] {
        match self {
            HealthScope::Fleet => &["room", "listener"],
            HealthScope::Calendars => &["calendar"],
        }
    }
}

impl HealthSubject {
    /// How it is keyed among the recorded states: its kind (`room`, `listener`) and id.
    pub fn key(&self) -> (&'static str, &str) {
        match self {
            HealthSubject::Room { endpoint_id, .. } => ("room", endpoint_id),
            HealthSubject::Listener { id, .. } => ("listener", id),
            HealthSubject::Calendar { endpoint_id, .. } => ("calendar", endpoint_id),
        }
    }

    /// Whether it is as it should be (a room ok, a listener online): such states are not
    /// stored (no row is the healthy state), so a healthy fleet costs no writes.
    pub fn is_healthy(&self) -> bool {
        match self {
            HealthSubject::Room { state, .. } => *state == HealthState::Ok,
            HealthSubject::Listener { health, .. } => *health == ListenerHealth::Online,
            HealthSubject::Calendar { unreadable, .. } => unreadable.is_none(),
        }
    }

    /// For a room, the change to add to its history after `previous` (the state recorded
    /// last, if any; see [`HealthChange::of`]); none for a listener.
    pub fn room_change(&self, previous: Option<&str>, now: i64) -> Option<HealthChange> {
        match self {
            HealthSubject::Room { state, reasons, .. } => {
                HealthChange::of(previous.and_then(HealthState::parse), *state, reasons, now)
            }
            HealthSubject::Listener { .. } | HealthSubject::Calendar { .. } => None,
        }
    }

    /// The state to record, and the event its change from `previous` (the state recorded
    /// last, if any) makes (`Event::room_health`, `Event::listener_health`).
    pub fn observe(&self, previous: Option<&str>, now: i64) -> (&'static str, Option<Event>) {
        match self {
            HealthSubject::Room {
                endpoint_id,
                name,
                listener_service_id,
                state,
                since,
                reasons,
            } => {
                let room = RoomRef {
                    endpoint_id,
                    name,
                    listener_service_id: listener_service_id.as_deref(),
                };
                let previous = previous.and_then(HealthState::parse);
                let event = Event::room_health(&room, previous, *state, *since, reasons, now);
                (state.as_str(), event)
            }
            HealthSubject::Listener {
                id,
                name,
                health,
                last_contact,
            } => {
                let previous = previous.and_then(ListenerHealth::parse);
                let event = Event::listener_health(id, name, previous, *health, *last_contact, now);
                (health.as_str(), event)
            }
            HealthSubject::Calendar {
                endpoint_id,
                name,
                listener_service_id,
                calendar_type,
                calendar_id,
                unreadable,
            } => {
                let room = RoomRef {
                    endpoint_id,
                    name,
                    listener_service_id: listener_service_id.as_deref(),
                };
                let calendar = CalendarRef {
                    calendar_type,
                    calendar_id,
                };
                // Only the unreadable state is stored: none recorded is readable or unseen.
                let previously = previous.map(|p| p != CALENDAR_UNREADABLE);
                let event =
                    Event::calendar_read(&room, &calendar, previously, unreadable.as_ref(), now);
                let state = if unreadable.is_some() {
                    CALENDAR_UNREADABLE
                } else {
                    CALENDAR_READABLE
                };
                (state, event)
            }
        }
    }
}

/// Subscriptions, the outbox, and the states health events are computed against.
///
/// Events reach the outbox in the transaction of the change they report: the status writes
/// (call started and ended), inventory saves (inventory changed), failed commands' audit
/// entries (command failed), and [`WebhookStore::record_health`] (room and listener states).
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// `LimitReached` (entity class `Webhook`) when the enterprise holds
    /// [`crate::webhook::MAX_SUBSCRIPTIONS`] already.
    async fn insert_webhook(
        &self,
        subscription: &Subscription,
        secret: &SealedSecret,
        audit: &AuditEntry,
    ) -> Result<()>;
    /// Oldest first.
    async fn webhooks(&self, enterprise: &EnterpriseId) -> Result<Vec<Subscription>>;
    async fn webhook(
        &self,
        enterprise: &EnterpriseId,
        id: &WebhookId,
    ) -> Result<Option<Subscription>>;
    /// Replaces URL, event types and description; `None` if no such subscription.
    async fn update_webhook(
        &self,
        enterprise: &EnterpriseId,
        id: &WebhookId,
        draft: &SubscriptionDraft,
        now: i64,
        audit: &AuditEntry,
    ) -> Result<Option<Subscription>>;
    /// Deletes it with its deliveries.
    async fn delete_webhook(
        &self,
        enterprise: &EnterpriseId,
        id: &WebhookId,
        audit: &AuditEntry,
    ) -> Result<bool>;
    /// Pauses (`Some(reason)`) or resumes (`None`) a subscription; `None` if no such one.
    async fn set_webhook_paused(
        &self,
        enterprise: &EnterpriseId,
        id: &WebhookId,
        pause: Option<String>,
        now: i64,
        audit: &AuditEntry,
    ) -> Result<Option<Subscription>>;
    /// Adds `event` to the outbox of every subscription of the enterprise that wants it, or of
    /// `only` whatever it wants (the test delivery). How many deliveries were queued.
    #[allow(clippy::needless_lifetimes)] // mockall needs the lifetime named
    async fn record_event<'a>(
        &self,
        enterprise: &EnterpriseId,
        event: &Event,
        only: Option<&'a WebhookId>,
    ) -> Result<u64>;
    /// One subscription's deliveries, newest first, older than `before`.
    async fn deliveries(
        &self,
        enterprise: &EnterpriseId,
        id: &WebhookId,
        before: Option<i64>,
        limit: usize,
    ) -> Result<DeliveryPage>;
    /// Claims up to `limit` unpaused subscriptions with a delivery due at `now` whose lease is
    /// free or expired, for `owner` until `now + lease_ms`. Two instances never hold one
    /// subscription at once; a dead instance's claims expire.
    async fn claim_webhooks(
        &self,
        owner: &str,
        now: i64,
        lease_ms: i64,
        limit: usize,
    ) -> Result<Vec<ClaimedWebhook>>;
    /// The subscription's oldest pending delivery, if it is due at `now` (a later one waits
    /// behind it: deliveries go out in order).
    async fn due_delivery(&self, id: &WebhookId, now: i64) -> Result<Option<DueDelivery>>;
    /// Records an attempt: delivered, or failed with its next attempt (`None`: the schedule
    /// is spent; the delivery fails and the subscription pauses with `pause_reason`).
    #[allow(clippy::needless_lifetimes)] // mockall needs the lifetime named
    async fn record_attempt<'a>(
        &self,
        id: &WebhookId,
        delivery_id: i64,
        at: i64,
        outcome: &AttemptOutcome,
        next_attempt: Option<i64>,
        pause_reason: Option<&'a str>,
    ) -> Result<()>;
    /// Gives a claim back before its lease runs out.
    async fn release_webhook(&self, id: &WebhookId, owner: &str) -> Result<()>;
    /// Compares `subjects` with the states last recorded for the enterprise (none recorded:
    /// healthy, or not seen before), records the changes (a healthy state by removing the
    /// record) and forgets subjects of `scope`'s kinds no longer there, and queues the events
    /// of the changes ([`HealthSubject::observe`]) and the rooms' history entries, all in one
    /// transaction. How many deliveries were queued.
    async fn record_health(
        &self,
        enterprise: &EnterpriseId,
        scope: HealthScope,
        subjects: &[HealthSubject],
        now: i64,
    ) -> Result<u64>;
    /// Deletes delivered and failed deliveries finished before `cutoff`.
    async fn purge_deliveries(&self, cutoff: i64) -> Result<u64>;
    /// The room's health changes ([`HealthSubject::room_change`], recorded by
    /// [`WebhookStore::record_health`] in its transaction), newest first, at most `limit`.
    async fn health_history(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
        limit: usize,
    ) -> Result<Vec<HealthChange>>;
    /// Deletes health changes recorded before `cutoff`.
    async fn purge_health_history(&self, cutoff: i64) -> Result<u64>;
}

/// One signed request.
#[derive(Debug, Clone, Copy)]
pub struct OutgoingWebhook<'a> {
    pub url: &'a str,
    /// The `webhook-id` header.
    pub event_id: &'a str,
    pub body: &'a str,
    /// `whsec_...`: the subscription's signing secret.
    pub secret: &'a Secret,
}

/// Sends deliveries over HTTP: signed (Standard Webhooks), with a timeout, never following a
/// redirect, connecting only to addresses `crate::webhook::target::TargetRule` permits.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait WebhookSender: Send + Sync {
    /// Whether `url` may be a target now: its host resolves, and only to permitted addresses.
    /// The refusal in words otherwise (no URL in it).
    async fn check_target(&self, url: &str) -> std::result::Result<(), String>;
    /// One attempt.
    async fn send<'a>(&self, request: OutgoingWebhook<'a>) -> AttemptOutcome;
}

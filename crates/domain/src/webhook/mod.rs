//! Webhooks: an enterprise's subscriptions to events, and the rules of their delivery
//! (Standard Webhooks 1.0; docs/operations.md "Webhooks").
//!
//! - [`event`]: the events, their wire names and bodies, and which facts make them.
//! - [`target`]: where a delivery may go (the SSRF rule).
//! - [`signature`]: how a delivery is signed (and a receiver checks it).
//! - here: subscriptions, deliveries, and the retry schedule.
//!
//! An event is written to the outbox (one delivery per matching subscription) in the same
//! transaction as the change it reports; each instance then claims subscriptions under a lease
//! and delivers their pending deliveries oldest first.

pub mod event;
pub mod signature;
pub mod target;

pub use event::{Event, EventType};

use crate::error::Error;
use crate::ids::{EnterpriseId, WebhookId};
use serde::Serialize;

/// The longest URL a subscription may name.
pub const MAX_URL_CHARS: usize = 2_000;
/// The longest description.
pub const MAX_DESCRIPTION_CHARS: usize = 200;
/// How many subscriptions an enterprise may hold.
pub const MAX_SUBSCRIPTIONS: usize = 50;

/// One enterprise's subscription: where its events go and which ones.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Subscription {
    pub id: WebhookId,
    #[serde(skip)]
    pub enterprise_id: EnterpriseId,
    pub url: String,
    pub event_types: Vec<EventType>,
    pub description: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    /// Set when deliveries stopped: when, and why. Events still queue while paused.
    pub paused: Option<Pause>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pause {
    pub at: i64,
    pub reason: String,
}

impl Subscription {
    pub fn wants(&self, event: EventType) -> bool {
        self.event_types.contains(&event)
    }
}

/// What a caller sends to create or change a subscription, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionDraft {
    pub url: String,
    pub event_types: Vec<EventType>,
    pub description: Option<String>,
}

impl SubscriptionDraft {
    /// Checks a caller's fields: an http(s) URL with a host and no user information (it
    /// would be a credential in the clear), at least one known event type, a short
    /// description. `Invalid` naming what is wrong otherwise; the URL itself is never echoed
    /// (it may carry a receiver's token in its query).
    pub fn new(
        url: &str,
        event_types: &[String],
        description: Option<&str>,
    ) -> Result<Self, Error> {
        target::parse_url(url)?;
        if event_types.is_empty() {
            return Err(Error::invalid(
                "eventTypes must name at least one event type",
            ));
        }
        let mut types = Vec::with_capacity(event_types.len());
        for name in event_types {
            let Some(t) = EventType::parse_subscribable(name) else {
                return Err(Error::invalid(format!(
                    "eventTypes: {} is not an event type (one of {})",
                    crate::enums::shorten(name),
                    EventType::SUBSCRIBABLE
                        .iter()
                        .map(|t| t.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            };
            if !types.contains(&t) {
                types.push(t);
            }
        }
        types.sort();
        let description = description.map(str::trim).filter(|d| !d.is_empty());
        if let Some(d) = description
            && d.chars().count() > MAX_DESCRIPTION_CHARS
        {
            return Err(Error::invalid(format!(
                "description is longer than {MAX_DESCRIPTION_CHARS} characters"
            )));
        }
        Ok(SubscriptionDraft {
            url: url.to_owned(),
            event_types: types,
            description: description.map(str::to_owned),
        })
    }
}

/// Where a delivery is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum DeliveryState {
    /// Waiting for its first or next attempt.
    Pending,
    /// A 2xx answer was received.
    Delivered,
    /// Every attempt of the schedule failed; the subscription was paused.
    Failed,
}

impl DeliveryState {
    pub const fn as_str(self) -> &'static str {
        match self {
            DeliveryState::Pending => "pending",
            DeliveryState::Delivered => "delivered",
            DeliveryState::Failed => "failed",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [Self::Pending, Self::Delivered, Self::Failed]
            .into_iter()
            .find(|s| s.as_str() == text)
    }
}

/// One event on its way to one subscription.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// The order of deliveries within the subscription (and the page cursor).
    pub id: i64,
    /// The `webhook-id` header: the same on every attempt (the receiver's idempotency key).
    pub event_id: String,
    pub event_type: EventType,
    pub created_at: i64,
    pub state: DeliveryState,
    pub attempts: u32,
    pub next_attempt_at: Option<i64>,
    pub last_attempt_at: Option<i64>,
    /// The HTTP status of the last answer; `None` when there was none.
    pub last_status: Option<u16>,
    /// Why the last attempt failed, in words.
    pub last_error: Option<String>,
    pub delivered_at: Option<i64>,
}

/// A delivery handed to the instance that claimed its subscription: what to send, where.
#[derive(Debug, Clone)]
pub struct DueDelivery {
    pub delivery: Delivery,
    /// The signed body, exactly as recorded.
    pub body: String,
}

/// What came of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptOutcome {
    /// The answer's status, when one came.
    pub status: Option<u16>,
    /// Why it did not count as delivered; `None` for a 2xx answer.
    pub error: Option<String>,
}

impl AttemptOutcome {
    pub fn delivered(&self) -> bool {
        self.error.is_none() && self.status.is_some_and(|s| (200..300).contains(&s))
    }
}

/// The delays before each retry, after the first attempt: Standard Webhooks' suggested
/// schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), eight attempts over about 28 hours.
pub const RETRY_DELAYS_MS: [i64; 7] = [
    5_000,
    5 * 60_000,
    30 * 60_000,
    2 * 3_600_000,
    5 * 3_600_000,
    10 * 3_600_000,
    10 * 3_600_000,
];

/// After `attempts` failed attempts: when to try again, or `None` when the schedule is spent
/// (the delivery fails and its subscription pauses).
pub fn next_attempt(attempts: u32, now: i64) -> Option<i64> {
    let index = usize::try_from(attempts).ok()?.checked_sub(1)?;
    RETRY_DELAYS_MS.get(index).map(|d| now + d)
}

/// Why a subscription pauses when a delivery's schedule is spent.
pub fn pause_reason(delivery: &Delivery, outcome: &AttemptOutcome) -> String {
    let last = match (outcome.status, &outcome.error) {
        (Some(status), _) => format!("the last answer was HTTP {status}"),
        (None, Some(error)) => format!("the last attempt failed: {error}"),
        (None, None) => "no answer".to_owned(),
    };
    format!(
        "delivery {} ({}) failed {} times; {last}",
        delivery.id,
        delivery.event_type.as_str(),
        delivery.attempts + 1
    )
}

/// A page of deliveries, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeliveryPage {
    pub deliveries: Vec<Delivery>,
    /// The cursor of the next (older) page.
    pub next: Option<i64>,
}

#[cfg(test)]
mod tests;

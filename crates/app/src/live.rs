//! Live updates: the tickets that open a browser's event stream ([`LiveTickets`]), and telling
//! every instance's streams what changed ([`FleetChanges`]). The streams themselves are the
//! HTTP adapter's.

use crate::auth::Principal;
use roomlink_domain::access::{Operation, Target};
use roomlink_domain::cluster::{ClusterEvent, EventBus};
use roomlink_domain::error::{Error, ErrorKind, Result};
use roomlink_domain::ids::EnterpriseId;
use roomlink_domain::live::{LiveTicket, LiveTopic};
use roomlink_domain::ports::{Clock, TicketSigner, TokenStore};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};

/// A ticket as issued: its text (a credential for a minute: never logged) and its expiry.
#[derive(Debug, Clone)]
pub struct IssuedTicket {
    pub ticket: String,
    pub expires_ms: i64,
}

pub struct LiveTickets {
    pub signer: Arc<dyn TicketSigner>,
    pub tokens: Arc<dyn TokenStore>,
    pub clock: Arc<dyn Clock>,
}

impl LiveTickets {
    /// A ticket for the caller's access token. A caller with Basic credentials has no token to
    /// name: it sends its credentials with the stream request itself (a header works there for
    /// anything but a browser's `EventSource`).
    pub fn issue(&self, principal: &Principal) -> Result<IssuedTicket> {
        principal.authorize(Operation::LiveTicket, Target::Enterprise)?;
        let Some(token) = principal.token() else {
            return Err(Error::new(
                ErrorKind::Forbidden,
                "Tickets are issued for access tokens; with Basic credentials, send them with \
                 the event stream request itself.",
            )
            .with("operation", Operation::LiveEvents.name()));
        };
        let ticket = LiveTicket::issue(
            principal.enterprise_id.clone(),
            token.id().clone(),
            self.clock.now_ms(),
        );
        let signature = self.signer.sign(&ticket.signed_text())?;
        Ok(IssuedTicket {
            ticket: ticket.encode(&signature),
            expires_ms: ticket.expires_ms,
        })
    }

    /// The caller a ticket stands for: its token's, if the ticket is genuine, unexpired, and
    /// the token still live. Any failure is `BadCredentialsException`, the same for each.
    pub async fn open(&self, text: &str) -> Result<Principal> {
        let (ticket, signature) = LiveTicket::decode(text)?;
        let now = self.clock.now_ms();
        if !ticket.is_live(now) || !self.signer.verify(&ticket.signed_text(), signature) {
            return Err(Error::bad_credentials());
        }
        let token = self
            .tokens
            .token_by_id(&ticket.enterprise, &ticket.token, now)
            .await?
            .ok_or_else(Error::bad_credentials)?;
        Ok(Principal::of_token(token))
    }
}

/// Publishes the topics browsers follow (statuses travel as `StatusesChanged`, which also
/// empties caches). Health and listener changes are told only when what a page shows of them
/// changed since the last round this instance watched.
pub struct FleetChanges {
    events: Arc<dyn EventBus>,
    /// Per enterprise and topic, a fingerprint of what was last told.
    told: Mutex<HashMap<(EnterpriseId, LiveTopic), u64>>,
}

impl FleetChanges {
    pub fn new(events: Arc<dyn EventBus>) -> FleetChanges {
        FleetChanges {
            events,
            told: Mutex::new(HashMap::new()),
        }
    }

    /// Tells every instance's streams that `topic` changed for `enterprise`.
    pub fn changed(&self, enterprise: &EnterpriseId, topic: LiveTopic) {
        self.events.publish(ClusterEvent::FleetChanged {
            enterprise: enterprise.clone(),
            topic,
        });
    }

    /// Tells of `topic` if `state` differs from the state last observed here. The first
    /// observation is not told: there is nothing to compare it with (a browser reads the whole
    /// picture when its stream opens), and an instance taking the watch over would otherwise
    /// tell every enterprise at once.
    pub fn observed(&self, enterprise: &EnterpriseId, topic: LiveTopic, state: impl Hash) {
        let mut hasher = DefaultHasher::new();
        state.hash(&mut hasher);
        let fingerprint = hasher.finish();
        let previous = self
            .told
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert((enterprise.clone(), topic), fingerprint);
        if previous.is_some_and(|p| p != fingerprint) {
            self.changed(enterprise, topic);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roomlink_domain::cluster::{LocalBus, RecordedEvents};

    #[test]
    fn a_topic_is_told_when_its_state_changes() {
        let bus = Arc::new(LocalBus::default());
        let seen = Arc::new(RecordedEvents::default());
        bus.subscribe(seen.clone());
        let changes = FleetChanges::new(bus);
        let e = EnterpriseId::from_trusted("e".into());
        changes.observed(&e, LiveTopic::Health, ("room1", "ok"));
        changes.observed(&e, LiveTopic::Health, ("room1", "ok"));
        changes.observed(&e, LiveTopic::Listeners, ("listener1", "online"));
        changes.observed(&e, LiveTopic::Health, ("room1", "offline"));
        changes.observed(&e, LiveTopic::Listeners, ("listener1", "offline"));
        changes.observed(&e, LiveTopic::Health, ("room1", "offline"));
        let told = |topic| ClusterEvent::FleetChanged {
            enterprise: e.clone(),
            topic,
        };
        assert_eq!(
            seen.all(),
            vec![told(LiveTopic::Health), told(LiveTopic::Listeners)],
            "first observations are not told, changes are, repeats are not"
        );
    }
}

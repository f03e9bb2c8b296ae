//! Calendar push: rooms with `calendarPushMode` ENABLED, a calendar and a listener that reports
//! `CALENDAR_PUSH` for them are sent their meetings (the listener's `pushcalendar` command),
//! so the room system shows them.
//!
//! One round ([`CalendarPusher::run_once`]) looks at every such room: it asks the room's
//! listener whether it can push to the room (its reported capabilities, cached by the
//! transport), reads the room's calendar for the push window (`calendar::push`), and sends
//! the meetings when they differ from what was last pushed to the room successfully. What was
//! pushed is kept in memory as a fingerprint per room: after a restart, or when the poll lease
//! moves, each room is pushed once again (a push replaces the room's list, so a repeat is
//! harmless). Only the instance holding the poll lease runs rounds; an instance that does not
//! hold it forgets its fingerprints, so it pushes afresh when it takes the lease back.
//!
//! A push that fails is recorded in failures against the endpoint and sent again next round.
//! A room whose listener cannot say what it can do (offline, misconfigured) is reported by
//! the round and not recorded: the status poller records listener failures already.

use super::calendar_rooms::{CalendarRoom, RoomWalk};
use super::calendars::{CalendarService, OpenAccount};
use super::control::ControlService;
use futures::stream::{self, StreamExt};
use roomlink_domain::calendar::push::{CalendarPush, PushFingerprint, push_window};
use roomlink_domain::calendar::upcoming::as_shown;
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::enums::Toggle;
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EndpointId, EnterpriseId, FailureId};
use roomlink_domain::ports::{
    Clock, Command, CommandTarget, EndpointStore, EnterpriseStore, FailureStore, IdGenerator,
    PollLease,
};
use roomlink_domain::status::Failure;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

/// Rooms handled at once in a round (calendar reads and pushes), as auto-join reads.
const ROOMS_AT_ONCE: usize = 8;

pub struct CalendarPusher {
    pub enterprises: Arc<dyn EnterpriseStore>,
    pub endpoints: Arc<dyn EndpointStore>,
    pub failures: Arc<dyn FailureStore>,
    pub poll_lease: Arc<dyn PollLease>,
    pub calendars: Arc<CalendarService>,
    pub control: Arc<ControlService>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGenerator>,
    /// What was last pushed to each room successfully.
    pub pushed: Mutex<HashMap<EndpointId, PushFingerprint>>,
    /// How old a calendar's copy may be (see `CalendarMirror`).
    pub calendar_max_age_ms: i64,
    /// Rounds ended, whether this instance held the lease or not.
    pub rounds: crate::rounds::Rounds,
}

/// What one round did.
#[derive(Debug, Default)]
pub struct PushRound {
    /// Rooms with calendar push enabled and a calendar.
    pub rooms: usize,
    /// Pushes sent that the listener carried out.
    pub pushed: usize,
    /// Rooms whose meetings were unchanged since their last push.
    pub unchanged: usize,
    /// Rooms whose listener does not report `CALENDAR_PUSH` for them.
    pub not_capable: usize,
    /// Pushes that failed (each recorded in failures).
    pub failed: usize,
    /// Rooms whose listener could not be asked, or whose calendar could not be read, with
    /// why (tried again next round). An unusable calendar account is named once.
    pub skipped: Vec<(EndpointId, Error)>,
    /// Enterprises whose round stopped at a storage error.
    pub enterprises_failed: Vec<(EnterpriseId, Error)>,
}

enum RoomOutcome {
    Pushed(EndpointId, PushFingerprint),
    Unchanged,
    NotCapable,
    Failed(EndpointId),
    Skipped(EndpointId, Error),
}

/// The rooms calendar push is for.
fn calendar_push_mode(endpoint: &Endpoint) -> Option<&Toggle> {
    endpoint.profile().calendar_push_mode()
}

/// Where a push goes, as its fingerprint covers it: a room given another address, protocol or
/// listener is pushed again.
fn destination(target: &CommandTarget) -> String {
    let p = target.endpoint.profile();
    format!(
        "{}|{}|{}|{}|{}",
        target.listener_id,
        target.endpoint.id(),
        p.ip_address().map(|a| a.as_str()).unwrap_or_default(),
        p.port().map(|port| port.get()).unwrap_or_default(),
        p.control_protocol().map(|c| c.as_str()).unwrap_or_default(),
    )
}

impl CalendarPusher {
    fn fingerprints(&self) -> std::sync::MutexGuard<'_, HashMap<EndpointId, PushFingerprint>> {
        self.pushed.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One round over every enterprise when this instance holds the poll lease; otherwise
    /// nothing (and what was pushed is forgotten). Fails as a whole only when the lease or the
    /// enterprises cannot be read.
    pub async fn run_once(&self) -> Result<PushRound> {
        let round = self.round().await;
        self.rounds.end();
        round
    }

    async fn round(&self) -> Result<PushRound> {
        let mut round = PushRound::default();
        if !self.poll_lease.hold_poll_lease().await? {
            self.fingerprints().clear();
            return Ok(round);
        }
        let mut seen = HashSet::new();
        let mut complete = true;
        for enterprise in self.enterprises.enterprise_ids().await? {
            if let Err(e) = self
                .enterprise_round(&enterprise, &mut round, &mut seen)
                .await
            {
                round.enterprises_failed.push((enterprise, e));
                complete = false;
            }
        }
        if complete {
            // Rooms no longer pushed to are forgotten: turned back on, they are pushed again.
            self.fingerprints().retain(|id, _| seen.contains(id));
        }
        Ok(round)
    }

    async fn enterprise_round(
        &self,
        enterprise: &EnterpriseId,
        round: &mut PushRound,
        seen: &mut HashSet<EndpointId>,
    ) -> Result<()> {
        let mut walk = RoomWalk::new(
            &self.calendars,
            self.endpoints.as_ref(),
            enterprise,
            calendar_push_mode,
        );
        while let Some(page) = walk.next_page().await? {
            round.rooms += page.selected.len();
            seen.extend(page.selected);
            round.skipped.extend(page.unreadable);
            let outcomes: Vec<RoomOutcome> =
                stream::iter(page.ready)
                    .map(|(room, account)| async move {
                        self.room_round(enterprise, room, &account).await
                    })
                    .buffer_unordered(ROOMS_AT_ONCE)
                    .collect()
                    .await;
            for outcome in outcomes {
                match outcome {
                    RoomOutcome::Pushed(id, fingerprint) => {
                        self.fingerprints().insert(id, fingerprint);
                        round.pushed += 1;
                    }
                    RoomOutcome::Unchanged => round.unchanged += 1,
                    RoomOutcome::NotCapable => round.not_capable += 1,
                    RoomOutcome::Failed(id) => {
                        self.fingerprints().remove(&id);
                        round.failed += 1;
                    }
                    RoomOutcome::Skipped(id, e) => round.skipped.push((id, e)),
                }
            }
        }
        Ok(())
    }

    /// One room: can it be pushed to, what are its meetings, did they change; then the push.
    async fn room_round(
        &self,
        enterprise: &EnterpriseId,
        room: CalendarRoom,
        account: &OpenAccount,
    ) -> RoomOutcome {
        let target = match self.control.push_target(enterprise, &room.id).await {
            Ok(Some(target)) => target,
            Ok(None) => return RoomOutcome::NotCapable,
            Err(e) => return RoomOutcome::Skipped(room.id, e),
        };
        let window = push_window(self.clock.now_ms());
        let meetings = match self
            .calendars
            .read(
                account,
                &room.id,
                &room.calendar_id,
                window,
                self.calendar_max_age_ms,
            )
            .await
        {
            Ok(meetings) => meetings,
            Err(e) => return RoomOutcome::Skipped(room.id, e),
        };
        // The panel shows what the API would: no titles for a REDACTED room.
        let meetings = as_shown(meetings, room.privacy.as_ref());
        let push = CalendarPush::of(window, &meetings);
        let fingerprint = push.fingerprint(&destination(&target));
        if self.fingerprints().get(&room.id) == Some(&fingerprint) {
            return RoomOutcome::Unchanged;
        }
        let count = push.meetings.len();
        match self
            .control
            .deliver(&target, &Command::PushCalendar(push))
            .await
        {
            Ok(()) => RoomOutcome::Pushed(room.id, fingerprint),
            Err(error) => {
                self.record(enterprise, &room.id, count, &error).await;
                RoomOutcome::Failed(room.id)
            }
        }
    }

    /// Keeps a failed push for `GET /api/failures`, against the endpoint.
    async fn record(
        &self,
        enterprise: &EnterpriseId,
        room: &EndpointId,
        count: usize,
        error: &Error,
    ) {
        let mut failure = Failure::from_error(
            FailureId::from_trusted(self.ids.entity_id()),
            enterprise.clone(),
            EndpointId::ENTITY_CLASS,
            room.as_str(),
            error,
            self.clock.now_ms(),
        );
        failure.error_message = format!(
            "calendar push of {count} meetings: {}",
            failure.error_message
        );
        failure.error_details.insert(
            "calendarPush".to_owned(),
            serde_json::json!({"meetings": count}),
        );
        let _ = self.failures.record_failure(&failure).await;
    }
}

#[cfg(test)]
mod tests;

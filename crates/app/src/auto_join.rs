//! Auto-join: rooms with `autoJoinMode` ENABLED dial the meetings on their calendars at the
//! start time, through the normal control path.
//!
//! One round ([`AutoJoiner::run_once`]) reads, for every such room, the part of its calendar
//! where a due meeting can start (`AutoJoinTiming::window`), picks the meeting due now, and
//! joins it once: a claim in the store ([`AutoJoinStore`]) makes each occurrence joined by one
//! instance only, across restarts. Only the instance holding the poll lease runs rounds, so
//! calendars are read once per round whatever the number of instances; the claims keep the
//! promise when the lease moves between instances mid-round.

use super::auth::Principal;
use super::calendar_rooms::{CalendarRoom, RoomWalk};
use super::calendars::{CalendarService, OpenAccount};
use super::control::ControlService;
use futures::stream::{self, StreamExt};
use roomlink_domain::calendar::auto_join::{AutoJoinTiming, JoinOutcome, Occurrence};
use roomlink_domain::calendar::upcoming::{MeetingWindow, UpcomingMeeting};
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::enums::Toggle;
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EndpointId, EnterpriseId, FailureId};
use roomlink_domain::inventory::ReadFailure;
use roomlink_domain::ports::{
    AutoJoinClaim, AutoJoinStore, Clock, Command, EndpointStore, EnterpriseStore, FailureStore,
    HealthScope, HealthSubject, IdGenerator, PollLease, WebhookStore,
};
use roomlink_domain::status::Failure;
use std::sync::Arc;

/// The audit trail's name for the job (actor `scheduler`, id `auto-join`).
pub const JOB: &str = "auto-join";

/// How long a claim is held while its join is sent: longer than any join takes (the listener
/// call's own timeout), so a lapsed lease means its holder died.
const CLAIM_LEASE_MS: i64 = 120_000;

/// Calendars read at once in a round: a calendar system answering in 50 ms then serves
/// 10,000 rooms in about a minute, and no system sees more than this many requests at a time
/// from one roomlink (Graph and Google throttle bursts).
const READS_AT_ONCE: usize = 8;

pub struct AutoJoiner {
    pub enterprises: Arc<dyn EnterpriseStore>,
    pub endpoints: Arc<dyn EndpointStore>,
    pub claims: Arc<dyn AutoJoinStore>,
    pub failures: Arc<dyn FailureStore>,
    /// Where each round records which calendars it could read (`calendar.*` events).
    pub webhooks: Arc<dyn WebhookStore>,
    pub poll_lease: Arc<dyn PollLease>,
    pub calendars: Arc<CalendarService>,
    pub control: Arc<ControlService>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGenerator>,
    /// This instance, as its claims name it.
    pub holder: String,
    pub timing: AutoJoinTiming,
    /// How old a calendar's copy may be (see `CalendarMirror`): rounds come more often than
    /// calendars are asked.
    pub calendar_max_age_ms: i64,
    /// Rounds ended, whether this instance held the lease or not.
    pub rounds: crate::rounds::Rounds,
}

/// What one round did.
#[derive(Debug, Default)]
pub struct AutoJoinRound {
    /// Rooms with auto-join enabled and a calendar.
    pub rooms: usize,
    /// Joins sent that the room system carried out.
    pub joined: usize,
    /// Joins sent that failed (each recorded in failures).
    pub failed: usize,
    /// Rooms whose calendar could not be read this round, with why (they are tried again at
    /// the next round, within the grace time). A calendar account that cannot be used is
    /// named once, with the first of its rooms.
    pub unread: Vec<(EndpointId, Error)>,
    /// Enterprises whose round stopped at a storage error.
    pub enterprises_failed: Vec<(EnterpriseId, Error)>,
    /// `calendar.unreadable` and `calendar.readable` deliveries queued.
    pub calendar_events: u64,
}

/// What one room's part of a round came to.
enum RoomOutcome {
    /// Nothing due, or due and already claimed.
    Nothing,
    Settled(JoinOutcome),
    /// Its calendar could not be read.
    Unread(CalendarRoom, Error),
    /// A storage error: the enterprise's round stops.
    Broken(Error),
}

/// A room's calendar as the round found it: read, or not (`unreadable`, why).
fn calendar_subject(room: CalendarRoom, unreadable: Option<ReadFailure>) -> HealthSubject {
    HealthSubject::Calendar {
        endpoint_id: room.id.into_string(),
        name: room.name,
        listener_service_id: room.listener_service_id,
        calendar_type: room.calendar_type.as_str().to_owned(),
        calendar_id: room.calendar_id,
        unreadable,
    }
}

/// The rooms auto-join is for.
fn auto_join_mode(endpoint: &Endpoint) -> Option<&Toggle> {
    endpoint.profile().auto_join_mode()
}

impl AutoJoiner {
    /// One round over every enterprise, when this instance holds the poll lease (otherwise
    /// nothing). Fails as a whole only when the lease or the enterprises cannot be read.
    pub async fn run_once(&self) -> Result<AutoJoinRound> {
        let round = self.round().await;
        self.rounds.end();
        round
    }

    async fn round(&self) -> Result<AutoJoinRound> {
        let mut round = AutoJoinRound::default();
        if !self.poll_lease.hold_poll_lease().await? {
            return Ok(round);
        }
        for enterprise in self.enterprises.enterprise_ids().await? {
            if let Err(e) = self.enterprise_round(&enterprise, &mut round).await {
                round.enterprises_failed.push((enterprise, e));
            }
        }
        Ok(round)
    }

    async fn enterprise_round(
        &self,
        enterprise: &EnterpriseId,
        round: &mut AutoJoinRound,
    ) -> Result<()> {
        let mut principal = None;
        let mut walk = RoomWalk::new(
            &self.calendars,
            self.endpoints.as_ref(),
            enterprise,
            auto_join_mode,
        );
        // Every room's calendar as the round found it, recorded when the walk is done.
        let mut calendars = Vec::new();
        while let Some(page) = walk.next_page().await? {
            round.rooms += page.selected.len();
            round.unread.extend(page.unreadable);
            calendars.extend(
                page.left_out
                    .into_iter()
                    .map(|(room, why)| calendar_subject(room, Some(why))),
            );
            if page.ready.is_empty() {
                continue;
            }
            let principal = match &principal {
                Some(principal) => principal,
                None => principal.insert(self.principal(enterprise).await?),
            };
            let outcomes: Vec<(Option<HealthSubject>, RoomOutcome)> =
                stream::iter(page.ready)
                    .map(|(room, account)| async move {
                        self.room_round(principal, room, &account).await
                    })
                    .buffer_unordered(READS_AT_ONCE)
                    .collect()
                    .await;
            for (read, outcome) in outcomes {
                calendars.extend(read);
                match outcome {
                    RoomOutcome::Nothing => {}
                    RoomOutcome::Settled(JoinOutcome::Joined) => round.joined += 1,
                    RoomOutcome::Settled(JoinOutcome::Failed) => round.failed += 1,
                    RoomOutcome::Unread(room, e) => {
                        let why = ReadFailure::of(&e);
                        round.unread.push((room.id.clone(), e));
                        calendars.push(calendar_subject(room, Some(why)));
                    }
                    RoomOutcome::Broken(e) => return Err(e),
                }
            }
        }
        round.calendar_events += self
            .webhooks
            .record_health(
                enterprise,
                HealthScope::Calendars,
                &calendars,
                self.clock.now_ms(),
            )
            .await?;
        Ok(())
    }

    /// One room: its calendar read (the calendar's subject when it was), and the meeting due
    /// now joined unless it already was.
    async fn room_round(
        &self,
        principal: &Principal,
        room: CalendarRoom,
        account: &OpenAccount,
    ) -> (Option<HealthSubject>, RoomOutcome) {
        let now = self.clock.now_ms();
        let (from_ms, to_ms) = self.timing.window(now);
        let window = MeetingWindow { from_ms, to_ms };
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
            Err(e) => return (None, RoomOutcome::Unread(room, e)),
        };
        let id = room.id.clone();
        let read = Some(calendar_subject(room, None));
        let Some(meeting) = self.timing.due(&meetings, now) else {
            return (read, RoomOutcome::Nothing);
        };
        let outcome = match self.join(principal, &id, meeting).await {
            Ok(Some(outcome)) => RoomOutcome::Settled(outcome),
            Ok(None) => RoomOutcome::Nothing,
            Err(e) => RoomOutcome::Broken(e),
        };
        (read, outcome)
    }

    async fn principal(&self, enterprise: &EnterpriseId) -> Result<Principal> {
        let found = self
            .enterprises
            .enterprise(enterprise)
            .await?
            .ok_or_else(|| Error::internal(format!("enterprise {enterprise} vanished")))?;
        Ok(Principal::scheduler(found.id, found.name, JOB))
    }

    /// Joins `meeting` in the room unless another round (here or on another instance) has:
    /// `None` when the claim was not ours to take.
    async fn join(
        &self,
        principal: &Principal,
        room: &EndpointId,
        meeting: &UpcomingMeeting,
    ) -> Result<Option<JoinOutcome>> {
        let Some(dial) = &meeting.dial else {
            return Ok(None);
        };
        let occurrence = Occurrence {
            uid: meeting.uid.clone(),
            start_ms: meeting.start,
        };
        let now = self.clock.now_ms();
        let claim = AutoJoinClaim {
            enterprise_id: principal.enterprise_id.clone(),
            endpoint_id: room.clone(),
            occurrence: occurrence.clone(),
            holder: self.holder.clone(),
            lease_until_ms: now + CLAIM_LEASE_MS,
        };
        if !self.claims.claim_auto_join(&claim, now).await? {
            return Ok(None);
        }
        let sent = self
            .control
            .command(principal, room, Command::Join(dial.join.clone()))
            .await;
        let outcome = match &sent {
            Ok(()) => JoinOutcome::Joined,
            Err(error) => {
                self.record(principal, room, meeting, error).await;
                JoinOutcome::Failed
            }
        };
        self.claims
            .settle_auto_join(room, &occurrence, outcome, self.clock.now_ms())
            .await?;
        Ok(Some(outcome))
    }

    /// Keeps a failed auto-join for `GET /api/failures`: the control path's error, against the
    /// endpoint, with the meeting it was for.
    async fn record(
        &self,
        principal: &Principal,
        room: &EndpointId,
        meeting: &UpcomingMeeting,
        error: &Error,
    ) {
        let mut failure = Failure::from_error(
            FailureId::from_trusted(self.ids.entity_id()),
            principal.enterprise_id.clone(),
            EndpointId::ENTITY_CLASS,
            room.as_str(),
            error,
            self.clock.now_ms(),
        );
        failure.error_message = format!(
            "auto-join of the meeting starting at {} ({}): {}",
            meeting.start, meeting.uid, failure.error_message
        );
        failure.error_details.insert(
            "autoJoin".to_owned(),
            serde_json::json!({"uid": meeting.uid, "start": meeting.start}),
        );
        let _ = self.failures.record_failure(&failure).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Policies, Ports, Services};
    use async_trait::async_trait;
    use roomlink_domain::calendar::CalendarEvent;
    use roomlink_domain::cluster::{LocalBus, MockListenerLinks};
    use roomlink_domain::ports::{
        CalendarAccount, CalendarRead, CalendarReader, MockListenerTransport, MockPasswordHasher,
        MockPlatformIdentity, MockSecretSealer,
    };
    use roomlink_domain::rules::put::EndpointBody;
    use roomlink_domain::system::{ManualClock, RandomIds};
    use roomlink_memory_store::MemoryStore;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// A calendar system that takes 20 ms per read and counts how many reads overlap.
    #[derive(Default)]
    struct SlowCalendars {
        reading: AtomicUsize,
        most_at_once: AtomicUsize,
        reads: AtomicUsize,
    }

    #[async_trait]
    impl CalendarReader for SlowCalendars {
        async fn events(
            &self,
            _account: &CalendarAccount,
            _calendar_id: &str,
            _from_ms: i64,
            _to_ms: i64,
        ) -> Result<Vec<CalendarEvent>> {
            let now = self.reading.fetch_add(1, Ordering::SeqCst) + 1;
            self.most_at_once.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            self.reading.fetch_sub(1, Ordering::SeqCst);
            self.reads.fetch_add(1, Ordering::SeqCst);
            Ok(Vec::new())
        }
    }

    /// The services over the memory store; nothing but the calendars is called.
    fn services(calendars: Arc<dyn CalendarReader>) -> Services {
        services_at(calendars, Arc::new(ManualClock::at(1_800_000_000_000)))
    }

    fn services_at(calendars: Arc<dyn CalendarReader>, clock: Arc<ManualClock>) -> Services {
        services_over(calendars, clock, Arc::new(MemoryStore::new()))
    }

    fn services_over(
        calendars: Arc<dyn CalendarReader>,
        clock: Arc<ManualClock>,
        store: Arc<MemoryStore>,
    ) -> Services {
        let ports = Ports {
            store,
            hasher: Arc::new(MockPasswordHasher::new()),
            sealer: Arc::new(MockSecretSealer::new()),
            platform: Arc::new(MockPlatformIdentity::new()),
            transport: Arc::new(MockListenerTransport::new()),
            links: Arc::new(MockListenerLinks::new()),
            events: Arc::new(LocalBus::default()),
            clock,
            ids: Arc::new(RandomIds),
            calendars,
            webhooks: Arc::new(roomlink_domain::ports::MockWebhookSender::new()),
            tickets: Arc::new(roomlink_domain::ports::MockTicketSigner::new()),
        };
        Services::new(ports, Policies::default())
    }

    /// A calendar system with change marks: version `n` is mark `vn`.
    #[derive(Default)]
    struct MarkedCalendars {
        version: AtomicUsize,
        asked: AtomicUsize,
        read: AtomicUsize,
    }

    #[async_trait]
    impl CalendarReader for MarkedCalendars {
        async fn events(
            &self,
            _account: &CalendarAccount,
            _calendar_id: &str,
            _from_ms: i64,
            _to_ms: i64,
        ) -> Result<Vec<CalendarEvent>> {
            self.read.fetch_add(1, Ordering::SeqCst);
            Ok(Vec::new())
        }

        async fn events_since(
            &self,
            account: &CalendarAccount,
            calendar_id: &str,
            from_ms: i64,
            to_ms: i64,
            since: Option<String>,
        ) -> Result<CalendarRead> {
            self.asked.fetch_add(1, Ordering::SeqCst);
            let mark = format!("v{}", self.version.load(Ordering::SeqCst));
            if since.as_deref() == Some(mark.as_str()) {
                return Ok(CalendarRead::Unchanged);
            }
            let events = self.events(account, calendar_id, from_ms, to_ms).await?;
            Ok(CalendarRead::Events {
                events,
                mark: Some(mark),
            })
        }
    }

    /// A calendar system that never changes but hands out a new mark with every answer (as
    /// Microsoft Graph's delta links): counts the answers asked with a mark it no longer gave.
    #[derive(Default)]
    struct RenewingMarks {
        /// Per calendar, how many marks it handed out.
        issued: std::sync::Mutex<std::collections::HashMap<String, usize>>,
        outdated: AtomicUsize,
        read: AtomicUsize,
    }

    #[async_trait]
    impl CalendarReader for RenewingMarks {
        async fn events(
            &self,
            _account: &CalendarAccount,
            _calendar_id: &str,
            _from_ms: i64,
            _to_ms: i64,
        ) -> Result<Vec<CalendarEvent>> {
            self.read.fetch_add(1, Ordering::SeqCst);
            Ok(Vec::new())
        }

        async fn events_since(
            &self,
            account: &CalendarAccount,
            calendar_id: &str,
            from_ms: i64,
            to_ms: i64,
            since: Option<String>,
        ) -> Result<CalendarRead> {
            let (latest, mark) = {
                let mut issued = self
                    .issued
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let n = issued.entry(calendar_id.to_owned()).or_default();
                let latest = format!("t{n}");
                *n += 1;
                (latest, format!("t{n}"))
            };
            match since {
                Some(since) if since == latest => Ok(CalendarRead::Confirmed { mark }),
                Some(_) => {
                    self.outdated.fetch_add(1, Ordering::SeqCst);
                    Ok(CalendarRead::Confirmed { mark })
                }
                None => {
                    let events = self.events(account, calendar_id, from_ms, to_ms).await?;
                    Ok(CalendarRead::Events {
                        events,
                        mark: Some(mark),
                    })
                }
            }
        }
    }

    fn object(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[tokio::test]
    async fn a_round_reads_every_auto_join_room_a_bounded_number_at_once() {
        let calendars = Arc::new(SlowCalendars::default());
        let services = services(calendars.clone());
        let acme = services
            .admin
            .create_enterprise("acme", None)
            .await
            .unwrap();
        let admin = Principal::scheduler(acme.id, acme.name, "test");
        services
            .calendars
            .put_account(
                &admin,
                "CALDAV",
                &object(json!({"baseUrl": "http://127.0.0.1:5232/rooms/"})),
            )
            .await
            .unwrap();
        for n in 0..20 {
            let room = json!({"name": format!("Room {n}"), "calendarId": format!("room-{n}@corp.example"),
                "calendarType": "CALDAV", "autoJoinMode": "ENABLED"});
            services
                .endpoints
                .insert(&admin, EndpointBody::from_json(&object(room)))
                .await
                .unwrap();
        }
        // Rooms without auto-join, or without a calendar, are not read.
        for room in [
            json!({"name": "Off", "calendarId": "off@corp.example", "calendarType": "CALDAV"}),
            json!({"name": "No calendar", "autoJoinMode": "ENABLED"}),
        ] {
            services
                .endpoints
                .insert(&admin, EndpointBody::from_json(&object(room)))
                .await
                .unwrap();
        }
        let round = services.auto_join.run_once().await.unwrap();
        assert_eq!(round.rooms, 20);
        assert_eq!(calendars.reads.load(Ordering::SeqCst), 20);
        assert_eq!(
            calendars.most_at_once.load(Ordering::SeqCst),
            READS_AT_ONCE,
            "reads overlap, up to the bound"
        );
        assert!(round.unread.is_empty() && round.enterprises_failed.is_empty());
        assert_eq!((round.joined, round.failed), (0, 0));
    }

    /// A calendar system that fails while `failing` is set, as one whose password was changed.
    #[derive(Default)]
    struct FlakyCalendars {
        failing: std::sync::atomic::AtomicBool,
    }

    #[async_trait]
    impl CalendarReader for FlakyCalendars {
        async fn events(
            &self,
            _account: &CalendarAccount,
            calendar_id: &str,
            _from_ms: i64,
            _to_ms: i64,
        ) -> Result<Vec<CalendarEvent>> {
            if self.failing.load(Ordering::SeqCst) {
                return Err(Error::calendar_server(
                    calendar_id,
                    "the calendar server answered 401",
                ));
            }
            Ok(Vec::new())
        }
    }

    #[tokio::test]
    async fn a_calendar_that_cannot_be_read_is_an_event_once_and_so_is_its_return() {
        use roomlink_domain::audit::AuditEntry;
        use roomlink_domain::ids::WebhookId;
        use roomlink_domain::secret::SealedSecret;
        use roomlink_domain::webhook::{EventType, Subscription};
        let calendars = Arc::new(FlakyCalendars::default());
        let store = Arc::new(MemoryStore::new());
        let clock = Arc::new(ManualClock::at(1_800_000_000_000));
        let services = services_over(calendars.clone(), clock.clone(), store.clone());
        let acme = services
            .admin
            .create_enterprise("acme", None)
            .await
            .unwrap();
        let admin = Principal::scheduler(acme.id.clone(), acme.name, "test");
        services
            .calendars
            .put_account(
                &admin,
                "CALDAV",
                &object(json!({"baseUrl": "http://127.0.0.1:5232/rooms/"})),
            )
            .await
            .unwrap();
        let room = json!({"name": "Fjord", "calendarId": "fjord@corp.example",
            "calendarType": "CALDAV", "autoJoinMode": "ENABLED"});
        let fjord = services
            .endpoints
            .insert(&admin, EndpointBody::from_json(&object(room)))
            .await
            .unwrap();
        let hook = WebhookId::from_trusted("w1".into());
        let subscription = Subscription {
            id: hook.clone(),
            enterprise_id: acme.id.clone(),
            url: "https://hooks.example.com/in".into(),
            event_types: vec![EventType::CalendarUnreadable, EventType::CalendarReadable],
            description: None,
            created_at: 0,
            updated_at: 0,
            paused: None,
        };
        let sealed = SealedSecret {
            key_id: "k1".into(),
            ciphertext: vec![1],
        };
        let audit = AuditEntry::sample(&acme.id, "webhooks.create", 0);
        store
            .insert_webhook(&subscription, &sealed, &audit)
            .await
            .unwrap();
        // Read: no news. Failing for two rounds: one event. Read again: one event.
        let mut queued = Vec::new();
        for failing in [false, true, true, false, false] {
            calendars.failing.store(failing, Ordering::SeqCst);
            // Past the mirror's age, so that every round asks the calendar system.
            clock.advance(600_000);
            let round = services.auto_join.run_once().await.unwrap();
            assert_eq!(round.unread.len(), usize::from(failing));
            queued.push(round.calendar_events);
        }
        assert_eq!(queued, [0, 1, 0, 1, 0]);
        let page = store.deliveries(&acme.id, &hook, None, 10).await.unwrap();
        let types: Vec<EventType> = page.deliveries.iter().rev().map(|d| d.event_type).collect();
        assert_eq!(
            types,
            [EventType::CalendarUnreadable, EventType::CalendarReadable]
        );
        let first = store
            .due_delivery(&hook, clock.now_ms())
            .await
            .unwrap()
            .expect("the first delivery is due");
        let body: serde_json::Value = serde_json::from_str(&first.body).unwrap();
        assert_eq!(body["type"], "calendar.unreadable");
        let data = &body["data"];
        assert_eq!(data["endpointId"], fjord.id().as_str());
        assert_eq!(data["name"], "Fjord");
        assert_eq!(data["calendarType"], "CALDAV");
        assert_eq!(data["calendarId"], "fjord@corp.example");
        assert_eq!(data["errorName"], "CalendarServerException");
        assert_eq!(data["errorMessage"], "the calendar server answered 401");
    }

    #[tokio::test]
    async fn a_type_without_an_account_is_reported_once_and_not_read() {
        let calendars = Arc::new(SlowCalendars::default());
        let services = services(calendars.clone());
        let acme = services
            .admin
            .create_enterprise("acme", None)
            .await
            .unwrap();
        let admin = Principal::scheduler(acme.id, acme.name, "test");
        for n in 0..3 {
            let room = json!({"name": format!("Room {n}"), "calendarId": format!("room-{n}@corp.example"),
                "calendarType": "OFFICE_365", "autoJoinMode": "ENABLED"});
            services
                .endpoints
                .insert(&admin, EndpointBody::from_json(&object(room)))
                .await
                .unwrap();
        }
        let round = services.auto_join.run_once().await.unwrap();
        assert_eq!(round.rooms, 3);
        assert_eq!(calendars.reads.load(Ordering::SeqCst), 0);
        assert_eq!(round.unread.len(), 1, "one line for the missing account");
        assert!(
            round.unread[0]
                .1
                .message()
                .contains("no OFFICE_365 calendar account"),
            "{}",
            round.unread[0].1.message()
        );
    }

    #[tokio::test]
    async fn rounds_ask_calendars_only_once_a_poll_interval_and_read_only_changes() {
        let calendars = Arc::new(MarkedCalendars::default());
        let clock = Arc::new(ManualClock::at(1_800_000_000_000));
        let services = services_at(calendars.clone(), clock.clone());
        let acme = services
            .admin
            .create_enterprise("acme", None)
            .await
            .unwrap();
        let admin = Principal::scheduler(acme.id, acme.name, "test");
        let account = object(json!({"baseUrl": "http://127.0.0.1:5232/rooms/"}));
        services
            .calendars
            .put_account(&admin, "CALDAV", &account)
            .await
            .unwrap();
        for n in 0..5 {
            let room = json!({"name": format!("Room {n}"), "calendarId": format!("room-{n}@corp.example"),
                "calendarType": "CALDAV", "autoJoinMode": "ENABLED"});
            services
                .endpoints
                .insert(&admin, EndpointBody::from_json(&object(room)))
                .await
                .unwrap();
        }
        let counts = || {
            (
                calendars.asked.load(Ordering::SeqCst),
                calendars.read.load(Ordering::SeqCst),
            )
        };
        services.auto_join.run_once().await.unwrap();
        assert_eq!(counts(), (5, 5), "the first round reads every calendar");
        clock.advance(59_000);
        services.auto_join.run_once().await.unwrap();
        assert_eq!(
            counts(),
            (5, 5),
            "within the poll interval: the kept copies"
        );
        clock.advance(1_000);
        services.auto_join.run_once().await.unwrap();
        assert_eq!(counts(), (10, 5), "then asked, and unchanged: not read");
        calendars.version.store(1, Ordering::SeqCst);
        clock.advance(60_000);
        services.auto_join.run_once().await.unwrap();
        assert_eq!(counts(), (15, 10), "changed: read again");
        // A new account version never uses copies read with the old one.
        services
            .calendars
            .put_account(&admin, "CALDAV", &account)
            .await
            .unwrap();
        clock.advance(1);
        services.auto_join.run_once().await.unwrap();
        assert_eq!(counts(), (20, 15));
    }

    #[tokio::test]
    async fn a_newer_mark_of_an_unchanged_calendar_is_the_one_asked_with_next() {
        let calendars = Arc::new(RenewingMarks::default());
        let clock = Arc::new(ManualClock::at(1_800_000_000_000));
        let services = services_at(calendars.clone(), clock.clone());
        let acme = services
            .admin
            .create_enterprise("acme", None)
            .await
            .unwrap();
        let admin = Principal::scheduler(acme.id, acme.name, "test");
        let account = object(json!({"baseUrl": "http://127.0.0.1:5232/rooms/"}));
        services
            .calendars
            .put_account(&admin, "CALDAV", &account)
            .await
            .unwrap();
        for n in 0..3 {
            let room = json!({"name": format!("Room {n}"), "calendarId": format!("room-{n}@corp.example"),
                "calendarType": "CALDAV", "autoJoinMode": "ENABLED"});
            services
                .endpoints
                .insert(&admin, EndpointBody::from_json(&object(room)))
                .await
                .unwrap();
        }
        for _ in 0..4 {
            services.auto_join.run_once().await.unwrap();
            clock.advance(60_000);
        }
        assert_eq!(calendars.read.load(Ordering::SeqCst), 3, "read once each");
        assert_eq!(
            calendars.outdated.load(Ordering::SeqCst),
            0,
            "every confirmation asked with the newest mark"
        );
        let issued = calendars.issued.lock().unwrap();
        assert!(issued.values().all(|n| *n == 4), "{issued:?}");
    }
}

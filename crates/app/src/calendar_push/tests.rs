//! Calendar push rounds over the memory store, with a calendar and a listener in memory.

use super::*;
use crate::auth::Principal;
use crate::{Policies, Ports, Services};
use async_trait::async_trait;
use roomlink_domain::calendar::CalendarEvent;
use roomlink_domain::cluster::{LocalBus, MockListenerLinks};
use roomlink_domain::enums::EndpointCapability;
use roomlink_domain::ports::{
    CalendarAccount, CalendarReader, ListenerTransport, MockPasswordHasher, MockPlatformIdentity,
    ObservedState, SecretSealer,
};
use roomlink_domain::rules::put::EndpointBody;
use roomlink_domain::secret::{SealedSecret, Secret};
use roomlink_domain::system::{ManualClock, RandomIds};
use roomlink_memory_store::MemoryStore;
use serde_json::json;

/// 2027-01-15T10:00:00Z.
const NOW: i64 = 1_800_007_200_000;

/// Seals nothing: the "ciphertext" is the text (the tests look at rounds, not at secrets).
struct PlainSealer;

impl SecretSealer for PlainSealer {
    fn seal(&self, plaintext: &Secret, _: Option<&str>) -> Result<SealedSecret> {
        Ok(SealedSecret {
            key_id: "plain".into(),
            ciphertext: plaintext.expose().as_bytes().to_vec(),
        })
    }
    fn open(&self, sealed: &SealedSecret) -> Result<Option<Secret>> {
        Ok(Some(Secret::new(
            String::from_utf8_lossy(&sealed.ciphertext).into_owned(),
        )))
    }
    fn current_key_id(&self, _: Option<&str>) -> Result<String> {
        Ok("plain".into())
    }
    fn readable(&self, _: &SealedSecret, _: Option<&str>) -> Result<bool> {
        Ok(true)
    }
}

/// One calendar whose events the test sets.
#[derive(Default)]
struct Calendar {
    events: Mutex<Vec<CalendarEvent>>,
    reads: Mutex<usize>,
}

#[async_trait]
impl CalendarReader for Calendar {
    async fn events(
        &self,
        _: &CalendarAccount,
        _: &str,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<CalendarEvent>> {
        *self.reads.lock().unwrap() += 1;
        let events = self.events.lock().unwrap();
        Ok(events
            .iter()
            .filter(|e| e.start_ms < to_ms && e.end_ms > from_ms)
            .cloned()
            .collect())
    }
}

/// A listener that reports `CALENDAR_PUSH` for TANDBERG_HTTP rooms only, keeps what it was
/// pushed, and fails while `failing` is set.
#[derive(Default)]
struct Listener {
    pushes: Mutex<Vec<(String, CalendarPush)>>,
    failing: Mutex<bool>,
}

#[async_trait]
impl ListenerTransport for Listener {
    async fn send(&self, target: &CommandTarget, command: &Command) -> Result<ObservedState> {
        if *self.failing.lock().unwrap() {
            return Err(Error::new(
                roomlink_domain::error::ErrorKind::ListenerOffline,
                "The listener service is offline or unreachable.",
            )
            .with("listenerServiceId", target.listener_id.as_str()));
        }
        let Command::PushCalendar(push) = command else {
            panic!("only pushes are sent: {command:?}");
        };
        self.pushes
            .lock()
            .unwrap()
            .push((target.endpoint.name().to_owned(), push.clone()));
        Ok(ObservedState {
            call_active: false,
            reserved: false,
            dialing: false,
            microphone_muted: false,
            last_dial_timestamp_millis: None,
        })
    }
    async fn capabilities(&self, target: &CommandTarget) -> Result<Vec<EndpointCapability>> {
        let cisco = target
            .endpoint
            .profile()
            .control_protocol()
            .is_some_and(|p| p.as_str() == "TANDBERG_HTTP");
        Ok(if cisco {
            vec![EndpointCapability::Join, EndpointCapability::CalendarPush]
        } else {
            vec![EndpointCapability::Join]
        })
    }
    async fn poll(&self, _: &[CommandTarget]) -> Result<Vec<(EndpointId, Result<ObservedState>)>> {
        Ok(Vec::new())
    }
    async fn check(&self, _: &roomlink_domain::ports::ListenerAddress) -> Result<String> {
        Ok("3.1.0".to_owned())
    }
}

struct World {
    services: Services,
    clock: Arc<ManualClock>,
    calendar: Arc<Calendar>,
    listener: Arc<Listener>,
    admin: Principal,
}

fn object(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    value.as_object().cloned().unwrap_or_default()
}

fn event(uid: &str, start_ms: i64, location: &str) -> CalendarEvent {
    CalendarEvent {
        uid: uid.to_owned(),
        title: Some(format!("Meeting {uid}")),
        start_ms,
        end_ms: start_ms + 3_600_000,
        location: Some(location.to_owned()),
        description: None,
        conference_uris: Vec::new(),
        cancelled: false,
    }
}

/// An enterprise with a CalDAV account and a listener; rooms are added by the tests.
async fn world() -> World {
    let clock = Arc::new(ManualClock::at(NOW));
    let calendar = Arc::new(Calendar::default());
    let listener = Arc::new(Listener::default());
    let ports = Ports {
        store: Arc::new(MemoryStore::new()),
        hasher: Arc::new(MockPasswordHasher::new()),
        sealer: Arc::new(PlainSealer),
        platform: Arc::new(MockPlatformIdentity::new()),
        transport: listener.clone(),
        links: Arc::new(MockListenerLinks::new()),
        events: Arc::new(LocalBus::default()),
        clock: clock.clone(),
        ids: Arc::new(RandomIds),
        calendars: calendar.clone(),
        webhooks: Arc::new(roomlink_domain::ports::MockWebhookSender::new()),
        tickets: Arc::new(roomlink_domain::ports::MockTicketSigner::new()),
    };
    let services = Services::new(ports, Policies::default());
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
    World {
        services,
        clock,
        calendar,
        listener,
        admin,
    }
}

impl World {
    async fn listener(&self) -> String {
        let registered = self
            .services
            .listeners
            .create(
                &self.admin,
                &object(json!({"name": "hq", "baseUrl": "http://127.0.0.1:9/",
                    "secret": "a-listener-secret-of-some-length"})),
            )
            .await
            .unwrap();
        registered.listener.id.as_str().to_owned()
    }

    async fn room(&self, name: &str, extra: serde_json::Value) -> EndpointId {
        let mut body = object(json!({"name": name, "ipAddress": "127.77.0.9",
            "controlProtocol": "TANDBERG_HTTP", "calendarId": format!("{name}@corp.example"),
            "calendarType": "CALDAV", "calendarPushMode": "ENABLED"}));
        body.extend(object(extra));
        let endpoint = self
            .services
            .endpoints
            .insert(&self.admin, EndpointBody::from_json(&body))
            .await
            .unwrap();
        endpoint.id().clone()
    }

    fn pushes(&self) -> Vec<(String, CalendarPush)> {
        self.listener.pushes.lock().unwrap().clone()
    }
}

#[tokio::test]
async fn a_room_is_pushed_its_meetings_once_until_they_change() {
    let w = world().await;
    let listener = w.listener().await;
    w.room("boardroom", json!({"listenerServiceId": listener}))
        .await;
    *w.calendar.events.lock().unwrap() = vec![
        event(
            "review",
            NOW + 3_600_000,
            "https://bluejeans.com/123456789/4321",
        ),
        event("lunch", NOW + 7_200_000, "Cafeteria"),
        // Yesterday's meeting is outside the window.
        event("old", NOW - 86_400_000, "https://bluejeans.com/111"),
    ];
    let round = w.services.calendar_push.run_once().await.unwrap();
    assert_eq!((round.rooms, round.pushed, round.failed), (1, 1, 0));
    let pushes = w.pushes();
    let (room, push) = &pushes[0];
    assert_eq!(room, "boardroom");
    assert_eq!(push.meetings.len(), 2);
    assert_eq!(push.meetings[0].uid, "review");
    let dial = push.meetings[0].dial.as_ref().unwrap();
    assert_eq!(dial.meeting_id.as_deref(), Some("123456789"));
    assert!(push.meetings[1].dial.is_none());
    assert_eq!(push.from, 1_799_971_200_000, "the start of the UTC day");

    // Unchanged: read again, not pushed again, even as the window moves.
    w.clock.set(NOW + 60_000);
    let round = w.services.calendar_push.run_once().await.unwrap();
    assert_eq!((round.pushed, round.unchanged), (0, 1));
    assert_eq!(w.pushes().len(), 1);

    // A meeting moves: pushed again once the calendar's copy is a poll interval old.
    w.calendar.events.lock().unwrap()[1].start_ms += 1_800_000;
    w.clock.set(NOW + 120_000);
    let round = w.services.calendar_push.run_once().await.unwrap();
    assert_eq!(round.pushed, 1);
    assert_eq!(w.pushes().len(), 2);
}

#[tokio::test]
async fn only_enabled_capable_rooms_with_a_calendar_are_pushed() {
    let w = world().await;
    let listener = w.listener().await;
    w.room("on", json!({"listenerServiceId": listener})).await;
    w.room(
        "off",
        json!({"listenerServiceId": listener, "calendarPushMode": "DISABLED"}),
    )
    .await;
    w.room(
        "poly",
        json!({"listenerServiceId": listener, "controlProtocol": "POLYCOM_HTTP_HDX"}),
    )
    .await;
    w.room(
        "no calendar",
        json!({"listenerServiceId": listener, "calendarId": null}),
    )
    .await;
    w.room("no listener", json!({})).await;
    let round = w.services.calendar_push.run_once().await.unwrap();
    assert_eq!(round.rooms, 3, "on, poly and no listener");
    assert_eq!(round.pushed, 1);
    assert_eq!(round.not_capable, 1);
    assert_eq!(round.skipped.len(), 1, "{:?}", round.skipped);
    assert_eq!(w.pushes()[0].0, "on");
    assert_eq!(
        *w.calendar.reads.lock().unwrap(),
        1,
        "rooms that cannot be pushed to are not read"
    );
}

#[tokio::test]
async fn a_failed_push_is_recorded_against_the_room_and_sent_again_next_round() {
    let w = world().await;
    let listener = w.listener().await;
    let id = w
        .room("boardroom", json!({"listenerServiceId": listener}))
        .await;
    *w.calendar.events.lock().unwrap() = vec![event("review", NOW, "Room 4")];
    *w.listener.failing.lock().unwrap() = true;
    let round = w.services.calendar_push.run_once().await.unwrap();
    assert_eq!((round.pushed, round.failed), (0, 1));
    let failures = w.services.control.failures(&w.admin).await.unwrap();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].subject_id, id.as_str());
    assert!(
        failures[0]
            .error_message
            .starts_with("calendar push of 1 meetings"),
        "{}",
        failures[0].error_message
    );
    *w.listener.failing.lock().unwrap() = false;
    let round = w.services.calendar_push.run_once().await.unwrap();
    assert_eq!((round.pushed, round.failed), (1, 0));
    assert_eq!(w.pushes().len(), 1);
}

#[tokio::test]
async fn without_the_poll_lease_nothing_is_read_and_what_was_pushed_is_forgotten() {
    let w = world().await;
    let listener = w.listener().await;
    w.room("boardroom", json!({"listenerServiceId": listener}))
        .await;
    w.services.calendar_push.run_once().await.unwrap();
    assert_eq!(w.pushes().len(), 1);
    assert_eq!(w.services.calendar_push.fingerprints().len(), 1);
    assert_eq!(w.services.calendar_push.rounds.ended(), 1);
    let pusher = CalendarPusher {
        poll_lease: Arc::new(NoLease),
        ..clone_of(&w.services.calendar_push)
    };
    *pusher.fingerprints() = w.services.calendar_push.fingerprints().clone();
    let round = pusher.run_once().await.unwrap();
    assert_eq!(round.rooms, 0);
    // A round without the lease ends all the same.
    assert_eq!(pusher.rounds.ended(), 1);
    assert!(pusher.fingerprints().is_empty());
    assert_eq!(*w.calendar.reads.lock().unwrap(), 1);
}

/// Another instance's lease.
struct NoLease;

#[async_trait]
impl PollLease for NoLease {
    async fn hold_poll_lease(&self) -> Result<bool> {
        Ok(false)
    }
}

fn clone_of(p: &CalendarPusher) -> CalendarPusher {
    CalendarPusher {
        enterprises: p.enterprises.clone(),
        endpoints: p.endpoints.clone(),
        failures: p.failures.clone(),
        poll_lease: p.poll_lease.clone(),
        calendars: p.calendars.clone(),
        control: p.control.clone(),
        clock: p.clock.clone(),
        ids: p.ids.clone(),
        pushed: Mutex::default(),
        calendar_max_age_ms: p.calendar_max_age_ms,
        rounds: Default::default(),
    }
}

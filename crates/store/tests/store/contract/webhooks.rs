//! WebhookStore: claims are exclusive and expire, events enter the outbox with the writes
//! that make them (and only for the subscriptions that want them), attempts are recorded in
//! order, a spent schedule pauses, health changes are events once and a room's history.

use super::*;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::health::{HealthReason, HealthState};
use roomlink_domain::ids::{EndpointId, WebhookId};
use roomlink_domain::inventory::{Inventory, InventoryRead, ReadFailure};
use roomlink_domain::listener::ListenerHealth;
use roomlink_domain::ports::{HealthScope, HealthSubject};
use roomlink_domain::secret::SealedSecret;
use roomlink_domain::webhook::{AttemptOutcome, DeliveryState, Event, EventType, Subscription};

const NOW: i64 = 1_800_000_000_000;
const LEASE: i64 = 60_000;

async fn subscription(h: &Harness, e: &Enterprise, types: &[EventType]) -> WebhookId {
    let id = WebhookId::from_trusted(new_id());
    let s = Subscription {
        id: id.clone(),
        enterprise_id: e.id.clone(),
        url: "https://hooks.example.com/in".into(),
        event_types: types.to_vec(),
        description: None,
        created_at: NOW,
        updated_at: NOW,
        paused: None,
    };
    let sealed = SealedSecret {
        key_id: "k1".into(),
        ciphertext: vec![1, 2, 3],
    };
    let audit = AuditEntry::sample(&e.id, "webhooks.create", NOW).target(id.as_str());
    h.store.insert_webhook(&s, &sealed, &audit).await.unwrap();
    id
}

async fn queued(h: &Harness, e: &Enterprise, id: &WebhookId) -> Vec<EventType> {
    let page = h.store.deliveries(&e.id, id, None, 100).await.unwrap();
    page.deliveries.iter().rev().map(|d| d.event_type).collect()
}

pub async fn webhook_claims_are_exclusive_and_expire(h: &Harness) {
    let e = enterprise(h, 10).await;
    let id = subscription(h, &e, &[EventType::RoomOffline]).await;
    // Nothing due: nothing to claim.
    assert!(
        h.store
            .claim_webhooks("a", NOW, LEASE, 10)
            .await
            .unwrap()
            .iter()
            .all(|c| c.id != id)
    );
    let event = Event::test(id.as_str(), NOW);
    assert_eq!(
        h.store
            .record_event(&e.id, &event, Some(&id))
            .await
            .unwrap(),
        1
    );
    // Two instances claim at once: one gets it.
    let (a, b) = futures::join!(
        h.store.claim_webhooks("a", NOW, LEASE, 10),
        h.store.claim_webhooks("b", NOW, LEASE, 10)
    );
    let mine = |claims: Vec<roomlink_domain::ports::ClaimedWebhook>| {
        claims.into_iter().filter(|c| c.id == id).count()
    };
    assert_eq!(mine(a.unwrap()) + mine(b.unwrap()), 1);
    // Held until the lease ends; then another instance takes it over.
    let held = h
        .store
        .claim_webhooks("c", NOW + LEASE - 1, LEASE, 10)
        .await
        .unwrap();
    assert_eq!(mine(held), 0);
    let taken = h
        .store
        .claim_webhooks("c", NOW + LEASE, LEASE, 10)
        .await
        .unwrap();
    let claim = taken.into_iter().find(|c| c.id == id).expect("taken over");
    assert_eq!(claim.lease_until, NOW + 2 * LEASE);
    assert_eq!(claim.secret.ciphertext, vec![1, 2, 3]);
    // Given back, it is free at once; a release by another owner changes nothing.
    h.store.release_webhook(&id, "a").await.unwrap();
    assert_eq!(
        mine(
            h.store
                .claim_webhooks("d", NOW + LEASE, LEASE, 10)
                .await
                .unwrap()
        ),
        0
    );
    h.store.release_webhook(&id, "c").await.unwrap();
    assert_eq!(
        mine(
            h.store
                .claim_webhooks("d", NOW + LEASE, LEASE, 10)
                .await
                .unwrap()
        ),
        1
    );
}

pub async fn deliveries_go_in_order_and_a_spent_schedule_pauses(h: &Harness) {
    let e = enterprise(h, 10).await;
    let id = subscription(h, &e, &[EventType::RoomOffline]).await;
    let first = Event::test(id.as_str(), NOW);
    let second = Event::test(id.as_str(), NOW + 1);
    h.store
        .record_event(&e.id, &first, Some(&id))
        .await
        .unwrap();
    h.store
        .record_event(&e.id, &second, Some(&id))
        .await
        .unwrap();
    let due = h.store.due_delivery(&id, NOW + 1).await.unwrap().unwrap();
    assert_eq!(due.delivery.event_id, first.id);
    assert_eq!(due.body, first.body());
    let failed = AttemptOutcome {
        status: Some(503),
        error: Some("HTTP 503".into()),
    };
    h.store
        .record_attempt(
            &id,
            due.delivery.id,
            NOW + 2,
            &failed,
            Some(NOW + 5_000),
            None,
        )
        .await
        .unwrap();
    // The head waits for its retry, and the second behind it.
    assert!(
        h.store
            .due_delivery(&id, NOW + 4_999)
            .await
            .unwrap()
            .is_none()
    );
    let again = h
        .store
        .due_delivery(&id, NOW + 5_000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (again.delivery.event_id.as_str(), again.delivery.attempts),
        (first.id.as_str(), 1)
    );
    assert_eq!(again.delivery.last_status, Some(503));
    // The schedule is spent: failed for good, and the subscription pauses saying why.
    h.store
        .record_attempt(
            &id,
            again.delivery.id,
            NOW + 6_000,
            &failed,
            None,
            Some("spent"),
        )
        .await
        .unwrap();
    let s = h.store.webhook(&e.id, &id).await.unwrap().unwrap();
    let pause = s.paused.expect("paused");
    assert_eq!((pause.at, pause.reason.as_str()), (NOW + 6_000, "spent"));
    assert!(
        h.store
            .claim_webhooks("a", NOW + 7_000, LEASE, 10)
            .await
            .unwrap()
            .iter()
            .all(|c| c.id != id)
    );
    // Resumed: the second goes at once.
    let audit = AuditEntry::sample(&e.id, "webhooks.resume", NOW);
    h.store
        .set_webhook_paused(&e.id, &id, None, NOW + 8_000, &audit)
        .await
        .unwrap();
    let next = h
        .store
        .due_delivery(&id, NOW + 8_000)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(next.delivery.event_id, second.id);
    let ok = AttemptOutcome {
        status: Some(204),
        error: None,
    };
    h.store
        .record_attempt(&id, next.delivery.id, NOW + 8_001, &ok, None, None)
        .await
        .unwrap();
    let page = h.store.deliveries(&e.id, &id, None, 10).await.unwrap();
    let states: Vec<(DeliveryState, u32)> = page
        .deliveries
        .iter()
        .map(|d| (d.state, d.attempts))
        .collect();
    assert_eq!(
        states,
        [(DeliveryState::Delivered, 1), (DeliveryState::Failed, 2)]
    );
    assert_eq!(page.deliveries[0].delivered_at, Some(NOW + 8_001));
    // Pages, newest first.
    let one = h.store.deliveries(&e.id, &id, None, 1).await.unwrap();
    assert_eq!(one.deliveries[0].event_id, second.id);
    let rest = h.store.deliveries(&e.id, &id, one.next, 1).await.unwrap();
    assert_eq!(
        (rest.deliveries[0].event_id.as_str(), rest.next),
        (first.id.as_str(), None)
    );
    // Another enterprise sees none of it.
    let other = enterprise(h, 10).await;
    assert!(
        h.store
            .deliveries(&other.id, &id, None, 10)
            .await
            .unwrap()
            .deliveries
            .is_empty()
    );
    assert!(h.store.webhook(&other.id, &id).await.unwrap().is_none());
    // Finished deliveries go after the retention; nothing pending does.
    assert_eq!(h.store.purge_deliveries(NOW + 8_002).await.unwrap(), 2);
}

pub async fn events_enter_the_outbox_with_the_writes_that_make_them(h: &Harness) {
    let e = enterprise(h, 10).await;
    let room = inserted(h, named(h, &e, "A")).await;
    let firmware = subscription(
        h,
        &e,
        &[EventType::InventoryChanged, EventType::CommandFailed],
    )
    .await;
    let calls = subscription(h, &e, &[EventType::CallStarted]).await;
    let codec = |version: &str| Inventory {
        model: Some("Room Kit".into()),
        software_version: Some(version.into()),
        ..Inventory::default()
    };
    let save = |version: &'static str, at| {
        let read = InventoryRead::Read(codec(version));
        let (store, ent, id) = (h.store.clone(), e.id.clone(), room.id().clone());
        async move { store.save_inventory(&ent, &id, at, &read).await.unwrap() }
    };
    // A first read is no change; the same version is none either; a new one is.
    save("ce9.15", NOW).await;
    save("ce9.15", NOW + 1).await;
    save("ce11.27", NOW + 2).await;
    assert_eq!(
        queued(h, &e, &firmware).await,
        [EventType::InventoryChanged]
    );
    // A failed command's audit entry is an event; a successful one and a 4xx are not.
    let entry = AuditEntry::sample(&e.id, "endpoints.join", NOW).target(room.id().as_str());
    h.store.record_audit(&entry).await.unwrap();
    let mut mistake = entry.clone();
    mistake.outcome = "InvalidDtmf".into();
    h.store.record_audit(&mistake).await.unwrap();
    let mut failed = entry.clone();
    failed.outcome = "ExternalSystemTimedOut".into();
    h.store.record_audit(&failed).await.unwrap();
    assert_eq!(
        queued(h, &e, &firmware).await,
        [EventType::InventoryChanged, EventType::CommandFailed]
    );
    // None of it went to the subscription that wants calls only.
    assert!(queued(h, &e, &calls).await.is_empty());
}

pub async fn health_changes_are_events_once(h: &Harness) {
    let e = enterprise(h, 10).await;
    let hook = subscription(
        h,
        &e,
        &[
            EventType::RoomOffline,
            EventType::RoomOnline,
            EventType::ListenerOffline,
        ],
    )
    .await;
    let room = |state| HealthSubject::Room {
        endpoint_id: "r1".into(),
        name: "Fjord".into(),
        listener_service_id: Some("l1".into()),
        state,
        since: Some(NOW),
        reasons: if state == HealthState::Ok {
            vec![]
        } else {
            vec![HealthReason {
                code: "notAnswering",
                message: "no status for 90 s".into(),
            }]
        },
    };
    let listener = |health| HealthSubject::Listener {
        id: "l1".into(),
        name: "HQ".into(),
        health,
        last_contact: None,
    };
    let record = |subjects: Vec<HealthSubject>, at: i64| {
        let (store, ent) = (h.store.clone(), e.id.clone());
        async move {
            store
                .record_health(&ent, HealthScope::Fleet, &subjects, at)
                .await
                .unwrap()
        }
    };
    // First seen ok and online: no news.
    assert_eq!(
        record(
            vec![room(HealthState::Ok), listener(ListenerHealth::Online)],
            NOW
        )
        .await,
        0
    );
    assert_eq!(
        record(
            vec![
                room(HealthState::Offline),
                listener(ListenerHealth::Offline)
            ],
            NOW + 1
        )
        .await,
        2
    );
    assert_eq!(
        record(
            vec![
                room(HealthState::Offline),
                listener(ListenerHealth::Offline)
            ],
            NOW + 2
        )
        .await,
        0
    );
    assert_eq!(
        record(
            vec![room(HealthState::Ok), listener(ListenerHealth::Offline)],
            NOW + 3
        )
        .await,
        1
    );
    // A room no longer there is forgotten: back, it starts afresh (ok is no news).
    assert_eq!(
        record(vec![listener(ListenerHealth::Offline)], NOW + 4).await,
        0
    );
    assert_eq!(
        record(
            vec![room(HealthState::Ok), listener(ListenerHealth::Offline)],
            NOW + 5
        )
        .await,
        0
    );
    assert_eq!(
        queued(h, &e, &hook).await,
        [
            EventType::RoomOffline,
            EventType::ListenerOffline,
            EventType::RoomOnline
        ]
    );
    // Another enterprise's subjects are its own.
    let other = enterprise(h, 10).await;
    assert_eq!(
        h.store
            .record_health(
                &other.id,
                HealthScope::Fleet,
                &[room(HealthState::Offline)],
                NOW,
            )
            .await
            .unwrap(),
        0,
        "no subscription there"
    );

    // Each change of the room is in its history, newest first, with why; only the changes.
    let r1 = EndpointId::from_trusted("r1".into());
    let history = h.store.health_history(&e.id, &r1, 10).await.unwrap();
    let summary: Vec<_> = history
        .iter()
        .map(|c| (c.at, c.state, c.previous_state, c.reasons.len()))
        .collect();
    assert_eq!(
        summary,
        [
            (NOW + 3, HealthState::Ok, Some(HealthState::Offline), 0),
            (NOW + 1, HealthState::Offline, None, 1),
        ]
    );
    assert_eq!(history[1].reasons[0].code, "notAnswering");
    assert_eq!(history[1].reasons[0].message, "no status for 90 s");
    assert_eq!(
        h.store.health_history(&e.id, &r1, 1).await.unwrap().len(),
        1
    );
    assert_eq!(
        h.store
            .health_history(&other.id, &r1, 10)
            .await
            .unwrap()
            .len(),
        1,
        "the other enterprise's room of the same id is its own"
    );
    // Retention: what was recorded before the cutoff goes.
    assert_eq!(h.store.purge_health_history(NOW + 2).await.unwrap(), 2);
    let left = h.store.health_history(&e.id, &r1, 10).await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].at, NOW + 3);
}

pub async fn calendar_reads_are_events_once(h: &Harness) {
    let e = enterprise(h, 10).await;
    let hook = subscription(
        h,
        &e,
        &[
            EventType::CalendarUnreadable,
            EventType::CalendarReadable,
            EventType::RoomOffline,
        ],
    )
    .await;
    let calendar = |unreadable: bool| HealthSubject::Calendar {
        endpoint_id: "r1".into(),
        name: "Fjord".into(),
        listener_service_id: None,
        calendar_type: "CALDAV".into(),
        calendar_id: "fjord@corp.example".into(),
        unreadable: unreadable.then(|| ReadFailure {
            error_name: "CalendarServerException".into(),
            error_message: "the calendar server answered 401".into(),
        }),
    };
    let offline_room = HealthSubject::Room {
        endpoint_id: "r1".into(),
        name: "Fjord".into(),
        listener_service_id: None,
        state: HealthState::Offline,
        since: Some(NOW),
        reasons: vec![],
    };
    let record = |scope, subjects: Vec<HealthSubject>, at: i64| {
        let (store, ent) = (h.store.clone(), e.id.clone());
        async move {
            store
                .record_health(&ent, scope, &subjects, at)
                .await
                .unwrap()
        }
    };
    use HealthScope::{Calendars, Fleet};
    // A first read that works is no news; the first that fails is, once.
    assert_eq!(record(Calendars, vec![calendar(false)], NOW).await, 0);
    assert_eq!(record(Fleet, vec![offline_room.clone()], NOW).await, 1);
    assert_eq!(record(Calendars, vec![calendar(true)], NOW + 1).await, 1);
    assert_eq!(record(Calendars, vec![calendar(true)], NOW + 2).await, 0);
    // The two observations do not forget each other's subjects: the room stays offline and
    // the calendar unreadable across a health round that names no calendar.
    assert_eq!(record(Fleet, vec![offline_room.clone()], NOW + 3).await, 0);
    assert_eq!(record(Calendars, vec![calendar(true)], NOW + 4).await, 0);
    assert_eq!(record(Calendars, vec![calendar(false)], NOW + 5).await, 1);
    // A room no longer in the round is forgotten: failing again, it is news again.
    assert_eq!(record(Calendars, vec![calendar(true)], NOW + 6).await, 1);
    assert_eq!(record(Calendars, vec![], NOW + 7).await, 0);
    assert_eq!(record(Calendars, vec![calendar(true)], NOW + 8).await, 1);
    assert_eq!(
        queued(h, &e, &hook).await,
        [
            EventType::RoomOffline,
            EventType::CalendarUnreadable,
            EventType::CalendarReadable,
            EventType::CalendarUnreadable,
            EventType::CalendarUnreadable,
        ]
    );
    // Calendars have no history of their own: the room's is its health.
    let r1 = EndpointId::from_trusted("r1".into());
    assert_eq!(
        h.store.health_history(&e.id, &r1, 10).await.unwrap().len(),
        1
    );
}

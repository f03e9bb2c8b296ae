//! TemplateAssignmentStore: a room is assigned one template at most (assigning moves it, and
//! the move drops its drift record; assigning again keeps it), counts say what changed, only
//! the enterprise's own rooms and templates are touched or shown, lists come by name then id
//! with the endpoint's current name, many ids are taken at once, a drift record is saved (with
//! its event) only while the room is assigned that template, assignments go with their
//! endpoint, template or enterprise, and writes come with their audit entries.

use super::*;
use roomlink_domain::audit::{AuditEntry, AuditFilter};
use roomlink_domain::ids::{TemplateId, WebhookId};
use roomlink_domain::secret::SealedSecret;
use roomlink_domain::template::drift::{Assignment, DriftRead, DriftRecord};
use roomlink_domain::template::{SettingKey, Template, TemplateDraft};
use roomlink_domain::webhook::{Event, EventType, Subscription};
use std::collections::BTreeMap;

const NOW: i64 = 1_800_000_000_000;

async fn template(h: &Harness, e: &Enterprise, name: &str) -> Template {
    let body = json!({"name": name, "settings": {"time_zone": "Europe/Oslo"}});
    let draft = TemplateDraft::from_body(&object(body)).unwrap();
    let t = Template::new(TemplateId::from_trusted(new_id()), e.id.clone(), draft, NOW);
    let audit = AuditEntry::sample(&e.id, "templates.create", NOW).target(t.id.as_str());
    h.store.insert_template(&t, &audit).await.unwrap();
    t
}

fn audit(e: &EnterpriseId, t: &TemplateId, operation: &str) -> AuditEntry {
    AuditEntry::sample(e, operation, NOW).target(t.as_str())
}

/// How many audit entries of `e` name `t` (its creation's included).
async fn trail(h: &Harness, e: &EnterpriseId, t: &TemplateId) -> usize {
    let filter = AuditFilter {
        target_id: Some(t.as_str().to_owned()),
        ..AuditFilter::default()
    };
    let page = h.store.audit_page(e, &filter, None, 100).await.unwrap();
    page.entries.len()
}

async fn assign(h: &Harness, e: &EnterpriseId, t: &TemplateId, rooms: &[&Endpoint]) -> usize {
    let ids: Vec<EndpointId> = rooms.iter().map(|r| r.id().clone()).collect();
    h.store
        .assign_template(e, t, &ids, NOW, &audit(e, t, "templates.assign"))
        .await
        .unwrap()
}

async fn unassign(h: &Harness, e: &EnterpriseId, t: &TemplateId, rooms: &[&Endpoint]) -> usize {
    let ids: Vec<EndpointId> = rooms.iter().map(|r| r.id().clone()).collect();
    h.store
        .unassign_template(e, t, &ids, &audit(e, t, "templates.unassign"))
        .await
        .unwrap()
}

/// The rooms assigned `t`, by id.
async fn rooms_of(h: &Harness, e: &EnterpriseId, t: &TemplateId) -> Vec<String> {
    let list = h.store.assignments(e, t).await.unwrap();
    let mut ids: Vec<String> = list.iter().map(|a| a.endpoint_id.to_string()).collect();
    ids.sort();
    ids
}

fn ids_of(rooms: &[&Endpoint]) -> Vec<String> {
    let mut ids: Vec<String> = rooms.iter().map(|r| r.id().to_string()).collect();
    ids.sort();
    ids
}

/// A check that found the room's time zone drifted.
fn drifted(at: i64) -> DriftRecord {
    let held = BTreeMap::from([
        (SettingKey::TimeZone, json!("Etc/UTC")),
        (SettingKey::StandbyDelayMinutes, json!(30)),
    ]);
    DriftRecord {
        checked_at: at,
        read: Some((at, DriftRead::Drifted(held))),
        drifted_since: Some(at - 60_000),
        failure: None,
    }
}

/// A failed check after an in-line read.
fn failed(at: i64) -> DriftRecord {
    DriftRecord {
        checked_at: at,
        read: Some((at - 1_000, DriftRead::InLine)),
        drifted_since: None,
        failure: Some((
            ErrorKind::ListenerOffline,
            "the listener is offline – «x»".into(),
        )),
    }
}

async fn save(
    h: &Harness,
    e: &EnterpriseId,
    room: &Endpoint,
    t: &TemplateId,
    record: &DriftRecord,
    event: Option<&Event>,
) -> bool {
    h.store
        .save_drift(e, room.id(), t, record, event)
        .await
        .unwrap()
}

/// The drift record of `room` as `assignments_of` shows it (`None`: not assigned).
async fn record_of(h: &Harness, e: &EnterpriseId, room: &Endpoint) -> Option<Option<DriftRecord>> {
    let list = h
        .store
        .assignments_of(e, std::slice::from_ref(room.id()))
        .await
        .unwrap();
    assert!(list.len() <= 1, "{list:?}");
    list.into_iter().next().map(|a| a.drift)
}

fn same_error(got: &Error, expected: &Error) {
    assert_eq!(
        (got.kind(), got.message(), got.details()),
        (expected.kind(), expected.message(), expected.details())
    );
}

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

/// The events queued for subscription `id`, oldest first.
async fn queued(h: &Harness, e: &Enterprise, id: &WebhookId) -> Vec<(EventType, String)> {
    let page = h.store.deliveries(&e.id, id, None, 100).await.unwrap();
    page.deliveries
        .iter()
        .rev()
        .map(|d| (d.event_type, d.event_id.clone()))
        .collect()
}

pub async fn templates_are_assigned_moved_and_unassigned(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let oslo = template(h, &e, "Oslo").await;
    let bergen = template(h, &e, "Bergen").await;
    let theirs = template(h, &other, "Theirs").await;
    let a = inserted(h, named(h, &e, "A")).await;
    let b = inserted(h, named(h, &e, "B")).await;
    let c = inserted(h, named(h, &e, "C")).await;
    let x = inserted(h, named(h, &other, "X")).await;
    let (ent, them) = (&e.id, &other.id);

    // New rooms count; a room listed twice counts once; another enterprise's room is skipped.
    assert_eq!(assign(h, ent, &oslo.id, &[&a, &b, &a, &x]).await, 2);
    assert_eq!(rooms_of(h, ent, &oslo.id).await, ids_of(&[&a, &b]));
    assert_eq!(record_of(h, them, &x).await, None, "not assigned");
    let list = h.store.assignments(ent, &oslo.id).await.unwrap();
    assert_eq!(
        list[0],
        Assignment {
            endpoint_id: a.id().clone(),
            name: "A".into(),
            template_id: oslo.id.clone(),
            assigned_at: NOW,
            drift: None,
        }
    );

    // A room assigned this template already is left as it is (its record too), uncounted.
    assert!(save(h, ent, &a, &oslo.id, &drifted(NOW + 1), None).await);
    assert!(save(h, ent, &b, &oslo.id, &drifted(NOW + 1), None).await);
    assert_eq!(assign(h, ent, &oslo.id, &[&a, &c]).await, 1);
    assert_eq!(record_of(h, ent, &a).await, Some(Some(drifted(NOW + 1))));
    assert_eq!(rooms_of(h, ent, &oslo.id).await, ids_of(&[&a, &b, &c]));

    // Moving counts, and drops the record (it was about the other template).
    let ids = [b.id().clone()];
    let moved = h
        .store
        .assign_template(
            ent,
            &bergen.id,
            &ids,
            NOW + 5,
            &audit(ent, &bergen.id, "templates.assign"),
        )
        .await
        .unwrap();
    assert_eq!(moved, 1);
    assert_eq!(rooms_of(h, ent, &oslo.id).await, ids_of(&[&a, &c]));
    let list = h.store.assignments(ent, &bergen.id).await.unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(
        (&list[0].template_id, list[0].assigned_at, &list[0].drift),
        (&bergen.id, NOW + 5, &None)
    );

    // Unassigning counts only the rooms assigned that template.
    assert_eq!(unassign(h, ent, &oslo.id, &[&a, &b, &x]).await, 1);
    assert_eq!(rooms_of(h, ent, &oslo.id).await, ids_of(&[&c]));
    assert_eq!(rooms_of(h, ent, &bergen.id).await, ids_of(&[&b]));
    assert_eq!(unassign(h, ent, &oslo.id, &[&a]).await, 0);

    // Another enterprise's template is not found, and nothing is written or audited.
    let before = trail(h, ent, &theirs.id).await;
    let ids = [a.id().clone(), c.id().clone()];
    let refused = h
        .store
        .assign_template(
            ent,
            &theirs.id,
            &ids,
            NOW,
            &audit(ent, &theirs.id, "templates.assign"),
        )
        .await;
    let err = refused.expect_err("another enterprise's template");
    same_error(&err, &theirs.id.not_found());
    assert_eq!(trail(h, ent, &theirs.id).await, before);
    assert_eq!(rooms_of(h, ent, &oslo.id).await, ids_of(&[&c]));
    let unknown = TemplateId::from_trusted(new_id());
    let err = h
        .store
        .assign_template(ent, &unknown, &ids, NOW, &audit(ent, &unknown, "x"))
        .await
        .expect_err("an unknown template");
    same_error(&err, &unknown.not_found());
    // Their template cannot be unassigned from here either, nor their rooms moved.
    assert_eq!(assign(h, them, &theirs.id, &[&x]).await, 1);
    assert_eq!(unassign(h, ent, &theirs.id, &[&x]).await, 0);
    assert_eq!(assign(h, ent, &oslo.id, &[&x]).await, 0);
    assert_eq!(rooms_of(h, them, &theirs.id).await, ids_of(&[&x]));
    assert!(
        h.store
            .assignments(ent, &theirs.id)
            .await
            .unwrap()
            .is_empty()
    );

    // Every call that succeeded is audited, in its own enterprise.
    assert_eq!(
        trail(h, ent, &oslo.id).await,
        1 + 5,
        "create, 3 assigns, 2 unassigns"
    );
    assert_eq!(trail(h, ent, &bergen.id).await, 1 + 1);
    assert_eq!(trail(h, them, &theirs.id).await, 1 + 1);
}

pub async fn template_assignments_list_by_name_with_many_ids(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let oslo = template(h, &e, "Oslo").await;
    let bergen = template(h, &e, "Bergen").await;
    let alpha1 = inserted(h, named(h, &e, "alpha")).await;
    let alpha2 = inserted(h, named(h, &e, "alpha")).await;
    let zulu = inserted(h, named(h, &e, "zulu")).await;
    let big = inserted(h, named(h, &e, "Bergen room")).await;
    let apart = inserted(h, named(h, &e, "apart")).await;
    let x = inserted(h, named(h, &other, "X")).await;
    let theirs = template(h, &other, "Oslo").await;
    assert_eq!(assign(h, &other.id, &theirs.id, &[&x]).await, 1);

    // A thousand and more ids (most of them unknown) in one call, the rooms spread among them.
    let mut ids: Vec<EndpointId> = (0..2_500)
        .map(|_| EndpointId::from_trusted(new_id()))
        .collect();
    for (i, room) in [&zulu, &alpha2, &big, &alpha1, &x].into_iter().enumerate() {
        ids.insert(i * 600, room.id().clone());
    }
    let assigned = h
        .store
        .assign_template(
            &e.id,
            &oslo.id,
            &ids,
            NOW,
            &audit(&e.id, &oslo.id, "templates.assign"),
        )
        .await
        .unwrap();
    assert_eq!(assigned, 4);
    assert_eq!(assign(h, &e.id, &bergen.id, &[&apart]).await, 1);

    // By name (byte order: upper case first), then id; with the name as it is now.
    let (first, second) = if alpha1.id() < alpha2.id() {
        (&alpha1, &alpha2)
    } else {
        (&alpha2, &alpha1)
    };
    let listed = |list: Vec<Assignment>| -> Vec<(String, String)> {
        list.into_iter()
            .map(|a| (a.name, a.endpoint_id.into_string()))
            .collect()
    };
    let row = |name: &str, room: &Endpoint| (name.to_owned(), room.id().to_string());
    assert_eq!(
        listed(h.store.assignments(&e.id, &oslo.id).await.unwrap()),
        [
            row("Bergen room", &big),
            row("alpha", first),
            row("alpha", second),
            row("zulu", &zulu),
        ]
    );
    h.store
        .update_endpoint(&e.id, zulu.id(), rename("Aurora"), &audit_for(&zulu))
        .await
        .unwrap();
    assert_eq!(
        listed(h.store.assignments(&e.id, &oslo.id).await.unwrap())[0],
        row("Aurora", &zulu)
    );

    // assignments_of: those of the ids that have one, of any template, never another
    // enterprise's.
    ids.insert(1_700, apart.id().clone());
    let mut found = listed(h.store.assignments_of(&e.id, &ids).await.unwrap());
    found.sort();
    let mut expected = vec![
        row("Aurora", &zulu),
        row("alpha", &alpha1),
        row("alpha", &alpha2),
        row("Bergen room", &big),
        row("apart", &apart),
    ];
    expected.sort();
    assert_eq!(found, expected);
    let of = h
        .store
        .assignments_of(&e.id, std::slice::from_ref(apart.id()))
        .await
        .unwrap();
    assert_eq!(of.len(), 1);
    assert_eq!(of[0].template_id, bergen.id);
    assert!(h.store.assignments_of(&e.id, &[]).await.unwrap().is_empty());
    let theirs_seen = h.store.assignments_of(&other.id, &ids).await.unwrap();
    assert_eq!(listed(theirs_seen), [row("X", &x)]);

    // Unassigning as many ids at once.
    let removed = h
        .store
        .unassign_template(
            &e.id,
            &oslo.id,
            &ids,
            &audit(&e.id, &oslo.id, "templates.unassign"),
        )
        .await
        .unwrap();
    assert_eq!(removed, 4);
    assert!(
        h.store
            .assignments(&e.id, &oslo.id)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(rooms_of(h, &e.id, &bergen.id).await, ids_of(&[&apart]));
    assert_eq!(rooms_of(h, &other.id, &theirs.id).await, ids_of(&[&x]));
}

pub async fn drift_records_are_saved_only_while_assigned_with_their_events(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let oslo = template(h, &e, "Oslo").await;
    let bergen = template(h, &e, "Bergen").await;
    let a = inserted(h, named(h, &e, "A")).await;
    let b = inserted(h, named(h, &e, "B")).await;
    let unassigned = inserted(h, named(h, &e, "C")).await;
    let hook = subscription(h, &e, &[EventType::TemplateDrifted]).await;
    let calls = subscription(h, &e, &[EventType::CallStarted]).await;
    let their_hook = subscription(h, &other, &[EventType::TemplateDrifted]).await;
    assert_eq!(assign(h, &e.id, &oslo.id, &[&a]).await, 1);
    assert_eq!(assign(h, &e.id, &bergen.id, &[&b]).await, 1);
    let event = |room: &Endpoint, t: &Template| {
        Event::template_drifted(
            room.id().as_str(),
            t.id.as_str(),
            &[SettingKey::TimeZone],
            NOW,
        )
    };

    // Saved, and read back as it was; no event unless given one.
    assert!(save(h, &e.id, &a, &oslo.id, &failed(NOW), None).await);
    assert_eq!(record_of(h, &e.id, &a).await, Some(Some(failed(NOW))));
    assert!(queued(h, &e, &hook).await.is_empty());
    let news = event(&a, &oslo);
    assert!(save(h, &e.id, &a, &oslo.id, &drifted(NOW + 1), Some(&news)).await);
    let list = h.store.assignments(&e.id, &oslo.id).await.unwrap();
    assert_eq!(list[0].drift, Some(drifted(NOW + 1)));
    assert_eq!(list[0].checked_at(), Some(NOW + 1));
    assert_eq!(
        queued(h, &e, &hook).await,
        [(EventType::TemplateDrifted, news.id.clone())]
    );
    assert!(queued(h, &e, &calls).await.is_empty(), "not wanted there");
    assert!(queued(h, &other, &their_hook).await.is_empty());

    // Refused, with nothing written: another template's room, an unassigned room, another
    // enterprise's view of the room, an unknown template.
    let refused = [
        (&e.id, &b, &oslo.id),
        (&e.id, &a, &bergen.id),
        (&e.id, &unassigned, &oslo.id),
        (&other.id, &a, &oslo.id),
    ];
    for (ent, room, t) in refused {
        let news = event(room, &oslo);
        assert!(!save(h, ent, room, t, &failed(NOW + 9), Some(&news)).await);
    }
    let unknown = TemplateId::from_trusted(new_id());
    assert!(!save(h, &e.id, &a, &unknown, &failed(NOW + 9), None).await);
    assert_eq!(record_of(h, &e.id, &a).await, Some(Some(drifted(NOW + 1))));
    assert_eq!(record_of(h, &e.id, &b).await, Some(None));
    assert_eq!(record_of(h, &e.id, &unassigned).await, None);
    assert_eq!(
        queued(h, &e, &hook).await.len(),
        1,
        "no events for refused saves"
    );
    assert!(queued(h, &other, &their_hook).await.is_empty());

    // A room unassigned since its check began keeps nothing.
    assert_eq!(unassign(h, &e.id, &oslo.id, &[&a]).await, 1);
    assert!(!save(h, &e.id, &a, &oslo.id, &drifted(NOW + 20), None).await);
    assert_eq!(assign(h, &e.id, &oslo.id, &[&a]).await, 1);
    assert_eq!(
        record_of(h, &e.id, &a).await,
        Some(None),
        "a new assignment"
    );
}

pub async fn template_assignments_go_with_their_endpoint_template_and_enterprise(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let oslo = template(h, &e, "Oslo").await;
    let bergen = template(h, &e, "Bergen").await;
    let a = inserted(h, named(h, &e, "A")).await;
    let b = inserted(h, named(h, &e, "B")).await;
    let c = inserted(h, named(h, &e, "C")).await;
    let x = inserted(h, named(h, &other, "X")).await;
    let theirs = template(h, &other, "Oslo").await;
    assert_eq!(assign(h, &e.id, &oslo.id, &[&a, &b]).await, 2);
    assert_eq!(assign(h, &e.id, &bergen.id, &[&c]).await, 1);
    assert_eq!(assign(h, &other.id, &theirs.id, &[&x]).await, 1);
    assert!(save(h, &e.id, &a, &oslo.id, &drifted(NOW), None).await);

    // A deleted endpoint's assignment goes with it.
    assert!(
        h.store
            .delete_endpoint(&e.id, a.id(), &audit_for(&a))
            .await
            .unwrap()
    );
    assert_eq!(rooms_of(h, &e.id, &oslo.id).await, ids_of(&[&b]));
    assert_eq!(record_of(h, &e.id, &a).await, None);
    assert!(!save(h, &e.id, &a, &oslo.id, &drifted(NOW + 1), None).await);

    // A deleted template's assignments go with it, and only those.
    let deleted = h
        .store
        .delete_template(&e.id, &oslo.id, &audit(&e.id, &oslo.id, "templates.delete"))
        .await
        .unwrap();
    assert!(deleted);
    assert!(
        h.store
            .assignments(&e.id, &oslo.id)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(record_of(h, &e.id, &b).await, None);
    assert_eq!(rooms_of(h, &e.id, &bergen.id).await, ids_of(&[&c]));
    // The room is free for another template.
    assert_eq!(assign(h, &e.id, &bergen.id, &[&b]).await, 1);

    // A deleted enterprise's assignments go with it; another's stay.
    h.store.delete_enterprise(&e.id).await.unwrap().unwrap();
    assert!(
        h.store
            .assignments(&e.id, &bergen.id)
            .await
            .unwrap()
            .is_empty()
    );
    let ids = [b.id().clone(), c.id().clone()];
    assert!(
        h.store
            .assignments_of(&e.id, &ids)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(rooms_of(h, &other.id, &theirs.id).await, ids_of(&[&x]));
}

//! Outbound listeners, their connections (LinkStore) and the poll lease.

use super::*;
use roomlink_domain::listener::{
    CheckError, LINK_STALE_MS, LinkPresence, ListenerCheck, ListenerConnection,
};

fn presence(l: &ListenerService, instance: &str, since_ms: i64) -> LinkPresence {
    LinkPresence {
        listener_id: l.id.clone(),
        instance: instance.into(),
        since_ms,
        version: Some(format!("{instance}-v{since_ms}")),
        seen_ms: since_ms,
    }
}

/// The enterprise's links, in a fixed order.
async fn links_of(h: &Harness, ent: &Enterprise) -> Vec<LinkPresence> {
    let mut links = h.store.links(&ent.id).await.unwrap();
    links.sort_by(|a, b| a.listener_id.as_str().cmp(b.listener_id.as_str()));
    links
}

fn sorted(mut links: Vec<LinkPresence>) -> Vec<LinkPresence> {
    links.sort_by(|a, b| a.listener_id.as_str().cmp(b.listener_id.as_str()));
    links
}

pub async fn outbound_listeners_round_trip(h: &Harness) {
    let e = enterprise(h, 10).await;
    let inbound = listener(h, &e, "in").await;
    let out = outbound_listener(h, &e, "out").await;
    assert_eq!(out.profile.connection, ListenerConnection::Outbound);
    let stored = h.store.listener(&e.id, &out.id).await.unwrap().unwrap();
    assert_eq!(stored, out);
    let shown = serde_json::to_value(&stored).unwrap();
    assert_eq!(shown["connection"], "outbound");
    assert_eq!(shown["baseUrl"], Value::Null);
    assert_eq!(
        h.store.list_listeners(&e.id).await.unwrap(),
        vec![inbound.clone(), out.clone()]
    );

    // Either way round by update.
    let mut turned = inbound.clone();
    turned.profile.connection = ListenerConnection::Outbound;
    assert!(
        h.store
            .update_listener(&turned, &audit_for(&turned))
            .await
            .unwrap()
    );
    assert_eq!(
        h.store.listener(&e.id, &inbound.id).await.unwrap(),
        Some(turned)
    );
    let mut back = out.clone();
    back.profile.connection = inbound.profile.connection.clone();
    assert!(
        h.store
            .update_listener(&back, &audit_for(&back))
            .await
            .unwrap()
    );
    let stored = h.store.listener(&e.id, &out.id).await.unwrap().unwrap();
    assert_eq!(stored, back);
    assert_eq!(
        serde_json::to_value(&stored).unwrap()["baseUrl"],
        "https://listener.corp.example:9001/api"
    );
}

pub async fn listener_by_id_finds_across_enterprises(h: &Harness) {
    let a = enterprise(h, 10).await;
    let b = enterprise(h, 10).await;
    let la = outbound_listener(h, &a, "a").await;
    let lb = listener(h, &b, "b").await;
    assert_eq!(h.store.listener_by_id(&la.id).await.unwrap(), Some(la));
    assert_eq!(h.store.listener_by_id(&lb.id).await.unwrap(), Some(lb));
    let unknown = ListenerServiceId::from_trusted(new_id());
    assert_eq!(h.store.listener_by_id(&unknown).await.unwrap(), None);
}

pub async fn links_replace_and_ignore_stale_downs(h: &Harness) {
    let e = enterprise(h, 10).await;
    let l = outbound_listener(h, &e, "site").await;
    assert_eq!(links_of(h, &e).await, vec![]);

    let first = presence(&l, "i1", 1_000);
    h.store.link_up(&first).await.unwrap();
    assert_eq!(links_of(h, &e).await, vec![first.clone()]);

    // The listener reconnects elsewhere: the newer connection replaces the first, version
    // and heartbeat included.
    let mut second = presence(&l, "i2", 5_000);
    second.version = None;
    h.store.link_up(&second).await.unwrap();
    assert_eq!(links_of(h, &e).await, vec![second.clone()]);

    // The first instance closing its (replaced) connection changes nothing; neither does a
    // right instance with the wrong start, nor another listener's id.
    h.store.link_down(&l.id, "i1", 1_000).await.unwrap();
    h.store.link_down(&l.id, "i2", 4_999).await.unwrap();
    let other = ListenerServiceId::from_trusted(new_id());
    h.store.link_down(&other, "i2", 5_000).await.unwrap();
    assert_eq!(links_of(h, &e).await, vec![second.clone()]);

    h.store.link_down(&l.id, "i2", 5_000).await.unwrap();
    assert_eq!(links_of(h, &e).await, vec![]);
    // Twice is fine.
    h.store.link_down(&l.id, "i2", 5_000).await.unwrap();
}

pub async fn links_seen_bumps_only_that_instance(h: &Harness) {
    let e = enterprise(h, 10).await;
    let one = outbound_listener(h, &e, "one").await;
    let two = outbound_listener(h, &e, "two").await;
    let three = outbound_listener(h, &e, "three").await;
    let on_i1 = [presence(&one, "i1", 1_000), presence(&two, "i1", 2_000)];
    let on_i2 = presence(&three, "i2", 3_000);
    for p in on_i1.iter().chain([&on_i2]) {
        h.store.link_up(p).await.unwrap();
    }

    h.store.links_seen("i1", 9_000).await.unwrap();
    let mut expected: Vec<LinkPresence> = on_i1
        .iter()
        .map(|p| LinkPresence {
            seen_ms: 9_000,
            ..p.clone()
        })
        .collect();
    expected.push(on_i2.clone());
    assert_eq!(links_of(h, &e).await, sorted(expected));
    let stale = links_of(h, &e).await;
    let now = 9_000 + LINK_STALE_MS - 1;
    let live = stale.iter().filter(|p| p.is_live(now)).count();
    assert_eq!(live, 2, "{stale:?}");

    // An instance holding nothing: no change, no error.
    h.store.links_seen("i3", 10_000).await.unwrap();
    assert_eq!(links_of(h, &e).await, stale);
}

pub async fn links_are_enterprise_scoped(h: &Harness) {
    let a = enterprise(h, 10).await;
    let b = enterprise(h, 10).await;
    let la = outbound_listener(h, &a, "a").await;
    let lb = outbound_listener(h, &b, "b").await;
    let pa = presence(&la, "i1", 1_000);
    let pb = presence(&lb, "i1", 2_000);
    h.store.link_up(&pa).await.unwrap();
    h.store.link_up(&pb).await.unwrap();
    assert_eq!(h.store.links(&a.id).await.unwrap(), vec![pa]);
    assert_eq!(h.store.links(&b.id).await.unwrap(), vec![pb]);
    let none = EnterpriseId::from_trusted(new_id());
    assert_eq!(h.store.links(&none).await.unwrap(), vec![]);
}

pub async fn links_go_with_their_listener(h: &Harness) {
    let e = enterprise(h, 10).await;
    let gone = outbound_listener(h, &e, "gone").await;
    let kept = outbound_listener(h, &e, "kept").await;
    let kept_link = presence(&kept, "i1", 2_000);
    h.store
        .link_up(&presence(&gone, "i1", 1_000))
        .await
        .unwrap();
    h.store.link_up(&kept_link).await.unwrap();

    assert!(
        h.store
            .delete_listener(&e.id, &gone.id, &audit_for(&e.id))
            .await
            .unwrap()
    );
    assert_eq!(links_of(h, &e).await, vec![kept_link.clone()]);

    // A connection coming up for a deleted listener records nothing, and is no error.
    h.store
        .link_up(&presence(&gone, "i2", 3_000))
        .await
        .unwrap();
    assert_eq!(links_of(h, &e).await, vec![kept_link.clone()]);
    let never = ListenerService {
        id: ListenerServiceId::from_trusted(new_id()),
        ..gone.clone()
    };
    h.store
        .link_up(&presence(&never, "i2", 3_000))
        .await
        .unwrap();

    // Nothing was left behind: the same listener inserted again has no connection.
    h.store
        .insert_listener(&gone, &audit_for(&gone))
        .await
        .unwrap();
    assert_eq!(links_of(h, &e).await, vec![kept_link]);
}

pub async fn links_go_with_their_enterprise(h: &Harness) {
    let gone = enterprise(h, 10).await;
    let kept = enterprise(h, 10).await;
    let lg = outbound_listener(h, &gone, "g").await;
    let lk = outbound_listener(h, &kept, "k").await;
    let pk = presence(&lk, "i1", 2_000);
    h.store.link_up(&presence(&lg, "i1", 1_000)).await.unwrap();
    h.store.link_up(&pk).await.unwrap();

    assert!(h.store.delete_enterprise(&gone.id).await.unwrap().is_some());
    assert_eq!(h.store.links(&gone.id).await.unwrap(), vec![]);
    assert_eq!(h.store.listener_by_id(&lg.id).await.unwrap(), None);
    assert_eq!(h.store.links(&kept.id).await.unwrap(), vec![pk]);

    // Nothing was left behind: the same enterprise and listener again have no connection.
    h.store.create_enterprise(&gone).await.unwrap();
    h.store.insert_listener(&lg, &audit_for(&lg)).await.unwrap();
    assert_eq!(h.store.links(&gone.id).await.unwrap(), vec![]);
}

/// A lone store holds the lease, and keeps holding it.
pub async fn poll_lease_is_answered(h: &Harness) {
    assert!(h.store.hold_poll_lease().await.unwrap());
    assert!(h.store.hold_poll_lease().await.unwrap());
}

/// Inbound listeners' checks: one row per listener, a failed check keeps the last answer,
/// scoped to the enterprise, gone with the listener.
pub async fn listener_checks_keep_the_last_answer(h: &Harness) {
    let a = enterprise(h, 10).await;
    let b = enterprise(h, 10).await;
    let la = listener(h, &a, "a").await;
    let lb = listener(h, &b, "b").await;
    assert_eq!(h.store.checks(&a.id).await.unwrap(), vec![]);

    let answered = ListenerCheck::answered(la.id.clone(), 1_000, "3.1.0".into());
    h.store.record_check(&answered).await.unwrap();
    assert_eq!(h.store.checks(&a.id).await.unwrap(), vec![answered]);

    let offline = Error::new(ErrorKind::ListenerOffline, "down");
    h.store
        .record_check(&ListenerCheck::failed(la.id.clone(), 2_000, &offline))
        .await
        .unwrap();
    let kept = ListenerCheck {
        listener_id: la.id.clone(),
        checked_ms: 2_000,
        answered_ms: Some(1_000),
        version: Some("3.1.0".into()),
        error: Some(CheckError {
            error_name: "ListenerOffline".into(),
            message: "down".into(),
        }),
    };
    assert_eq!(h.store.checks(&a.id).await.unwrap(), vec![kept]);

    // Answered again: the error is cleared and the new version shown.
    let again = ListenerCheck::answered(la.id.clone(), 3_000, "3.2.0".into());
    h.store.record_check(&again).await.unwrap();
    assert_eq!(h.store.checks(&a.id).await.unwrap(), vec![again.clone()]);

    // Never answered: no time, no version.
    let never = ListenerCheck::failed(lb.id.clone(), 4_000, &offline);
    h.store.record_check(&never).await.unwrap();
    assert_eq!(h.store.checks(&b.id).await.unwrap(), vec![never]);
    assert_eq!(h.store.checks(&a.id).await.unwrap(), vec![again]);

    // Gone with its listener; a check of a deleted listener records nothing, and is no error.
    assert!(
        h.store
            .delete_listener(&a.id, &la.id, &audit_for(&a.id))
            .await
            .unwrap()
    );
    assert_eq!(h.store.checks(&a.id).await.unwrap(), vec![]);
    h.store
        .record_check(&ListenerCheck::answered(
            la.id.clone(),
            5_000,
            "3.1.0".into(),
        ))
        .await
        .unwrap();
    assert_eq!(h.store.checks(&a.id).await.unwrap(), vec![]);
}

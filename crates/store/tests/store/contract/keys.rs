//! The sealed values as a key rotation reads and re-seals them.

use super::*;
use roomlink_app::keys::KeyRotation;
use roomlink_crypto::{KeyRing, Sealer, ServiceKey};
use std::sync::Arc;

pub async fn sealed_values_are_paged_by_key_and_replaced_only_if_unchanged(h: &Harness) {
    let e = enterprise(h, 10).await;
    let mut ids = Vec::new();
    for name in ["a", "b", "c"] {
        let body = json!({ "name": name, "password": format!("pw-{name}") });
        ids.push(inserted(h, endpoint(h, &e, body)).await.id().clone());
    }
    inserted(h, named(h, &e, "no password")).await;
    ids.sort();
    let current = h.sealer.current_key_id(None).unwrap();
    let kind = SealedKind::EndpointPassword;

    assert!(
        h.store
            .sealed_not_under(kind, &current, None, 10)
            .await
            .unwrap()
            .is_empty()
    );
    let first = h
        .store
        .sealed_not_under(kind, "svc-other", None, 2)
        .await
        .unwrap();
    let rest = h
        .store
        .sealed_not_under(kind, "svc-other", Some(&first[1].id), 2)
        .await
        .unwrap();
    let seen: Vec<&str> = first.iter().chain(&rest).map(|s| s.id.as_str()).collect();
    assert_eq!(seen, ids.iter().map(EndpointId::as_str).collect::<Vec<_>>());

    let fresh = h.sealer.seal(&Secret::new("pw-a2"), None).unwrap();
    let stale = h.sealer.seal(&Secret::new("pw-a"), None).unwrap();
    assert!(
        !h.store
            .replace_sealed(kind, &first[0].id, &stale, &fresh)
            .await
            .unwrap(),
        "a value that is not the one read is left alone"
    );
    assert!(
        h.store
            .replace_sealed(kind, &first[0].id, &first[0].sealed, &fresh)
            .await
            .unwrap()
    );
    let id = EndpointId::from_trusted(first[0].id.clone());
    let stored = h.store.endpoint(&e.id, &id).await.unwrap().unwrap();
    assert_eq!(stored.password(), Some(&fresh));
    assert!(
        !h.store
            .replace_sealed(kind, "no-such-id", &fresh, &stale)
            .await
            .unwrap()
    );

    let one = listener(h, &e, "one").await;
    let secrets = h
        .store
        .sealed_not_under(SealedKind::ListenerSecret, "svc-other", None, 10)
        .await
        .unwrap();
    assert_eq!(secrets.len(), 1);
    assert_eq!(secrets[0].sealed, one.secret);
}

pub async fn a_rotation_reseals_everything_under_the_new_key(h: &Harness) {
    let e = enterprise(h, 10).await;
    let mut endpoints = Vec::new();
    for n in 0..5 {
        let body = json!({ "name": format!("room {n}"), "password": format!("pw-{n}") });
        endpoints.push(inserted(h, endpoint(h, &e, body)).await);
    }
    let one = listener(h, &e, "one").await;
    let calendars = roomlink_domain::calendar::account::CalendarAccountRecord {
        enterprise_id: e.id.clone(),
        calendar_type: roomlink_domain::enums::CalendarType::CalDav,
        base_url: "http://127.0.0.1:5232/".to_owned(),
        username: Some("svc".to_owned()),
        password: Some(h.sealer.seal(&Secret::new("calendar-pw"), None).unwrap()),
        updated_at_ms: 1,
        token_url: None,
    };
    h.store
        .put_calendar_account(&calendars, &audit_for(&e.id))
        .await
        .unwrap();
    let hook = roomlink_domain::webhook::Subscription {
        id: roomlink_domain::ids::WebhookId::from_trusted(new_id()),
        enterprise_id: e.id.clone(),
        url: "https://hooks.example.com/".to_owned(),
        event_types: vec![roomlink_domain::webhook::EventType::RoomOffline],
        description: None,
        created_at: 1,
        updated_at: 1,
        paused: None,
    };
    let hook_secret = h.sealer.seal(&Secret::new("whsec_c2lnbg=="), None).unwrap();
    h.store
        .insert_webhook(&hook, &hook_secret, &audit_for(&e.id))
        .await
        .unwrap();
    // The harness sealed with key 7; the new ring makes 8 current and keeps 7 readable.
    let rotated = Arc::new(Sealer::new(KeyRing::new(
        ServiceKey::from_bytes([8; 32]),
        vec![ServiceKey::from_bytes([7; 32])],
    )));
    let rotation = KeyRotation {
        secrets: h.store.clone(),
        sealer: rotated.clone(),
    };
    let report = rotation.reseal_all().await.unwrap();
    assert_eq!((report.resealed, report.changed_meanwhile), (8, 0));
    assert_eq!(report.key_id, rotated.current_key_id(None).unwrap());
    for (n, before) in endpoints.iter().enumerate() {
        let after = h.store.endpoint(&e.id, before.id()).await.unwrap().unwrap();
        let sealed = after.password().unwrap();
        assert_eq!(sealed.key_id, report.key_id);
        let plain = rotated.open(sealed).unwrap().unwrap();
        assert_eq!(plain.expose(), format!("pw-{n}"));
        assert_eq!(after.profile(), before.profile(), "nothing else changes");
    }
    let listener_after = h.store.listener(&e.id, &one.id).await.unwrap().unwrap();
    assert_eq!(listener_after.secret.key_id, report.key_id);
    assert_eq!(
        rotated
            .open(&listener_after.secret)
            .unwrap()
            .unwrap()
            .expose(),
        h.sealer.open(&one.secret).unwrap().unwrap().expose()
    );
    let account = h
        .store
        .calendar_account(&e.id, calendars.calendar_type)
        .await
        .unwrap()
        .unwrap();
    let sealed = account.password.unwrap();
    assert_eq!(sealed.key_id, report.key_id);
    assert_eq!(
        rotated.open(&sealed).unwrap().unwrap().expose(),
        "calendar-pw"
    );
    let stale = h
        .store
        .sealed_not_under(SealedKind::WebhookSecret, &report.key_id, None, 10)
        .await
        .unwrap();
    assert!(stale.is_empty(), "the webhook secret was resealed too");
    // Resumable: a second run finds nothing left.
    let again = rotation.reseal_all().await.unwrap();
    assert_eq!((again.resealed, again.changed_meanwhile), (0, 0));
}

//! Listener services, endpoint statuses and failures.

use super::*;

pub async fn listeners_round_trip_and_guard_deletion(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let one = listener(h, &e, "one").await;
    let two = listener(h, &e, "two").await;
    assert_eq!(
        h.store.list_listeners(&e.id).await.unwrap(),
        vec![one.clone(), two.clone()]
    );
    assert_eq!(
        h.store.listener(&e.id, &one.id).await.unwrap(),
        Some(one.clone())
    );
    assert_eq!(
        h.sealer.open(&one.secret).unwrap().unwrap().expose(),
        "listener-secret-0123456789"
    );

    let mut changed = one.clone();
    changed.profile = decode_listener(&object(
        json!({"name": "uno", "baseUrl": "http://10.0.0.1"}),
    ))
    .unwrap()
    .0;
    changed.secret = h
        .sealer
        .seal(&Secret::new("a-new-secret-of-16+"), None)
        .unwrap();
    assert!(
        h.store
            .update_listener(&changed, &audit_for(&changed))
            .await
            .unwrap()
    );
    assert_eq!(
        h.store.listener(&e.id, &one.id).await.unwrap(),
        Some(changed.clone())
    );

    // Another enterprise can neither see, change nor delete them.
    assert_eq!(h.store.list_listeners(&other.id).await.unwrap(), vec![]);
    assert_eq!(h.store.listener(&other.id, &one.id).await.unwrap(), None);
    let hijack = ListenerService {
        enterprise_id: other.id.clone(),
        ..one.clone()
    };
    assert!(
        !h.store
            .update_listener(&hijack, &audit_for(&hijack))
            .await
            .unwrap()
    );
    assert!(
        !h.store
            .delete_listener(&other.id, &one.id, &audit_for(&other.id))
            .await
            .unwrap()
    );
    assert_eq!(
        h.store.listener(&e.id, &one.id).await.unwrap(),
        Some(changed.clone())
    );

    // In use: Invalid, kept. Free again: deleted.
    let user = inserted(
        h,
        endpoint(
            h,
            &e,
            json!({"name": "r", "listenerServiceId": one.id.as_str()}),
        ),
    )
    .await;
    let err = h
        .store
        .delete_listener(&e.id, &one.id, &audit_for(&e.id))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Invalid);
    assert!(err.message().contains("1 endpoint"), "{err:?}");
    assert_eq!(
        h.store.listener(&e.id, &one.id).await.unwrap(),
        Some(changed)
    );
    assert!(
        h.store
            .delete_endpoint(&e.id, user.id(), &audit_for(&e.id))
            .await
            .unwrap()
    );
    assert!(
        h.store
            .delete_listener(&e.id, &one.id, &audit_for(&e.id))
            .await
            .unwrap()
    );
    assert!(
        !h.store
            .delete_listener(&e.id, &one.id, &audit_for(&e.id))
            .await
            .unwrap()
    );
    assert_eq!(h.store.list_listeners(&e.id).await.unwrap(), vec![two]);
}

pub async fn statuses_upsert_in_endpoint_order(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let first = inserted(h, named(h, &e, "first")).await;
    let second = inserted(h, named(h, &e, "second")).await;
    let _quiet = inserted(h, named(h, &e, "quiet")).await;
    let (s1, s2) = (
        status(first.id(), 100, true),
        status(second.id(), 200, false),
    );
    h.store
        .save_statuses(&e.id, &[s2.clone(), s1.clone()])
        .await
        .unwrap();
    assert_eq!(
        h.store.statuses(&e.id).await.unwrap(),
        vec![s1.clone(), s2.clone()]
    );

    // Upsert, the last of a batch winning.
    let (s1b, s1c) = (
        status(first.id(), 300, false),
        status(first.id(), 400, true),
    );
    h.store
        .save_statuses(&e.id, &[s1b, s1c.clone()])
        .await
        .unwrap();
    assert_eq!(
        h.store.status(&e.id, first.id()).await.unwrap(),
        Some(s1c.clone())
    );
    assert_eq!(
        h.store.statuses(&e.id).await.unwrap(),
        vec![s1c.clone(), s2.clone()]
    );

    // Another enterprise neither sees nor writes them; unknown endpoints are ignored.
    let forged = status(first.id(), 999, false);
    let ghost = status(&EndpointId::from_trusted(new_id()), 1, true);
    h.store
        .save_statuses(&other.id, &[forged, ghost.clone()])
        .await
        .unwrap();
    h.store
        .save_statuses(&e.id, std::slice::from_ref(&ghost))
        .await
        .unwrap();
    assert_eq!(h.store.status(&e.id, first.id()).await.unwrap(), Some(s1c));
    assert_eq!(h.store.status(&other.id, first.id()).await.unwrap(), None);
    assert_eq!(
        h.store.status(&e.id, &ghost.endpoint_id).await.unwrap(),
        None
    );
    assert_eq!(h.store.statuses(&other.id).await.unwrap(), vec![]);
    h.store.save_statuses(&e.id, &[]).await.unwrap();
}

pub async fn failures_newest_first(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let mine: Vec<Failure> = (0..5).map(|n| failure(&e, n)).collect();
    for f in &mine {
        h.store.record_failure(f).await.unwrap();
    }
    let theirs = failure(&other, 9);
    h.store.record_failure(&theirs).await.unwrap();
    assert_eq!(
        h.store.failures(&e.id, 3).await.unwrap(),
        vec![mine[4].clone(), mine[3].clone(), mine[2].clone()]
    );
    assert_eq!(h.store.failures(&e.id, 100).await.unwrap().len(), 5);
    assert_eq!(h.store.failures(&e.id, 0).await.unwrap(), vec![]);
    assert_eq!(
        h.store.failures(&other.id, 100).await.unwrap(),
        vec![theirs.clone()]
    );
    // Retention: everything dated before the cutoff goes, in every enterprise.
    assert_eq!(h.store.purge_failures(mine[2].error_date).await.unwrap(), 2);
    assert_eq!(
        h.store.failures(&e.id, 100).await.unwrap(),
        vec![mine[4].clone(), mine[3].clone(), mine[2].clone()]
    );
    assert_eq!(
        h.store.failures(&other.id, 100).await.unwrap(),
        vec![theirs]
    );
}

/// The shared failed-authentication allowances: every adapter spends as the domain's rule
/// does (compared over random failures of a few keys), concurrent failures of one key each
/// count, and only full buckets are purged.
pub async fn auth_failures_follow_the_domain_rule(h: &Harness) {
    use roomlink_domain::throttle::{Allowance, FailureKey, Guessed};
    let hash_key = [3u8; 32];
    let address = std::net::IpAddr::from([127, 0, 0, 1]);
    let keys = [
        FailureKey::new(&hash_key, address, Guessed::User("ops")),
        FailureKey::new(&hash_key, address, Guessed::AccessToken),
        FailureKey::new(&hash_key, address, Guessed::Listener("l1")),
    ];
    let allowance = Allowance::per_minute(5).unwrap(); // one every 12 s, five at once
    let mut expected: [Option<i64>; 3] = [None; 3];
    let (mut now, mut seed) = (1_000_000_000_000i64, 0x2545_F491u64);
    for step in 0..300 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let which = (seed % 3) as usize;
        now += (seed >> 8) as i64 % 9_000;
        assert_eq!(
            h.store.failure_tat(&keys[which]).await.unwrap(),
            expected[which],
            "step {step}"
        );
        let want = allowance.spend(expected[which], now);
        let got = h
            .store
            .spend_failure(&keys[which], now, allowance)
            .await
            .unwrap();
        assert_eq!(got, want, "step {step}");
        expected[which] = Some(want.tat_ms);
    }

    // Ten instances failing the same fresh key at once: five count, as from one.
    let burst = FailureKey::new(&hash_key, address, Guessed::User("burst"));
    let spent = join_all((0..10).map(|_| h.store.spend_failure(&burst, now, allowance))).await;
    let counted = spent
        .into_iter()
        .filter(|s| s.as_ref().unwrap().counted)
        .count();
    assert_eq!(counted, 5);
    assert_eq!(
        h.store.failure_tat(&burst).await.unwrap(),
        Some(now + 5 * allowance.interval_ms())
    );

    // Purging forgets the full buckets only.
    let latest = expected.iter().flatten().copied().max().unwrap();
    let purged = h.store.purge_auth_failures(now).await.unwrap();
    let still_spent = expected.iter().flatten().filter(|t| **t > now).count() + 1;
    assert_eq!(purged as usize, 4 - still_spent);
    assert_eq!(
        h.store
            .purge_auth_failures(latest.max(now + 60_000))
            .await
            .unwrap() as usize,
        still_spent
    );
    for key in keys.iter().chain([&burst]) {
        assert_eq!(h.store.failure_tat(key).await.unwrap(), None);
    }
}

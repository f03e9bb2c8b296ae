//! Pairing codes and the PairedStatus lifecycle.

use super::*;

pub async fn pairing_codes_one_current_per_endpoint(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let ep = inserted(h, named(h, &e, "room")).await;
    let first = pairing_code(&e, ep.id(), "ABCDEFGH23");
    h.store
        .save_pairing_code(&first, &audit_for(&first))
        .await
        .unwrap();
    assert_eq!(
        h.store.current_pairing_code(&e.id, ep.id()).await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(
        h.store.pairing_code(&e.id, &first.id).await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(
        h.store.pairing_code_by_code("ABCDEFGH23").await.unwrap(),
        Some(first.clone())
    );
    assert_eq!(
        h.store
            .current_pairing_code(&other.id, ep.id())
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        h.store.pairing_code(&other.id, &first.id).await.unwrap(),
        None
    );

    let second = pairing_code(&e, ep.id(), "ZYXWVUTS98");
    h.store
        .save_pairing_code(&second, &audit_for(&second))
        .await
        .unwrap();
    assert_eq!(
        h.store.current_pairing_code(&e.id, ep.id()).await.unwrap(),
        Some(second.clone())
    );
    assert_eq!(
        h.store.pairing_code_by_code("ABCDEFGH23").await.unwrap(),
        None
    );
    assert_eq!(h.store.pairing_code(&e.id, &first.id).await.unwrap(), None);
    // Saving the same code again (a new id) is a replacement, not a collision.
    let again = pairing_code(&e, ep.id(), "ZYXWVUTS98");
    h.store
        .save_pairing_code(&again, &audit_for(&again))
        .await
        .unwrap();
    assert_eq!(
        h.store.pairing_code_by_code("ZYXWVUTS98").await.unwrap(),
        Some(again)
    );
    // Another endpoint cannot take a code in use.
    let ep2 = inserted(h, named(h, &e, "room 2")).await;
    let clash = pairing_code(&e, ep2.id(), "ZYXWVUTS98");
    assert_eq!(
        kind(h.store.save_pairing_code(&clash, &audit_for(&clash)).await),
        ErrorKind::InternalError
    );
    assert_eq!(
        h.store.current_pairing_code(&e.id, ep2.id()).await.unwrap(),
        None
    );
}

pub async fn paired_status_lifecycle(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let ep = inserted(h, named(h, &e, "room")).await;
    let zt = zt_token(&e, ep.id(), 0);
    h.store.insert_token(&zt, &audit_for(&zt)).await.unwrap();

    let created = h.store.touch_paired(&zt, 1_000).await.unwrap().unwrap();
    assert_eq!(
        (created.creation_date, created.heartbeat_date),
        (1_000, 1_000)
    );
    assert_eq!(created.endpoint_id, *ep.id());
    assert_eq!(created.username.as_deref(), Some("alice@corp.example"));
    assert_eq!(
        created.client_device_type,
        Some(ClientDeviceType::IosNative)
    );
    let beat = h.store.touch_paired(&zt, 30_000).await.unwrap().unwrap();
    assert_eq!((beat.creation_date, beat.heartbeat_date), (1_000, 30_000));
    assert_eq!(
        h.store.paired(&e.id, ep.id(), 30_000).await.unwrap(),
        vec![beat.clone()]
    );

    // Gone exactly one minute after the last heartbeat.
    let edge = 30_000 + PAIRED_STATUS_TTL_MS;
    assert_eq!(
        h.store.paired(&e.id, ep.id(), edge - 1).await.unwrap(),
        vec![beat.clone()]
    );
    assert_eq!(h.store.paired(&e.id, ep.id(), edge).await.unwrap(), vec![]);
    assert_eq!(
        h.store.paired(&other.id, ep.id(), 30_000).await.unwrap(),
        vec![]
    );
    assert_eq!(h.store.purge_expired_paired(edge - 1).await.unwrap(), 0);
    assert_eq!(h.store.purge_expired_paired(edge).await.unwrap(), 1);

    // A use after expiry pairs anew.
    let fresh = h.store.touch_paired(&zt, 200_000).await.unwrap().unwrap();
    assert_eq!(
        (fresh.creation_date, fresh.heartbeat_date),
        (200_000, 200_000)
    );
    let second = zt_token(&e, ep.id(), 0);
    h.store
        .insert_token(&second, &audit_for(&second))
        .await
        .unwrap();
    h.store
        .touch_paired(&second, 200_001)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        h.store.paired(&e.id, ep.id(), 200_001).await.unwrap().len(),
        2
    );

    // Deleting the token deletes its pairing, in the same transaction.
    assert!(
        h.store
            .delete_token(&e.id, zt.id(), &audit_for(&e.id))
            .await
            .unwrap()
    );
    let left = h.store.paired(&e.id, ep.id(), 200_001).await.unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].token_id, *second.id());

    // Only Zero Touch tokens pair.
    let full = token(&e, "full", 0, 1_000_000);
    assert_eq!(h.store.touch_paired(&full, 200_002).await.unwrap(), None);
}

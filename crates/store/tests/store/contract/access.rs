//! Enterprises, users, tokens, and isolation between enterprises.

use super::*;

pub async fn enterprises_and_users(h: &Harness) {
    let e = enterprise(h, 7).await;
    assert_eq!(h.store.enterprise(&e.id).await.unwrap(), Some(e.clone()));
    assert_eq!(
        h.store.enterprise_by_name(&e.name).await.unwrap(),
        Some(e.clone())
    );
    assert_eq!(h.store.enterprise_by_name("nobody").await.unwrap(), None);
    let twin = Enterprise {
        id: EnterpriseId::from_trusted(new_id()),
        ..e.clone()
    };
    assert_eq!(
        kind(h.store.create_enterprise(&twin).await),
        ErrorKind::Invalid
    );
    assert_eq!(h.store.enterprise(&twin.id).await.unwrap(), None);
    let second = enterprise(h, 1).await;
    let mut ids = h.store.enterprise_ids().await.unwrap();
    ids.sort();
    let mut expected = vec![e.id.clone(), second.id.clone()];
    expected.sort();
    assert_eq!(
        ids, expected,
        "every enterprise, the failed twin not among them"
    );

    assert!(
        h.store
            .set_public_key(&e.id, Some("pk-base64".into()), &audit_for(&e.id))
            .await
            .unwrap()
    );
    let read = h.store.enterprise(&e.id).await.unwrap().unwrap();
    assert_eq!(read.public_key.as_deref(), Some("pk-base64"));
    assert!(
        h.store
            .set_public_key(&e.id, None, &audit_for(&e.id))
            .await
            .unwrap()
    );
    assert_eq!(h.store.enterprise(&e.id).await.unwrap(), Some(e.clone()));
    let nobody = EnterpriseId::from_trusted(new_id());
    assert!(
        !h.store
            .set_public_key(&nobody, None, &audit_for(&nobody))
            .await
            .unwrap()
    );

    let user = ServiceUser {
        id: UserId::from_trusted(new_id()),
        enterprise_id: e.id.clone(),
        username: "admin@acme.example".into(),
        password_hash: "$2b$10$abcdefghijklmnopqrstuu".into(),
        role: Role::ReadWrite,
        disabled: false,
    };
    h.store.create_user(&user).await.unwrap();
    assert_eq!(
        h.store.user_by_username(&user.username).await.unwrap(),
        Some(user.clone())
    );
    assert_eq!(h.store.user_by_username("nobody").await.unwrap(), None);
    // Usernames are unique across enterprises.
    let other = enterprise(h, 1).await;
    let clash = ServiceUser {
        id: UserId::from_trusted(new_id()),
        enterprise_id: other.id.clone(),
        role: Role::ReadOnly,
        ..user.clone()
    };
    assert_eq!(kind(h.store.create_user(&clash).await), ErrorKind::Invalid);
    assert_eq!(
        h.store.user_by_username(&user.username).await.unwrap(),
        Some(user)
    );
}

pub async fn tokens_round_trip_and_expire(h: &Harness) {
    let e = enterprise(h, 10).await;
    let full = token(&e, "tok-full", 1_000, 10_000);
    let mut parts = token_parts(&e, "tok-readonly", 2_000, 20_000);
    parts.roles = RoleSet::read_only();
    parts.client_name = None;
    parts.creator = None;
    parts.platform_id = None;
    parts.first_name = None;
    let bare = AccessToken::new(parts).unwrap();
    let ep = EndpointId::from_trusted(new_id());
    let zt = zt_token(&e, &ep, 3_000);
    for t in [&full, &bare, &zt] {
        h.store.insert_token(t, &audit_for(t)).await.unwrap();
    }
    for t in [&full, &bare, &zt] {
        assert_eq!(
            h.store
                .token_by_hash(t.hash(), 3_000)
                .await
                .unwrap()
                .as_ref(),
            Some(t)
        );
        assert_eq!(
            h.store
                .token_by_id(&e.id, t.id(), 3_000)
                .await
                .unwrap()
                .as_ref(),
            Some(t)
        );
    }
    assert_eq!(
        h.store.list_tokens(&e.id, 3_000).await.unwrap(),
        vec![full.clone(), bare.clone(), zt.clone()]
    );

    // Live until the expiration date, exclusive.
    let hash = TokenHash::of(&Secret::new("tok-full"));
    assert_eq!(
        h.store.token_by_hash(&hash, 9_999).await.unwrap(),
        Some(full.clone())
    );
    assert_eq!(h.store.token_by_hash(&hash, 10_000).await.unwrap(), None);
    assert_eq!(
        h.store.token_by_id(&e.id, full.id(), 10_000).await.unwrap(),
        None
    );
    assert_eq!(
        h.store.list_tokens(&e.id, 10_000).await.unwrap(),
        vec![bare.clone(), zt.clone()]
    );
    assert_eq!(
        h.store.list_tokens(&e.id, 50_000).await.unwrap(),
        vec![zt.clone()]
    );
    let unknown = TokenHash::of(&Secret::new("nope"));
    assert_eq!(h.store.token_by_hash(&unknown, 0).await.unwrap(), None);
}

pub async fn tokens_are_scoped_and_purged(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let short = token(&e, "short", 0, 1_000);
    let long = token(&e, "long", 0, 5_000);
    let theirs = token(&other, "theirs", 0, 1_000);
    for t in [&short, &long, &theirs] {
        h.store.insert_token(t, &audit_for(t)).await.unwrap();
    }
    assert_eq!(
        h.store.token_by_id(&other.id, long.id(), 0).await.unwrap(),
        None
    );
    assert_eq!(
        h.store.list_tokens(&other.id, 0).await.unwrap(),
        vec![theirs.clone()]
    );
    assert!(
        !h.store
            .delete_token(&other.id, long.id(), &audit_for(&other.id))
            .await
            .unwrap()
    );
    assert_eq!(
        h.store.token_by_id(&e.id, long.id(), 0).await.unwrap(),
        Some(long.clone())
    );

    assert_eq!(h.store.purge_expired_tokens(999).await.unwrap(), 0);
    assert_eq!(h.store.purge_expired_tokens(1_000).await.unwrap(), 2);
    assert_eq!(
        h.store.list_tokens(&e.id, 0).await.unwrap(),
        vec![long.clone()]
    );
    assert_eq!(h.store.list_tokens(&other.id, 0).await.unwrap(), vec![]);
    assert!(
        h.store
            .delete_token(&e.id, long.id(), &audit_for(&e.id))
            .await
            .unwrap()
    );
    assert!(
        !h.store
            .delete_token(&e.id, long.id(), &audit_for(&e.id))
            .await
            .unwrap()
    );
    assert_eq!(h.store.token_by_hash(long.hash(), 0).await.unwrap(), None);
}

/// A second enterprise reaches none of the first's rows through any port.
pub async fn enterprises_are_isolated(h: &Harness) {
    let a = enterprise(h, 10).await;
    let b = enterprise(h, 10).await;
    let l = listener(h, &a, "HQ").await;
    let ep = inserted(
        h,
        endpoint(
            h,
            &a,
            json!({"name": "room", "listenerServiceId": l.id.as_str()}),
        ),
    )
    .await;
    let t = token(&a, "a-token", 0, 1_000_000);
    h.store.insert_token(&t, &audit_for(&t)).await.unwrap();
    let zt = zt_token(&a, ep.id(), 0);
    h.store.insert_token(&zt, &audit_for(&zt)).await.unwrap();
    h.store.touch_paired(&zt, 10).await.unwrap();
    let code = pairing_code(&a, ep.id(), "PAIRME2345");
    h.store
        .save_pairing_code(&code, &audit_for(&code))
        .await
        .unwrap();
    h.store
        .save_statuses(&a.id, &[status(ep.id(), 10, true)])
        .await
        .unwrap();
    h.store.record_failure(&failure(&a, 1)).await.unwrap();

    let b_id = &b.id;
    assert_eq!(h.store.list_endpoints(b_id).await.unwrap(), vec![]);
    assert_eq!(h.store.endpoint(b_id, ep.id()).await.unwrap(), None);
    assert_eq!(
        kind(
            h.store
                .update_endpoint(b_id, ep.id(), rename("x"), &audit_for(b_id))
                .await
        ),
        ErrorKind::NotFound
    );
    assert!(
        !h.store
            .delete_endpoint(b_id, ep.id(), &audit_for(b_id))
            .await
            .unwrap()
    );
    let seen = bulk_write(h, b_id, vec![ep.id().clone()], |ctx| {
        assert!(
            ctx.existing.is_empty() && ctx.calendar_owners.is_empty() && ctx.listeners.is_empty()
        );
        assert_eq!(ctx.capacity, 10);
        CsvWrite::default()
    });
    seen.await.unwrap();
    assert_eq!(h.store.token_by_id(b_id, t.id(), 0).await.unwrap(), None);
    assert_eq!(h.store.list_tokens(b_id, 0).await.unwrap(), vec![]);
    assert!(
        !h.store
            .delete_token(b_id, t.id(), &audit_for(b_id))
            .await
            .unwrap()
    );
    assert_eq!(h.store.list_listeners(b_id).await.unwrap(), vec![]);
    assert_eq!(h.store.listener(b_id, &l.id).await.unwrap(), None);
    assert!(
        !h.store
            .delete_listener(b_id, &l.id, &audit_for(b_id))
            .await
            .unwrap()
    );
    assert_eq!(h.store.statuses(b_id).await.unwrap(), vec![]);
    assert_eq!(h.store.status(b_id, ep.id()).await.unwrap(), None);
    assert_eq!(
        h.store.current_pairing_code(b_id, ep.id()).await.unwrap(),
        None
    );
    assert_eq!(h.store.pairing_code(b_id, &code.id).await.unwrap(), None);
    assert_eq!(h.store.paired(b_id, ep.id(), 10).await.unwrap(), vec![]);
    assert_eq!(h.store.failures(b_id, 10).await.unwrap(), vec![]);

    // And all of it is still there for its owner.
    assert_eq!(
        h.store.endpoint(&a.id, ep.id()).await.unwrap(),
        Some(ep.clone())
    );
    assert_eq!(h.store.list_tokens(&a.id, 0).await.unwrap().len(), 2);
    assert_eq!(h.store.listener(&a.id, &l.id).await.unwrap(), Some(l));
    assert_eq!(h.store.statuses(&a.id).await.unwrap().len(), 1);
    assert_eq!(
        h.store.current_pairing_code(&a.id, ep.id()).await.unwrap(),
        Some(code)
    );
    assert_eq!(h.store.paired(&a.id, ep.id(), 10).await.unwrap().len(), 1);
    assert_eq!(h.store.failures(&a.id, 10).await.unwrap().len(), 1);
}

pub async fn ping_answers(h: &Harness) {
    h.store.ping().await.unwrap();
}

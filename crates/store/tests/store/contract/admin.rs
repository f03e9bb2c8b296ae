//! The operator's changes (`roomlink admin`): listings, counts, limits, user state, token
//! revocation by creator, and deleting an enterprise with everything it owns.

use super::*;

fn user(ent: &Enterprise, username: &str, role: Role) -> ServiceUser {
    ServiceUser {
        id: UserId::from_trusted(new_id()),
        enterprise_id: ent.id.clone(),
        username: username.into(),
        password_hash: "$2b$10$abcdefghijklmnopqrstuu".into(),
        role,
        disabled: false,
    }
}

/// A token created by the service user `creator` (no platform id).
fn user_token(ent: &Enterprise, creator: &str) -> AccessToken {
    let mut parts = token_parts(ent, &new_id(), 1_000, 100_000);
    parts.creator = Some(creator.into());
    parts.platform_id = None;
    AccessToken::new(parts).unwrap()
}

pub async fn enterprises_listed_counted_and_limited(h: &Harness) {
    let b = enterprise(h, 3).await;
    let a = enterprise(h, 5).await;
    let listed = h.store.list_enterprises().await.unwrap();
    let mut expected = vec![a.clone(), b.clone()];
    expected.sort_by(|x, y| x.name.cmp(&y.name));
    assert_eq!(listed, expected, "every enterprise, by name");

    inserted(h, named(h, &a, "one")).await;
    inserted(h, named(h, &a, "two")).await;
    listener(h, &a, "l").await;
    h.store
        .create_user(&user(&a, &new_id(), Role::ReadOnly))
        .await
        .unwrap();
    h.store
        .insert_token(
            &token(&a, &new_id(), 1_000, 2_000),
            &audit_for(token(&a, &new_id(), 1_000, 2_000)),
        )
        .await
        .unwrap();
    assert_eq!(
        h.store.enterprise_usage(&a.id).await.unwrap(),
        EnterpriseUsage {
            endpoints: 2,
            listeners: 1,
            users: 1,
            tokens: 1
        }
    );
    assert_eq!(
        h.store.enterprise_usage(&b.id).await.unwrap(),
        EnterpriseUsage::default()
    );

    assert!(h.store.set_endpoint_limit(&a.id, 2).await.unwrap());
    assert_eq!(
        h.store
            .enterprise(&a.id)
            .await
            .unwrap()
            .unwrap()
            .endpoint_limit,
        2
    );
    assert_eq!(
        kind(
            h.store
                .insert_endpoint(&named(h, &a, "three"), &audit_for(named(h, &a, "three")))
                .await
        ),
        ErrorKind::LimitReached,
        "the new limit holds"
    );
    assert_eq!(
        h.store
            .enterprise(&b.id)
            .await
            .unwrap()
            .unwrap()
            .endpoint_limit,
        3
    );
    let nobody = EnterpriseId::from_trusted(new_id());
    assert!(!h.store.set_endpoint_limit(&nobody, 1).await.unwrap());
}

pub async fn users_listed_disabled_repassworded_and_deleted(h: &Harness) {
    let a = enterprise(h, 1).await;
    let b = enterprise(h, 1).await;
    let zed = user(&a, &format!("zed-{}", new_id()), Role::ReadOnly);
    let amy = user(&a, &format!("amy-{}", new_id()), Role::ReadWrite);
    let bob = user(&b, &format!("bob-{}", new_id()), Role::ReadWrite);
    for u in [&zed, &amy, &bob] {
        h.store.create_user(u).await.unwrap();
    }
    assert_eq!(
        h.store.list_users(&a.id).await.unwrap(),
        vec![amy.clone(), zed.clone()],
        "the enterprise's users, by username"
    );

    assert!(
        h.store
            .set_user_disabled(&a.id, &amy.username, true)
            .await
            .unwrap()
    );
    let read = h
        .store
        .user_by_username(&amy.username)
        .await
        .unwrap()
        .unwrap();
    assert!(read.disabled);
    assert_eq!(
        read,
        ServiceUser {
            disabled: true,
            ..amy.clone()
        }
    );
    assert!(
        h.store
            .set_user_disabled(&a.id, &amy.username, false)
            .await
            .unwrap()
    );
    assert_eq!(
        h.store.user_by_username(&amy.username).await.unwrap(),
        Some(amy.clone())
    );
    // Scoped: another enterprise's user is not found.
    assert!(
        !h.store
            .set_user_disabled(&a.id, &bob.username, true)
            .await
            .unwrap()
    );
    assert!(
        !h.store
            .user_by_username(&bob.username)
            .await
            .unwrap()
            .unwrap()
            .disabled
    );

    assert!(
        h.store
            .set_user_password(&a.id, &zed.username, "$argon2id$new")
            .await
            .unwrap()
    );
    assert_eq!(
        h.store
            .user_by_username(&zed.username)
            .await
            .unwrap()
            .unwrap()
            .password_hash,
        "$argon2id$new"
    );
    assert!(
        !h.store
            .set_user_password(&a.id, &bob.username, "x")
            .await
            .unwrap()
    );

    assert!(!h.store.delete_user(&a.id, &bob.username).await.unwrap());
    assert!(h.store.delete_user(&a.id, &zed.username).await.unwrap());
    assert!(!h.store.delete_user(&a.id, &zed.username).await.unwrap());
    assert_eq!(h.store.user_by_username(&zed.username).await.unwrap(), None);
    assert_eq!(h.store.list_users(&a.id).await.unwrap(), vec![amy]);
    assert_eq!(h.store.list_users(&b.id).await.unwrap(), vec![bob]);
}

pub async fn user_tokens_are_revoked_and_no_others(h: &Harness) {
    let a = enterprise(h, 10).await;
    let b = enterprise(h, 10).await;
    let ep = inserted(h, named(h, &a, "room")).await;
    let own = user_token(&a, "ops");
    let mut zt_parts = zt_token(&a, ep.id(), 0).parts().clone();
    zt_parts.creator = Some("ops".into());
    let own_zt = AccessToken::new(zt_parts).unwrap();
    let other_user = user_token(&a, "dev");
    // A platform user's token with the same name, and a namesake in another enterprise.
    let mut platform = token_parts(&a, &new_id(), 1_000, 100_000);
    platform.creator = Some("ops".into());
    let platform = AccessToken::new(platform).unwrap();
    let elsewhere = user_token(&b, "ops");
    for t in [&own, &own_zt, &other_user, &platform, &elsewhere] {
        h.store.insert_token(t, &audit_for(t)).await.unwrap();
    }
    h.store.touch_paired(&own_zt, 1_000).await.unwrap().unwrap();

    let mut revoked = h.store.delete_user_tokens(&a.id, "ops").await.unwrap();
    revoked.sort_by(|x, y| x.as_str().cmp(y.as_str()));
    let mut expected = vec![own.hash().clone(), own_zt.hash().clone()];
    expected.sort_by(|x, y| x.as_str().cmp(y.as_str()));
    assert_eq!(
        revoked, expected,
        "the deleted tokens' hashes, for revocation"
    );
    assert_eq!(
        h.store.token_by_id(&a.id, own.id(), 1_000).await.unwrap(),
        None
    );
    assert_eq!(
        h.store.token_by_hash(own_zt.hash(), 1_000).await.unwrap(),
        None
    );
    assert_eq!(h.store.paired(&a.id, ep.id(), 1_000).await.unwrap(), vec![]);
    for kept in [&other_user, &platform] {
        assert!(
            h.store
                .token_by_id(&a.id, kept.id(), 1_000)
                .await
                .unwrap()
                .is_some()
        );
    }
    assert!(
        h.store
            .token_by_id(&b.id, elsewhere.id(), 1_000)
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        h.store
            .delete_user_tokens(&a.id, "ops")
            .await
            .unwrap()
            .is_empty()
    );
}

pub async fn deleting_an_enterprise_leaves_no_orphans(h: &Harness) {
    let gone = enterprise(h, 10).await;
    let kept = enterprise(h, 10).await;
    let mut owned = vec![];
    for e in [&gone, &kept] {
        let l = listener(h, e, "l").await;
        let body = json!({ "name": "room", "listenerServiceId": l.id.as_str() });
        let ep = inserted(h, endpoint(h, e, body)).await;
        h.store
            .save_statuses(&e.id, &[status(ep.id(), 1_000, true)])
            .await
            .unwrap();
        h.store
            .save_pairing_code(
                &pairing_code(e, ep.id(), &format!("C{}", new_id())),
                &audit_for(pairing_code(e, ep.id(), &format!("C{}", new_id()))),
            )
            .await
            .unwrap();
        let zt = zt_token(e, ep.id(), 0);
        h.store.insert_token(&zt, &audit_for(&zt)).await.unwrap();
        h.store.touch_paired(&zt, 1_000).await.unwrap().unwrap();
        let u = user(e, &new_id(), Role::ReadWrite);
        h.store.create_user(&u).await.unwrap();
        h.store.record_failure(&failure(e, 1)).await.unwrap();
        let calendars = roomlink_domain::calendar::account::CalendarAccountRecord {
            enterprise_id: e.id.clone(),
            calendar_type: roomlink_domain::enums::CalendarType::CalDav,
            base_url: "http://127.0.0.1:5232/".to_owned(),
            username: None,
            password: None,
            updated_at_ms: 1,
            token_url: None,
        };
        h.store
            .put_calendar_account(&calendars, &audit_for(&e.id))
            .await
            .unwrap();
        owned.push((l, ep, zt, u));
    }

    assert_eq!(
        h.store.delete_enterprise(&gone.id).await.unwrap(),
        Some(vec![owned[0].2.hash().clone()]),
        "the deleted tokens' hashes, for revocation"
    );
    assert_eq!(h.store.delete_enterprise(&gone.id).await.unwrap(), None);
    let (l, ep, zt, u) = &owned[0];
    assert_eq!(h.store.enterprise(&gone.id).await.unwrap(), None);
    assert_eq!(
        h.store.enterprise_usage(&gone.id).await.unwrap(),
        EnterpriseUsage::default()
    );
    assert_eq!(h.store.listener(&gone.id, &l.id).await.unwrap(), None);
    assert_eq!(h.store.endpoint(&gone.id, ep.id()).await.unwrap(), None);
    assert_eq!(h.store.status(&gone.id, ep.id()).await.unwrap(), None);
    assert_eq!(h.store.statuses(&gone.id).await.unwrap(), vec![]);
    assert_eq!(
        h.store
            .current_pairing_code(&gone.id, ep.id())
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        h.store.paired(&gone.id, ep.id(), 1_000).await.unwrap(),
        vec![]
    );
    assert_eq!(h.store.token_by_hash(zt.hash(), 1_000).await.unwrap(), None);
    assert_eq!(h.store.user_by_username(&u.username).await.unwrap(), None);
    assert_eq!(h.store.failures(&gone.id, 10).await.unwrap(), vec![]);
    assert!(!h.store.enterprise_ids().await.unwrap().contains(&gone.id));
    assert_eq!(h.store.calendar_accounts(&gone.id).await.unwrap(), vec![]);
    assert_eq!(h.store.calendar_accounts(&kept.id).await.unwrap().len(), 1);

    // The other enterprise keeps everything.
    let (l, ep, zt, u) = &owned[1];
    assert!(h.store.listener(&kept.id, &l.id).await.unwrap().is_some());
    assert!(h.store.endpoint(&kept.id, ep.id()).await.unwrap().is_some());
    assert!(h.store.status(&kept.id, ep.id()).await.unwrap().is_some());
    assert!(
        h.store
            .current_pairing_code(&kept.id, ep.id())
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        h.store
            .paired(&kept.id, ep.id(), 1_000)
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(
        h.store
            .token_by_hash(zt.hash(), 1_000)
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        h.store
            .user_by_username(&u.username)
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(h.store.failures(&kept.id, 10).await.unwrap().len(), 1);
}

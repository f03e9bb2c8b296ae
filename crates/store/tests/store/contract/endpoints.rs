//! Endpoints one at a time: round trips, order, the limit, calendarIds, deletion.

use super::*;

pub async fn endpoints_round_trip_every_field(h: &Harness) {
    let e = enterprise(h, 10).await;
    let l = listener(h, &e, "HQ").await;
    let original = endpoint(h, &e, full_body(&l.id));
    for f in Field::ALL {
        assert_ne!(
            original.profile().json(*f),
            Value::Null,
            "{f:?} unset by the sample"
        );
    }
    h.store
        .insert_endpoint(&original, &audit_for(&original))
        .await
        .unwrap();
    let read = h
        .store
        .endpoint(&e.id, original.id())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read, original);
    let password = read.password().unwrap();
    assert_eq!(
        password,
        original.password().unwrap(),
        "sealed bytes and key id"
    );
    assert_eq!(
        h.sealer.open(password).unwrap().unwrap().expose(),
        "s3cret-endpoint-pw"
    );
    assert_eq!(
        h.store.list_endpoints(&e.id).await.unwrap(),
        vec![original.clone()]
    );

    // PUT: every field replaced.
    let sealer = h.sealer.clone();
    let body = object(other_full_body(&l.id));
    let put = h
        .store
        .update_endpoint(
            &e.id,
            original.id(),
            Box::new(move |current| {
                let draft = put::EndpointBody::from_json(&body)?.replacing(&current)?;
                let SecretChange::Set(pw) = draft.password else {
                    panic!("the body sets a password")
                };
                Endpoint::new(
                    current.id().clone(),
                    current.enterprise_id().clone(),
                    draft.profile,
                    Some(sealer.seal(&pw, None)?),
                )
            }),
            &audit_for(&e.id),
        )
        .await
        .unwrap();
    assert_ne!(put.profile(), original.profile());
    assert_eq!(
        h.store.endpoint(&e.id, original.id()).await.unwrap(),
        Some(put.clone())
    );
    assert_eq!(
        h.sealer
            .open(put.password().unwrap())
            .unwrap()
            .unwrap()
            .expose(),
        "another-pw"
    );

    // PATCH: some fields, password cleared, others kept.
    let fields = object(json!({
        "customData": {"a": {"b": [true, 1e-3]}}, "elevation": 0.125, "port": null,
        "geolocation": {"latitude": 0.0, "longitude": 0.0}, "password": null
    }));
    let patched = h
        .store
        .update_endpoint(
            &e.id,
            original.id(),
            Box::new(move |current| {
                let draft = patch::EndpointPatch::from_json(serde_json::Value::Object(fields))?
                    .merge_into(&current)?;
                assert_eq!(draft.password, SecretChange::Clear);
                Endpoint::new(
                    current.id().clone(),
                    current.enterprise_id().clone(),
                    draft.profile,
                    None,
                )
            }),
            &audit_for(&e.id),
        )
        .await
        .unwrap();
    let read = h
        .store
        .endpoint(&e.id, original.id())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(read, patched);
    assert_eq!(read.profile().port(), None);
    assert_eq!(read.password(), None);
    assert_eq!(read.profile().json(Field::Elevation), json!(0.125));
    assert_eq!(
        read.profile().json(Field::CustomData),
        json!({"a": {"b": [true, 1e-3]}})
    );
    assert_eq!(read.profile().json(Field::Name), json!("Huddle"));
}

pub async fn endpoints_list_in_creation_order(h: &Harness) {
    let e = enterprise(h, 100).await;
    let other = enterprise(h, 100).await;
    for name in ["c", "a", "b"] {
        inserted(h, named(h, &e, name)).await;
        inserted(h, named(h, &other, name)).await;
    }
    let first = h.store.list_endpoints(&e.id).await.unwrap()[0].clone();
    // An update does not move an endpoint; a deletion leaves the others in order.
    h.store
        .update_endpoint(&e.id, first.id(), rename("z"), &audit_for(&e.id))
        .await
        .unwrap();
    inserted(h, named(h, &e, "d")).await;
    assert_eq!(names(h, &e).await, ["z", "a", "b", "d"]);
    let a = h.store.list_endpoints(&e.id).await.unwrap()[1].clone();
    assert!(
        h.store
            .delete_endpoint(&e.id, a.id(), &audit_for(&e.id))
            .await
            .unwrap()
    );
    inserted(h, named(h, &e, "e")).await;
    assert_eq!(names(h, &e).await, ["z", "b", "d", "e"]);
    assert_eq!(names(h, &other).await, ["c", "a", "b"]);
}

pub async fn endpoint_pages_walk_the_list_by_key(h: &Harness) {
    let e = enterprise(h, 100).await;
    let other = enterprise(h, 100).await;
    for name in ["a", "b", "c", "d", "e"] {
        inserted(h, named(h, &e, name)).await;
        inserted(h, named(h, &other, name)).await;
    }
    let page_names = |p: &EndpointPage| {
        p.endpoints
            .iter()
            .map(|x| x.name().to_owned())
            .collect::<Vec<_>>()
    };
    let first = h.store.endpoint_page(&e.id, None, 2).await.unwrap();
    assert_eq!(page_names(&first), ["a", "b"]);
    // The first page's last endpoint goes: the next page still starts right after it.
    assert!(
        h.store
            .delete_endpoint(&e.id, first.endpoints[1].id(), &audit_for(&e.id))
            .await
            .unwrap()
    );
    let second = h.store.endpoint_page(&e.id, first.next, 2).await.unwrap();
    assert_eq!(page_names(&second), ["c", "d"]);
    let last = h.store.endpoint_page(&e.id, second.next, 2).await.unwrap();
    assert_eq!(page_names(&last), ["e"]);
    assert_eq!(last.next, None, "no page after the end");
    // A page exactly filled by the rest says so too.
    let all = h.store.endpoint_page(&e.id, None, 4).await.unwrap();
    assert_eq!((all.endpoints.len(), all.next), (4, None));
    assert_eq!(
        h.store
            .endpoint_page(&other.id, None, 10)
            .await
            .unwrap()
            .endpoints
            .len(),
        5
    );
}

pub async fn update_errors_leave_the_endpoint_unchanged(h: &Harness) {
    let e = enterprise(h, 10).await;
    let ep = inserted(h, named(h, &e, "before")).await;
    let r = h
        .store
        .update_endpoint(
            &e.id,
            ep.id(),
            Box::new(|_| Err(Error::invalid("name: rejected by the rule"))),
            &audit_for(&e.id),
        )
        .await;
    assert_eq!(kind(r), ErrorKind::Invalid);
    assert_eq!(
        h.store.endpoint(&e.id, ep.id()).await.unwrap(),
        Some(ep.clone())
    );

    // A change may not move the endpoint to another id or enterprise.
    let other = enterprise(h, 10).await;
    let moved_to = other.id.clone();
    let r = h
        .store
        .update_endpoint(
            &e.id,
            ep.id(),
            Box::new(move |cur| {
                Endpoint::new(cur.id().clone(), moved_to, cur.profile().clone(), None)
            }),
            &audit_for(&e.id),
        )
        .await;
    assert_eq!(kind(r), ErrorKind::InternalError);
    assert_eq!(
        h.store.endpoint(&e.id, ep.id()).await.unwrap(),
        Some(ep.clone())
    );

    let unknown = EndpointId::from_trusted(new_id());
    let r = h
        .store
        .update_endpoint(&e.id, &unknown, rename("x"), &audit_for(&e.id))
        .await;
    assert_eq!(kind(r), ErrorKind::NotFound);
    assert!(
        !h.store
            .delete_endpoint(&e.id, &unknown, &audit_for(&e.id))
            .await
            .unwrap()
    );
}

pub async fn duplicate_calendar_ids(h: &Harness) {
    let e = enterprise(h, 10).await;
    let one = inserted(h, with_calendar(h, &e, "one", "room@corp.example")).await;
    let two = inserted(h, with_calendar(h, &e, "two", "other@corp.example")).await;
    let dup = with_calendar(h, &e, "dup", "room@corp.example");
    let err = h
        .store
        .insert_endpoint(&dup, &audit_for(&dup))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::DuplicateCalendarId);
    assert!(
        err.details()["causeMessage"]
            .as_str()
            .unwrap()
            .contains("room@corp.example"),
        "{err:?}"
    );
    assert_eq!(h.store.endpoint(&e.id, dup.id()).await.unwrap(), None);

    // The same calendarId is fine in another enterprise.
    let other = enterprise(h, 10).await;
    inserted(h, with_calendar(h, &other, "theirs", "room@corp.example")).await;

    // An update onto a taken calendarId fails and changes nothing; keeping one's own is fine.
    let take = Box::new(|cur: Endpoint| {
        let d = patch::EndpointPatch::from_json(
            json!({"calendarId": "room@corp.example", "name": "x"}),
        )?
        .merge_into(&cur)?;
        Endpoint::new(
            cur.id().clone(),
            cur.enterprise_id().clone(),
            d.profile,
            None,
        )
    });
    assert_eq!(
        kind(
            h.store
                .update_endpoint(&e.id, two.id(), take, &audit_for(&e.id))
                .await
        ),
        ErrorKind::DuplicateCalendarId
    );
    assert_eq!(
        h.store.endpoint(&e.id, two.id()).await.unwrap(),
        Some(two.clone())
    );
    h.store
        .update_endpoint(&e.id, one.id(), rename("uno"), &audit_for(&e.id))
        .await
        .unwrap();

    // A CSV row reusing a calendarId is skipped by the rules; a write that does it anyway fails.
    let csv = "name,calendarId,password\n\"three\",\"room@corp.example\",\"pw\"\n";
    assert_eq!(kind(upload(h, &e, csv).await), ErrorKind::Invalid);
    let ent = e.id.clone();
    let sneaky = with_calendar(h, &e, "sneaky", "other@corp.example");
    let r = bulk_write(h, &e.id, vec![], move |_| CsvWrite {
        inserts: vec![sneaky],
        updates: vec![],
        ..CsvWrite::default()
    })
    .await;
    assert_eq!(kind(r), ErrorKind::DuplicateCalendarId);
    assert_eq!(names(h, &e).await, ["uno", "two"]);
    // Two new endpoints of one upload sharing a calendarId.
    let (a, b) = (
        with_calendar(h, &e, "a", "new@corp.example"),
        with_calendar(h, &e, "b", "new@corp.example"),
    );
    let r = bulk_write(h, &ent, vec![], move |_| CsvWrite {
        inserts: vec![a, b],
        updates: vec![],
        ..CsvWrite::default()
    })
    .await;
    assert_eq!(kind(r), ErrorKind::DuplicateCalendarId);
    assert_eq!(names(h, &e).await, ["uno", "two"]);
}

pub async fn limit_holds_under_concurrent_inserts(h: &Harness) {
    let e = enterprise(h, 5).await;
    for i in 0..4 {
        inserted(h, named(h, &e, &format!("existing {i}"))).await;
    }
    warm_up(h, 16).await;
    let tasks = (0..16).map(|i| {
        let store = h.store.clone();
        let ep = named(h, &e, &format!("racer {i}"));
        tokio::spawn(async move { store.insert_endpoint(&ep, &audit_for(&ep)).await })
    });
    let results: Vec<_> = join_all(tasks)
        .await
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    let ok = results.iter().filter(|r| r.is_ok()).count();
    let limited = results
        .iter()
        .filter(|r| matches!(r, Err(e) if e.kind() == ErrorKind::LimitReached))
        .count();
    assert_eq!((ok, limited), (1, 15), "{results:?}");
    assert_eq!(h.store.list_endpoints(&e.id).await.unwrap().len(), 5);
    let err = h
        .store
        .insert_endpoint(&named(h, &e, "late"), &audit_for(named(h, &e, "late")))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitReached);
    assert_eq!(err.details()["entityClass"], "Endpoint");
}

pub async fn delete_endpoint_takes_its_dependents(h: &Harness) {
    let e = enterprise(h, 10).await;
    let gone = inserted(h, named(h, &e, "gone")).await;
    let kept = inserted(h, named(h, &e, "kept")).await;
    let mut tokens = vec![];
    for ep in [&gone, &kept] {
        h.store
            .save_statuses(&e.id, &[status(ep.id(), 1_000, true)])
            .await
            .unwrap();
        let code = format!("CODE{}", ep.name().to_uppercase());
        h.store
            .save_pairing_code(
                &pairing_code(&e, ep.id(), &code),
                &audit_for(pairing_code(&e, ep.id(), &code)),
            )
            .await
            .unwrap();
        let t = zt_token(&e, ep.id(), 0);
        h.store.insert_token(&t, &audit_for(&t)).await.unwrap();
        h.store.touch_paired(&t, 1_000).await.unwrap().unwrap();
        tokens.push(t);
    }
    assert!(
        h.store
            .delete_endpoint(&e.id, gone.id(), &audit_for(&e.id))
            .await
            .unwrap()
    );
    assert_eq!(h.store.endpoint(&e.id, gone.id()).await.unwrap(), None);
    assert_eq!(h.store.status(&e.id, gone.id()).await.unwrap(), None);
    assert_eq!(
        h.store
            .current_pairing_code(&e.id, gone.id())
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        h.store.pairing_code_by_code("CODEGONE").await.unwrap(),
        None
    );
    assert_eq!(
        h.store.paired(&e.id, gone.id(), 1_000).await.unwrap(),
        vec![]
    );
    // The token itself stays (it expires on its own).
    assert!(
        h.store
            .token_by_id(&e.id, tokens[0].id(), 1_000)
            .await
            .unwrap()
            .is_some()
    );

    assert!(h.store.status(&e.id, kept.id()).await.unwrap().is_some());
    assert!(
        h.store
            .pairing_code_by_code("CODEKEPT")
            .await
            .unwrap()
            .is_some()
    );
    assert_eq!(
        h.store.paired(&e.id, kept.id(), 1_000).await.unwrap().len(),
        1
    );
    assert_eq!(h.store.statuses(&e.id).await.unwrap().len(), 1);
}

/// The list version moves with every committed write to the enterprise's endpoints, not with a
/// failed one, not with other enterprises' writes nor with anything else.
pub async fn the_list_version_moves_with_every_endpoint_write_and_only_then(h: &Harness) {
    let e = enterprise(h, 3).await;
    let other = enterprise(h, 10).await;
    let version = || async { h.store.endpoint_list_version(&e.id).await.unwrap().unwrap() };
    let mut seen = vec![version().await];
    let moved = async |what: &str, seen: &mut Vec<u64>| {
        let now = version().await;
        assert!(
            !seen.contains(&now),
            "{what}: the version did not move ({seen:?} {now})"
        );
        seen.push(now);
    };

    let a = inserted(h, named(h, &e, "a")).await;
    moved("insert", &mut seen).await;
    h.store
        .update_endpoint(&e.id, a.id(), rename("b"), &audit_for(&e.id))
        .await
        .unwrap();
    moved("update", &mut seen).await;
    upload(h, &e, "name,password\nc,secret-c\n").await.unwrap();
    moved("CSV upload", &mut seen).await;
    let c = h.store.list_endpoints(&e.id).await.unwrap()[1].clone();
    assert!(
        h.store
            .delete_endpoint(&e.id, c.id(), &audit_for(&e.id))
            .await
            .unwrap()
    );
    moved("delete", &mut seen).await;

    let still = *seen.last().unwrap();
    // Refused or failed writes, reads, other enterprises and other records leave it.
    let failing: EndpointChange = Box::new(|_| Err(Error::invalid("no")));
    assert!(
        h.store
            .update_endpoint(&e.id, a.id(), failing, &audit_for(&e.id))
            .await
            .is_err()
    );
    assert!(
        upload(h, &e, "name,password\nx,p-1\ny,p-2\nz,p-3\n")
            .await
            .is_err(),
        "over the limit"
    );
    assert!(
        !h.store
            .delete_endpoint(&e.id, c.id(), &audit_for(&e.id))
            .await
            .unwrap()
    );
    inserted(h, named(h, &other, "elsewhere")).await;
    h.store
        .save_statuses(&e.id, &[status(a.id(), 1_000, true)])
        .await
        .unwrap();
    h.store.list_endpoints(&e.id).await.unwrap();
    assert_eq!(version().await, still);

    let unknown = EnterpriseId::from_trusted(new_id());
    assert_eq!(h.store.endpoint_list_version(&unknown).await.unwrap(), None);
}

/// One read gives a command the endpoint, its own enterprise's listener and the public key.
pub async fn a_command_context_is_the_endpoint_its_listener_and_the_key(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let l = listener(h, &e, "here").await;
    let key = "eUGHF1ugSQdXEtnGAFGyOk1fJp1WD0xZR1ZTgWVeyzM=".to_owned();
    assert!(
        h.store
            .set_public_key(&e.id, Some(key.clone()), &audit_for(&e.id))
            .await
            .unwrap()
    );
    let with = inserted(
        h,
        endpoint(
            h,
            &e,
            json!({"name": "with", "listenerServiceId": l.id.as_str()}),
        ),
    )
    .await;
    let without = inserted(h, named(h, &e, "without")).await;

    let ctx = h
        .store
        .command_context(&e.id, with.id())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ctx.endpoint, with);
    assert_eq!(ctx.listener.as_ref().map(|l| &l.id), Some(&l.id));
    assert_eq!(ctx.listener.unwrap().secret, l.secret);
    assert_eq!(ctx.enterprise_public_key, Some(key));

    let ctx = h
        .store
        .command_context(&e.id, without.id())
        .await
        .unwrap()
        .unwrap();
    assert_eq!((ctx.endpoint, ctx.listener.is_none()), (without, true));

    // Another enterprise's endpoint is none of this one's.
    assert!(
        h.store
            .command_context(&other.id, with.id())
            .await
            .unwrap()
            .is_none()
    );
}

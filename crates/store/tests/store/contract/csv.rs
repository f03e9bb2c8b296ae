//! CSV uploads (`bulk_put`): one transaction, batched, all or nothing.

use super::*;

pub async fn limit_holds_under_concurrent_csv_uploads(h: &Harness) {
    let e = enterprise(h, 10).await;
    inserted(h, named(h, &e, "existing")).await;
    warm_up(h, 8).await;
    // Each upload creates as many endpoints as its context says fit, up to 4: with a
    // consistent context they all succeed and fill the enterprise exactly.
    let tasks = (0..8).map(|i| {
        let store = h.store.clone();
        let sealer = h.sealer.clone();
        let ent = e.id.clone();
        tokio::spawn(async move {
            let audit = audit_for(&ent);
            store
                .bulk_put(
                    &ent.clone(),
                    vec![],
                    Box::new(move |ctx| {
                        let inserts = (0..ctx.capacity.min(4))
                            .map(|j| {
                                let d = put::insert(&object(json!({"name": format!("u{i}-{j}")})))?;
                                Endpoint::new(
                                    EndpointId::from_trusted(new_id()),
                                    ent.clone(),
                                    d.profile,
                                    Some(sealer.seal(&Secret::new("pw"), None)?),
                                )
                            })
                            .collect::<Result<_>>()?;
                        Ok(CsvWrite {
                            inserts,
                            updates: vec![],
                            ..CsvWrite::default()
                        })
                    }),
                    &audit,
                )
                .await
        })
    });
    for r in join_all(tasks).await {
        r.unwrap().unwrap();
    }
    assert_eq!(h.store.list_endpoints(&e.id).await.unwrap().len(), 10);

    // At the limit, a write past the capacity it was told is refused as a whole.
    let extra = named(h, &e, "extra");
    let r = bulk_write(h, &e.id, vec![], move |_| CsvWrite {
        inserts: vec![extra],
        updates: vec![],
        ..CsvWrite::default()
    })
    .await;
    assert_eq!(kind(r), ErrorKind::LimitReached);
    assert_eq!(h.store.list_endpoints(&e.id).await.unwrap().len(), 10);
}

pub async fn csv_round_trips_every_field(h: &Harness) {
    let e = enterprise(h, 10).await;
    let l = listener(h, &e, "HQ").await;
    let model = endpoint(h, &e, full_body(&l.id));
    let header: Vec<&str> = Field::ALL.iter().map(|f| f.json_name()).collect();
    let row: Vec<String> = Field::ALL
        .iter()
        .map(|f| cell(&model.profile().text(*f)))
        .collect();
    let csv = format!(
        "{},password\n{},\"csv-pw\"\n",
        header.join(","),
        row.join(",")
    );
    upload(h, &e, &csv).await.unwrap();
    let list = h.store.list_endpoints(&e.id).await.unwrap();
    assert_eq!(list.len(), 1);
    let created = &list[0];
    assert_eq!(created.profile(), model.profile());
    assert_eq!(
        h.sealer
            .open(created.password().unwrap())
            .unwrap()
            .unwrap()
            .expose(),
        "csv-pw"
    );
    assert_eq!(
        h.store
            .endpoint(&e.id, created.id())
            .await
            .unwrap()
            .as_ref(),
        Some(created)
    );

    // An update through CSV: the named columns change, the others and the password stay.
    let csv = format!(
        concat!(
            "id,location,customData,geolocation,elevation,port,password\n",
            "{},\"Roof, west\",\"{{\"\"k\"\":[1,2]}}\",",
            "\"{{\"\"latitude\"\":-1.25,\"\"longitude\"\":2.5}}\",-12.5,,\n"
        ),
        created.id()
    );
    upload(h, &e, &csv).await.unwrap();
    let updated = h
        .store
        .endpoint(&e.id, created.id())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(updated.profile().json(Field::Location), json!("Roof, west"));
    assert_eq!(
        updated.profile().json(Field::CustomData),
        json!({"k": [1, 2]})
    );
    assert_eq!(
        updated.profile().json(Field::Geolocation),
        json!({"latitude": -1.25, "longitude": 2.5})
    );
    assert_eq!(updated.profile().json(Field::Elevation), json!(-12.5));
    assert_eq!(updated.profile().port(), None);
    assert_eq!(updated.profile().name(), model.profile().name());
    assert_eq!(
        updated.profile().calendar_id(),
        model.profile().calendar_id()
    );
    assert_eq!(updated.password(), created.password());
    assert_eq!(h.store.list_endpoints(&e.id).await.unwrap(), vec![updated]);
}

/// The report the apply callback returns comes back once the upload is written.
pub async fn csv_report_comes_back_after_commit(h: &Harness) {
    let e = enterprise(h, 10).await;
    let new = named(h, &e, "new");
    let report = CsvReport {
        created: 1,
        updated: 0,
        skipped: vec![SkippedRow {
            line: 3,
            id: None,
            reason: SkipReason::PasswordRequired,
        }],
    };
    let expected = report.clone();
    let answered = h
        .store
        .bulk_put(
            &e.id,
            vec![],
            Box::new(move |_| {
                Ok(CsvWrite {
                    inserts: vec![new],
                    updates: vec![],
                    report,
                })
            }),
            &audit_for(&e.id),
        )
        .await
        .unwrap();
    assert_eq!(answered, expected);
    assert_eq!(h.store.list_endpoints(&e.id).await.unwrap().len(), 1);
}

pub async fn csv_apply_error_writes_nothing(h: &Harness) {
    let e = enterprise(h, 10).await;
    let kept = inserted(h, named(h, &e, "kept")).await;
    let r = h
        .store
        .bulk_put(
            &e.id,
            vec![kept.id().clone()],
            Box::new(|ctx| {
                assert_eq!(ctx.existing.len(), 1);
                Err(Error::invalid("rejected"))
            }),
            &audit_for(&e.id),
        )
        .await;
    assert_eq!(kind(r), ErrorKind::Invalid);
    assert_eq!(h.store.list_endpoints(&e.id).await.unwrap(), vec![kept]);
}

pub async fn csv_write_failing_midway_writes_nothing(h: &Harness) {
    let e = enterprise(h, 10_000).await;
    let stored = inserted(h, with_calendar(h, &e, "stored", "taken@corp.example")).await;
    // An update that keeps the stored calendarId: written first, so rolled back too.
    let draft = with_calendar(h, &e, "renamed", "taken@corp.example");
    let renamed = Endpoint::new(
        stored.id().clone(),
        e.id.clone(),
        draft.profile().clone(),
        None,
    )
    .unwrap();
    // Enough rows for several statements on every backend; the 2,400th reuses a stored calendarId.
    let mut inserts: Vec<Endpoint> = (0..2_500)
        .map(|i| with_calendar(h, &e, &format!("n{i}"), &format!("n{i}@corp.example")))
        .collect();
    inserts[2_399] = with_calendar(h, &e, "clash", "taken@corp.example");
    let r = bulk_write(h, &e.id, vec![stored.id().clone()], move |_| CsvWrite {
        inserts,
        updates: vec![renamed],
        ..CsvWrite::default()
    })
    .await;
    assert_eq!(kind(r), ErrorKind::DuplicateCalendarId);
    assert_eq!(h.store.list_endpoints(&e.id).await.unwrap(), vec![stored]);
}

pub async fn csv_unknown_update_or_over_limit_writes_nothing(h: &Harness) {
    let e = enterprise(h, 3).await;
    let other = enterprise(h, 3).await;
    let mine = inserted(h, named(h, &e, "mine")).await;
    let theirs = inserted(h, named(h, &other, "theirs")).await;

    // Updating another enterprise's endpoint (or one that does not exist) is NotFound.
    for target in [theirs.clone(), named(h, &other, "ghost")] {
        let hijack = Endpoint::new(
            target.id().clone(),
            e.id.clone(),
            mine.profile().clone(),
            None,
        )
        .unwrap();
        let new = named(h, &e, "new");
        let r = bulk_write(h, &e.id, vec![target.id().clone()], move |ctx| {
            assert!(ctx.existing.is_empty());
            CsvWrite {
                inserts: vec![new],
                updates: vec![hijack],
                ..CsvWrite::default()
            }
        })
        .await;
        assert_eq!(kind(r), ErrorKind::NotFound);
    }
    assert_eq!(
        h.store.list_endpoints(&e.id).await.unwrap(),
        vec![mine.clone()]
    );
    assert_eq!(
        h.store.list_endpoints(&other.id).await.unwrap(),
        vec![theirs]
    );

    // More inserts than the capacity: LimitReached, nothing written.
    let (a, b, c) = (named(h, &e, "a"), named(h, &e, "b"), named(h, &e, "c"));
    let r = bulk_write(h, &e.id, vec![], move |ctx| {
        assert_eq!(ctx.capacity, 2);
        CsvWrite {
            inserts: vec![a, b, c],
            updates: vec![],
            ..CsvWrite::default()
        }
    })
    .await;
    assert_eq!(kind(r), ErrorKind::LimitReached);
    assert_eq!(h.store.list_endpoints(&e.id).await.unwrap(), vec![mine]);
}

pub async fn csv_moves_calendar_ids_between_endpoints(h: &Harness) {
    let e = enterprise(h, 10).await;
    let a = inserted(h, with_calendar(h, &e, "a", "x@corp.example")).await;
    let b = inserted(h, with_calendar(h, &e, "b", "y@corp.example")).await;
    // In one upload: a gives up x for z, then b (named first, so written first) takes x and
    // a new endpoint takes b's y. Only the finished upload must have unique calendarIds.
    let csv = format!(
        concat!(
            "id,name,calendarId,password\n",
            "{b},b2,y@corp.example,\n",
            "{a},a,z@corp.example,\n",
            "{b},b,x@corp.example,\n",
            ",c,y@corp.example,pw\n"
        ),
        a = a.id(),
        b = b.id()
    );
    upload(h, &e, &csv).await.unwrap();
    let calendars: Vec<(String, String)> = h
        .store
        .list_endpoints(&e.id)
        .await
        .unwrap()
        .iter()
        .map(|e| {
            let cal = e.profile().calendar_id().map(|c| c.as_str().to_owned());
            (e.name().to_owned(), cal.unwrap_or_default())
        })
        .collect();
    assert_eq!(
        calendars,
        [
            ("a".to_owned(), "z@corp.example".to_owned()),
            ("b".to_owned(), "x@corp.example".to_owned()),
            ("c".to_owned(), "y@corp.example".to_owned())
        ]
    );
}

pub async fn csv_batches_thousands_of_rows(h: &Harness) {
    const N: usize = 5_000;
    let e = enterprise(h, 10_000).await;
    let mut csv = String::from("name,calendarId,customData,password\n");
    for i in 0..N {
        csv.push_str(&format!(
            "room {i},room{i}@corp.example,\"{{\"\"i\"\":{i}}}\",pw{i}\n"
        ));
    }
    upload(h, &e, &csv).await.unwrap();
    let list = h.store.list_endpoints(&e.id).await.unwrap();
    assert_eq!(list.len(), N);
    for (i, ep) in list.iter().enumerate() {
        assert_eq!(ep.name(), format!("room {i}"));
        assert_eq!(ep.profile().json(Field::CustomData), json!({ "i": i }));
    }
    assert_eq!(
        h.sealer
            .open(list[N - 1].password().unwrap())
            .unwrap()
            .unwrap()
            .expose(),
        format!("pw{}", N - 1)
    );

    // Update them all in one upload: ids named, names changed, passwords kept.
    let mut csv = String::from("id,name\n");
    for ep in &list {
        csv.push_str(&format!("{},{} v2\n", ep.id(), ep.name()));
    }
    upload(h, &e, &csv).await.unwrap();
    let after = h.store.list_endpoints(&e.id).await.unwrap();
    assert_eq!(after.len(), N);
    for (before, now) in list.iter().zip(&after) {
        assert_eq!(now.id(), before.id());
        assert_eq!(now.name(), format!("{} v2", before.name()));
        assert_eq!(now.password(), before.password());
        assert_eq!(now.profile().calendar_id(), before.profile().calendar_id());
    }
}

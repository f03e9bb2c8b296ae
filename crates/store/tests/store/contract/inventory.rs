//! InventoryStore: a read replaces, a failure keeps the last read, listings filter and page by
//! key, records are scoped and go with their endpoint and enterprise.

use super::*;
use roomlink_domain::inventory::{
    AddressKind, Inventory, InventoryFilter, InventoryRead, NetworkAddress, Peripheral,
    PeripheralKind, ReadFailure,
};

fn codec(model: &str, version: &str) -> Inventory {
    Inventory {
        vendor: Some("Cisco".into()),
        product: Some(format!("Cisco Webex {model}")),
        model: Some(model.into()),
        serial_number: Some("FOC2417N0AB".into()),
        software_version: Some(version.into()),
        software_release_date: Some("2024-02-29".into()),
        uptime_seconds: Some(86_400),
        addresses: vec![NetworkAddress {
            kind: AddressKind::Ipv4,
            value: "127.77.0.1".into(),
        }],
        peripherals: vec![Peripheral {
            kind: PeripheralKind::TouchPanel,
            id: Some("00:11:22:33:44:55".into()),
            name: Some("Cisco Room Navigator".into()),
            model: Some("Room Navigator".into()),
            serial_number: Some("FOC2501".into()),
            software_version: Some("RoomOS 11".into()),
            connected: false,
        }],
        not_reported: vec!["uptimeSeconds".into()],
    }
}

fn unreachable() -> ReadFailure {
    ReadFailure {
        error_name: "RemoteSystemUnavailable".into(),
        error_message: "the room system did not answer".into(),
    }
}

async fn save(h: &Harness, e: &Enterprise, id: &EndpointId, at: i64, read: InventoryRead) {
    h.store.save_inventory(&e.id, id, at, &read).await.unwrap();
}

pub async fn inventories_keep_the_last_read_through_failures(h: &Harness) {
    let e = enterprise(h, 10).await;
    let room = inserted(h, named(h, &e, "A")).await;
    let id = room.id();
    assert_eq!(h.store.inventory(&e.id, id).await.unwrap(), None);

    // A first attempt that fails: a record with no inventory yet.
    save(h, &e, id, 1_000, InventoryRead::Failed(unreachable())).await;
    let r = h.store.inventory(&e.id, id).await.unwrap().unwrap();
    assert_eq!((r.read_at, r.attempted_at), (None, 1_000));
    assert_eq!((r.inventory, r.last_failure), (None, Some(unreachable())));

    // A read replaces it and clears the failure, every field round-tripping.
    save(
        h,
        &e,
        id,
        2_000,
        InventoryRead::Read(codec("Room Kit", "ce9.15")),
    )
    .await;
    let r = h.store.inventory(&e.id, id).await.unwrap().unwrap();
    assert_eq!((r.read_at, r.attempted_at), (Some(2_000), 2_000));
    assert_eq!(r.inventory, Some(codec("Room Kit", "ce9.15")));
    assert_eq!(r.last_failure, None);

    // A later failure keeps the read, with why the last attempt failed.
    save(h, &e, id, 3_000, InventoryRead::Failed(unreachable())).await;
    let r = h.store.inventory(&e.id, id).await.unwrap().unwrap();
    assert_eq!((r.read_at, r.attempted_at), (Some(2_000), 3_000));
    assert_eq!(r.inventory, Some(codec("Room Kit", "ce9.15")));
    assert_eq!(r.last_failure, Some(unreachable()));
    let attempts = h
        .store
        .inventory_attempts(&e.id, &[id.clone(), EndpointId::from_trusted(new_id())])
        .await
        .unwrap();
    assert_eq!(attempts, vec![(id.clone(), 3_000)]);
}

pub async fn inventory_listings_filter_and_page_by_endpoint_id(h: &Harness) {
    let e = enterprise(h, 20).await;
    let west = listener(h, &e, "west").await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let body = if i % 2 == 0 {
            json!({ "name": format!("R{i}"), "listenerServiceId": west.id.as_str() })
        } else {
            json!({ "name": format!("R{i}") })
        };
        let room = inserted(h, endpoint(h, &e, body)).await;
        let version = if i < 3 { "ce9.15" } else { "ce11.27" };
        let model = if i == 4 { "Room Bar" } else { "Room Kit" };
        save(
            h,
            &e,
            room.id(),
            1_000 + i,
            InventoryRead::Read(codec(model, version)),
        )
        .await;
        ids.push(room.id().clone());
    }
    // Never read: listed (it has a record), but matches no inventory filter.
    let failed = inserted(h, named(h, &e, "F")).await;
    save(
        h,
        &e,
        failed.id(),
        9_000,
        InventoryRead::Failed(unreachable()),
    )
    .await;
    ids.push(failed.id().clone());
    ids.sort();

    let ent = &e.id;
    let all = |filter: InventoryFilter| async move {
        let mut seen = Vec::new();
        let mut after = None;
        loop {
            let page = h
                .store
                .inventory_page(ent, &filter, after, 2)
                .await
                .unwrap();
            assert!(page.records.len() <= 2);
            seen.extend(page.records.iter().map(|r| r.endpoint_id.clone()));
            match page.next {
                Some(next) => after = Some(next),
                None => return (seen, page.records),
            }
        }
    };
    let (seen, _) = all(InventoryFilter::default()).await;
    assert_eq!(seen, ids, "every record once, in id order");

    let (seen, _) = all(InventoryFilter {
        software_version: Some("ce9.15".into()),
        ..InventoryFilter::default()
    })
    .await;
    assert_eq!(seen.len(), 3);
    let (seen, _) = all(InventoryFilter {
        model: Some("Room Bar".into()),
        ..InventoryFilter::default()
    })
    .await;
    assert_eq!(seen.len(), 1);
    let (seen, last) = all(InventoryFilter {
        listener: Some(west.id.clone()),
        software_version: Some("ce9.15".into()),
        ..InventoryFilter::default()
    })
    .await;
    assert_eq!(seen.len(), 2, "rooms 0 and 2 are west's and on 9.15");
    assert!(
        last.iter()
            .all(|r| r.listener_service_id.as_ref() == Some(&west.id))
    );
}

pub async fn inventories_are_scoped_and_go_with_their_endpoint(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let room = inserted(h, named(h, &e, "A")).await;
    let kept = inserted(h, named(h, &e, "B")).await;
    // Written for the wrong enterprise: nothing is written.
    save(
        h,
        &other,
        room.id(),
        1_000,
        InventoryRead::Read(codec("Room Kit", "x")),
    )
    .await;
    assert_eq!(h.store.inventory(&e.id, room.id()).await.unwrap(), None);
    assert_eq!(h.store.inventory(&other.id, room.id()).await.unwrap(), None);
    // An endpoint that does not exist: nothing either, and no error.
    let ghost = EndpointId::from_trusted(new_id());
    save(h, &e, &ghost, 1_000, InventoryRead::Failed(unreachable())).await;
    assert_eq!(h.store.inventory(&e.id, &ghost).await.unwrap(), None);

    for r in [&room, &kept] {
        save(
            h,
            &e,
            r.id(),
            2_000,
            InventoryRead::Read(codec("Room Kit", "x")),
        )
        .await;
    }
    let page = h
        .store
        .inventory_page(&other.id, &InventoryFilter::default(), None, 10)
        .await
        .unwrap();
    assert!(page.records.is_empty());
    // Several at once (the CSV export's): those with a record, of this enterprise only.
    let asked = [room.id().clone(), kept.id().clone(), ghost.clone()];
    let mut found: Vec<EndpointId> = h
        .store
        .inventories(&e.id, &asked)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.endpoint_id)
        .collect();
    found.sort();
    let mut expected = vec![room.id().clone(), kept.id().clone()];
    expected.sort();
    assert_eq!(found, expected);
    let one = h.store.inventories(&e.id, &asked[..1]).await.unwrap();
    assert_eq!(
        one,
        [h.store.inventory(&e.id, room.id()).await.unwrap().unwrap()]
    );
    assert!(
        h.store
            .inventories(&other.id, &asked)
            .await
            .unwrap()
            .is_empty()
    );
    h.store
        .delete_endpoint(&e.id, room.id(), &audit_for(&e.id))
        .await
        .unwrap();
    assert_eq!(h.store.inventory(&e.id, room.id()).await.unwrap(), None);
    assert!(h.store.inventory(&e.id, kept.id()).await.unwrap().is_some());
    h.store.delete_enterprise(&e.id).await.unwrap();
    assert_eq!(h.store.inventory(&e.id, kept.id()).await.unwrap(), None);
}

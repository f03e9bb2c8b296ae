//! AuditStore: entries come with their writes (and only with committed ones), pages newest
//! first with filters, retention, and enterprise scoping.

use super::*;
use roomlink_domain::audit::{AuditEntry, AuditFilter, AuditPage};
use roomlink_domain::endpoint::page::ListPosition;

fn entry(ent: &Enterprise, operation: &str, target: Option<&str>, at: i64) -> AuditEntry {
    let mut e = AuditEntry::sample(&ent.id, operation, at);
    e.target_id = target.map(str::to_owned);
    e
}

async fn trail(h: &Harness, ent: &Enterprise) -> Vec<AuditEntry> {
    page(h, ent, &AuditFilter::default(), None, 1000)
        .await
        .entries
        .into_iter()
        .map(|r| r.entry)
        .collect()
}

async fn page(
    h: &Harness,
    ent: &Enterprise,
    filter: &AuditFilter,
    before: Option<ListPosition>,
    limit: usize,
) -> AuditPage {
    h.store
        .audit_page(&ent.id, filter, before, limit)
        .await
        .unwrap()
}

pub async fn audit_entries_come_with_committed_writes(h: &Harness) {
    let e = enterprise(h, 10).await;
    let ep = named(h, &e, "Room");
    let id = ep.id().as_str().to_owned();
    let created = entry(&e, "endpoints.insert", Some(&id), 1);
    h.store.insert_endpoint(&ep, &created).await.unwrap();
    assert_eq!(trail(h, &e).await, vec![created.clone()]);

    // A change that fails, a deletion of nothing and a CSV upload that fails record nothing.
    let refused: EndpointChange = Box::new(|_| Err(Error::invalid("no")));
    let update = entry(&e, "endpoints.update", Some(&id), 2);
    assert!(
        h.store
            .update_endpoint(&e.id, ep.id(), refused, &update)
            .await
            .is_err()
    );
    let nobody = EndpointId::from_trusted(new_id());
    let delete = entry(&e, "endpoints.delete", Some(nobody.as_str()), 3);
    assert!(
        !h.store
            .delete_endpoint(&e.id, &nobody, &delete)
            .await
            .unwrap()
    );
    let failing = h
        .store
        .bulk_put(
            &e.id,
            vec![],
            Box::new(|_| Err(Error::invalid("no"))),
            &entry(&e, "endpoints.bulkPut", None, 4),
        )
        .await;
    assert!(failing.is_err());
    assert_eq!(trail(h, &e).await, vec![created.clone()]);

    // A CSV upload's entry carries its counts.
    let huddle = named(h, &e, "Huddle");
    bulk_write(h, &e.id, vec![], move |_| CsvWrite {
        inserts: vec![huddle],
        report: CsvReport {
            created: 1,
            ..CsvReport::default()
        },
        ..CsvWrite::default()
    })
    .await
    .unwrap();
    let newest = trail(h, &e).await.remove(0);
    assert_eq!(newest.operation, "test");
    assert_eq!(
        newest.detail.as_deref(),
        Some("created 1, updated 0, skipped 0")
    );

    // What has no transaction of its own is appended alone; updates and deletions that
    // happen record theirs.
    let command = entry(&e, "endpoints.join", Some(&id), 5).failed(&Error::invalid("x"));
    h.store.record_audit(&command).await.unwrap();
    h.store
        .update_endpoint(&e.id, ep.id(), rename("Renamed"), &update)
        .await
        .unwrap();
    let gone = entry(&e, "endpoints.delete", Some(&id), 6);
    assert!(
        h.store
            .delete_endpoint(&e.id, ep.id(), &gone)
            .await
            .unwrap()
    );
    let ops: Vec<String> = trail(h, &e)
        .await
        .into_iter()
        .map(|a| a.operation)
        .collect();
    assert_eq!(
        ops,
        [
            "endpoints.delete",
            "endpoints.update",
            "endpoints.join",
            "test",
            "endpoints.insert"
        ]
    );
}

pub async fn audit_pages_filter_and_purge(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    for n in 0..7 {
        let mut a = entry(
            &e,
            "endpoints.join",
            Some(if n % 2 == 0 { "even" } else { "odd" }),
            n,
        );
        if n == 3 {
            a.actor.kind = roomlink_domain::audit::ActorKind::Token;
            a.actor.id = "token-id".into();
            a.actor.username = Some("ops".into());
        }
        h.store.record_audit(&a).await.unwrap();
    }
    h.store
        .record_audit(&entry(&other, "endpoints.join", Some("even"), 100))
        .await
        .unwrap();

    // Keyset pages, newest first, walk every entry once.
    let mut seen = Vec::new();
    let mut before = None;
    loop {
        let p = page(h, &e, &AuditFilter::default(), before, 3).await;
        assert!(p.entries.len() <= 3);
        seen.extend(p.entries.iter().map(|r| r.entry.at));
        match p.next {
            Some(next) => before = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, [6, 5, 4, 3, 2, 1, 0]);

    assert_eq!(
        only(
            h,
            &e,
            AuditFilter {
                target_id: Some("odd".into()),
                ..AuditFilter::default()
            }
        )
        .await,
        [5, 3, 1]
    );
    // By a token's id, or by the user who created it.
    for actor in ["token-id", "ops"] {
        assert_eq!(
            only(
                h,
                &e,
                AuditFilter {
                    actor: Some(actor.into()),
                    ..AuditFilter::default()
                }
            )
            .await,
            [3]
        );
    }
    assert_eq!(
        only(
            h,
            &e,
            AuditFilter {
                from: Some(2),
                to: Some(4),
                target_id: Some("even".into()),
                ..AuditFilter::default()
            }
        )
        .await,
        [4, 2]
    );

    // Retention, in every enterprise.
    assert_eq!(h.store.purge_audit(5).await.unwrap(), 5);
    assert_eq!(only(h, &e, AuditFilter::default()).await, [6, 5]);
    assert_eq!(trail(h, &other).await.len(), 1);

    // An enterprise's trail goes with it.
    assert!(h.store.delete_enterprise(&e.id).await.unwrap().is_some());
    assert_eq!(trail(h, &e).await, vec![]);
}

/// The times of the entries passing `filter`, newest first.
async fn only(h: &Harness, ent: &Enterprise, filter: AuditFilter) -> Vec<i64> {
    page(h, ent, &filter, None, 100)
        .await
        .entries
        .into_iter()
        .map(|r| r.entry.at)
        .collect()
}

/// The entry is part of the write's transaction: when it cannot be written (here it names an
/// enterprise that does not exist, a foreign-key violation) the write is undone with it.
pub async fn a_failed_audit_entry_undoes_its_write(h: &Harness) {
    if !h.is_database() {
        return;
    }
    let e = enterprise(h, 10).await;
    let ep = inserted(h, named(h, &e, "Room")).await;
    let mut orphan = entry(&e, "endpoints.update", None, 1);
    orphan.enterprise_id = EnterpriseId::from_trusted(new_id());
    assert!(
        h.store
            .update_endpoint(&e.id, ep.id(), rename("Renamed"), &orphan)
            .await
            .is_err()
    );
    assert_eq!(
        h.store.endpoint(&e.id, ep.id()).await.unwrap(),
        Some(ep.clone())
    );
    assert!(
        h.store
            .delete_endpoint(&e.id, ep.id(), &orphan)
            .await
            .is_err()
    );
    assert_eq!(h.store.endpoint(&e.id, ep.id()).await.unwrap(), Some(ep));
}

/// A command's observed status and its audit entry are one write: both or neither.
pub async fn a_command_status_comes_with_its_audit_entry(h: &Harness) {
    let e = enterprise(h, 10).await;
    let ep = inserted(h, named(h, &e, "Room")).await;
    let joined = entry(&e, "endpoints.join", Some(ep.id().as_str()), 5);
    h.store
        .save_command_status(&e.id, &status(ep.id(), 5, true), &joined)
        .await
        .unwrap();
    assert_eq!(
        h.store.status(&e.id, ep.id()).await.unwrap(),
        Some(status(ep.id(), 5, true))
    );
    assert!(trail(h, &e).await.contains(&joined));

    // The endpoint deleted meanwhile: NotFound, and neither the status nor the entry stays.
    assert!(
        h.store
            .delete_endpoint(&e.id, ep.id(), &audit_for(&e.id))
            .await
            .unwrap()
    );
    let late = entry(&e, "endpoints.hangup", Some(ep.id().as_str()), 6);
    let refused = h
        .store
        .save_command_status(&e.id, &status(ep.id(), 6, false), &late)
        .await;
    assert_eq!(kind(refused), ErrorKind::NotFound);
    assert_eq!(h.store.status(&e.id, ep.id()).await.unwrap(), None);
    assert!(!trail(h, &e).await.contains(&late));
}

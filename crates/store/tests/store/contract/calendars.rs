//! CalendarAccountStore: one account per enterprise and calendar type, replaced in place,
//! scoped, with its audit entry, gone with its enterprise. AutoJoinStore: one holder per
//! occurrence, however many claim at once; lapsed unsettled claims taken over, settled ones
//! never.

use super::*;
use roomlink_domain::audit::{AuditEntry, AuditFilter};
use roomlink_domain::calendar::account::CalendarAccountRecord;
use roomlink_domain::calendar::auto_join::{JoinOutcome, Occurrence};
use roomlink_domain::enums::CalendarType;
use roomlink_domain::ports::AutoJoinClaim;

fn account(ent: &Enterprise, calendar_type: CalendarType, at: i64) -> CalendarAccountRecord {
    CalendarAccountRecord {
        enterprise_id: ent.id.clone(),
        calendar_type,
        base_url: format!("http://127.0.0.1:5232/rooms-{at}/"),
        username: Some("svc".to_owned()),
        password: None,
        updated_at_ms: at,
        token_url: (calendar_type == CalendarType::Google)
            .then(|| "http://127.0.0.1:9/token".to_owned()),
    }
}

async fn operations(h: &Harness, ent: &Enterprise) -> Vec<String> {
    let page = h
        .store
        .audit_page(&ent.id, &AuditFilter::default(), None, 100)
        .await
        .unwrap();
    page.entries
        .into_iter()
        .rev()
        .map(|r| r.entry.operation)
        .collect()
}

pub async fn calendar_accounts_are_replaced_in_place_and_scoped(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let audit = |op: &str| AuditEntry::sample(&e.id, op, 0);
    assert_eq!(h.store.calendar_accounts(&e.id).await.unwrap(), vec![]);

    let mut caldav = account(&e, CalendarType::CalDav, 1);
    caldav.password = Some(h.sealer.seal(&Secret::new("calendar-pw"), None).unwrap());
    h.store
        .put_calendar_account(&caldav, &audit("calendaraccounts.put"))
        .await
        .unwrap();
    let google = account(&e, CalendarType::Google, 2);
    h.store
        .put_calendar_account(&google, &audit("calendaraccounts.put"))
        .await
        .unwrap();
    // In calendar-type order, the password sealed as it was.
    let stored = h.store.calendar_accounts(&e.id).await.unwrap();
    assert_eq!(stored, vec![caldav.clone(), google.clone()]);
    let opened = h.sealer.open(stored[0].password.as_ref().unwrap()).unwrap();
    assert_eq!(opened.unwrap().expose(), "calendar-pw");

    // A second put of a type replaces that account; no row is added.
    let replaced = CalendarAccountRecord {
        username: None,
        password: None,
        ..account(&e, CalendarType::CalDav, 3)
    };
    h.store
        .put_calendar_account(&replaced, &audit("calendaraccounts.put"))
        .await
        .unwrap();
    assert_eq!(
        h.store
            .calendar_account(&e.id, CalendarType::CalDav)
            .await
            .unwrap(),
        Some(replaced.clone())
    );
    assert_eq!(h.store.calendar_accounts(&e.id).await.unwrap().len(), 2);

    // Another enterprise sees none of them and deletes none of them.
    assert_eq!(h.store.calendar_accounts(&other.id).await.unwrap(), vec![]);
    assert_eq!(
        h.store
            .calendar_account(&other.id, CalendarType::CalDav)
            .await
            .unwrap(),
        None
    );
    let foreign = AuditEntry::sample(&other.id, "calendaraccounts.delete", 0);
    assert!(
        !h.store
            .delete_calendar_account(&other.id, CalendarType::CalDav, &foreign)
            .await
            .unwrap()
    );

    assert!(
        h.store
            .delete_calendar_account(
                &e.id,
                CalendarType::CalDav,
                &audit("calendaraccounts.delete")
            )
            .await
            .unwrap()
    );
    assert!(
        !h.store
            .delete_calendar_account(
                &e.id,
                CalendarType::CalDav,
                &audit("calendaraccounts.delete")
            )
            .await
            .unwrap(),
        "already gone"
    );
    assert_eq!(
        h.store.calendar_accounts(&e.id).await.unwrap(),
        vec![google]
    );
    // Three puts and one deletion were recorded; the deletions of nothing were not.
    assert_eq!(
        operations(h, &e).await,
        vec![
            "calendaraccounts.put",
            "calendaraccounts.put",
            "calendaraccounts.put",
            "calendaraccounts.delete"
        ]
    );
    assert_eq!(operations(h, &other).await, Vec::<String>::new());
}

pub async fn an_auto_join_is_claimed_by_one_holder_once(h: &Harness) {
    const NOW: i64 = 1_800_000_000_000;
    let e = enterprise(h, 10).await;
    let room = EndpointId::from_trusted(new_id());
    let occurrence = Occurrence {
        uid: "review@corp.example".to_owned(),
        start_ms: NOW,
    };
    let claim = |holder: &str, lease_until_ms: i64| AutoJoinClaim {
        enterprise_id: e.id.clone(),
        endpoint_id: room.clone(),
        occurrence: occurrence.clone(),
        holder: holder.to_owned(),
        lease_until_ms,
    };

    // Eight instances at once: exactly one holds it.
    let claims: Vec<AutoJoinClaim> = (0..8)
        .map(|i| claim(&format!("instance-{i}"), NOW + 120_000))
        .collect();
    let taken = join_all(claims.iter().map(|c| h.store.claim_auto_join(c, NOW))).await;
    let won = taken.into_iter().map(|t| t.unwrap()).filter(|t| *t).count();
    assert_eq!(won, 1, "one holder of eight");
    // While the lease runs nobody takes it; once it lapses unsettled (the holder died), one does.
    assert!(
        !h.store
            .claim_auto_join(&claim("late", NOW + 240_000), NOW + 119_999)
            .await
            .unwrap()
    );
    assert!(
        h.store
            .claim_auto_join(&claim("heir", NOW + 240_000), NOW + 120_001)
            .await
            .unwrap()
    );
    assert!(
        !h.store
            .claim_auto_join(&claim("again", NOW + 360_000), NOW + 120_002)
            .await
            .unwrap()
    );
    // Settled: never again, however late.
    h.store
        .settle_auto_join(&room, &occurrence, JoinOutcome::Joined, NOW + 1_000)
        .await
        .unwrap();
    assert!(
        !h.store
            .claim_auto_join(&claim("later", i64::MAX), i64::MAX - 1)
            .await
            .unwrap()
    );
    // Another occurrence of the same event (the next week's) is a claim of its own.
    let next = AutoJoinClaim {
        occurrence: Occurrence {
            start_ms: NOW + 7 * 86_400_000,
            ..occurrence.clone()
        },
        ..claim("instance-0", NOW + 120_000)
    };
    assert!(h.store.claim_auto_join(&next, NOW).await.unwrap());
    h.store
        .settle_auto_join(&room, &next.occurrence, JoinOutcome::Failed, NOW)
        .await
        .unwrap();
    assert!(
        !h.store.claim_auto_join(&next, i64::MAX).await.unwrap(),
        "a failed join is settled too"
    );

    // The purge takes claims on meetings that started before the cutoff.
    assert_eq!(h.store.purge_auto_joins(NOW + 1).await.unwrap(), 1);
    assert!(
        h.store
            .claim_auto_join(&claim("fresh", NOW), NOW)
            .await
            .unwrap(),
        "purged, so new"
    );
    // And they go with their enterprise.
    assert!(h.store.delete_enterprise(&e.id).await.unwrap().is_some());
    assert_eq!(h.store.purge_auto_joins(i64::MAX).await.unwrap(), 0);
}

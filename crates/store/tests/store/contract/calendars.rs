//! CalendarAccountStore: one account per enterprise and calendar type, replaced in place,
//! scoped, with its audit entry, gone with its enterprise.

use super::*;
use roomlink_domain::audit::{AuditEntry, AuditFilter};
use roomlink_domain::calendar::account::CalendarAccountRecord;
use roomlink_domain::enums::CalendarType;

fn account(ent: &Enterprise, calendar_type: CalendarType, at: i64) -> CalendarAccountRecord {
    CalendarAccountRecord {
        enterprise_id: ent.id.clone(),
        calendar_type,
        base_url: format!("http://127.0.0.1:5232/rooms-{at}/"),
        username: Some("svc".to_owned()),
        password: None,
        updated_at_ms: at,
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

//! TemplateStore: templates round-trip with their settings, are listed by name and scoped by
//! enterprise, names are unique per enterprise without regard to case (also under racing
//! writes), the count is limited, and every write comes with its audit entry or not at all.

use super::*;
use roomlink_domain::audit::{AuditEntry, AuditFilter};
use roomlink_domain::ids::TemplateId;
use roomlink_domain::template::record::MAX_TEMPLATES;
use roomlink_domain::template::{Template, TemplateDraft};

const NOW: i64 = 1_800_000_000_000;

fn template(e: &Enterprise, body: Value) -> Template {
    let draft = TemplateDraft::from_body(&object(body)).unwrap();
    Template::new(TemplateId::from_trusted(new_id()), e.id.clone(), draft, NOW)
}

fn audit(t: &Template, operation: &str) -> AuditEntry {
    AuditEntry::sample(&t.enterprise_id, operation, NOW).target(t.id.as_str())
}

/// How many audit entries name `t`.
async fn trail(h: &Harness, t: &Template) -> usize {
    let filter = AuditFilter {
        target_id: Some(t.id.as_str().to_owned()),
        ..AuditFilter::default()
    };
    let page = h
        .store
        .audit_page(&t.enterprise_id, &filter, None, 100)
        .await
        .unwrap();
    page.entries.len()
}

pub async fn templates_round_trip_listed_by_name_and_scoped(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let oslo = template(
        &e,
        json!({"name": "oslo", "description": "4th floor",
               "settings": {"time_zone": "Europe/Oslo", "audio.default_volume": 40,
                            "welcome.message": "Velkommen – trykk for å starte"}}),
    );
    let bergen = template(&e, json!({"name": "Bergen", "settings": {}}));
    for t in [&oslo, &bergen] {
        h.store
            .insert_template(t, &audit(t, "templates.create"))
            .await
            .unwrap();
    }
    assert_eq!(
        h.store.template(&e.id, &oslo.id).await.unwrap().as_ref(),
        Some(&oslo)
    );
    let names: Vec<String> = h
        .store
        .templates(&e.id)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["Bergen", "oslo"]);
    // Another enterprise sees none of them and changes none of them.
    assert!(h.store.templates(&other.id).await.unwrap().is_empty());
    assert_eq!(h.store.template(&other.id, &oslo.id).await.unwrap(), None);
    let stolen = Template {
        enterprise_id: other.id.clone(),
        ..oslo.clone()
    };
    assert!(
        !h.store
            .replace_template(&stolen, &audit(&stolen, "templates.update"))
            .await
            .unwrap()
    );
    assert!(
        !h.store
            .delete_template(&other.id, &oslo.id, &audit(&stolen, "templates.delete"))
            .await
            .unwrap()
    );
    assert_eq!(trail(h, &stolen).await, 0);
    // Replace keeps the id and the creation time.
    let draft = TemplateDraft::from_body(&object(
        json!({"name": "Oslo", "settings": {"proximity.mode": "on"}}),
    ))
    .unwrap();
    let replaced = oslo.replaced(draft, NOW + 5);
    assert!(
        h.store
            .replace_template(&replaced, &audit(&oslo, "templates.update"))
            .await
            .unwrap()
    );
    let stored = h.store.template(&e.id, &oslo.id).await.unwrap().unwrap();
    assert_eq!(stored, replaced);
    assert_eq!((stored.created_at, stored.updated_at), (NOW, NOW + 5));
    assert_eq!(stored.description, None);
    assert!(
        h.store
            .delete_template(&e.id, &oslo.id, &audit(&oslo, "templates.delete"))
            .await
            .unwrap()
    );
    assert_eq!(h.store.template(&e.id, &oslo.id).await.unwrap(), None);
    assert!(
        !h.store
            .delete_template(&e.id, &oslo.id, &audit(&oslo, "templates.delete"))
            .await
            .unwrap()
    );
    assert_eq!(trail(h, &oslo).await, 3, "create, update, delete");
    // They go with their enterprise.
    h.store.delete_enterprise(&e.id).await.unwrap();
    assert!(h.store.templates(&e.id).await.unwrap().is_empty());
}

pub async fn template_names_are_unique_per_enterprise_without_regard_to_case(h: &Harness) {
    let e = enterprise(h, 10).await;
    let other = enterprise(h, 10).await;
    let first = template(&e, json!({"name": "Ørsta rooms", "settings": {}}));
    h.store
        .insert_template(&first, &audit(&first, "templates.create"))
        .await
        .unwrap();
    let twin = template(&e, json!({"name": "ØRSTA ROOMS", "settings": {}}));
    let err = h
        .store
        .insert_template(&twin, &audit(&twin, "templates.create"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict);
    assert_eq!(err.details()["entityClass"], json!("Template"));
    assert_eq!(err.details()["name"], json!("ØRSTA ROOMS"));
    assert_eq!(trail(h, &twin).await, 0, "no entry without the write");
    assert_eq!(h.store.templates(&e.id).await.unwrap().len(), 1);
    // Another enterprise may use the name.
    let theirs = template(&other, json!({"name": "ørsta rooms", "settings": {}}));
    h.store
        .insert_template(&theirs, &audit(&theirs, "templates.create"))
        .await
        .unwrap();
    // Renaming onto a taken name is refused and changes nothing; a template may change the
    // case of its own name.
    let second = template(&e, json!({"name": "Bergen", "settings": {}}));
    h.store
        .insert_template(&second, &audit(&second, "templates.create"))
        .await
        .unwrap();
    let renamed = Template {
        name: "ørsta Rooms".into(),
        ..second.clone()
    };
    let err = h
        .store
        .replace_template(&renamed, &audit(&second, "templates.update"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Conflict);
    assert_eq!(
        h.store.template(&e.id, &second.id).await.unwrap().as_ref(),
        Some(&second)
    );
    assert_eq!(trail(h, &second).await, 1);
    let recased = Template {
        name: "ØRSTA ROOMS".into(),
        ..first.clone()
    };
    assert!(
        h.store
            .replace_template(&recased, &audit(&first, "templates.update"))
            .await
            .unwrap()
    );
    // Racing inserts of one name: exactly one wins.
    let racers: Vec<Template> = (0..6)
        .map(|_| template(&e, json!({"name": "Race", "settings": {}})))
        .collect();
    let entries: Vec<AuditEntry> = racers
        .iter()
        .map(|t| audit(t, "templates.create"))
        .collect();
    let results = join_all(
        racers
            .iter()
            .zip(&entries)
            .map(|(t, entry)| h.store.insert_template(t, entry)),
    )
    .await;
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1);
    for r in results.iter().filter_map(|r| r.as_ref().err()) {
        assert_eq!(r.kind(), ErrorKind::Conflict, "{r:?}");
    }
}

pub async fn templates_are_limited_per_enterprise(h: &Harness) {
    let e = enterprise(h, 10).await;
    for i in 0..MAX_TEMPLATES {
        let t = template(&e, json!({"name": format!("t{i}"), "settings": {}}));
        h.store
            .insert_template(&t, &audit(&t, "templates.create"))
            .await
            .unwrap();
    }
    let over = template(&e, json!({"name": "one more", "settings": {}}));
    let err = h
        .store
        .insert_template(&over, &audit(&over, "templates.create"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::LimitReached);
    assert_eq!(err.details()["entityClass"], json!("Template"));
    let other = enterprise(h, 10).await;
    let theirs = template(&other, json!({"name": "one more", "settings": {}}));
    h.store
        .insert_template(&theirs, &audit(&theirs, "templates.create"))
        .await
        .unwrap();
}

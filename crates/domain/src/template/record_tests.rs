use super::*;
use crate::error::ErrorKind;
use crate::template::SettingValue;
use serde_json::json;

fn body(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("not an object"),
    }
}

fn refusal(result: Result<TemplateDraft>) -> String {
    let e = result.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Invalid);
    e.message().to_owned()
}

fn stored(value: Value) -> Template {
    let draft = TemplateDraft::from_body(&body(value)).unwrap();
    Template::new(
        TemplateId::from_trusted("t1".into()),
        EnterpriseId::from_trusted("e1".into()),
        draft,
        5,
    )
}

#[test]
fn a_create_body_is_trimmed_and_checked() {
    let draft = TemplateDraft::from_body(&body(json!({
        "name": "  Oslo rooms ",
        "description": "  ",
        "settings": {"time_zone": "europe/oslo"},
    })))
    .unwrap();
    assert_eq!(draft.name, "Oslo rooms");
    assert_eq!(draft.description, None);
    assert_eq!(
        draft.settings.get(SettingKey::TimeZone),
        Some(&SettingValue::TimeZone("Europe/Oslo"))
    );
    let t = Template::new(
        TemplateId::from_trusted("t1".into()),
        EnterpriseId::from_trusted("e1".into()),
        draft,
        5,
    );
    let json = serde_json::to_value(&t).unwrap();
    assert_eq!(
        json,
        json!({"id": "t1", "name": "Oslo rooms", "description": null,
               "settings": {"time_zone": "Europe/Oslo"}, "createdAt": 5, "updatedAt": 5})
    );
}

#[test]
fn a_create_body_refuses_what_is_missing_unknown_or_too_long() {
    let from = |v: Value| TemplateDraft::from_body(&body(v));
    assert_eq!(
        refusal(from(json!({"settings": {}}))),
        "name: a string is required"
    );
    assert!(refusal(from(json!({"name": "a"}))).starts_with("settings: an object"));
    assert_eq!(
        refusal(from(json!({"name": "a", "settings": {}, "id": "x"}))),
        "id: is not a field of a template (name, description, settings)"
    );
    assert!(refusal(from(json!({"name": " ", "settings": {}}))).starts_with("name: must be 1 to"));
    assert!(
        refusal(from(json!({"name": "x".repeat(101), "settings": {}})))
            .starts_with("name: must be 1 to 100")
    );
    assert!(from(json!({"name": "x".repeat(100), "settings": {}})).is_ok());
    assert!(refusal(from(json!({"name": "a\nb", "settings": {}}))).contains("control"));
    assert!(refusal(from(json!({"name": 7, "settings": {}}))).starts_with("name:"));
    assert!(
        refusal(from(
            json!({"name": "a", "description": "d".repeat(501), "settings": {}})
        ))
        .starts_with("description: is longer than 500")
    );
    assert!(
        refusal(from(json!({"name": "a", "description": 1, "settings": {}})))
            .starts_with("description:")
    );
    assert_eq!(
        refusal(from(
            json!({"name": "a", "settings": {"audio.default_volume": 150}})
        )),
        "settings.audio.default_volume: 150 is not a whole number from 0 to 100"
    );
}

#[test]
fn a_patch_merges_fields_and_settings_key_by_key() {
    let current = stored(json!({
        "name": "Oslo",
        "description": "the fourth floor",
        "settings": {"time_zone": "Europe/Oslo", "audio.default_volume": 50},
    }));
    let draft = TemplateDraft::patched(
        &current,
        &body(json!({
            "description": null,
            "settings": {"audio.default_volume": null, "proximity.mode": "on"},
        })),
    )
    .unwrap();
    assert_eq!(draft.name, "Oslo");
    assert_eq!(draft.description, None);
    assert_eq!(
        draft.settings.to_json(),
        json!({"time_zone": "Europe/Oslo", "proximity.mode": "on"})
    );
    assert_eq!(
        draft.changes(Some(&current)),
        [
            "description",
            "settings.audio.default_volume",
            "settings.proximity.mode"
        ]
    );
    let renamed = TemplateDraft::patched(&current, &body(json!({"name": " Bergen "}))).unwrap();
    assert_eq!(renamed.name, "Bergen");
    assert_eq!(renamed.settings, current.settings);
    assert_eq!(renamed.changes(Some(&current)), ["name"]);
    let same = TemplateDraft::patched(&current, &body(json!({}))).unwrap();
    assert!(same.changes(Some(&current)).is_empty());
}

#[test]
fn a_patch_refuses_unknown_keys_values_outside_spaces_and_removing_required_fields() {
    let current = stored(json!({"name": "Oslo", "settings": {"time_zone": "Etc/UTC"}}));
    let patch = |v: Value| TemplateDraft::patched(&current, &body(v));
    assert!(
        refusal(patch(json!({"settings": {"timezone": null}})))
            .starts_with("settings: 'timezone' is not a template setting")
    );
    assert!(
        refusal(patch(json!({"settings": {"timezone": "Etc/UTC"}})))
            .starts_with("settings: 'timezone' is not a template setting")
    );
    assert_eq!(
        refusal(patch(json!({"settings": {"standby.delay_minutes": 10}}))),
        "settings.standby.delay_minutes: 10 is not one of 1, 3, 15, 30, 60, 120, 240, 480"
    );
    assert!(refusal(patch(json!({"settings": null}))).starts_with("settings: a merge patch"));
    assert_eq!(
        refusal(patch(json!({"name": null}))),
        "name: a string is required"
    );
    assert!(refusal(patch(json!({"createdAt": 1}))).starts_with("createdAt: is not a field"));
    // Removing a key the template does not set is no change.
    let draft = patch(json!({"settings": {"welcome.message": null}})).unwrap();
    assert_eq!(draft.settings, current.settings);
}

#[test]
fn a_new_template_s_changes_name_what_it_sets() {
    let t =
        stored(json!({"name": "a", "description": "b", "settings": {"auto_answer.mode": "on"}}));
    let draft = t.draft();
    assert_eq!(
        draft.changes(None),
        ["name", "description", "settings.auto_answer.mode"]
    );
    let replaced = t.replaced(
        TemplateDraft {
            name: "c".into(),
            ..draft
        },
        9,
    );
    assert_eq!((replaced.created_at, replaced.updated_at), (5, 9));
    assert_eq!(replaced.id, t.id);
}

#[test]
fn names_compare_without_regard_to_case() {
    assert_eq!(name_key("Ørsta Rooms"), name_key("ØRSTA rooms"));
    assert_ne!(name_key("a"), name_key("b"));
}

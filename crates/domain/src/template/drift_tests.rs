use super::*;
use crate::error::Error;
use crate::template::{SettingOutcome, SettingOutcomes, TemplateSettings};
use serde_json::json;

fn template() -> TemplateSettings {
    TemplateSettings::from_json(&json!({
        "time_zone": "Europe/Oslo", "standby.delay_minutes": 15, "proximity.mode": "off",
    }))
    .unwrap()
}

/// A plan of a room holding this time zone and standby delay, without proximity.
fn read(zone: &str, delay: i64) -> RoomPlan {
    RoomPlan::compare(
        &template(),
        &SettingOutcomes::from([
            (SettingKey::TimeZone, SettingOutcome::Value(json!(zone))),
            (
                SettingKey::StandbyDelayMinutes,
                SettingOutcome::Value(json!(delay)),
            ),
            (
                SettingKey::ProximityMode,
                SettingOutcome::Unsupported("a Poly room has no proximity".into()),
            ),
        ]),
    )
}

fn offline() -> RoomPlan {
    RoomPlan::unreachable(&Error::new(
        ErrorKind::ListenerOffline,
        "listener L is offline",
    ))
}

#[test]
fn unsupported_keys_are_not_drift_and_changed_ones_are() {
    assert_eq!(
        DriftRead::of(&read("Europe/Oslo", 15)),
        Some(DriftRead::InLine)
    );
    assert_eq!(
        DriftRead::of(&read("Etc/UTC", 15)),
        Some(DriftRead::Drifted(BTreeMap::from([(
            SettingKey::TimeZone,
            json!("Etc/UTC")
        )])))
    );
    assert_eq!(DriftRead::of(&offline()), None);
}

#[test]
fn drifting_is_news_once_and_again_only_in_other_keys() {
    let (first, news) = DriftRecord::after(None, &read("Europe/Oslo", 15), 1_000);
    assert!(!news, "a room first found in line is not news");
    assert_eq!(first.state(), DriftState::InLine);

    let (drifted, news) = DriftRecord::after(Some(&first), &read("Etc/UTC", 15), 2_000);
    assert!(news);
    assert_eq!(
        (drifted.state(), drifted.drifted_since),
        (DriftState::Drifted, Some(2_000))
    );

    let (same, news) = DriftRecord::after(Some(&drifted), &read("Etc/UTC", 15), 3_000);
    assert!(!news, "the same drift found again is not news");
    assert_eq!(same.drifted_since, Some(2_000));

    let (more, news) = DriftRecord::after(Some(&same), &read("Etc/UTC", 30), 4_000);
    assert!(news, "drift in another key is news");
    assert_eq!(more.drifted_since, Some(2_000));

    let (back, news) = DriftRecord::after(Some(&more), &read("Europe/Oslo", 15), 5_000);
    assert!(!news);
    assert_eq!(
        (back.state(), back.drifted_since),
        (DriftState::InLine, None)
    );
}

#[test]
fn a_failed_check_keeps_the_last_read_and_is_never_news() {
    let (drifted, _) = DriftRecord::after(None, &read("Etc/UTC", 15), 1_000);
    assert!(drifted.drifted(), "first read finding drift");
    let (failed, news) = DriftRecord::after(Some(&drifted), &offline(), 2_000);
    assert!(!news);
    assert_eq!(failed.state(), DriftState::Unreachable);
    assert!(failed.drifted(), "re-apply still knows the room drifted");
    assert_eq!(failed.read, drifted.read);
    assert_eq!(failed.drifted_since, Some(1_000));
    assert_eq!(
        failed.failure,
        Some((ErrorKind::ListenerOffline, "listener L is offline".into()))
    );
    // Reachable again with the same drift: not news a second time.
    let (again, news) = DriftRecord::after(Some(&failed), &read("Etc/UTC", 15), 3_000);
    assert!(!news);
    assert_eq!(again.failure, None);

    let (never_read, news) = DriftRecord::after(None, &offline(), 1_000);
    assert!(!news);
    assert_eq!(
        (never_read.state(), never_read.read),
        (DriftState::Unreachable, None)
    );
}

#[test]
fn records_survive_their_stored_form() {
    let (drifted, _) = DriftRecord::after(None, &read("Etc/UTC", 30), 1_000);
    let (failed, _) = DriftRecord::after(Some(&drifted), &offline(), 2_000);
    let (in_line, _) = DriftRecord::after(None, &read("Europe/Oslo", 15), 3_000);
    for record in [drifted, failed, in_line] {
        let stored = record.to_json().to_string();
        let back = DriftRecord::from_json(&serde_json::from_str(&stored).unwrap()).unwrap();
        assert_eq!(back, record);
    }
    assert!(DriftRecord::from_json(&json!({})).is_err());
    assert!(
        DriftRecord::from_json(&json!({"checkedAt": 1, "read": {"at": 1, "held": {"x": 1}}}))
            .is_err()
    );
    assert!(DriftRecord::from_json(&json!({"checkedAt": 1, "failure": {"name": "Nope"}})).is_err());
}

#[test]
fn an_assignment_without_a_check_is_unchecked() {
    let assignment = Assignment {
        endpoint_id: EndpointId::from_trusted("e1".into()),
        name: "Oslo".into(),
        template_id: TemplateId::from_trusted("t1".into()),
        assigned_at: 1,
        drift: None,
    };
    assert_eq!(assignment.state(), DriftState::Unchecked);
    assert!(!assignment.drifted());
    assert_eq!(assignment.checked_at(), None);
}

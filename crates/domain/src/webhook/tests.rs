use super::*;
use crate::audit::AuditEntry;
use crate::health::HealthState::{Degraded, Offline, Ok as Fine};
use crate::listener::ListenerHealth;

#[test]
fn a_draft_keeps_known_event_types_once_and_sorted() {
    let d = SubscriptionDraft::new(
        "https://hooks.example.com/in",
        &[
            "call.ended".into(),
            "room.offline".into(),
            "call.ended".into(),
        ],
        Some("  ops pager "),
    )
    .unwrap();
    assert_eq!(
        d.event_types,
        vec![EventType::RoomOffline, EventType::CallEnded]
    );
    assert_eq!(d.description.as_deref(), Some("ops pager"));
}

#[test]
fn a_draft_refuses_no_types_unknown_types_the_test_type_and_long_descriptions() {
    let url = "https://hooks.example.com/in";
    assert!(SubscriptionDraft::new(url, &[], None).is_err());
    let e = SubscriptionDraft::new(url, &["room.exploded".into()], None).unwrap_err();
    assert!(e.message().contains("room.offline"), "{}", e.message());
    assert!(SubscriptionDraft::new(url, &["webhook.test".into()], None).is_err());
    let long = "x".repeat(MAX_DESCRIPTION_CHARS + 1);
    assert!(SubscriptionDraft::new(url, &["call.ended".into()], Some(&long)).is_err());
}

#[test]
fn retries_follow_the_standard_schedule_then_stop() {
    assert_eq!(next_attempt(1, 0), Some(5_000));
    assert_eq!(next_attempt(2, 0), Some(300_000));
    assert_eq!(next_attempt(7, 0), Some(36_000_000));
    assert_eq!(next_attempt(8, 0), None);
    assert_eq!(next_attempt(0, 0), None);
}

#[test]
fn attempts_count_as_delivered_only_on_a_2xx_answer() {
    let ok = AttemptOutcome {
        status: Some(204),
        error: None,
    };
    assert!(ok.delivered());
    let redirect = AttemptOutcome {
        status: Some(302),
        error: Some("HTTP 302 (redirects are not followed)".into()),
    };
    assert!(!redirect.delivered());
    assert!(
        !AttemptOutcome {
            status: None,
            error: Some("timed out".into())
        }
        .delivered()
    );
}

fn room() -> event::RoomRef<'static> {
    event::RoomRef {
        endpoint_id: "e1",
        name: "Fjord",
        listener_service_id: Some("l1"),
    }
}

#[test]
fn room_health_events_come_only_from_changes() {
    let r = room();
    assert!(Event::room_health(&r, None, Fine, None, &[], 1).is_none());
    assert!(Event::room_health(&r, Some(Offline), Offline, None, &[], 1).is_none());
    let e = Event::room_health(&r, None, Offline, Some(0), &[], 1).unwrap();
    assert_eq!(e.event_type, EventType::RoomOffline);
    let e = Event::room_health(&r, Some(Offline), Fine, Some(0), &[], 1).unwrap();
    assert_eq!(e.event_type, EventType::RoomOnline);
    assert_eq!(e.data["previousState"], "offline");
    let e = Event::room_health(&r, Some(Fine), Degraded, None, &[], 1).unwrap();
    assert_eq!(e.event_type, EventType::RoomDegraded);
}

#[test]
fn listener_events_skip_unknown_states_and_a_first_online() {
    use ListenerHealth::*;
    let ev = |p, h| Event::listener_health("l1", "HQ", p, h, None, 5).map(|e| e.event_type);
    assert_eq!(ev(None, Online), None);
    assert_eq!(ev(Some(Unknown), Online), None);
    assert_eq!(ev(None, Unknown), None);
    assert_eq!(ev(Some(Online), Offline), Some(EventType::ListenerOffline));
    assert_eq!(ev(None, Offline), Some(EventType::ListenerOffline));
    assert_eq!(ev(Some(Offline), Online), Some(EventType::ListenerOnline));
    assert_eq!(ev(Some(Offline), Offline), None);
}

#[test]
fn a_calendar_read_is_news_when_it_starts_failing_and_when_it_is_read_again() {
    use crate::ports::HealthSubject;
    let why = crate::inventory::ReadFailure {
        error_name: "CalendarServerException".into(),
        error_message: "the calendar server answered 401".into(),
    };
    let subject = |unreadable: Option<&crate::inventory::ReadFailure>| HealthSubject::Calendar {
        endpoint_id: "e1".into(),
        name: "Fjord".into(),
        listener_service_id: Some("l1".into()),
        calendar_type: "CALDAV".into(),
        calendar_id: "fjord@corp.example".into(),
        unreadable: unreadable.cloned(),
    };
    let ev = |previous: Option<&str>, unreadable| {
        let (state, event) = subject(unreadable).observe(previous, 5);
        (state, event.map(|e| e.event_type))
    };
    // Only the unreadable state is ever stored: none recorded means read, or never seen.
    assert_eq!(ev(None, None), ("readable", None));
    assert_eq!(
        ev(None, Some(&why)),
        ("unreadable", Some(EventType::CalendarUnreadable))
    );
    assert_eq!(ev(Some("unreadable"), Some(&why)), ("unreadable", None));
    assert_eq!(
        ev(Some("unreadable"), None),
        ("readable", Some(EventType::CalendarReadable))
    );
    assert!(!subject(Some(&why)).is_healthy() && subject(None).is_healthy());
    assert_eq!(subject(None).key(), ("calendar", "e1"));
    assert_eq!(
        subject(Some(&why)).room_change(None, 5),
        None,
        "no room history"
    );
    let (_, event) = subject(Some(&why)).observe(None, 5);
    let body: serde_json::Value = serde_json::from_str(&event.unwrap().body()).unwrap();
    assert_eq!(
        body["data"],
        serde_json::json!({
            "endpointId": "e1", "name": "Fjord", "listenerServiceId": "l1",
            "calendarType": "CALDAV", "calendarId": "fjord@corp.example",
            "errorName": "CalendarServerException",
            "errorMessage": "the calendar server answered 401",
        })
    );
}

#[test]
fn a_failed_command_is_an_event_and_nothing_else_is() {
    let entry = AuditEntry::sample(
        &crate::ids::EnterpriseId::from_trusted("x".into()),
        "endpoints.join",
        5,
    );
    let failed = AuditEntry {
        operation: "endpoints.join".into(),
        target_id: Some("e1".into()),
        outcome: "ExternalSystemUnreachable".into(),
        ..entry.clone()
    };
    let e = Event::command_failed(&failed).unwrap();
    assert_eq!(e.data["errorName"], "ExternalSystemUnreachable");
    let ok = AuditEntry {
        outcome: "ok".into(),
        ..failed.clone()
    };
    assert!(Event::command_failed(&ok).is_none());
    let mistake = AuditEntry {
        outcome: "InvalidDtmf".into(),
        ..failed.clone()
    };
    assert!(Event::command_failed(&mistake).is_none());
    let other = AuditEntry {
        operation: "endpoints.insert".into(),
        ..failed
    };
    assert!(Event::command_failed(&other).is_none());
}

#[test]
fn inventory_changes_name_what_changed_from_what() {
    let before = Some((Some("ce9.15"), Some("Room Kit")));
    assert!(Event::inventory_changed("e1", None, (Some("ce9.15"), None), 1).is_none());
    assert!(
        Event::inventory_changed("e1", before, (Some("ce9.15"), Some("Room Kit")), 1).is_none()
    );
    let e = Event::inventory_changed("e1", before, (Some("11.27"), Some("Room Kit")), 1).unwrap();
    assert_eq!(e.data["changes"]["softwareVersion"]["from"], "ce9.15");
    assert_eq!(e.data["changes"]["softwareVersion"]["to"], "11.27");
    assert!(e.data["changes"].get("model").is_none());
}

#[test]
fn a_body_is_the_standard_shape_with_an_rfc3339_timestamp() {
    let e = Event::call_ended("e1", 0, 61_000, "api");
    let body: serde_json::Value = serde_json::from_str(&e.body()).unwrap();
    assert_eq!(body["type"], "call.ended");
    assert_eq!(body["timestamp"], "1970-01-01T00:01:01Z");
    assert_eq!(body["data"]["durationSeconds"], 61);
    assert!(e.id.starts_with("msg_") && e.id.len() == 28);
}

//! A template's plan (issue #36 item 2): which rooms it is for, and for each room and key what
//! applying it would do, compared with what the room system holds now.

use super::key::SettingKey;
use super::outcome::{SettingOutcome, SettingOutcomes};
use super::settings::TemplateSettings;
use crate::error::{Error, ErrorKind};
use crate::ids::{EndpointId, ListenerServiceId};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The most rooms one plan reads: each costs a request through its listener, and the answer
/// is one response.
pub const MAX_PLAN_ROOMS: usize = 1000;

/// The ways a body may choose rooms.
const WAYS: [&str; 4] = ["endpoints", "listenerId", "location", "all"];

/// The longest location a choice names: an endpoint's location holds at most this many.
pub const MAX_LOCATION_CHARS: usize = 1024;

/// Whether an endpoint's `location` is the one a choice names: the same text once leading and
/// trailing white space is set aside, in any case ("Floor 3" is "floor 3 "), as a person
/// typing it would mean.
pub fn location_matches(chosen: &str, location: Option<&str>) -> bool {
    location.is_some_and(|l| l.trim().to_lowercase() == chosen.trim().to_lowercase())
}

/// The rooms a plan or job is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoomSelection {
    /// These endpoints (each must be the caller's enterprise's).
    Endpoints(Vec<EndpointId>),
    /// Every endpoint served by this listener service.
    Listener(ListenerServiceId),
    /// Every endpoint whose `location` is this text ([`location_matches`]).
    Location(String),
    /// Every endpoint of the enterprise.
    All,
}

impl RoomSelection {
    /// Reads `{"endpoints": [...]}`, `{"listenerId": "..."}`, `{"location": "..."}` or
    /// `{"all": true}`: exactly one.
    /// Every refusal is `Invalid` naming the field; a malformed endpoint id is its `NotFound`.
    pub fn from_json(body: &Value) -> Result<RoomSelection, Error> {
        let Value::Object(map) = body else {
            return Err(Error::invalid(
                "rooms: expected an object with one of endpoints, listenerId, location, all",
            ));
        };
        if let Some(unknown) = map.keys().find(|k| !WAYS.contains(&k.as_str())) {
            return Err(Error::invalid(format!(
                "rooms: '{}' is not a way to choose rooms (endpoints, listenerId, location, all)",
                crate::enums::shorten(unknown)
            )));
        }
        if map.len() != 1 {
            return Err(Error::invalid(
                "rooms: give exactly one of endpoints, listenerId, location, all",
            ));
        }
        let (field, value) = map.iter().next().ok_or_else(|| Error::internal("empty"))?;
        match (field.as_str(), value) {
            ("endpoints", Value::Array(ids)) => {
                if ids.is_empty() || ids.len() > MAX_PLAN_ROOMS {
                    return Err(Error::invalid(format!(
                        "rooms.endpoints: expected 1 to {MAX_PLAN_ROOMS} endpoint ids, got {}",
                        ids.len()
                    )));
                }
                let mut parsed = Vec::with_capacity(ids.len());
                for id in ids {
                    let Value::String(text) = id else {
                        return Err(Error::invalid(format!(
                            "rooms.endpoints: {} is not an endpoint id",
                            crate::enums::shorten(&id.to_string())
                        )));
                    };
                    let id = EndpointId::parse(text)?;
                    if !parsed.contains(&id) {
                        parsed.push(id);
                    }
                }
                Ok(RoomSelection::Endpoints(parsed))
            }
            ("listenerId", Value::String(text)) => ListenerServiceId::parse(text)
                .map(RoomSelection::Listener)
                .map_err(|_| {
                    Error::invalid(format!(
                        "rooms.listenerId: '{}' is not a listener service id",
                        crate::enums::shorten(text)
                    ))
                }),
            ("location", Value::String(text))
                if !text.trim().is_empty() && text.chars().count() <= MAX_LOCATION_CHARS =>
            {
                Ok(RoomSelection::Location(text.trim().to_owned()))
            }
            ("all", Value::Bool(true)) => Ok(RoomSelection::All),
            (field, value) => Err(Error::invalid(format!(
                "rooms.{field}: {} is not {}",
                crate::enums::shorten(&value.to_string()),
                match field {
                    "endpoints" => "a list of endpoint ids",
                    "listenerId" => "a listener service id",
                    "location" => "a location (1 to 1024 characters)",
                    _ => "true",
                }
            ))),
        }
    }

    /// A request body's `rooms` (`{"rooms": {...}}`); any other field is `Invalid`.
    pub fn from_request(body: &Map<String, Value>) -> Result<RoomSelection, Error> {
        if let Some(unknown) = body.keys().find(|k| k.as_str() != "rooms") {
            return Err(Error::invalid(format!(
                "'{}' is not a field of a plan request (rooms)",
                crate::enums::shorten(unknown)
            )));
        }
        let rooms = body.get("rooms").ok_or_else(|| {
            Error::invalid("rooms: required (endpoints, listenerId, location or all)")
        })?;
        RoomSelection::from_json(rooms)
    }

    /// `Invalid` when `count` rooms are more than one plan reads.
    pub fn check_count(count: usize) -> Result<(), Error> {
        if count > MAX_PLAN_ROOMS {
            return Err(Error::invalid(format!(
                "rooms: {count} rooms chosen; a plan reads at most {MAX_PLAN_ROOMS}: choose fewer \
                 (by listenerId or endpoints)"
            )));
        }
        Ok(())
    }
}

/// What applying a template would do to one setting of one room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPlan {
    /// The room holds the template's value already.
    Unchanged,
    /// The room holds `from`; applying writes the template's value.
    Change { from: Value },
    /// The room's driver or firmware has no such setting: why. Applying skips it.
    Unsupported(String),
    /// The room refused to say (its own message, e.g. the account's role may not read it).
    Unreadable(String),
}

impl KeyPlan {
    /// The name of the plan's kind, as answers spell it.
    pub fn name(&self) -> &'static str {
        match self {
            KeyPlan::Unchanged => "unchanged",
            KeyPlan::Change { .. } => "change",
            KeyPlan::Unsupported(_) => "unsupported",
            KeyPlan::Unreadable(_) => "unreadable",
        }
    }
}

/// One room's plan: per key, or why the room could not be read at all.
#[derive(Debug, Clone, PartialEq)]
pub enum RoomPlan {
    Read(BTreeMap<SettingKey, KeyPlan>),
    /// The room could not be asked (its listener offline, the room unreachable, a refused
    /// login, a listener too old): the catalog error's kind and message.
    Unreachable {
        kind: ErrorKind,
        message: String,
    },
}

impl RoomPlan {
    /// Compares what a room holds (`read`, the outcome of reading the template's keys) with
    /// the template. A key the read did not answer is unreadable.
    pub fn compare(template: &TemplateSettings, read: &SettingOutcomes) -> RoomPlan {
        let keys = template
            .iter()
            .map(|(key, value)| {
                let plan = match read.get(&key) {
                    Some(SettingOutcome::Value(held)) if *held == value.to_json() => {
                        KeyPlan::Unchanged
                    }
                    Some(SettingOutcome::Value(held)) => KeyPlan::Change { from: held.clone() },
                    Some(SettingOutcome::Unsupported(why)) => KeyPlan::Unsupported(why.clone()),
                    Some(SettingOutcome::Refused(message)) => KeyPlan::Unreadable(message.clone()),
                    None => KeyPlan::Unreadable("the room's listener did not answer it".into()),
                };
                (key, plan)
            })
            .collect();
        RoomPlan::Read(keys)
    }

    /// A room that could not be read, for `error`.
    pub fn unreachable(error: &Error) -> RoomPlan {
        RoomPlan::Unreachable {
            kind: error.kind(),
            message: error.message().to_owned(),
        }
    }

    /// The settings applying would write on this room (changes only).
    pub fn changes(&self, template: &TemplateSettings) -> Vec<SettingKey> {
        match self {
            RoomPlan::Read(keys) => template
                .iter()
                .map(|(k, _)| k)
                .filter(|k| matches!(keys.get(k), Some(KeyPlan::Change { .. })))
                .collect(),
            RoomPlan::Unreachable { .. } => Vec::new(),
        }
    }
}

/// Counts over a plan's rooms, for its summary line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanSummary {
    pub rooms: usize,
    /// Rooms with at least one change.
    pub rooms_changing: usize,
    pub unreachable: usize,
    /// Counts of keys over the readable rooms.
    pub changes: usize,
    pub unchanged: usize,
    pub unsupported: usize,
    pub unreadable: usize,
}

impl PlanSummary {
    pub fn of<'a>(plans: impl IntoIterator<Item = &'a RoomPlan>) -> PlanSummary {
        let mut s = PlanSummary::default();
        for plan in plans {
            s.rooms += 1;
            match plan {
                RoomPlan::Unreachable { .. } => s.unreachable += 1,
                RoomPlan::Read(keys) => {
                    let mut changing = false;
                    for key in keys.values() {
                        match key {
                            KeyPlan::Unchanged => s.unchanged += 1,
                            KeyPlan::Change { .. } => {
                                s.changes += 1;
                                changing = true;
                            }
                            KeyPlan::Unsupported(_) => s.unsupported += 1,
                            KeyPlan::Unreadable(_) => s.unreadable += 1,
                        }
                    }
                    s.rooms_changing += usize::from(changing);
                }
            }
        }
        s
    }

    pub fn to_json(self) -> Value {
        let mut map = Map::new();
        for (name, n) in [
            ("rooms", self.rooms),
            ("roomsChanging", self.rooms_changing),
            ("unreachable", self.unreachable),
            ("changes", self.changes),
            ("unchanged", self.unchanged),
            ("unsupported", self.unsupported),
            ("unreadable", self.unreadable),
        ] {
            map.insert(name.to_owned(), Value::from(n));
        }
        Value::Object(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn template() -> TemplateSettings {
        TemplateSettings::from_json(&json!({
            "time_zone": "Europe/Oslo", "standby.delay_minutes": 15,
            "proximity.mode": "off", "system.name": "Oslo 4.12",
        }))
        .unwrap()
    }

    #[test]
    fn each_key_is_compared_with_what_the_room_holds() {
        let read = SettingOutcomes::from([
            (
                SettingKey::TimeZone,
                SettingOutcome::Value(json!("Etc/UTC")),
            ),
            (
                SettingKey::StandbyDelayMinutes,
                SettingOutcome::Value(json!(15)),
            ),
            (
                SettingKey::ProximityMode,
                SettingOutcome::Unsupported("Poly".into()),
            ),
            (
                SettingKey::SystemName,
                SettingOutcome::Refused("Permission denied".into()),
            ),
        ]);
        let plan = RoomPlan::compare(&template(), &read);
        let RoomPlan::Read(keys) = &plan else {
            panic!("not read")
        };
        assert_eq!(
            keys[&SettingKey::TimeZone],
            KeyPlan::Change {
                from: json!("Etc/UTC")
            }
        );
        assert_eq!(keys[&SettingKey::StandbyDelayMinutes], KeyPlan::Unchanged);
        assert_eq!(
            keys[&SettingKey::ProximityMode],
            KeyPlan::Unsupported("Poly".into())
        );
        assert_eq!(
            keys[&SettingKey::SystemName],
            KeyPlan::Unreadable("Permission denied".into())
        );
        assert_eq!(plan.changes(&template()), [SettingKey::TimeZone]);
    }

    #[test]
    fn a_key_the_listener_left_out_is_unreadable_and_numbers_compare_as_numbers() {
        let read = SettingOutcomes::from([(
            SettingKey::StandbyDelayMinutes,
            SettingOutcome::Value(json!("15")),
        )]);
        let RoomPlan::Read(keys) = RoomPlan::compare(&template(), &read) else {
            panic!("not read")
        };
        assert_eq!(
            keys[&SettingKey::StandbyDelayMinutes],
            KeyPlan::Change { from: json!("15") }
        );
        assert!(matches!(
            keys[&SettingKey::TimeZone],
            KeyPlan::Unreadable(_)
        ));
    }

    #[test]
    fn the_summary_counts_rooms_and_keys() {
        let read = SettingOutcomes::from([
            (
                SettingKey::TimeZone,
                SettingOutcome::Value(json!("Etc/UTC")),
            ),
            (
                SettingKey::StandbyDelayMinutes,
                SettingOutcome::Value(json!(15)),
            ),
            (
                SettingKey::ProximityMode,
                SettingOutcome::Value(json!("off")),
            ),
            (
                SettingKey::SystemName,
                SettingOutcome::Value(json!("Oslo 4.12")),
            ),
        ]);
        let plans = [
            RoomPlan::compare(&template(), &read),
            RoomPlan::compare(&template(), &SettingOutcomes::new()),
            RoomPlan::unreachable(&Error::new(ErrorKind::ListenerOffline, "offline")),
        ];
        let summary = PlanSummary::of(&plans);
        assert_eq!(
            summary,
            PlanSummary {
                rooms: 3,
                rooms_changing: 1,
                unreachable: 1,
                changes: 1,
                unchanged: 3,
                unsupported: 0,
                unreadable: 4,
            }
        );
        assert_eq!(summary.to_json()["roomsChanging"], 1);
    }

    #[test]
    fn rooms_are_chosen_one_way_only() {
        assert_eq!(
            RoomSelection::from_json(&json!({"all": true})).unwrap(),
            RoomSelection::All
        );
        assert_eq!(
            RoomSelection::from_json(&json!({"location": " Floor 3 "})).unwrap(),
            RoomSelection::Location("Floor 3".into())
        );
        assert!(location_matches("Floor 3", Some("floor 3 ")));
        assert!(!location_matches("Floor 3", Some("Floor 31")));
        assert!(!location_matches("Floor 3", None));
        let ids = RoomSelection::from_json(&json!({"endpoints": ["a1", "b2", "a1"]})).unwrap();
        assert_eq!(
            ids,
            RoomSelection::Endpoints(vec![
                EndpointId::from_trusted("a1".into()),
                EndpointId::from_trusted("b2".into())
            ])
        );
        for (body, start) in [
            (
                json!({"all": true, "listenerId": "l1"}),
                "rooms: give exactly one",
            ),
            (json!({}), "rooms: give exactly one"),
            (
                json!({"building": "Oslo"}),
                "rooms: 'building' is not a way",
            ),
            (
                json!({"location": "  "}),
                "rooms.location: \"  \" is not a location",
            ),
            (
                json!({"location": 3}),
                "rooms.location: 3 is not a location",
            ),
            (
                json!({"endpoints": []}),
                "rooms.endpoints: expected 1 to 1000",
            ),
            (
                json!({"endpoints": [7]}),
                "rooms.endpoints: 7 is not an endpoint id",
            ),
            (json!({"all": false}), "rooms.all: false is not true"),
            (
                json!({"listenerId": "a b"}),
                "rooms.listenerId: 'a b' is not",
            ),
            (json!([]), "rooms: expected an object"),
        ] {
            let e = RoomSelection::from_json(&body).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Invalid, "{body}");
            assert!(e.message().starts_with(start), "{body}: {}", e.message());
        }
        let request = |body: Value| {
            let Value::Object(map) = body else {
                panic!("not an object")
            };
            RoomSelection::from_request(&map)
        };
        assert_eq!(
            request(json!({"rooms": {"all": true}})).unwrap(),
            RoomSelection::All
        );
        assert!(
            request(json!({}))
                .unwrap_err()
                .message()
                .starts_with("rooms: required")
        );
        assert!(
            request(json!({"rooms": {"all": true}, "dryRun": true}))
                .unwrap_err()
                .message()
                .starts_with("'dryRun' is not a field")
        );
        assert!(RoomSelection::check_count(1000).is_ok());
        assert!(RoomSelection::check_count(1001).is_err());
    }
}

//! The Cisco mapping of template settings, checked against Cisco's published xAPI schemas
//! (the emulator's `cisco_schema`, derived from cisco-ce/roomos.cisco.com at commit
//! 813482138cac1d425ebd6bee383a5416ade6ab65): every value of every key's value space, as the
//! mapping writes it, is accepted by every product variant of each generation the key is
//! supported on, for every role the mapping says may write it; and the check refuses what a
//! codec would refuse (wrong paths, values, units, roles).
#![allow(clippy::unwrap_used)]

use roomlink_device_emu::cisco_schema::{self, Generation as Schema};
use roomlink_domain::template::{SettingKey, SettingValue, TemplateSettings, ValueSpace};
use roomlink_listener::drivers::cisco_config::{
    Generation, cisco_value, path, roles_that_may_write, writes,
};
use serde_json::json;

const ROLES: [&str; 4] = ["Admin", "Integrator", "User", "RoomControl"];

fn words(path: &[&str]) -> Vec<String> {
    path.iter().map(|w| (*w).to_owned()).collect()
}

fn schema(generation: Generation) -> &'static Schema {
    let name = generation.schema().unwrap();
    cisco_schema::generations()
        .iter()
        .find(|g| g.name == name)
        .unwrap()
}

/// The values a test hands to the schemas: every value of a finite space; for a text, its
/// shortest and longest, in ASCII and in letters outside it (lengths count characters).
fn samples(key: SettingKey) -> Vec<SettingValue> {
    if let Some(values) = key.space().values() {
        return values;
    }
    let ValueSpace::Text {
        min_chars,
        max_chars,
    } = key.space()
    else {
        unreachable!("only texts are infinite")
    };
    let mut texts = Vec::new();
    for length in [min_chars, max_chars] {
        texts.push("x".repeat(length));
        texts.push("Ø".repeat(length));
    }
    texts.push(
        "Room 4.12 – Ålesund (ÆØÅ) 会议室"
            .chars()
            .take(max_chars)
            .collect(),
    );
    texts.into_iter().map(SettingValue::Text).collect()
}

#[test]
fn three_schema_generations_and_tc_without_one() {
    let names: Vec<Option<&str>> = Generation::ALL.iter().map(|g| g.schema()).collect();
    assert_eq!(
        names,
        [
            None,
            Some("CE 9.15"),
            Some("RoomOS 11.27"),
            Some("RoomOS 26.4")
        ]
    );
    assert_eq!(Generation::Tc.unsupported(), SettingKey::ALL);
}

#[test]
fn every_value_of_every_key_is_accepted_by_every_generation_that_supports_it() {
    let mut checked = 0;
    for generation in Generation::ALL {
        let Some(_) = generation.schema() else {
            continue;
        };
        let schema = schema(generation);
        for &key in SettingKey::ALL {
            if !generation.supports(key) {
                continue;
            }
            let path = words(&path(key));
            for value in samples(key) {
                let written = cisco_value(&value);
                for role in roles_that_may_write(key) {
                    let checked_here =
                        schema.check_configuration_on_every_product(&path, &written, role);
                    assert_eq!(checked_here, Ok(()), "{key} = {written:?} as {role}");
                    checked += 1;
                }
            }
        }
    }
    // 596 time zones, 101 volumes, 8 delays, 3 × 2 literals, 5 × 3 texts: per role, per
    // generation.
    assert!(checked > 3 * (596 * 3 + 101 * 3 + 8 * 2), "{checked}");
}

/// The domain's spaces lie inside Cisco's: the bounds of each space are accepted, and what the
/// domain refuses just outside them is the domain's choice, not a gap in Cisco's.
#[test]
fn the_domain_s_spaces_lie_inside_every_generation_s() {
    for generation in [Generation::Ce9, Generation::RoomOs11, Generation::RoomOs26] {
        let schema = schema(generation);
        let admits = |key: SettingKey, value: &str| {
            schema.check_configuration_on_every_product(&words(&path(key)), value, "Admin")
        };
        for &key in SettingKey::ALL {
            match key.space() {
                ValueSpace::IntegerRange { min, max } => {
                    assert_eq!(admits(key, &min.to_string()), Ok(()), "{key} min");
                    assert_eq!(admits(key, &max.to_string()), Ok(()), "{key} max");
                }
                ValueSpace::IntegerSet(values) => {
                    for v in values {
                        assert_eq!(admits(key, &v.to_string()), Ok(()), "{key} {v}");
                    }
                }
                ValueSpace::Literal(values) => {
                    for v in values {
                        let written = cisco_value(&SettingValue::Literal(v));
                        assert_eq!(admits(key, &written), Ok(()), "{key} {v}");
                    }
                }
                ValueSpace::Text {
                    min_chars,
                    max_chars,
                } => {
                    assert_eq!(admits(key, &"x".repeat(min_chars)), Ok(()), "{key}");
                    assert_eq!(admits(key, &"x".repeat(max_chars)), Ok(()), "{key}");
                }
                ValueSpace::TimeZone => {
                    for zone in roomlink_domain::template::time_zones::all() {
                        assert_eq!(admits(key, zone), Ok(()), "{key} {zone}");
                    }
                }
            }
        }
    }
    // Where Cisco's space is wider, the domain refuses what Cisco would take.
    let wider = [
        ("standby.delay_minutes", json!(10)),
        ("sip.display_name", json!("x".repeat(51))),
        ("time_zone", json!("America/Coyhaique")),
    ];
    for (key, value) in wider {
        assert!(TemplateSettings::from_json(&json!({ key: value })).is_err());
    }
}

/// The roles the mapping names are exactly the ones every generation lets write the path.
#[test]
fn the_roles_that_may_write_are_the_schemas_roles() {
    for &key in SettingKey::ALL {
        let path = words(&path(key));
        let sample = cisco_value(&samples(key)[0]);
        for role in ROLES {
            let named = roles_that_may_write(key).contains(&role);
            let everywhere =
                cisco_schema::check_configuration_on_every_product(&path, &sample, role);
            assert_eq!(named, everywhere.is_ok(), "{key} as {role}: {everywhere:?}");
        }
    }
}

/// The check can fail: wrong paths, values, units and roles are refused.
#[test]
fn a_wrong_mapping_is_refused() {
    let check = |path: &[&str], value: &str, role: &str| {
        cisco_schema::check_configuration(&words(path), value, role)
            .unwrap_err()
            .to_string()
    };
    // A volume scaled as for a 0-to-50 device, standby in seconds, a wrong path.
    assert_eq!(
        check(&["Audio", "DefaultVolume"], "200", "Admin"),
        "CE 9.15: value=\"200\" is outside Integer 0..100"
    );
    assert_eq!(
        check(&["Standby", "Delay"], &(480 * 60).to_string(), "Admin"),
        "CE 9.15: value=\"28800\" is outside Integer 1..480"
    );
    assert_eq!(
        check(&["Audio", "Volume"], "50", "Admin"),
        "CE 9.15: no such path"
    );
    assert_eq!(
        check(&["Conference", "AutoAnswer", "Mode"], "Yes", "Admin"),
        "CE 9.15: value=\"Yes\" is outside Literal Off/On"
    );
    assert_eq!(
        check(&["SIP", "DisplayName"], "Room", "Integrator"),
        "CE 9.15: the Integrator role may not use it"
    );
    assert_eq!(
        check(
            &["UserInterface", "OSD", "HalfwakeMessage"],
            &"x".repeat(129),
            "Admin"
        ),
        format!(
            "CE 9.15: value={:?} is outside String of 0..128 characters",
            "x".repeat(129)
        )
    );
    // The awake-screen custom message is not what the mapping writes: not in the subset.
    assert!(check(&["UserInterface", "CustomMessage"], "Hi", "Admin").contains("no such path"));
}

#[test]
fn a_whole_template_maps_to_writes_every_generation_accepts() {
    let settings = TemplateSettings::from_json(&json!({
        "time_zone": "Europe/Oslo",
        "system.name": "Oslo 4.12",
        "standby.delay_minutes": 480,
        "audio.default_volume": 0,
        "sip.display_name": "",
        "proximity.mode": "on",
        "auto_answer.mode": "off",
        "auto_answer.mute": "on",
        "welcome.message": "Welcome to Oslo 4.12",
    }))
    .unwrap();
    for generation in [Generation::Ce9, Generation::RoomOs11, Generation::RoomOs26] {
        let (writes, unsupported) = writes(generation, &settings);
        assert!(unsupported.is_empty());
        assert_eq!(writes.len(), 9);
        for w in writes {
            assert_eq!(
                schema(generation).check_configuration(&words(&w.path), &w.value, "Admin"),
                Ok(()),
                "{}",
                w.key
            );
        }
    }
}

/// Products of a generation lacking a path refuse any value: the mapping cannot know the
/// product before it asks, so the device's refusal is the room's outcome (docs/drivers.md).
#[test]
fn products_without_a_path_are_few_and_known() {
    for generation in [Generation::Ce9, Generation::RoomOs11, Generation::RoomOs26] {
        let schema = schema(generation);
        for &key in SettingKey::ALL {
            let missing = schema.products_without_configuration(&words(&path(key)));
            let allowed: &[&str] = match key {
                SettingKey::SystemName => &[],
                SettingKey::WelcomeMessage if generation != Generation::RoomOs26 => &[
                    "darling_10_55",
                    "darling_10_70",
                    "darling_15_55",
                    "darling_15_70",
                    "darling_15_85",
                    "vecchio",
                ],
                _ => &["vecchio"],
            };
            let allowed: Vec<&str> = allowed.to_vec();
            let missing_ok = missing.iter().all(|p| allowed.contains(p));
            assert!(missing_ok, "{} {key}: {missing:?}", schema.name);
        }
    }
}

/// Raw Cisco paths (the escape hatch): the domain's space of each raw path the emulator holds
/// is the union of the published ones. Every value of it is taken by some product of some
/// generation, and the values just outside it by none.
#[test]
fn raw_path_spaces_are_the_union_of_the_published_ones() {
    for name in [
        "Audio SoundsAndAlerts RingVolume",
        "Audio Ultrasound MaxVolume",
        "UserInterface Language",
    ] {
        let key = SettingKey::parse(&format!("cisco:{name}")).unwrap();
        let path = words(&path(key));
        let somewhere = |value: &str| {
            cisco_schema::generations()
                .iter()
                .any(|g| g.check_configuration(&path, value, "Admin").is_ok())
        };
        match key.space() {
            ValueSpace::IntegerRange { min, max } => {
                for v in min..=max {
                    assert!(somewhere(&v.to_string()), "{name} {v}");
                }
                assert!(!somewhere(&(min - 1).to_string()), "{name} below");
                assert!(!somewhere(&(max + 1).to_string()), "{name} above");
            }
            ValueSpace::Literal(values) => {
                assert!(values.len() > 20, "{name}");
                for v in values {
                    assert!(somewhere(v), "{name} {v}");
                }
                assert!(!somewhere("Klingon"), "{name}");
            }
            other => panic!("{name}: {other:?}"),
        }
        // What the driver writes for a value of the space is the value itself.
        let sample = key.space().values().unwrap()[0].clone();
        let settings =
            TemplateSettings::from_json(&json!({ key.name(): sample.to_json() })).unwrap();
        let (w, unsupported) = writes(Generation::Ce9, &settings);
        assert!(unsupported.is_empty());
        assert_eq!(w[0].value, sample.text());
    }
}

//! Template settings on Cisco codecs (issue #36): each vendor-neutral key of
//! `roomlink_domain::template` as the `xConfiguration` it writes, per firmware generation, and
//! the conversion of its values both ways. Pure functions; the Cisco drivers' `configuration`
//! modules send what they give (`Driver::read_configuration`, `write_configuration`).
//!
//! Checked against Cisco's published schemas (`tests/cisco_config_schema.rs`, docs/drivers.md
//! "Configuration (templates, issue #36): the Cisco mapping"): every value of every key's space,
//! converted here, is accepted by every product variant of CE 9.15, RoomOS 11.27 and RoomOS
//! 26.4 that has the path, for every role [`roles_that_may_write`] names.

use roomlink_domain::template::{SettingKey, SettingValue, TemplateSettings, ValueSpace};
use serde_json::Value;

/// The firmware generations the mapping knows, by the schema each is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// TC 7 (and TE): older than every published schema; no key is mapped.
    Tc,
    /// CE 9 and older CE: checked against CE 9.15.
    Ce9,
    /// RoomOS 10 and 11: checked against RoomOS 11.27.
    RoomOs11,
    /// RoomOS 12 and later (26.x): checked against RoomOS 26.4.
    RoomOs26,
}

impl Generation {
    pub const ALL: [Generation; 4] = [
        Generation::Tc,
        Generation::Ce9,
        Generation::RoomOs11,
        Generation::RoomOs26,
    ];

    /// The generation of a `SystemUnit Software Version` (`ce9.15.17.4.…`, `ce11.27.2.0.…`,
    /// `ce26.4.1.…`, `TC7.3.21.…`). A version whose major number cannot be read counts as CE 9.
    pub fn of_version(version: &str) -> Generation {
        if crate::drivers::cisco::is_tc(version) {
            return Generation::Tc;
        }
        let digits: String = version
            .trim()
            .trim_start_matches(|c: char| !c.is_ascii_digit())
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        match digits.parse::<u32>() {
            Ok(major) if major >= 12 => Generation::RoomOs26,
            Ok(10 | 11) => Generation::RoomOs11,
            _ => Generation::Ce9,
        }
    }

    /// The name of the published schema this generation is checked against (as the emulator's
    /// `cisco_schema` names it); `None` for TC.
    pub fn schema(self) -> Option<&'static str> {
        match self {
            Generation::Tc => None,
            Generation::Ce9 => Some("CE 9.15"),
            Generation::RoomOs11 => Some("RoomOS 11.27"),
            Generation::RoomOs26 => Some("RoomOS 26.4"),
        }
    }

    /// The neutral keys this generation does not support.
    pub fn unsupported(self) -> &'static [SettingKey] {
        match self {
            Generation::Tc => SettingKey::ALL,
            Generation::Ce9 | Generation::RoomOs11 | Generation::RoomOs26 => &[],
        }
    }

    /// Whether a codec of this generation can be asked for `key`. A raw path is asked of every
    /// generation with a schema: a codec whose firmware lacks it answers "No match on address
    /// expression", its own refusal (the drivers know TC from CE, not one CE from another).
    pub fn supports(self, key: SettingKey) -> bool {
        match key {
            SettingKey::Cisco(_) => self != Generation::Tc,
            _ => !self.unsupported().contains(&key),
        }
    }
}

/// The `xConfiguration` path a key writes, as its words (a raw path: its own).
pub fn path(key: SettingKey) -> Vec<&'static str> {
    let words: &[&str] = match key {
        SettingKey::TimeZone => &["Time", "Zone"],
        SettingKey::SystemName => &["SystemUnit", "Name"],
        SettingKey::StandbyDelayMinutes => &["Standby", "Delay"],
        SettingKey::AudioDefaultVolume => &["Audio", "DefaultVolume"],
        SettingKey::SipDisplayName => &["SIP", "DisplayName"],
        SettingKey::ProximityMode => &["Proximity", "Mode"],
        SettingKey::AutoAnswerMode => &["Conference", "AutoAnswer", "Mode"],
        SettingKey::AutoAnswerMute => &["Conference", "AutoAnswer", "Mute"],
        SettingKey::WelcomeMessage => &["UserInterface", "OSD", "HalfwakeMessage"],
        SettingKey::Cisco(path) => return path.words().collect(),
    };
    words.to_vec()
}

/// The device roles that may write a key's configuration in every checked generation (the
/// schemas' `role`); a template with any key an account's role lacks needs another account.
pub fn roles_that_may_write(key: SettingKey) -> &'static [&'static str] {
    match key {
        SettingKey::TimeZone | SettingKey::AudioDefaultVolume => &["Admin", "Integrator", "User"],
        SettingKey::StandbyDelayMinutes | SettingKey::WelcomeMessage => &["Admin", "Integrator"],
        SettingKey::ProximityMode => &["Admin", "User"],
        SettingKey::SystemName
        | SettingKey::SipDisplayName
        | SettingKey::AutoAnswerMode
        | SettingKey::AutoAnswerMute => &["Admin"],
        // The catalog keeps the paths an Admin may write (`cisco_paths`).
        SettingKey::Cisco(_) => &["Admin"],
    }
}

/// A neutral value as the codec writes it: `off`/`on` as `Off`/`On`, numbers in decimal, texts
/// and time zone names as they are.
pub fn cisco_value(value: &SettingValue) -> String {
    match value {
        SettingValue::Literal("off") => "Off".to_owned(),
        SettingValue::Literal("on") => "On".to_owned(),
        other => other.text(),
    }
}

/// A configuration value as the codec reports it, as a neutral JSON value (for comparing a
/// room's current values with a template): `Off`/`On` in lower case, whole numbers as numbers
/// for numeric keys, anything else as text. No value space is checked: a room may hold a
/// value no template can set (a `Standby Delay` of 10). A raw path's value is read by its
/// space: a number, a literal in the schemas' spelling, or text.
pub fn neutral_value(key: SettingKey, reported: &str) -> Value {
    let reported = reported.trim();
    match key {
        SettingKey::Cisco(path) => match path.space {
            ValueSpace::IntegerRange { .. } => reported
                .parse::<i64>()
                .map_or_else(|_| Value::from(reported), Value::from),
            ValueSpace::Literal(values) => Value::from(
                values
                    .iter()
                    .find(|v| v.eq_ignore_ascii_case(reported))
                    .copied()
                    .unwrap_or(reported),
            ),
            _ => Value::from(reported),
        },
        SettingKey::StandbyDelayMinutes | SettingKey::AudioDefaultVolume => reported
            .parse::<i64>()
            .map_or_else(|_| Value::from(reported), Value::from),
        SettingKey::ProximityMode | SettingKey::AutoAnswerMode | SettingKey::AutoAnswerMute => {
            Value::from(reported.to_ascii_lowercase())
        }
        _ => Value::from(reported),
    }
}

/// One configuration to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigWrite {
    pub key: SettingKey,
    pub path: Vec<&'static str>,
    pub value: String,
}

/// What a template asks of a codec of `generation`: the writes, in catalog order, and the keys
/// it does not support.
pub fn writes(
    generation: Generation,
    settings: &TemplateSettings,
) -> (Vec<ConfigWrite>, Vec<SettingKey>) {
    let mut writes = Vec::new();
    let mut unsupported = Vec::new();
    for (key, value) in settings.iter() {
        if generation.supports(key) {
            // A raw path's value is already in the schemas' spelling.
            let value = match key {
                SettingKey::Cisco(_) => value.text(),
                _ => cisco_value(value),
            };
            writes.push(ConfigWrite {
                key,
                path: path(key),
                value,
            });
        } else {
            unsupported.push(key);
        }
    }
    (writes, unsupported)
}

/// What became of one written key: the value it now holds, or the codec's refusal (logged).
pub fn write_outcome(
    address: &str,
    write: &ConfigWrite,
    refusal: Option<String>,
) -> crate::driver::SettingOutcome {
    use crate::driver::SettingOutcome;
    match refusal {
        None => SettingOutcome::Value(neutral_value(write.key, &write.value)),
        Some(reason) => {
            tracing::info!(device = %address, key = %write.key, %reason, "configuration refused");
            SettingOutcome::Refused(reason)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn generations_from_software_versions() {
        let cases = [
            ("TC7.3.21.d4d8b4c", Generation::Tc),
            ("ce9.15.17.4.4c8b7f1a3e2", Generation::Ce9),
            ("ce8.3.2.1", Generation::Ce9),
            ("ce10.19.1.2", Generation::RoomOs11),
            ("ce11.27.2.0.abc", Generation::RoomOs11),
            ("ce26.4.1.2", Generation::RoomOs26),
            ("RoomOS 26.8.1", Generation::RoomOs26),
            ("", Generation::Ce9),
        ];
        for (version, generation) in cases {
            assert_eq!(Generation::of_version(version), generation, "{version}");
        }
    }

    #[test]
    fn a_template_becomes_writes_and_unsupported_keys() {
        let settings = TemplateSettings::from_json(&json!({
            "auto_answer.mode": "on",
            "time_zone": "europe/oslo",
            "standby.delay_minutes": 30,
        }))
        .unwrap();
        let (writes_ce, unsupported) = writes(Generation::Ce9, &settings);
        assert!(unsupported.is_empty());
        let shown: Vec<(String, &str)> = writes_ce
            .iter()
            .map(|w| (w.path.join(" "), w.value.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                ("Time Zone".to_owned(), "Europe/Oslo"),
                ("Standby Delay".to_owned(), "30"),
                ("Conference AutoAnswer Mode".to_owned(), "On"),
            ]
        );
        let (writes_tc, unsupported) = writes(Generation::Tc, &settings);
        assert!(writes_tc.is_empty());
        assert_eq!(
            unsupported,
            [
                SettingKey::TimeZone,
                SettingKey::StandbyDelayMinutes,
                SettingKey::AutoAnswerMode
            ]
        );
    }

    #[test]
    fn raw_paths_are_written_and_read_in_the_schemas_spelling() {
        let settings = TemplateSettings::from_json(&json!({
            "cisco:UserInterface Language": "norwegian",
            "cisco:Audio Ultrasound MaxVolume": 40,
        }))
        .unwrap();
        let (w, unsupported) = writes(Generation::Ce9, &settings);
        assert!(unsupported.is_empty());
        let shown: Vec<(String, &str)> = w
            .iter()
            .map(|w| (w.path.join(" "), w.value.as_str()))
            .collect();
        assert_eq!(
            shown,
            [
                ("Audio Ultrasound MaxVolume".to_owned(), "40"),
                ("UserInterface Language".to_owned(), "Norwegian"),
            ]
        );
        assert_eq!(neutral_value(w[0].key, " 40 "), json!(40));
        assert_eq!(neutral_value(w[1].key, "NORWEGIAN"), json!("Norwegian"));
        assert_eq!(neutral_value(w[1].key, "Elvish"), json!("Elvish"));
        let (none, unsupported) = writes(Generation::Tc, &settings);
        assert!(none.is_empty());
        assert_eq!(unsupported.len(), 2);
    }

    #[test]
    fn reported_values_read_back_as_neutral_values() {
        assert_eq!(neutral_value(SettingKey::AutoAnswerMode, "On"), json!("on"));
        assert_eq!(
            neutral_value(SettingKey::StandbyDelayMinutes, "10"),
            json!(10)
        );
        assert_eq!(
            neutral_value(SettingKey::AudioDefaultVolume, "x"),
            json!("x")
        );
        assert_eq!(
            neutral_value(SettingKey::TimeZone, "Etc/UTC"),
            json!("Etc/UTC")
        );
        // A written value reads back as the template's value.
        let settings = TemplateSettings::from_json(&json!({"proximity.mode": "off"})).unwrap();
        let (w, _) = writes(Generation::RoomOs26, &settings);
        assert_eq!(
            neutral_value(w[0].key, &w[0].value),
            settings.to_json()["proximity.mode"]
        );
    }
}

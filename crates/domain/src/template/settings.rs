//! A template's settings: keys of the catalog with values inside their spaces.

use super::key::SettingKey;
use super::outcome::WriteMode;
use super::space::SettingValue;
use crate::error::Error;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The settings of a template, each inside its key's space, in catalog order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TemplateSettings {
    values: BTreeMap<SettingKey, SettingValue>,
}

impl TemplateSettings {
    /// Reads `{"key": value, ...}`. Every refusal is `Invalid`, naming the key, the value and
    /// the allowed space: a body that is not an object, an unknown key, a value of the wrong
    /// type (`null` included) and a value outside its space. An empty object is an empty
    /// template.
    pub fn from_json(body: &Value) -> Result<TemplateSettings, Error> {
        TemplateSettings::from_json_for(body, WriteMode::Apply)
    }

    /// As [`TemplateSettings::from_json`] for `mode`: a restore's values are checked by
    /// [`super::ValueSpace::parse_restore`].
    pub fn from_json_for(body: &Value, mode: WriteMode) -> Result<TemplateSettings, Error> {
        let Value::Object(map) = body else {
            return Err(Error::invalid(
                "settings: expected an object mapping setting keys to values",
            ));
        };
        let mut values = BTreeMap::new();
        for (name, value) in map {
            let key = SettingKey::lookup(name)
                .map_err(|why| Error::invalid(format!("settings: {why}")))?;
            let value = match (mode, key) {
                // A raw path's space is already the widest any Cisco product takes.
                (WriteMode::Apply, _) | (WriteMode::Restore, SettingKey::Cisco(_)) => {
                    key.space().parse(key.name(), value)?
                }
                (WriteMode::Restore, _) => key.space().parse_restore(key.name(), value)?,
            };
            values.insert(key, value);
        }
        Ok(TemplateSettings { values })
    }

    /// The settings as the JSON object they were read from (in catalog order, values in their
    /// canonical spelling).
    pub fn to_json(&self) -> Value {
        let map: Map<String, Value> = self
            .values
            .iter()
            .map(|(k, v)| (k.name().to_owned(), v.to_json()))
            .collect();
        Value::Object(map)
    }

    /// Settings already inside their spaces (a later value of a key replaces an earlier one).
    pub(crate) fn from_values(
        values: impl IntoIterator<Item = (SettingKey, SettingValue)>,
    ) -> Self {
        TemplateSettings {
            values: values.into_iter().collect(),
        }
    }

    /// Keeps only the settings whose key `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(SettingKey) -> bool) {
        self.values.retain(|k, _| keep(*k));
    }

    pub fn get(&self, key: SettingKey) -> Option<&SettingValue> {
        self.values.get(&key)
    }

    /// Every setting, in catalog order.
    pub fn iter(&self) -> impl Iterator<Item = (SettingKey, &SettingValue)> {
        self.values.iter().map(|(k, v)| (*k, v))
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// As [`TemplateSettings::to_json`]: how a stored template answers.
impl serde::Serialize for TemplateSettings {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use serde_json::json;

    fn refusal(body: Value) -> String {
        let e = TemplateSettings::from_json(&body).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid);
        assert_eq!(e.details()["message"], json!(e.message()));
        e.message().to_owned()
    }

    #[test]
    fn reads_every_key_of_the_issue_in_canonical_spelling() {
        let body = json!({
            "time_zone": "europe/oslo",
            "standby.delay_minutes": 15,
            "audio.default_volume": 70,
            "sip.display_name": "Room 4.12",
            "proximity.mode": "Off",
            "auto_answer.mode": "on",
            "auto_answer.mute": "on",
            "welcome.message": "Welcome! Tap the screen to start.",
            "system.name": "Oslo 4.12",
        });
        let settings = TemplateSettings::from_json(&body).unwrap();
        assert_eq!(settings.len(), 9);
        assert_eq!(
            settings.get(SettingKey::TimeZone),
            Some(&SettingValue::TimeZone("Europe/Oslo"))
        );
        assert_eq!(
            settings.get(SettingKey::ProximityMode),
            Some(&SettingValue::Literal("off"))
        );
        let back = settings.to_json();
        assert_eq!(back["time_zone"], json!("Europe/Oslo"));
        assert_eq!(back["proximity.mode"], json!("off"));
        assert_eq!(TemplateSettings::from_json(&back).unwrap(), settings);
        let order: Vec<SettingKey> = settings.iter().map(|(k, _)| k).collect();
        assert_eq!(order, SettingKey::ALL);
    }

    #[test]
    fn an_empty_object_is_an_empty_template() {
        let settings = TemplateSettings::from_json(&json!({})).unwrap();
        assert!(settings.is_empty());
        assert_eq!(settings.to_json(), json!({}));
    }

    #[test]
    fn an_unknown_key_is_refused_with_the_known_ones() {
        assert_eq!(
            refusal(json!({"timezone": "Etc/UTC"})),
            "settings: 'timezone' is not a template setting (known: time_zone, system.name, \
             standby.delay_minutes, audio.default_volume, sip.display_name, proximity.mode, \
             auto_answer.mode, auto_answer.mute, welcome.message; or a raw Cisco path such as \
             'cisco:Audio Ultrasound MaxVolume')"
        );
    }

    #[test]
    fn raw_cisco_paths_are_checked_against_the_published_spaces() {
        let settings = TemplateSettings::from_json(&json!({
            "cisco:Audio Ultrasound MaxVolume": 90,
            "cisco:userinterface language": "norwegian",
            "time_zone": "Etc/UTC",
        }))
        .unwrap();
        assert_eq!(
            settings.to_json(),
            json!({"time_zone": "Etc/UTC", "cisco:Audio Ultrasound MaxVolume": 90,
                   "cisco:UserInterface Language": "Norwegian"})
        );
        let keys: Vec<&str> = settings.iter().map(|(k, _)| k.name()).collect();
        assert_eq!(
            keys,
            [
                "time_zone",
                "cisco:Audio Ultrasound MaxVolume",
                "cisco:UserInterface Language"
            ]
        );
        assert_eq!(
            refusal(json!({"cisco:Audio Ultrasound MaxVolume": 91})),
            "settings.cisco:Audio Ultrasound MaxVolume: 91 is not a whole number from 0 to 90"
        );
        assert!(
            refusal(json!({"cisco:UserInterface Language": "Klingon"})).starts_with(
                "settings.cisco:UserInterface Language: 'Klingon' is not one of Arabic,"
            )
        );
        assert!(
            refusal(json!({"cisco:SIP Authentication Password": "x"}))
                .starts_with("settings: 'cisco:SIP Authentication Password': not a configuration")
        );
        assert!(
            refusal(json!({"polycom:sleeptime": 3}))
                .starts_with("settings: 'polycom:sleeptime': raw paths are taken for Cisco only")
        );
        // An undo writes back within the same published space.
        assert!(
            TemplateSettings::from_json_for(
                &json!({"cisco:Audio Ultrasound MaxVolume": 1000}),
                WriteMode::Restore
            )
            .is_err()
        );
    }

    #[test]
    fn a_value_outside_its_space_names_key_value_and_space() {
        assert_eq!(
            refusal(json!({"audio.default_volume": 150})),
            "settings.audio.default_volume: 150 is not a whole number from 0 to 100"
        );
        assert_eq!(
            refusal(json!({"standby.delay_minutes": 10})),
            "settings.standby.delay_minutes: 10 is not one of 1, 3, 15, 30, 60, 120, 240, 480"
        );
        assert_eq!(
            refusal(json!({"auto_answer.mode": "donotdisturb"})),
            "settings.auto_answer.mode: 'donotdisturb' is not one of off, on"
        );
        assert!(
            refusal(json!({"welcome.message": "x".repeat(129)}))
                .contains("is not a text of 0 to 128 characters")
        );
        assert!(refusal(json!({"system.name": ""})).starts_with("settings.system.name: ''"));
        assert!(
            refusal(json!({"time_zone": "America/Coyhaique"}))
                .starts_with("settings.time_zone: 'America/Coyhaique' is not a time zone name")
        );
    }

    #[test]
    fn a_value_of_the_wrong_type_is_refused_naming_the_space() {
        assert_eq!(
            refusal(json!({"audio.default_volume": "70"})),
            "settings.audio.default_volume: '70' is not a whole number from 0 to 100"
        );
        assert_eq!(
            refusal(json!({"proximity.mode": false})),
            "settings.proximity.mode: false is not one of off, on"
        );
        assert!(
            refusal(json!({"sip.display_name": null}))
                .starts_with("settings.sip.display_name: null")
        );
        assert!(
            refusal(json!({"time_zone": ["Etc/UTC"]}))
                .starts_with("settings.time_zone: [\"Etc/UTC\"]")
        );
    }

    #[test]
    fn a_body_that_is_not_an_object_is_refused() {
        for body in [json!([]), json!("time_zone"), json!(null)] {
            assert!(refusal(body).starts_with("settings: expected an object"));
        }
    }
}

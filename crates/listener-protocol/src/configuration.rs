//! `readconfiguration` and `writeconfiguration` (listener 3.4.0), shared by the listener and
//! its simulator: the request's keys or settings checked against the domain's catalog (a key
//! that is not a template setting, or a value outside its key's space, is the request's
//! `bad_request`, before any room system is asked) and the answer's body.

use crate::wire::{ConfigurationAnswer, WireParams, WireSetting};
use roomlink_domain::template::{
    SettingKey, SettingOutcome, SettingOutcomes, TemplateSettings, WriteMode,
};
use serde_json::Value;

/// What the command asks of the room system.
pub enum ConfigurationRequest {
    Read(Vec<SettingKey>),
    Write(TemplateSettings),
}

impl ConfigurationRequest {
    /// `readconfiguration`'s `params.keys` (absent: every key of the catalog) or
    /// `writeconfiguration`'s `params.settings` (required).
    pub fn of(name: &str, params: WireParams) -> Result<ConfigurationRequest, String> {
        if name == "readconfiguration" {
            let Some(names) = params.keys else {
                return Ok(ConfigurationRequest::Read(SettingKey::ALL.to_vec()));
            };
            let mut keys = Vec::with_capacity(names.len());
            for name in &names {
                let key = SettingKey::lookup(name).map_err(|why| format!("params.keys: {why}"))?;
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
            keys.sort();
            return Ok(ConfigurationRequest::Read(keys));
        }
        let mode = if params.restore == Some(true) {
            WriteMode::Restore
        } else {
            WriteMode::Apply
        };
        let settings = params
            .settings
            .ok_or("params.settings: expected an object mapping setting keys to values")?;
        TemplateSettings::from_json_for(&Value::Object(settings), mode)
            .map(ConfigurationRequest::Write)
            .map_err(|e| format!("params.{}", e.message()))
    }

    pub fn keys(&self) -> usize {
        match self {
            ConfigurationRequest::Read(keys) => keys.len(),
            ConfigurationRequest::Write(settings) => settings.len(),
        }
    }
}

/// The answer's body: one entry per key.
pub fn answer_of(outcomes: SettingOutcomes) -> ConfigurationAnswer {
    let configuration = outcomes
        .into_iter()
        .map(|(key, outcome)| {
            let wire = match outcome {
                SettingOutcome::Value(value) => WireSetting::Value(value),
                SettingOutcome::Unsupported(why) => WireSetting::Unsupported(why),
                SettingOutcome::Refused(message) => WireSetting::Refused(message),
            };
            (key.name().to_owned(), wire)
        })
        .collect();
    ConfigurationAnswer { configuration }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(body: Value) -> WireParams {
        serde_json::from_value(body).unwrap()
    }

    #[test]
    fn a_read_without_keys_reads_the_whole_catalog_and_unknown_keys_are_refused() {
        let Ok(ConfigurationRequest::Read(keys)) =
            ConfigurationRequest::of("readconfiguration", WireParams::default())
        else {
            panic!("not a read");
        };
        assert_eq!(keys, SettingKey::ALL);
        let Ok(ConfigurationRequest::Read(keys)) = ConfigurationRequest::of(
            "readconfiguration",
            params(json!({"keys": ["welcome.message", "time_zone", "time_zone"]})),
        ) else {
            panic!("not a read");
        };
        assert_eq!(keys, [SettingKey::TimeZone, SettingKey::WelcomeMessage]);
        let Err(problem) =
            ConfigurationRequest::of("readconfiguration", params(json!({"keys": ["timezone"]})))
        else {
            panic!("accepted");
        };
        assert!(
            problem.starts_with(
                "params.keys: 'timezone' is not a template setting (known: time_zone,"
            )
        );
    }

    #[test]
    fn a_write_names_the_key_the_value_and_the_space_it_left() {
        let Err(problem) = ConfigurationRequest::of(
            "writeconfiguration",
            params(json!({"settings": {"audio.default_volume": 150}})),
        ) else {
            panic!("accepted");
        };
        assert_eq!(
            problem,
            "params.settings.audio.default_volume: 150 is not a whole number from 0 to 100"
        );
        let Err(problem) = ConfigurationRequest::of("writeconfiguration", WireParams::default())
        else {
            panic!("accepted");
        };
        assert!(problem.starts_with("params.settings: expected an object"));
        let Ok(ConfigurationRequest::Write(settings)) = ConfigurationRequest::of(
            "writeconfiguration",
            params(json!({"settings": {"time_zone": "europe/oslo"}})),
        ) else {
            panic!("refused");
        };
        assert_eq!(settings.to_json(), json!({"time_zone": "Europe/Oslo"}));
    }

    #[test]
    fn the_answer_has_one_tagged_entry_per_key() {
        let outcomes = SettingOutcomes::from([
            (
                SettingKey::TimeZone,
                SettingOutcome::Value(json!("Etc/UTC")),
            ),
            (
                SettingKey::ProximityMode,
                SettingOutcome::Unsupported("no".into()),
            ),
            (
                SettingKey::SystemName,
                SettingOutcome::Refused("Permission denied".into()),
            ),
        ]);
        assert_eq!(
            serde_json::to_value(answer_of(outcomes)).unwrap(),
            json!({"configuration": {
                "time_zone": {"value": "Etc/UTC"},
                "proximity.mode": {"unsupported": "no"},
                "system.name": {"refused": "Permission denied"},
            }})
        );
    }
}

//! Template settings of a simulated room system (`readconfiguration`, `writeconfiguration`,
//! listener 3.4.0): what the real listener's drivers support per vendor, stored per room.
//! Cisco rooms hold every key and raw Cisco path, Poly rooms the four keys their Telnet API
//! documents, other protocols none. Defaults follow the device emulator's (docs/drivers.md), so a plan against
//! the simulator sees changes as it would against emulated rooms.

use crate::inventory::Vendor;
use roomlink_domain::template::{
    SettingKey, SettingOutcome, SettingOutcomes, TemplateSettings, ValueSpace,
};
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// The keys a Poly listener maps (`autoanswer`, `muteautoanswer`, `sleeptime`, `systemname`).
const POLY_KEYS: &[SettingKey] = &[
    SettingKey::SystemName,
    SettingKey::StandbyDelayMinutes,
    SettingKey::AutoAnswerMode,
    SettingKey::AutoAnswerMute,
];

/// What a room holds beyond its defaults.
#[derive(Debug, Clone, Default)]
pub struct Configuration {
    written: BTreeMap<SettingKey, Value>,
}

fn supports(vendor: Option<Vendor>, key: SettingKey) -> bool {
    match vendor {
        Some(Vendor::Cisco) => true,
        Some(Vendor::Poly) => POLY_KEYS.contains(&key),
        None => false,
    }
}

fn unsupported(protocol: &str, key: SettingKey) -> SettingOutcome {
    SettingOutcome::Unsupported(format!("{protocol} has no setting for {key}"))
}

/// A device's value before anything was written.
fn default_value(vendor: Vendor, address: &str, key: SettingKey) -> Value {
    match (vendor, key) {
        (Vendor::Cisco, SettingKey::TimeZone) => json!("Etc/UTC"),
        (Vendor::Cisco, SettingKey::SystemName) => json!(format!("Cisco-{address}")),
        (Vendor::Poly, SettingKey::SystemName) => json!(format!("Poly-{address}")),
        (Vendor::Cisco, SettingKey::StandbyDelayMinutes) => json!(10),
        (Vendor::Poly, SettingKey::StandbyDelayMinutes) => json!(3),
        (_, SettingKey::AudioDefaultVolume) => json!(50),
        (_, SettingKey::ProximityMode) => json!("on"),
        (Vendor::Poly, SettingKey::AutoAnswerMode) => json!("on"),
        (_, SettingKey::AutoAnswerMode | SettingKey::AutoAnswerMute) => json!("off"),
        (_, SettingKey::SipDisplayName | SettingKey::WelcomeMessage) => json!(""),
        (_, SettingKey::TimeZone) => json!("Etc/UTC"),
        // A raw Cisco path: the emulator's default where it holds the path, else the lowest
        // value of its space, its first word, or empty.
        (_, SettingKey::Cisco(path)) => match path.path {
            "Audio Ultrasound MaxVolume" => json!(70),
            "Audio SoundsAndAlerts RingVolume" => json!(50),
            "UserInterface Language" => json!("English"),
            _ => default_of(path.space),
        },
    }
}

fn default_of(space: ValueSpace) -> Value {
    match space {
        ValueSpace::IntegerRange { min, .. } => json!(min),
        ValueSpace::Literal(values) => json!(values.first().copied().unwrap_or_default()),
        _ => json!(""),
    }
}

impl Configuration {
    /// The values of `keys` on a room reached by `protocol` at `address`.
    pub fn read(&self, protocol: &str, address: &str, keys: &[SettingKey]) -> SettingOutcomes {
        let vendor = Vendor::of(protocol);
        keys.iter()
            .map(|&key| {
                let outcome = match vendor.filter(|_| supports(vendor, key)) {
                    Some(vendor) => SettingOutcome::Value(
                        self.written
                            .get(&key)
                            .cloned()
                            .unwrap_or_else(|| default_value(vendor, address, key)),
                    ),
                    None => unsupported(protocol, key),
                };
                (key, outcome)
            })
            .collect()
    }

    /// Stores every supported setting; the others are unsupported and left alone.
    pub fn write(&mut self, protocol: &str, settings: &TemplateSettings) -> SettingOutcomes {
        let vendor = Vendor::of(protocol);
        settings
            .iter()
            .map(|(key, value)| {
                if !supports(vendor, key) {
                    return (key, unsupported(protocol, key));
                }
                self.written.insert(key, value.to_json());
                (key, SettingOutcome::Value(value.to_json()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cisco_holds_every_key_poly_four_and_mesh_none() {
        let mut room = Configuration::default();
        let settings = TemplateSettings::from_json(
            &json!({"time_zone": "Europe/Oslo", "auto_answer.mode": "on"}),
        )
        .unwrap();
        let written = room.write("POLYCOM_TELNET", &settings);
        assert_eq!(
            written[&SettingKey::AutoAnswerMode],
            SettingOutcome::Value(json!("on"))
        );
        assert!(matches!(
            written[&SettingKey::TimeZone],
            SettingOutcome::Unsupported(_)
        ));
        let read = room.read("TANDBERG_HTTP", "127.0.0.9", SettingKey::ALL);
        assert_eq!(read.len(), SettingKey::ALL.len());
        assert_eq!(
            read[&SettingKey::SystemName],
            SettingOutcome::Value(json!("Cisco-127.0.0.9"))
        );
        assert_eq!(
            read[&SettingKey::TimeZone],
            SettingOutcome::Value(json!("Etc/UTC"))
        );
        let mesh = room.read("MESH", "127.0.0.9", &[SettingKey::TimeZone]);
        assert_eq!(
            mesh[&SettingKey::TimeZone],
            SettingOutcome::Unsupported("MESH has no setting for time_zone".into())
        );
    }
}

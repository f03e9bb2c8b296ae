//! What became of template settings on one room system: the answer of a driver, carried by the
//! listener protocol (`readconfiguration`, `writeconfiguration`) and compared by plans.

use super::key::SettingKey;
use serde_json::Value;
use std::collections::BTreeMap;

/// What became of one template setting on a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingOutcome {
    /// The value the device holds (a read) or accepted (a write), as a neutral JSON value:
    /// comparable with a template's [`super::TemplateSettings::to_json`].
    Value(Value),
    /// The driver, or the device's firmware, has no such setting: why.
    Unsupported(String),
    /// The device refused it, with its own message (never a credential).
    Refused(String),
}

/// Each asked key's outcome, in catalog order.
pub type SettingOutcomes = BTreeMap<SettingKey, SettingOutcome>;

/// Every key of `keys` unsupported for `why`.
pub fn all_unsupported(keys: impl IntoIterator<Item = SettingKey>, why: &str) -> SettingOutcomes {
    keys.into_iter()
        .map(|k| (k, SettingOutcome::Unsupported(why.to_owned())))
        .collect()
}

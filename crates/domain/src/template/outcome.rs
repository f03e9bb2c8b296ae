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

/// Which values a write may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteMode {
    /// Values inside roomlink's value spaces: a template's.
    Apply,
    /// Values a room held before a job wrote it, put back by an undo: checked only for their
    /// type and for what the wire protocols cannot carry (see
    /// [`super::ValueSpace::parse_restore`]); the room system judges the rest.
    Restore,
}

/// Each asked key's outcome, in catalog order.
pub type SettingOutcomes = BTreeMap<SettingKey, SettingOutcome>;

/// Every key of `keys` unsupported for `why`.
pub fn all_unsupported(keys: impl IntoIterator<Item = SettingKey>, why: &str) -> SettingOutcomes {
    keys.into_iter()
        .map(|k| (k, SettingOutcome::Unsupported(why.to_owned())))
        .collect()
}

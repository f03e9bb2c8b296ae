//! How a template job's room ended, per setting: what jobs record, reports show and undos
//! read back.

use super::key::SettingKey;
use crate::error::{Error, ErrorKind};
use serde_json::Value;
use std::collections::BTreeMap;

/// How one setting of one room ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyOutcome {
    /// Written: the room held `from` before.
    Applied { from: Value },
    /// The room held the value already.
    Unchanged,
    /// The room's driver or firmware has no such setting: why.
    Unsupported(String),
    /// The room refused the value (its own message), or roomlink refused to send it (a value
    /// an undo would restore that is outside the key's space).
    Refused(String),
    /// The room would not say what it held, so nothing was written.
    Unreadable(String),
    /// An undo left it: the room holds something other than what the undone job wrote.
    Skipped(String),
}

impl KeyOutcome {
    pub fn name(&self) -> &'static str {
        match self {
            KeyOutcome::Applied { .. } => "applied",
            KeyOutcome::Unchanged => "unchanged",
            KeyOutcome::Unsupported(_) => "unsupported",
            KeyOutcome::Refused(_) => "refused",
            KeyOutcome::Unreadable(_) => "unreadable",
            KeyOutcome::Skipped(_) => "skipped",
        }
    }

    /// The reason an outcome carries, if any.
    pub fn reason(&self) -> Option<&str> {
        match self {
            KeyOutcome::Unsupported(r)
            | KeyOutcome::Refused(r)
            | KeyOutcome::Unreadable(r)
            | KeyOutcome::Skipped(r) => Some(r),
            KeyOutcome::Applied { .. } | KeyOutcome::Unchanged => None,
        }
    }
}

/// How one room of a job ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RoomOutcome {
    /// The room was read and written: per key of the job's steps.
    Written(BTreeMap<SettingKey, KeyOutcome>),
    /// The room could not be read, or a write failed as a whole (the catalog error's kind and
    /// message). `previous`: what it held before, when it was read: a write that failed
    /// part-way may have set some keys, so an undo restores them where the room holds what
    /// was written.
    Unreachable {
        kind: ErrorKind,
        message: String,
        previous: BTreeMap<SettingKey, Value>,
    },
}

impl RoomOutcome {
    /// The keys this room may hold the job's values for, with what they replaced.
    pub fn replaced(&self) -> BTreeMap<SettingKey, Value> {
        match self {
            RoomOutcome::Written(keys) => keys
                .iter()
                .filter_map(|(key, outcome)| match outcome {
                    KeyOutcome::Applied { from } => Some((*key, from.clone())),
                    _ => None,
                })
                .collect(),
            RoomOutcome::Unreachable { previous, .. } => previous.clone(),
        }
    }
}

/// A room that could not be read.
pub fn unreachable(error: &Error) -> RoomOutcome {
    RoomOutcome::Unreachable {
        kind: error.kind(),
        message: error.message().to_owned(),
        previous: BTreeMap::new(),
    }
}

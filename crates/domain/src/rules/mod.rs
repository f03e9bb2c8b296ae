//! The rules of the contract as pure functions: what a write does to an endpoint.
//!
//! - [`put`]: insert (POST) and replacement (PUT): omitted or null fields become null.
//! - [`patch`]: the `modifiedFields` merge: omitted fields stay as they are.
//! - [`csv`]: the bulk-load plan (create, update or skip per row, with a reason for each
//!   skip) and the export it reads back unchanged.
//! - [`limit`]: the enterprise's endpoint limit, for every writer.
//! - [`dial_style`]: an ANNEX_O endpoint's dial style cannot change.
//! - [`dtmf`], [`join`]: parameters of control commands; [`dial_plan`]: what a room system
//!   dials to join (used by the listener).
//!
//! Each returns an [`EndpointDraft`]: the new profile and what happens to the password. The
//! use-case services seal the password and hand the result to storage.

pub mod csv;
pub mod dial_plan;
pub mod dial_style;
pub mod dtmf;
pub mod join;
pub mod limit;
pub mod patch;
pub mod put;

use crate::endpoint::EndpointProfile;
use crate::error::Error;
use crate::secret::{Secret, SecretChange};
use serde_json::Value;

/// The outcome of a write rule, before the password is sealed.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointDraft {
    pub profile: EndpointProfile,
    pub password: SecretChange,
}

/// Endpoint passwords: at most 1024 characters. An empty string means "no password".
pub const PASSWORD_MAX_CHARS: usize = 1024;

/// Reads the write-only `password` property of a JSON body: null or "" clears it.
pub(crate) fn password_from_json(value: &Value) -> Result<SecretChange, Error> {
    match value {
        Value::Null => Ok(SecretChange::Clear),
        Value::String(s) if s.is_empty() => Ok(SecretChange::Clear),
        Value::String(s) => password_from_text(s).map(SecretChange::Set),
        _ => Err(Error::json_mapping("password", "expected a string")),
    }
}

/// Checks a non-empty password. The message never contains the password itself.
pub(crate) fn password_from_text(text: &str) -> Result<Secret, Error> {
    if text.chars().count() > PASSWORD_MAX_CHARS {
        return Err(Error::invalid(format!(
            "password: at most {PASSWORD_MAX_CHARS} characters are allowed"
        )));
    }
    Ok(Secret::new(text))
}

//! A stored template (`/api/templates`) and the rules of its bodies: create and replace take
//! `{name, description?, settings}`, patch takes a JSON merge patch (RFC 7396) of the same
//! fields whose `settings` merges key by key. Every refusal is the catalog's `Invalid`, as the
//! endpoint rules refuse an unknown field: a typo must not be silently ignored.

use super::key::SettingKey;
use super::settings::TemplateSettings;
use crate::enums::shorten;
use crate::error::{Error, Result};
use crate::ids::{EnterpriseId, TemplateId};
use serde::Serialize;
use serde_json::{Map, Value};

/// The longest name, in characters.
pub const MAX_NAME_CHARS: usize = 100;
/// The longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 500;
/// How many templates an enterprise may hold: enough for a fleet's variants, few enough that
/// the list is one answer without pages (as webhook subscriptions are).
pub const MAX_TEMPLATES: usize = 200;

/// The fields a body may carry.
const FIELDS: [&str; 3] = ["name", "description", "settings"];

/// One enterprise's configuration template.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Template {
    pub id: TemplateId,
    #[serde(skip)]
    pub enterprise_id: EnterpriseId,
    pub name: String,
    pub description: Option<String>,
    pub settings: TemplateSettings,
    pub created_at: i64,
    pub updated_at: i64,
}

/// The form in which names are compared: two names equal in it collide (`Conflict`). Kept as
/// its own column by the stores, so every backend compares alike (SQLite's `lower()` folds
/// ASCII only).
pub fn name_key(name: &str) -> String {
    name.to_lowercase()
}

impl Template {
    pub fn new(
        id: TemplateId,
        enterprise_id: EnterpriseId,
        draft: TemplateDraft,
        now: i64,
    ) -> Self {
        Template {
            id,
            enterprise_id,
            name: draft.name,
            description: draft.description,
            settings: draft.settings,
            created_at: now,
            updated_at: now,
        }
    }

    /// This template with `draft`'s fields, changed at `now` (id and creation kept).
    pub fn replaced(&self, draft: TemplateDraft, now: i64) -> Self {
        Template {
            name: draft.name,
            description: draft.description,
            settings: draft.settings,
            updated_at: now,
            ..self.clone()
        }
    }

    pub fn name_key(&self) -> String {
        name_key(&self.name)
    }

    /// The draft that leaves it as it is.
    fn draft(&self) -> TemplateDraft {
        TemplateDraft {
            name: self.name.clone(),
            description: self.description.clone(),
            settings: self.settings.clone(),
        }
    }
}

/// A template's caller-given fields, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateDraft {
    pub name: String,
    pub description: Option<String>,
    pub settings: TemplateSettings,
}

impl TemplateDraft {
    /// A create (POST) or replace (PUT) body: `name` and `settings` required, `description`
    /// omitted or null is none.
    pub fn from_body(body: &Map<String, Value>) -> Result<Self> {
        refuse_unknown_fields(body)?;
        let name = match body.get("name") {
            Some(value) => name_of(value)?,
            None => return Err(Error::invalid("name: a string is required")),
        };
        let settings = match body.get("settings") {
            Some(value) => TemplateSettings::from_json(value)?,
            None => {
                return Err(Error::invalid(
                    "settings: an object mapping setting keys to values is required",
                ));
            }
        };
        Ok(TemplateDraft {
            name,
            description: description_of(body.get("description").unwrap_or(&Value::Null))?,
            settings,
        })
    }

    /// `current` with a merge patch applied: a field present replaces (`description: null`
    /// clears it), a field absent stays; `settings` merges key by key, `null` removing a key.
    /// The merged settings are checked as a whole, as a replace's are.
    pub fn patched(current: &Template, patch: &Map<String, Value>) -> Result<Self> {
        refuse_unknown_fields(patch)?;
        let mut draft = current.draft();
        if let Some(value) = patch.get("name") {
            draft.name = name_of(value)?;
        }
        if let Some(value) = patch.get("description") {
            draft.description = description_of(value)?;
        }
        match patch.get("settings") {
            None => {}
            Some(Value::Object(changes)) => {
                let Value::Object(mut merged) = current.settings.to_json() else {
                    return Err(Error::internal("template settings are not an object"));
                };
                for (name, value) in changes {
                    // A known key's null removes it; any other pair goes to the settings'
                    // own check, which names an unknown key or a value outside its space.
                    if value.is_null() && SettingKey::parse(name).is_some() {
                        merged.remove(name);
                    } else {
                        merged.insert(name.clone(), value.clone());
                    }
                }
                draft.settings = TemplateSettings::from_json(&Value::Object(merged))?;
            }
            Some(_) => {
                return Err(Error::invalid(
                    "settings: a merge patch of settings must be an object (a key's null \
                     removes that key)",
                ));
            }
        }
        Ok(draft)
    }

    /// What differs from `before` (none: a new template), for the audit trail: `name`,
    /// `description` and `settings.KEY` of each key set, changed or removed. Names only: values
    /// stay out of the trail.
    pub fn changes(&self, before: Option<&Template>) -> Vec<String> {
        let mut changed = Vec::new();
        if before.is_none_or(|b| b.name != self.name) {
            changed.push("name".to_owned());
        }
        let old_description = before.and_then(|b| b.description.as_ref());
        if old_description != self.description.as_ref() {
            changed.push("description".to_owned());
        }
        for &key in SettingKey::ALL {
            let old = before.and_then(|b| b.settings.get(key));
            if old != self.settings.get(key) {
                changed.push(format!("settings.{key}"));
            }
        }
        changed
    }
}

fn refuse_unknown_fields(body: &Map<String, Value>) -> Result<()> {
    match body.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        Some(other) => Err(Error::invalid(format!(
            "{}: is not a field of a template ({})",
            shorten(other),
            FIELDS.join(", ")
        ))),
        None => Ok(()),
    }
}

/// A name: a string, trimmed, 1 to [`MAX_NAME_CHARS`] characters without control characters.
fn name_of(value: &Value) -> Result<String> {
    let Value::String(name) = value else {
        return Err(Error::invalid("name: a string is required"));
    };
    let name = name.trim();
    let length = name.chars().count();
    if length == 0 || length > MAX_NAME_CHARS {
        return Err(Error::invalid(format!(
            "name: must be 1 to {MAX_NAME_CHARS} characters (spaces around it do not count)"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(Error::invalid("name: must not hold control characters"));
    }
    Ok(name.to_owned())
}

/// A description: null, or a string trimmed to at most [`MAX_DESCRIPTION_CHARS`] characters
/// (an empty one is none).
fn description_of(value: &Value) -> Result<Option<String>> {
    let description = match value {
        Value::Null => return Ok(None),
        Value::String(d) => d.trim(),
        _ => return Err(Error::invalid("description: must be a string or null")),
    };
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(Error::invalid(format!(
            "description: is longer than {MAX_DESCRIPTION_CHARS} characters"
        )));
    }
    Ok((!description.is_empty()).then(|| description.to_owned()))
}

#[cfg(test)]
#[path = "record_tests.rs"]
mod tests;

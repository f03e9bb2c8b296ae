//! The stored forms of a job room's steps and state: JSON texts the stores keep as they are,
//! so a store never interprets a job. Reading one back that is not in this form is the
//! store's `corrupt` error, reported by the caller with the job's id.

use super::job::{RoomState, Step, Steps};
use super::key::SettingKey;
use super::room_outcome::{KeyOutcome, RoomOutcome};
use crate::error::ErrorKind;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// `{"key": {"to": v, "onlyFrom": w?}}`.
pub fn steps_to_json(steps: &Steps) -> Value {
    let map: Map<String, Value> = steps
        .iter()
        .map(|(key, step)| {
            let mut out = json!({"to": step.to});
            if let Some(from) = &step.only_from {
                out["onlyFrom"] = from.clone();
            }
            (key.name().to_owned(), out)
        })
        .collect();
    Value::Object(map)
}

pub fn steps_from_json(value: &Value) -> Result<Steps, String> {
    object(value, "steps")?
        .iter()
        .map(|(name, step)| {
            let key = setting_key(name)?;
            let to = step.get("to").ok_or("a step without 'to'")?.clone();
            let only_from = step.get("onlyFrom").cloned();
            Ok((key, Step { to, only_from }))
        })
        .collect()
}

fn values_to_json(values: &BTreeMap<SettingKey, Value>) -> Value {
    Value::Object(
        values
            .iter()
            .map(|(k, v)| (k.name().to_owned(), v.clone()))
            .collect(),
    )
}

fn values_from_json(value: Option<&Value>) -> Result<BTreeMap<SettingKey, Value>, String> {
    let Some(value) = value else {
        return Ok(BTreeMap::new());
    };
    object(value, "previous")?
        .iter()
        .map(|(name, v)| Ok((setting_key(name)?, v.clone())))
        .collect()
}

/// One key's outcome: `{"outcome": name, "from"?: v, "reason"?: text}`.
pub fn key_outcome_to_json(outcome: &KeyOutcome) -> Value {
    let mut out = json!({"outcome": outcome.name()});
    if let KeyOutcome::Applied { from } = outcome {
        out["from"] = from.clone();
    }
    if let Some(reason) = outcome.reason() {
        out["reason"] = json!(reason);
    }
    out
}

fn key_outcome_from_json(value: &Value) -> Result<KeyOutcome, String> {
    let reason = || {
        value
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| "an outcome without its reason".to_owned())
    };
    Ok(match value.get("outcome").and_then(Value::as_str) {
        Some("applied") => KeyOutcome::Applied {
            from: value.get("from").cloned().unwrap_or(Value::Null),
        },
        Some("unchanged") => KeyOutcome::Unchanged,
        Some("unsupported") => KeyOutcome::Unsupported(reason()?),
        Some("refused") => KeyOutcome::Refused(reason()?),
        Some("unreadable") => KeyOutcome::Unreadable(reason()?),
        Some("skipped") => KeyOutcome::Skipped(reason()?),
        other => return Err(format!("unknown outcome {other:?}")),
    })
}

/// `{"state": "pending"}`, `{"state": "writing", "previous": {...}}`, `{"state": "done",
/// "settings": {key: outcome}}` or `{"state": "done", "unreachable": {"code", "message"},
/// "previous": {...}}`.
pub fn state_to_json(state: &RoomState) -> Value {
    match state {
        RoomState::Pending => json!({"state": "pending"}),
        RoomState::Writing { previous } => {
            json!({"state": "writing", "previous": values_to_json(previous)})
        }
        RoomState::Done(RoomOutcome::Written(keys)) => {
            let settings: Map<String, Value> = keys
                .iter()
                .map(|(k, o)| (k.name().to_owned(), key_outcome_to_json(o)))
                .collect();
            json!({"state": "done", "settings": settings})
        }
        RoomState::Done(RoomOutcome::Unreachable {
            kind,
            message,
            previous,
        }) => json!({
            "state": "done",
            "unreachable": {"code": kind.name(), "message": message},
            "previous": values_to_json(previous),
        }),
    }
}

pub fn state_from_json(value: &Value) -> Result<RoomState, String> {
    match value.get("state").and_then(Value::as_str) {
        Some("pending") => Ok(RoomState::Pending),
        Some("writing") => Ok(RoomState::Writing {
            previous: values_from_json(value.get("previous"))?,
        }),
        Some("done") => {
            if let Some(unreachable) = value.get("unreachable") {
                let code = unreachable.get("code").and_then(Value::as_str);
                let kind = code
                    .and_then(ErrorKind::parse)
                    .ok_or_else(|| format!("unknown error code {code:?}"))?;
                let message = unreachable.get("message").and_then(Value::as_str);
                return Ok(RoomState::Done(RoomOutcome::Unreachable {
                    kind,
                    message: message.unwrap_or_default().to_owned(),
                    previous: values_from_json(value.get("previous"))?,
                }));
            }
            let settings = object(value.get("settings").unwrap_or(&Value::Null), "settings")?;
            let keys = settings
                .iter()
                .map(|(name, o)| Ok((setting_key(name)?, key_outcome_from_json(o)?)))
                .collect::<Result<_, String>>()?;
            Ok(RoomState::Done(RoomOutcome::Written(keys)))
        }
        other => Err(format!("unknown room state {other:?}")),
    }
}

fn object<'a>(value: &'a Value, what: &str) -> Result<&'a Map<String, Value>, String> {
    value
        .as_object()
        .ok_or_else(|| format!("{what} is not an object"))
}

fn setting_key(name: &str) -> Result<SettingKey, String> {
    SettingKey::parse(name).ok_or_else(|| format!("unknown setting key {name:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_reads_back_as_it_was_written() {
        let previous = BTreeMap::from([(SettingKey::TimeZone, json!("Etc/UTC"))]);
        let states = [
            RoomState::Pending,
            RoomState::Writing {
                previous: previous.clone(),
            },
            RoomState::Done(RoomOutcome::Written(BTreeMap::from([
                (
                    SettingKey::TimeZone,
                    KeyOutcome::Applied {
                        from: json!("Etc/UTC"),
                    },
                ),
                (SettingKey::SystemName, KeyOutcome::Unchanged),
                (
                    SettingKey::ProximityMode,
                    KeyOutcome::Unsupported("Poly".into()),
                ),
                (SettingKey::AutoAnswerMode, KeyOutcome::Refused("no".into())),
                (
                    SettingKey::AutoAnswerMute,
                    KeyOutcome::Unreadable("role".into()),
                ),
                (
                    SettingKey::WelcomeMessage,
                    KeyOutcome::Skipped("since".into()),
                ),
            ]))),
            RoomState::Done(RoomOutcome::Unreachable {
                kind: ErrorKind::ListenerOffline,
                message: "offline".into(),
                previous,
            }),
        ];
        for state in states {
            let text = state_to_json(&state).to_string();
            let back = state_from_json(&serde_json::from_str(&text).unwrap()).unwrap();
            assert_eq!(back, state, "{text}");
        }
        let steps = Steps::from([(
            SettingKey::TimeZone,
            Step {
                to: json!("Etc/UTC"),
                only_from: Some(json!("Europe/Oslo")),
            },
        )]);
        assert_eq!(steps_from_json(&steps_to_json(&steps)).unwrap(), steps);
        assert!(state_from_json(&json!({"state": "lost"})).is_err());
        assert!(steps_from_json(&json!({"colour": {"to": 1}})).is_err());
    }
}

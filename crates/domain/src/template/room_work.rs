//! One room of a template job: what to write after reading it, and how each key ended
//! ([`super::room_outcome`]).

use super::job::{JobRoom, RoomState};
use super::key::SettingKey;
use super::outcome::{SettingOutcome, SettingOutcomes, WriteMode};
use super::room_outcome::{KeyOutcome, RoomOutcome};
use super::settings::TemplateSettings;
use crate::error::Error;
use serde_json::Value;
use std::collections::BTreeMap;

/// What a room needs, decided from reading it: what it held (to save before any write), the
/// settings to write, and the keys settled without writing.
#[derive(Debug, Clone, PartialEq)]
pub struct RoomDecision {
    pub previous: BTreeMap<SettingKey, Value>,
    pub writes: TemplateSettings,
    /// Restore for an undo's values, else apply.
    pub mode: WriteMode,
    pub settled: BTreeMap<SettingKey, KeyOutcome>,
}

impl JobRoom {
    /// Decides what to write from `read` (the room's answer for the steps' keys). A room
    /// resumed after a restart (`Writing`) keeps the values saved before the first attempt:
    /// a key found holding the job's value then was applied by it, from the saved value.
    pub fn decide(&self, read: &SettingOutcomes) -> RoomDecision {
        let saved = match &self.state {
            RoomState::Writing { previous } => Some(previous),
            _ => None,
        };
        let mode = if self.steps.values().any(|s| s.only_from.is_some()) {
            WriteMode::Restore
        } else {
            WriteMode::Apply
        };
        let mut previous = BTreeMap::new();
        let mut writes = Vec::new();
        let mut settled = BTreeMap::new();
        for (key, step) in &self.steps {
            let current = match read.get(key) {
                Some(SettingOutcome::Value(v)) => v,
                Some(SettingOutcome::Unsupported(why)) => {
                    settled.insert(*key, KeyOutcome::Unsupported(why.clone()));
                    continue;
                }
                Some(SettingOutcome::Refused(message)) => {
                    settled.insert(*key, KeyOutcome::Unreadable(message.clone()));
                    continue;
                }
                None => {
                    let why = "the room's listener did not answer it".to_owned();
                    settled.insert(*key, KeyOutcome::Unreadable(why));
                    continue;
                }
            };
            let before = saved.and_then(|s| s.get(key)).unwrap_or(current).clone();
            previous.insert(*key, before.clone());
            if *current == step.to {
                let outcome = if before == step.to {
                    KeyOutcome::Unchanged
                } else {
                    KeyOutcome::Applied { from: before }
                };
                settled.insert(*key, outcome);
                continue;
            }
            if let Some(wrote) = &step.only_from
                && current != wrote
            {
                let why = format!(
                    "changed on the room since the undone job wrote {wrote}: it holds {current}"
                );
                settled.insert(*key, KeyOutcome::Skipped(why));
                continue;
            }
            let checked = match mode {
                WriteMode::Apply => key.space().parse(key.name(), &step.to),
                WriteMode::Restore => key.space().parse_restore(key.name(), &step.to),
            };
            match checked {
                Ok(value) => writes.push((*key, value)),
                Err(e) => {
                    let why = format!("not sent: {}", e.message());
                    settled.insert(*key, KeyOutcome::Refused(why));
                }
            }
        }
        RoomDecision {
            previous,
            writes: TemplateSettings::from_values(writes),
            mode,
            settled,
        }
    }
}

impl RoomDecision {
    /// The room's outcome once `written` (the write's answer; empty when nothing was written)
    /// is known.
    pub fn finish(self, written: &SettingOutcomes) -> RoomOutcome {
        let mut keys = self.settled;
        for (key, _) in self.writes.iter() {
            let outcome = match written.get(&key) {
                Some(SettingOutcome::Value(_)) => KeyOutcome::Applied {
                    from: self.previous.get(&key).cloned().unwrap_or(Value::Null),
                },
                Some(SettingOutcome::Unsupported(why)) => KeyOutcome::Unsupported(why.clone()),
                Some(SettingOutcome::Refused(message)) => KeyOutcome::Refused(message.clone()),
                None => KeyOutcome::Refused("the room's listener did not answer it".into()),
            };
            keys.insert(key, outcome);
        }
        RoomOutcome::Written(keys)
    }

    /// The room's outcome when the write failed as a whole.
    pub fn failed(self, error: &Error) -> RoomOutcome {
        RoomOutcome::Unreachable {
            kind: error.kind(),
            message: error.message().to_owned(),
            previous: self
                .previous
                .into_iter()
                .filter(|(key, _)| self.writes.get(*key).is_some())
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::job::Step;
    use super::super::room_outcome::unreachable;
    use super::*;
    use crate::error::ErrorKind;
    use crate::ids::EndpointId;
    use serde_json::json;

    fn room(steps: &[(SettingKey, Value, Option<Value>)], state: RoomState) -> JobRoom {
        JobRoom {
            endpoint_id: EndpointId::from_trusted("a".into()),
            name: "A".into(),
            steps: steps
                .iter()
                .map(|(k, to, only)| {
                    let step = Step {
                        to: to.clone(),
                        only_from: only.clone(),
                    };
                    (*k, step)
                })
                .collect(),
            state,
        }
    }

    fn read(values: &[(SettingKey, SettingOutcome)]) -> SettingOutcomes {
        values.iter().cloned().collect()
    }

    const TZ: SettingKey = SettingKey::TimeZone;
    const DELAY: SettingKey = SettingKey::StandbyDelayMinutes;
    const NAME: SettingKey = SettingKey::SystemName;

    #[test]
    fn only_what_differs_is_written_and_each_key_ends_once() {
        let room = room(
            &[
                (TZ, json!("Europe/Oslo"), None),
                (DELAY, json!(15), None),
                (NAME, json!("Oslo"), None),
                (SettingKey::ProximityMode, json!("off"), None),
            ],
            RoomState::Pending,
        );
        let decision = room.decide(&read(&[
            (TZ, SettingOutcome::Value(json!("Etc/UTC"))),
            (DELAY, SettingOutcome::Value(json!(15))),
            (NAME, SettingOutcome::Value(json!("Room"))),
            (
                SettingKey::ProximityMode,
                SettingOutcome::Unsupported("Poly".into()),
            ),
        ]));
        assert_eq!(
            decision.writes.to_json(),
            json!({"time_zone": "Europe/Oslo", "system.name": "Oslo"})
        );
        assert_eq!(decision.previous[&TZ], json!("Etc/UTC"));
        let outcome = decision.finish(&read(&[
            (TZ, SettingOutcome::Value(json!("Europe/Oslo"))),
            (NAME, SettingOutcome::Refused("Permission denied".into())),
        ]));
        let RoomOutcome::Written(keys) = &outcome else {
            panic!("not written")
        };
        assert_eq!(
            keys[&TZ],
            KeyOutcome::Applied {
                from: json!("Etc/UTC")
            }
        );
        assert_eq!(keys[&DELAY], KeyOutcome::Unchanged);
        assert_eq!(keys[&NAME], KeyOutcome::Refused("Permission denied".into()));
        assert_eq!(keys[&SettingKey::ProximityMode].name(), "unsupported");
        assert_eq!(outcome.replaced(), BTreeMap::from([(TZ, json!("Etc/UTC"))]));
    }

    #[test]
    fn a_resumed_room_reports_what_it_wrote_before_the_restart_as_applied() {
        let room = room(
            &[(TZ, json!("Europe/Oslo"), None), (DELAY, json!(15), None)],
            RoomState::Writing {
                previous: BTreeMap::from([(TZ, json!("Etc/UTC")), (DELAY, json!(30))]),
            },
        );
        // The first attempt wrote the time zone, then the process died.
        let decision = room.decide(&read(&[
            (TZ, SettingOutcome::Value(json!("Europe/Oslo"))),
            (DELAY, SettingOutcome::Value(json!(30))),
        ]));
        assert_eq!(
            decision.writes.to_json(),
            json!({"standby.delay_minutes": 15})
        );
        assert_eq!(
            decision.settled[&TZ],
            KeyOutcome::Applied {
                from: json!("Etc/UTC")
            }
        );
        let outcome = decision.finish(&read(&[(DELAY, SettingOutcome::Value(json!(15)))]));
        assert_eq!(
            outcome.replaced(),
            BTreeMap::from([(TZ, json!("Etc/UTC")), (DELAY, json!(30))])
        );
    }

    #[test]
    fn an_undo_restores_values_outside_roomlinks_spaces_but_leaves_what_changed_since() {
        const ANSWER: SettingKey = SettingKey::AutoAnswerMode;
        let room = room(
            &[
                (TZ, json!("Etc/UTC"), Some(json!("Europe/Oslo"))),
                (DELAY, json!(10), Some(json!(15))),
                (NAME, json!("Room"), Some(json!("Oslo"))),
                (ANSWER, json!("donotdisturb"), Some(json!("on"))),
            ],
            RoomState::Pending,
        );
        let decision = room.decide(&read(&[
            (TZ, SettingOutcome::Value(json!("Europe/Oslo"))),
            (DELAY, SettingOutcome::Value(json!(15))),
            (NAME, SettingOutcome::Value(json!("Renamed by hand"))),
            (ANSWER, SettingOutcome::Value(json!("on"))),
        ]));
        assert_eq!(decision.mode, WriteMode::Restore);
        assert_eq!(
            decision.writes.to_json(),
            json!({"time_zone": "Etc/UTC", "standby.delay_minutes": 10}),
            "10 minutes is outside roomlink's standby space, but the room held it"
        );
        let KeyOutcome::Refused(why) = &decision.settled[&ANSWER] else {
            panic!("a literal no driver maps is not sent")
        };
        assert!(why.starts_with("not sent: "), "{why}");
        let KeyOutcome::Skipped(why) = &decision.settled[&NAME] else {
            panic!("a renamed room is left alone")
        };
        assert!(why.contains("\"Renamed by hand\""), "{why}");
    }

    #[test]
    fn a_write_failing_as_a_whole_keeps_what_may_have_been_written_for_an_undo() {
        let room = room(
            &[(TZ, json!("Europe/Oslo"), None), (DELAY, json!(15), None)],
            RoomState::Pending,
        );
        let decision = room.decide(&read(&[
            (TZ, SettingOutcome::Value(json!("Etc/UTC"))),
            (DELAY, SettingOutcome::Value(json!(15))),
        ]));
        let outcome = decision.failed(&Error::new(ErrorKind::CommandTimedOut, "timed out"));
        assert_eq!(
            outcome.replaced(),
            BTreeMap::from([(TZ, json!("Etc/UTC"))]),
            "the unchanged key was never at risk"
        );
        let unread = unreachable(&Error::new(ErrorKind::ListenerOffline, "offline"));
        assert!(unread.replaced().is_empty());
    }
}

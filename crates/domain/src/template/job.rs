//! Applying a template to rooms, and undoing that, as a job (issue #36 item 2).
//!
//! A job is stored with every room it is for; each room moves `Pending` → `Writing` (the values
//! it held before, saved *before* anything is written) → `Done` (each key's outcome). A job
//! resumed after a restart starts each unfinished room again: a room found `Writing` keeps the
//! values saved then, so what the job wrote before the restart is still reported as applied,
//! with the value it replaced, and can be undone. Writing the same value twice is harmless on
//! every driver, so repeating a room is safe.
//!
//! What a job sets on a room is its [`Steps`]: an apply's are the template's settings (copied
//! when the job starts: editing the template later changes no running job); an undo's are the
//! values an apply replaced, each only where the room still holds what the apply wrote (a
//! setting someone changed since is left alone and reported `skipped`).

use super::key::SettingKey;
use super::record::Template;
use super::room_outcome::RoomOutcome;
use crate::error::{Error, ErrorKind, Result};
use crate::ids::{EndpointId, EnterpriseId, JobId, TemplateId};
use serde_json::Value;
use std::collections::BTreeMap;

/// How long a job's claim lasts without news from its runner: each room's outcome renews it.
/// An instance that dies mid-job leaves it to another (or itself, restarted) after this.
pub const JOB_LEASE_MS: i64 = 60_000;

/// How many of an enterprise's jobs the list answers, newest first.
pub const LISTED_JOBS: usize = 50;

/// `Conflict` (entity class `Job`): the enterprise's job `running` has not finished, and one job
/// runs at a time (stores answer it when a second would start).
pub fn still_running(running: &str) -> Error {
    Error::new(
        ErrorKind::Conflict,
        format!("job {running} is still running: wait for it to finish"),
    )
    .with("entityClass", JobId::ENTITY_CLASS)
    .with("name", running)
}

/// `Conflict` (entity class `Job`): job `id` is not running (`state`), so it cannot be cancelled.
pub fn not_running(id: &str, state: JobState) -> Error {
    Error::new(
        ErrorKind::Conflict,
        format!(
            "job {id} is {}: only a running job can be cancelled",
            state.name()
        ),
    )
    .with("entityClass", JobId::ENTITY_CLASS)
    .with("name", id)
}

/// Whether a job applies a template or undoes an apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobKind {
    Apply,
    /// Restores what the apply job `of` replaced.
    Undo {
        of: JobId,
    },
}

impl JobKind {
    pub fn name(&self) -> &'static str {
        match self {
            JobKind::Apply => "apply",
            JobKind::Undo { .. } => "undo",
        }
    }
}

/// Whether a job still has rooms to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobState {
    Running,
    Finished,
    /// Stopped on request before every room was done: the rooms not begun stay `pending`,
    /// one caught writing stays `writing` (what it held is known, so it can be undone).
    Cancelled,
}

impl JobState {
    pub fn name(self) -> &'static str {
        match self {
            JobState::Running => "running",
            JobState::Finished => "finished",
            JobState::Cancelled => "cancelled",
        }
    }

    pub fn parse(name: &str) -> Option<JobState> {
        [JobState::Running, JobState::Finished, JobState::Cancelled]
            .into_iter()
            .find(|s| s.name() == name)
    }
}

/// One setting a job sets on a room: `to`, and for an undo only where the room holds
/// `only_from` (what the undone job wrote).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub to: Value,
    pub only_from: Option<Value>,
}

/// What a job sets on one room, per key.
pub type Steps = BTreeMap<SettingKey, Step>;

/// Where one room of a job is.
#[derive(Debug, Clone, PartialEq)]
pub enum RoomState {
    Pending,
    /// Read, and about to be written: what the room held before, per key the job sets.
    Writing {
        previous: BTreeMap<SettingKey, Value>,
    },
    Done(RoomOutcome),
}

impl RoomState {
    pub fn name(&self) -> &'static str {
        match self {
            RoomState::Pending => "pending",
            RoomState::Writing { .. } => "writing",
            RoomState::Done(_) => "done",
        }
    }
}

/// One room of a job.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRoom {
    pub endpoint_id: EndpointId,
    /// The endpoint's name when the job started, for reports after it is renamed or deleted.
    pub name: String,
    pub steps: Steps,
    pub state: RoomState,
}

/// A job with every room, in the order they are done.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateJob {
    pub id: JobId,
    pub enterprise_id: EnterpriseId,
    pub template_id: TemplateId,
    /// The template's name when the job started.
    pub template_name: String,
    pub kind: JobKind,
    pub state: JobState,
    /// Who started it, as the audit trail names actors.
    pub created_by: String,
    pub created_at: i64,
    pub finished_at: Option<i64>,
    pub rooms: Vec<JobRoom>,
}

impl TemplateJob {
    /// A job writing `template`'s settings (as they are now) on `rooms` (endpoint id, name).
    pub fn apply(
        id: JobId,
        template: &Template,
        rooms: Vec<(EndpointId, String)>,
        created_by: String,
        now: i64,
    ) -> TemplateJob {
        let steps: Steps = template
            .settings
            .iter()
            .map(|(key, value)| {
                let step = Step {
                    to: value.to_json(),
                    only_from: None,
                };
                (key, step)
            })
            .collect();
        TemplateJob {
            id,
            enterprise_id: template.enterprise_id.clone(),
            template_id: template.id.clone(),
            template_name: template.name.clone(),
            kind: JobKind::Apply,
            state: JobState::Running,
            created_by,
            created_at: now,
            finished_at: None,
            rooms: rooms
                .into_iter()
                .map(|(endpoint_id, name)| JobRoom {
                    endpoint_id,
                    name,
                    steps: steps.clone(),
                    state: RoomState::Pending,
                })
                .collect(),
        }
    }

    /// A job restoring what the finished apply job `of` replaced: per room, each key it
    /// applied, and on a room that failed part-way each key it may have written. `Conflict`
    /// (entity class `Job`) when `of` is not a finished apply or replaced nothing.
    pub fn undo(id: JobId, of: &TemplateJob, created_by: String, now: i64) -> Result<TemplateJob> {
        let refuse = |why: String| {
            Error::new(ErrorKind::Conflict, why)
                .with("entityClass", JobId::ENTITY_CLASS)
                .with("name", of.id.as_str())
        };
        if of.kind != JobKind::Apply {
            return Err(refuse(format!(
                "job {} is an undo: apply the template again instead",
                of.id
            )));
        }
        if of.state == JobState::Running {
            return Err(refuse(format!(
                "job {} is still running: undo it when it has finished (or cancel it)",
                of.id
            )));
        }
        let rooms: Vec<JobRoom> = of
            .rooms
            .iter()
            .filter_map(|room| {
                // A room a cancelled job caught writing may hold any of what it wrote: each
                // setting is restored where it does, as for a room done.
                let replaced = match &room.state {
                    RoomState::Done(outcome) => outcome.replaced(),
                    RoomState::Writing { previous } => previous.clone(),
                    RoomState::Pending => return None,
                };
                let steps: Steps = replaced
                    .into_iter()
                    .filter_map(|(key, from)| {
                        let wrote = room.steps.get(&key)?;
                        let step = Step {
                            to: from,
                            only_from: Some(wrote.to.clone()),
                        };
                        Some((key, step))
                    })
                    .collect();
                (!steps.is_empty()).then(|| JobRoom {
                    endpoint_id: room.endpoint_id.clone(),
                    name: room.name.clone(),
                    steps,
                    state: RoomState::Pending,
                })
            })
            .collect();
        if rooms.is_empty() {
            return Err(refuse(format!(
                "job {} changed nothing on any room: there is nothing to undo",
                of.id
            )));
        }
        Ok(TemplateJob {
            id,
            enterprise_id: of.enterprise_id.clone(),
            template_id: of.template_id.clone(),
            template_name: of.template_name.clone(),
            kind: JobKind::Undo { of: of.id.clone() },
            state: JobState::Running,
            created_by,
            created_at: now,
            finished_at: None,
            rooms,
        })
    }

    /// Positions of the rooms still to do, in order.
    pub fn unfinished_rooms(&self) -> Vec<usize> {
        self.rooms
            .iter()
            .enumerate()
            .filter(|(_, r)| !matches!(r.state, RoomState::Done(_)))
            .map(|(i, _)| i)
            .collect()
    }
}

/// Counts over a job's rooms and keys, for progress bars and summary lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobProgress {
    pub rooms: usize,
    pub done: usize,
    pub unreachable: usize,
    /// Keys over the finished rooms, by outcome.
    pub applied: usize,
    pub unchanged: usize,
    pub unsupported: usize,
    pub refused: usize,
    pub unreadable: usize,
    pub skipped: usize,
}

impl JobProgress {
    pub fn of(job: &TemplateJob) -> JobProgress {
        use super::room_outcome::KeyOutcome as K;
        let mut p = JobProgress {
            rooms: job.rooms.len(),
            ..JobProgress::default()
        };
        for room in &job.rooms {
            let RoomState::Done(outcome) = &room.state else {
                continue;
            };
            p.done += 1;
            match outcome {
                RoomOutcome::Unreachable { .. } => p.unreachable += 1,
                RoomOutcome::Written(keys) => {
                    for key in keys.values() {
                        *match key {
                            K::Applied { .. } => &mut p.applied,
                            K::Unchanged => &mut p.unchanged,
                            K::Unsupported(_) => &mut p.unsupported,
                            K::Refused(_) => &mut p.refused,
                            K::Unreadable(_) => &mut p.unreadable,
                            K::Skipped(_) => &mut p.skipped,
                        } += 1;
                    }
                }
            }
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::super::room_outcome::KeyOutcome;
    use super::*;
    use crate::template::TemplateSettings;
    use serde_json::json;

    pub(crate) fn template() -> Template {
        Template {
            id: TemplateId::from_trusted("t1".into()),
            enterprise_id: EnterpriseId::from_trusted("e1".into()),
            name: "Oslo".into(),
            description: None,
            settings: TemplateSettings::from_json(
                &json!({"time_zone": "Europe/Oslo", "standby.delay_minutes": 15}),
            )
            .unwrap(),
            created_at: 1,
            updated_at: 1,
        }
    }

    fn rooms() -> Vec<(EndpointId, String)> {
        ["a", "b", "c"]
            .into_iter()
            .map(|n| (EndpointId::from_trusted(n.into()), n.to_uppercase()))
            .collect()
    }

    #[test]
    fn an_apply_sets_the_templates_settings_on_every_room() {
        let job = TemplateJob::apply(
            JobId::from_trusted("j1".into()),
            &template(),
            rooms(),
            "admin".into(),
            5,
        );
        assert_eq!(job.state, JobState::Running);
        assert_eq!(job.unfinished_rooms(), [0, 1, 2]);
        let steps = &job.rooms[1].steps;
        assert_eq!(steps[&SettingKey::TimeZone].to, json!("Europe/Oslo"));
        assert_eq!(steps[&SettingKey::StandbyDelayMinutes].only_from, None);
        assert_eq!(JobProgress::of(&job).done, 0);
    }

    #[test]
    fn an_undo_restores_what_was_replaced_where_the_room_still_holds_what_was_written() {
        let mut job = TemplateJob::apply(
            JobId::from_trusted("j1".into()),
            &template(),
            rooms(),
            "admin".into(),
            5,
        );
        let undo_early = TemplateJob::undo(JobId::from_trusted("u0".into()), &job, "x".into(), 6);
        assert!(
            undo_early
                .unwrap_err()
                .message()
                .contains("is still running")
        );
        job.rooms[0].state = RoomState::Done(RoomOutcome::Written(BTreeMap::from([
            (
                SettingKey::TimeZone,
                KeyOutcome::Applied {
                    from: json!("Etc/UTC"),
                },
            ),
            (SettingKey::StandbyDelayMinutes, KeyOutcome::Unchanged),
        ])));
        job.rooms[1].state = RoomState::Done(RoomOutcome::Unreachable {
            kind: ErrorKind::ExternalSystemUnreachable,
            message: "gone".into(),
            previous: BTreeMap::from([(SettingKey::StandbyDelayMinutes, json!(10))]),
        });
        job.rooms[2].state = RoomState::Done(RoomOutcome::Written(BTreeMap::from([(
            SettingKey::TimeZone,
            KeyOutcome::Refused("no".into()),
        )])));
        job.state = JobState::Finished;
        let undo =
            TemplateJob::undo(JobId::from_trusted("u1".into()), &job, "admin".into(), 9).unwrap();
        assert_eq!(undo.kind, JobKind::Undo { of: job.id.clone() });
        assert_eq!(undo.rooms.len(), 2, "the refused room has nothing to undo");
        assert_eq!(
            undo.rooms[0].steps,
            Steps::from([(
                SettingKey::TimeZone,
                Step {
                    to: json!("Etc/UTC"),
                    only_from: Some(json!("Europe/Oslo"))
                }
            )])
        );
        assert_eq!(
            undo.rooms[1].steps[&SettingKey::StandbyDelayMinutes],
            Step {
                to: json!(10),
                only_from: Some(json!(15))
            }
        );
        let again = TemplateJob::undo(JobId::from_trusted("u2".into()), &undo, "x".into(), 9);
        assert!(again.unwrap_err().message().contains("is an undo"));
    }

    #[test]
    fn a_cancelled_job_is_undone_where_it_wrote_or_was_writing() {
        let mut job = TemplateJob::apply(
            JobId::from_trusted("j1".into()),
            &template(),
            rooms(),
            "admin".into(),
            5,
        );
        job.rooms[0].state = RoomState::Writing {
            previous: BTreeMap::from([(SettingKey::TimeZone, json!("Etc/UTC"))]),
        };
        job.state = JobState::Cancelled;
        let undo =
            TemplateJob::undo(JobId::from_trusted("u1".into()), &job, "admin".into(), 9).unwrap();
        assert_eq!(
            undo.rooms.len(),
            1,
            "rooms never begun have nothing to undo"
        );
        assert_eq!(
            undo.rooms[0].steps[&SettingKey::TimeZone],
            Step {
                to: json!("Etc/UTC"),
                only_from: Some(json!("Europe/Oslo"))
            }
        );
        assert_eq!(JobState::parse("cancelled"), Some(JobState::Cancelled));
        let e = not_running("j1", JobState::Cancelled);
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert!(e.message().contains("is cancelled"), "{}", e.message());
    }

    #[test]
    fn a_job_that_replaced_nothing_has_nothing_to_undo() {
        let mut job = TemplateJob::apply(
            JobId::from_trusted("j1".into()),
            &template(),
            rooms(),
            "admin".into(),
            5,
        );
        for room in &mut job.rooms {
            room.state = RoomState::Done(RoomOutcome::Written(BTreeMap::from([(
                SettingKey::TimeZone,
                KeyOutcome::Unchanged,
            )])));
        }
        job.state = JobState::Finished;
        let e =
            TemplateJob::undo(JobId::from_trusted("u".into()), &job, "x".into(), 9).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Conflict);
        assert_eq!(e.details()["entityClass"], "Job");
        let p = JobProgress::of(&job);
        assert_eq!((p.done, p.unchanged, p.applied), (3, 3, 0));
    }
}

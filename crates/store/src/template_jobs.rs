//! TemplateJobStore: template jobs and their rooms. A room's steps and state are kept as the
//! JSON texts of `roomlink_domain::template::job_json`, read back only to rebuild the job.
//! One running job per enterprise is held by the partial unique index
//! `template_jobs_one_running`, so two instances starting one at once cannot both succeed.
//! Claims are conditional UPDATEs: whichever instance's UPDATE changes the row holds the job.

use crate::DbStore;
use crate::dialect::Dialect;
use crate::error::corrupt;
use crate::schema::{template_job_rooms as r, template_jobs as j};
use async_trait::async_trait;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Integer, Nullable, Text};
use diesel_async::RunQueryDsl;
use roomlink_domain::Result;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::error::Error;
use roomlink_domain::ids::{EndpointId, EnterpriseId, JobId, TemplateId};
use roomlink_domain::ports::TemplateJobStore;
use roomlink_domain::template::job::{
    JobKind, JobRoom, JobState, RoomState, TemplateJob, still_running,
};
use roomlink_domain::template::job_json::{
    state_from_json, state_to_json, steps_from_json, steps_to_json,
};
use std::collections::HashMap;

/// Rooms per INSERT: 6 binds each stays far below SQLite's bind limit.
const ROOMS_PER_INSERT: usize = 100;

const RUNNING: &str = "running";

type JobRow = (
    String,
    String,
    String,
    String,
    String,
    Option<String>,
    String,
    String,
    i64,
    Option<i64>,
);

type RoomRow = (String, i32, String, String, String, String);

macro_rules! job_columns {
    () => {
        (
            j::id,
            j::enterprise_id,
            j::template_id,
            j::template_name,
            j::kind,
            j::undo_of,
            j::state,
            j::created_by,
            j::created_ms,
            j::finished_ms,
        )
    };
}

macro_rules! room_columns {
    () => {
        (
            r::job_id,
            r::position,
            r::endpoint_id,
            r::name,
            r::steps,
            r::state,
        )
    };
}

fn room(job: &str, expected: usize, row: RoomRow) -> Result<JobRoom> {
    let (_, position, endpoint_id, name, steps, state) = row;
    if usize::try_from(position).ok() != Some(expected) {
        return Err(corrupt(format!(
            "job {job}: room at position {position} where {expected} was expected"
        )));
    }
    let json = |text: &str, what: &str| {
        serde_json::from_str(text).map_err(|e| {
            corrupt(format!(
                "job {job}: room {position}'s {what} is not JSON: {e}"
            ))
        })
    };
    let steps = steps_from_json(&json(&steps, "steps")?)
        .map_err(|e| corrupt(format!("job {job}: room {position}'s steps: {e}")))?;
    let state = state_from_json(&json(&state, "state")?)
        .map_err(|e| corrupt(format!("job {job}: room {position}'s state: {e}")))?;
    Ok(JobRoom {
        endpoint_id: EndpointId::from_trusted(endpoint_id),
        name,
        steps,
        state,
    })
}

/// A job from its row and its rooms' rows (in position order).
fn job(row: JobRow, rooms: Vec<RoomRow>) -> Result<TemplateJob> {
    let (id, enterprise, template_id, template_name, kind, undo_of, state, by, created, finished) =
        row;
    let kind = match (kind.as_str(), undo_of) {
        ("apply", None) => JobKind::Apply,
        ("undo", Some(of)) => JobKind::Undo {
            of: JobId::from_trusted(of),
        },
        (kind, of) => {
            return Err(corrupt(format!(
                "job {id}: kind {kind:?} with undo_of {of:?}"
            )));
        }
    };
    let state = JobState::parse(&state)
        .ok_or_else(|| corrupt(format!("job {id}: unknown state {state:?}")))?;
    let rooms = rooms
        .into_iter()
        .enumerate()
        .map(|(i, row)| room(&id, i, row))
        .collect::<Result<_>>()?;
    Ok(TemplateJob {
        id: JobId::from_trusted(id),
        enterprise_id: EnterpriseId::from_trusted(enterprise),
        template_id: TemplateId::from_trusted(template_id),
        template_name,
        kind,
        state,
        created_by: by,
        created_at: created,
        finished_at: finished,
        rooms,
    })
}

/// The INSERT of `rows` rooms, its parameters numbered with `param`.
fn rooms_insert(rows: usize, param: impl Fn(usize) -> String) -> String {
    let values: Vec<String> = (0..rows)
        .map(|i| {
            let p: Vec<String> = (1..=6).map(|k| param(6 * i + k)).collect();
            format!("({})", p.join(", "))
        })
        .collect();
    format!(
        "INSERT INTO template_job_rooms (job_id, position, endpoint_id, name, steps, state) \
         VALUES {}",
        values.join(", ")
    )
}

#[async_trait]
impl TemplateJobStore for DbStore {
    async fn insert_job(
        &self,
        job: &TemplateJob,
        owner: &str,
        lease_until: i64,
        audit: &AuditEntry,
    ) -> Result<()> {
        let enterprise = job.enterprise_id.as_str();
        let undo_of = match &job.kind {
            JobKind::Apply => None,
            JobKind::Undo { of } => Some(of.as_str()),
        };
        let rooms: Vec<(i32, &str, &str, String, String)> = job
            .rooms
            .iter()
            .enumerate()
            .map(|(i, room)| {
                let position = i32::try_from(i).map_err(|_| Error::invalid("too many rooms"))?;
                Ok((
                    position,
                    room.endpoint_id.as_str(),
                    room.name.as_str(),
                    steps_to_json(&room.steps).to_string(),
                    state_to_json(&room.state).to_string(),
                ))
            })
            .collect::<Result<_>>()?;
        db_tx!(self, |c| {
            let running: Option<String> = j::table
                .filter(j::enterprise_id.eq(enterprise))
                .filter(j::state.eq(RUNNING))
                .select(j::id)
                .first(c)
                .await
                .optional()?;
            if let Some(running) = running {
                return Err(still_running(&running).into());
            }
            // A job started meanwhile by another instance (PostgreSQL: committed after this
            // transaction's read) is skipped here rather than raised as a unique violation,
            // which would abort the transaction before the running job could be named.
            let p = |n: usize| Dialect::param(&*c, n);
            let sql = format!(
                "INSERT INTO template_jobs (id, enterprise_id, template_id, template_name, kind, \
                 undo_of, state, created_by, created_ms, finished_ms, lease_owner, \
                 lease_until_ms) VALUES ({}) ON CONFLICT (enterprise_id) WHERE state = 'running' \
                 DO NOTHING",
                (1..=12).map(p).collect::<Vec<_>>().join(", ")
            );
            let inserted = diesel::sql_query(sql)
                .bind::<Text, _>(job.id.as_str())
                .bind::<Text, _>(enterprise)
                .bind::<Text, _>(job.template_id.as_str())
                .bind::<Text, _>(&job.template_name)
                .bind::<Text, _>(job.kind.name())
                .bind::<Nullable<Text>, _>(undo_of)
                .bind::<Text, _>(job.state.name())
                .bind::<Text, _>(&job.created_by)
                .bind::<BigInt, _>(job.created_at)
                .bind::<Nullable<BigInt>, _>(job.finished_at)
                .bind::<Nullable<Text>, _>(Some(owner))
                .bind::<BigInt, _>(lease_until)
                .execute(c)
                .await?;
            if inserted == 0 {
                let running: Option<String> = j::table
                    .filter(j::enterprise_id.eq(enterprise))
                    .filter(j::state.eq(RUNNING))
                    .select(j::id)
                    .first(c)
                    .await
                    .optional()?;
                // Finished again in between: nameless, but still the answer to retry later.
                let running = running.unwrap_or_else(|| "started meanwhile".to_owned());
                return Err(still_running(&running).into());
            }
            for chunk in rooms.chunks(ROOMS_PER_INSERT) {
                let sql = rooms_insert(chunk.len(), |n| Dialect::param(&*c, n));
                let mut insert = diesel::sql_query(sql).into_boxed();
                for (position, endpoint, name, steps, state) in chunk {
                    insert = insert
                        .bind::<Text, _>(job.id.as_str())
                        .bind::<Integer, _>(*position)
                        .bind::<Text, _>(*endpoint)
                        .bind::<Text, _>(*name)
                        .bind::<Text, _>(steps.as_str())
                        .bind::<Text, _>(state.as_str());
                }
                insert.execute(c).await?;
            }
            append_audit!(c, audit)?;
            Ok(())
        })
    }

    async fn job(&self, enterprise: &EnterpriseId, id: &JobId) -> Result<Option<TemplateJob>> {
        let found: Option<(JobRow, Vec<RoomRow>)> = db_run!(self, |c| {
            let row: Option<JobRow> = j::table
                .filter(j::enterprise_id.eq(enterprise.as_str()))
                .filter(j::id.eq(id.as_str()))
                .select(job_columns!())
                .first(c)
                .await
                .optional()?;
            let Some(row) = row else {
                return Ok(None);
            };
            let rooms: Vec<RoomRow> = r::table
                .filter(r::job_id.eq(id.as_str()))
                .order(r::position)
                .select(room_columns!())
                .load(c)
                .await?;
            Ok(Some((row, rooms)))
        })?;
        found.map(|(row, rooms)| job(row, rooms)).transpose()
    }

    async fn jobs(&self, enterprise: &EnterpriseId, limit: usize) -> Result<Vec<TemplateJob>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let (rows, rooms): (Vec<JobRow>, Vec<RoomRow>) = db_run!(self, |c| {
            let rows: Vec<JobRow> = j::table
                .filter(j::enterprise_id.eq(enterprise.as_str()))
                .order((j::created_ms.desc(), j::id.desc()))
                .limit(limit)
                .select(job_columns!())
                .load(c)
                .await?;
            let ids: Vec<&str> = rows.iter().map(|row| row.0.as_str()).collect();
            let mut rooms = Vec::new();
            // One query for every listed job (per IN_CHUNK of them).
            for chunk in ids.chunks(crate::dialect::IN_CHUNK) {
                let part: Vec<RoomRow> = r::table
                    .filter(r::job_id.eq_any(chunk))
                    .order((r::job_id, r::position))
                    .select(room_columns!())
                    .load(c)
                    .await?;
                rooms.extend(part);
            }
            Ok((rows, rooms))
        })?;
        let mut by_job: HashMap<String, Vec<RoomRow>> = HashMap::new();
        for room in rooms {
            by_job.entry(room.0.clone()).or_default().push(room);
        }
        rows.into_iter()
            .map(|row| {
                let rooms = by_job.remove(&row.0).unwrap_or_default();
                job(row, rooms)
            })
            .collect()
    }

    async fn orphaned_jobs(&self, now: i64) -> Result<Vec<(EnterpriseId, JobId)>> {
        let rows: Vec<(String, String)> = db_run!(self, |c| {
            Ok(j::table
                .filter(j::state.eq(RUNNING))
                .filter(j::lease_until_ms.lt(now))
                .order((j::created_ms, j::id))
                .select((j::enterprise_id, j::id))
                .load(c)
                .await?)
        })?;
        Ok(rows
            .into_iter()
            .map(|(e, id)| (EnterpriseId::from_trusted(e), JobId::from_trusted(id)))
            .collect())
    }

    async fn claim_job(
        &self,
        enterprise: &EnterpriseId,
        id: &JobId,
        owner: &str,
        now: i64,
        lease_until: i64,
    ) -> Result<bool> {
        db_run!(self, |c| {
            let n = diesel::update(
                j::table
                    .filter(j::enterprise_id.eq(enterprise.as_str()))
                    .filter(j::id.eq(id.as_str()))
                    .filter(j::state.eq(RUNNING))
                    .filter(
                        j::lease_owner
                            .is_null()
                            .or(j::lease_owner.eq(owner))
                            .or(j::lease_until_ms.lt(now)),
                    ),
            )
            .set((j::lease_owner.eq(owner), j::lease_until_ms.eq(lease_until)))
            .execute(c)
            .await?;
            Ok(n > 0)
        })
    }

    async fn save_job_room(
        &self,
        enterprise: &EnterpriseId,
        id: &JobId,
        position: usize,
        state: &RoomState,
        owner: &str,
        lease_until: i64,
    ) -> Result<bool> {
        let Ok(position) = i32::try_from(position) else {
            return Ok(false);
        };
        let state = state_to_json(state).to_string();
        db_tx!(self, |c| {
            // The claim first: a job taken over is left as its new owner has it.
            let held = diesel::update(
                j::table
                    .filter(j::enterprise_id.eq(enterprise.as_str()))
                    .filter(j::id.eq(id.as_str()))
                    .filter(j::state.eq(RUNNING))
                    .filter(j::lease_owner.eq(owner)),
            )
            .set(j::lease_until_ms.eq(lease_until))
            .execute(c)
            .await?;
            if held == 0 {
                return Ok(false);
            }
            let n = diesel::update(
                r::table
                    .filter(r::job_id.eq(id.as_str()))
                    .filter(r::position.eq(position)),
            )
            .set(r::state.eq(&state))
            .execute(c)
            .await?;
            Ok(n > 0)
        })
    }

    async fn cancel_job(
        &self,
        enterprise: &EnterpriseId,
        id: &JobId,
        at: i64,
        audit: &AuditEntry,
    ) -> Result<bool> {
        db_tx!(self, |c| {
            // Whoever holds the claim: it goes, so its next save or finish is refused.
            let n = diesel::update(
                j::table
                    .filter(j::enterprise_id.eq(enterprise.as_str()))
                    .filter(j::id.eq(id.as_str()))
                    .filter(j::state.eq(RUNNING)),
            )
            .set((
                j::state.eq(JobState::Cancelled.name()),
                j::finished_ms.eq(Some(at)),
                j::lease_owner.eq(None::<&str>),
                j::lease_until_ms.eq(0_i64),
            ))
            .execute(c)
            .await?;
            if n > 0 {
                append_audit!(c, audit)?;
            }
            Ok(n > 0)
        })
    }

    async fn release_jobs(&self, owner: &str) -> Result<u64> {
        // Lease 0: lapsed before any `now`, so the resumer lists the job at its next look.
        let n = db_run!(self, |c| {
            Ok(diesel::update(
                j::table
                    .filter(j::state.eq(RUNNING))
                    .filter(j::lease_owner.eq(owner)),
            )
            .set((j::lease_owner.eq(None::<&str>), j::lease_until_ms.eq(0_i64)))
            .execute(c)
            .await?)
        })?;
        Ok(n as u64)
    }

    async fn purge_jobs(&self, cutoff: i64) -> Result<u64> {
        // Every job that is not running (finished or cancelled) has its finished_ms.
        // The rooms go by ON DELETE CASCADE (SQLite: foreign_keys is on for every connection).
        let n = db_run!(self, |c| {
            Ok(diesel::delete(
                j::table
                    .filter(j::state.ne(RUNNING))
                    .filter(j::finished_ms.lt(cutoff)),
            )
            .execute(c)
            .await?)
        })?;
        Ok(n as u64)
    }

    async fn finish_job(
        &self,
        enterprise: &EnterpriseId,
        id: &JobId,
        owner: &str,
        at: i64,
        audit: &AuditEntry,
    ) -> Result<bool> {
        db_tx!(self, |c| {
            let n = diesel::update(
                j::table
                    .filter(j::enterprise_id.eq(enterprise.as_str()))
                    .filter(j::id.eq(id.as_str()))
                    .filter(j::state.eq(RUNNING))
                    .filter(j::lease_owner.eq(owner)),
            )
            .set((
                j::state.eq(JobState::Finished.name()),
                j::finished_ms.eq(Some(at)),
                j::lease_owner.eq(None::<&str>),
            ))
            .execute(c)
            .await?;
            if n > 0 {
                append_audit!(c, audit)?;
            }
            Ok(n > 0)
        })
    }
}

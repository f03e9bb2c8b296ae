//! Applying a template, and undoing that, as jobs (issue #36 item 2; the rules of a room:
//! `roomlink_domain::template::job` and `room_work`).
//!
//! Starting a job stores it with every room, claimed by this instance, and wakes the runner
//! (the binary's task that calls [`TemplateJobs::run`]); the request answers at once. A run
//! reads each room, saves what it held, writes what differs and records the outcome, room by
//! room, each save renewing the claim. A job whose instance died is found by
//! [`TemplateJobs::orphans`] once its claim lapses and run again from its first unfinished room.
//!
//! Rooms are done one listener at a time per lane: at most [`JobPolicy::rooms_per_listener`]
//! rooms of one listener at once (its room systems share its connection budget and, for
//! outbound listeners, one socket), and at most [`JobPolicy::listeners_at_once`] listeners.

use super::audit::{Auditor, actor_of};
use super::auth::Principal;
use super::control::ControlService;
use super::live::FleetChanges;
use super::template_plans::TemplatePlans;
use futures::StreamExt;
use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use roomlink_domain::access::{Operation, Target};
use roomlink_domain::audit::{Actor, AuditEntry, OK};
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EnterpriseId, JobId, ListenerServiceId, TemplateId};
use roomlink_domain::live::LiveTopic;
use roomlink_domain::ports::{Clock, EndpointStore, IdGenerator, TemplateJobStore, TemplateStore};
use roomlink_domain::template::SettingOutcomes;
use roomlink_domain::template::job::{JobProgress, RoomState, TemplateJob, not_running};
use roomlink_domain::template::plan::RoomSelection;
use roomlink_domain::template::room_outcome::unreachable;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// How jobs are run (configuration `templates.*`).
#[derive(Debug, Clone, Copy)]
pub struct JobPolicy {
    /// How long a claim lasts without a room saved (`templates.job_lease_seconds`).
    pub lease_ms: i64,
    /// Rooms of one listener written at once (`templates.rooms_per_listener`).
    pub rooms_per_listener: usize,
    /// Listeners worked on at once.
    pub listeners_at_once: usize,
}

impl Default for JobPolicy {
    fn default() -> Self {
        JobPolicy {
            lease_ms: roomlink_domain::template::job::JOB_LEASE_MS,
            rooms_per_listener: 2,
            listeners_at_once: 8,
        }
    }
}

/// The job an instance should run: its enterprise and id.
pub type JobRef = (EnterpriseId, JobId);

pub struct TemplateJobs {
    pub jobs: Arc<dyn TemplateJobStore>,
    pub templates: Arc<dyn TemplateStore>,
    pub endpoints: Arc<dyn EndpointStore>,
    pub plans: Arc<TemplatePlans>,
    pub control: Arc<ControlService>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGenerator>,
    pub audit: Arc<Auditor>,
    pub changes: Arc<FleetChanges>,
    /// This instance, as claims name it.
    pub owner: String,
    pub policy: JobPolicy,
    started: UnboundedSender<JobRef>,
    /// The runner's end of `started`, until it takes it.
    runner: Mutex<Option<UnboundedReceiver<JobRef>>>,
    /// Jobs running here, so a wake-up and a lapsed-claim scan never run one twice at once.
    running: Mutex<HashSet<JobId>>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobRun {
    /// Every room is done; the job is finished.
    Finished(JobProgress),
    /// Another instance holds the job (or took it over part-way).
    ClaimedElsewhere,
    /// Already running on this instance.
    AlreadyRunning,
}

impl TemplateJobs {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        jobs: Arc<dyn TemplateJobStore>,
        templates: Arc<dyn TemplateStore>,
        endpoints: Arc<dyn EndpointStore>,
        plans: Arc<TemplatePlans>,
        control: Arc<ControlService>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn IdGenerator>,
        audit: Arc<Auditor>,
        changes: Arc<FleetChanges>,
        policy: JobPolicy,
    ) -> TemplateJobs {
        let (started, runner) = unbounded();
        TemplateJobs {
            owner: ids.entity_id(),
            jobs,
            templates,
            endpoints,
            plans,
            control,
            clock,
            ids,
            audit,
            changes,
            policy,
            started,
            runner: Mutex::new(Some(runner)),
            running: Mutex::new(HashSet::new()),
        }
    }

    /// The jobs started here, for the runner to run: given once.
    pub fn take_started(&self) -> Option<UnboundedReceiver<JobRef>> {
        self.runner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Starts applying template `id` to the rooms `body` chooses (`{"rooms": ...}`, as a plan
    /// takes them). `Invalid` for a template without settings.
    pub async fn apply(
        &self,
        principal: &Principal,
        id: &TemplateId,
        body: &Map<String, Value>,
    ) -> Result<TemplateJob> {
        self.apply_to(principal, id, RoomSelection::from_request(body))
            .await
    }

    /// [`Self::apply`] with the rooms already chosen (or why the choice was refused, answered
    /// after the caller is authorized, as a body's would be).
    pub async fn apply_to(
        &self,
        principal: &Principal,
        id: &TemplateId,
        selection: Result<RoomSelection>,
    ) -> Result<TemplateJob> {
        let audit = self
            .audit
            .op(principal, Operation::ApplyTemplate, Some(id.as_str()));
        let result = async {
            principal.authorize(Operation::ApplyTemplate, Target::Enterprise)?;
            let selection = selection?;
            let enterprise = &principal.enterprise_id;
            let template = self
                .templates
                .template(enterprise, id)
                .await?
                .ok_or_else(|| id.not_found())?;
            if template.settings.is_empty() {
                return Err(Error::invalid(format!(
                    "template {} has no settings: there is nothing to apply",
                    template.id
                )));
            }
            let rooms = self.plans.rooms(enterprise, &selection).await?;
            RoomSelection::check_count(rooms.len())?;
            if rooms.is_empty() {
                return Err(Error::invalid(
                    "rooms: the choice holds no room: there is nothing to apply",
                ));
            }
            let rooms = rooms
                .iter()
                .map(|e| (e.id().clone(), e.name().to_owned()))
                .collect();
            let job = TemplateJob::apply(
                JobId::from_trusted(self.ids.entity_id()),
                &template,
                rooms,
                created_by(&actor_of(principal)),
                self.clock.now_ms(),
            );
            self.start(job, &audit).await
        }
        .await;
        self.audit.settle(audit, result).await
    }

    /// Starts undoing the finished apply job `id` (`Conflict` while it runs, for an undo job,
    /// or for a job that changed nothing).
    pub async fn undo(&self, principal: &Principal, id: &JobId) -> Result<TemplateJob> {
        let audit = self
            .audit
            .op(principal, Operation::UndoJob, Some(id.as_str()));
        let result = async {
            principal.authorize(Operation::UndoJob, Target::Enterprise)?;
            let of = self
                .jobs
                .job(&principal.enterprise_id, id)
                .await?
                .ok_or_else(|| id.not_found())?;
            let job = TemplateJob::undo(
                JobId::from_trusted(self.ids.entity_id()),
                &of,
                created_by(&actor_of(principal)),
                self.clock.now_ms(),
            )?;
            self.start(job, &audit).await
        }
        .await;
        self.audit.settle(audit, result).await
    }

    /// Cancels the running job `id`: no room is begun after this, the instance running it
    /// stops at its next save (a room being written is left `writing`, what it held known),
    /// and another job may start at once. `Conflict` when the job is not running.
    pub async fn cancel(&self, principal: &Principal, id: &JobId) -> Result<TemplateJob> {
        let audit = self
            .audit
            .op(principal, Operation::CancelJob, Some(id.as_str()));
        let result = async {
            principal.authorize(Operation::CancelJob, Target::Enterprise)?;
            let enterprise = &principal.enterprise_id;
            let job = self
                .jobs
                .job(enterprise, id)
                .await?
                .ok_or_else(|| id.not_found())?;
            let entry = audit.clone().detail(format!(
                "{} of {} rooms done",
                job.rooms.len() - job.unfinished_rooms().len(),
                job.rooms.len()
            ));
            // Not running, or it ended between the read and the cancel.
            if !self
                .jobs
                .cancel_job(enterprise, id, self.clock.now_ms(), &entry)
                .await?
            {
                let now = self.jobs.job(enterprise, id).await?.map(|j| j.state);
                return Err(not_running(id.as_str(), now.unwrap_or(job.state)));
            }
            self.changes.changed(enterprise, LiveTopic::Jobs);
            self.jobs
                .job(enterprise, id)
                .await?
                .ok_or_else(|| id.not_found())
        }
        .await;
        self.audit.settle(audit, result).await
    }

    async fn start(&self, job: TemplateJob, audit: &AuditEntry) -> Result<TemplateJob> {
        let entry = audit
            .clone()
            .detail(format!("job {}: {} rooms", job.id, job.rooms.len()));
        let lease_until = self.clock.now_ms() + self.policy.lease_ms;
        self.jobs
            .insert_job(&job, &self.owner, lease_until, &entry)
            .await?;
        // The runner may be gone (shutting down): the job is then an orphan for the next one.
        let _ = self
            .started
            .unbounded_send((job.enterprise_id.clone(), job.id.clone()));
        self.changes.changed(&job.enterprise_id, LiveTopic::Jobs);
        Ok(job)
    }

    pub async fn job(&self, principal: &Principal, id: &JobId) -> Result<TemplateJob> {
        principal.authorize(Operation::GetJob, Target::Enterprise)?;
        self.jobs
            .job(&principal.enterprise_id, id)
            .await?
            .ok_or_else(|| id.not_found())
    }

    /// The enterprise's newest jobs ([`roomlink_domain::template::job::LISTED_JOBS`]).
    pub async fn list(&self, principal: &Principal) -> Result<Vec<TemplateJob>> {
        principal.authorize(Operation::ListJobs, Target::Enterprise)?;
        self.jobs
            .jobs(
                &principal.enterprise_id,
                roomlink_domain::template::job::LISTED_JOBS,
            )
            .await
    }

    /// Lapses the claims of this instance's running jobs, for a graceful stop once their runs
    /// have been dropped: another instance (or this one restarted) resumes them at its next
    /// look instead of after the lease. Returns how many.
    pub async fn release_claims(&self) -> Result<u64> {
        self.jobs.release_jobs(&self.owner).await
    }

    /// Running jobs whose instance stopped renewing their claim.
    pub async fn orphans(&self) -> Result<Vec<JobRef>> {
        self.jobs.orphaned_jobs(self.clock.now_ms()).await
    }

    /// Runs the job to its end, if this instance can claim it.
    pub async fn run(&self, enterprise: &EnterpriseId, id: &JobId) -> Result<JobRun> {
        if !self.lock_running().insert(id.clone()) {
            return Ok(JobRun::AlreadyRunning);
        }
        let result = self.run_claimed(enterprise, id).await;
        self.lock_running().remove(id);
        result
    }

    fn lock_running(&self) -> std::sync::MutexGuard<'_, HashSet<JobId>> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn run_claimed(&self, enterprise: &EnterpriseId, id: &JobId) -> Result<JobRun> {
        let now = self.clock.now_ms();
        if !self
            .jobs
            .claim_job(enterprise, id, &self.owner, now, now + self.policy.lease_ms)
            .await?
        {
            return Ok(JobRun::ClaimedElsewhere);
        }
        let Some(job) = self.jobs.job(enterprise, id).await? else {
            return Err(id.not_found());
        };
        let lanes = self.lanes(&job).await?;
        let lost = AtomicBool::new(false);
        let job = &job;
        let results: Vec<Result<()>> = futures::stream::iter(lanes)
            .map(|lane| {
                let lost = &lost;
                async move {
                    for position in lane {
                        if lost.load(Ordering::Relaxed) {
                            break;
                        }
                        if !self.do_room(job, position).await? {
                            lost.store(true, Ordering::Relaxed);
                        }
                    }
                    Ok(())
                }
            })
            .buffer_unordered(self.policy.listeners_at_once.max(1) * self.lanes_per_listener())
            .collect()
            .await;
        results.into_iter().collect::<Result<()>>()?;
        if lost.load(Ordering::Relaxed) {
            return Ok(JobRun::ClaimedElsewhere);
        }
        let Some(done) = self.jobs.job(enterprise, id).await? else {
            return Err(id.not_found());
        };
        let progress = JobProgress::of(&done);
        let entry = finished_entry(&done, &progress, self.clock.now_ms());
        if !self
            .jobs
            .finish_job(enterprise, id, &self.owner, self.clock.now_ms(), &entry)
            .await?
        {
            return Ok(JobRun::ClaimedElsewhere);
        }
        self.changes.changed(enterprise, LiveTopic::Jobs);
        Ok(JobRun::Finished(progress))
    }

    fn lanes_per_listener(&self) -> usize {
        self.policy.rooms_per_listener.max(1)
    }

    /// The unfinished rooms in lanes: each listener's rooms dealt round-robin over
    /// `rooms_per_listener` lanes, rooms without a listener (or endpoint) in one lane.
    async fn lanes(&self, job: &TemplateJob) -> Result<Vec<Vec<usize>>> {
        let mut by_listener: BTreeMap<Option<ListenerServiceId>, Vec<usize>> = BTreeMap::new();
        for position in job.unfinished_rooms() {
            let room = &job.rooms[position];
            let listener = self
                .endpoints
                .endpoint(&job.enterprise_id, &room.endpoint_id)
                .await?
                .and_then(|e| e.profile().listener().clone());
            by_listener.entry(listener).or_default().push(position);
        }
        let per = self.lanes_per_listener();
        let mut lanes = Vec::new();
        for (listener, positions) in by_listener {
            let count = if listener.is_some() { per } else { 1 };
            let mut dealt = vec![Vec::new(); count.min(positions.len()).max(1)];
            let n = dealt.len();
            for (i, position) in positions.into_iter().enumerate() {
                dealt[i % n].push(position);
            }
            lanes.extend(dealt);
        }
        Ok(lanes)
    }

    /// One room, start to outcome; `false` when the claim was lost (nothing more to do here).
    async fn do_room(&self, job: &TemplateJob, position: usize) -> Result<bool> {
        let room = &job.rooms[position];
        let keys: Vec<_> = room.steps.keys().copied().collect();
        let asked = async {
            let target = self
                .control
                .target_of(&job.enterprise_id, &room.endpoint_id, "writeconfiguration")
                .await?;
            let read = self
                .control
                .transport
                .read_configuration(&target, &keys)
                .await?;
            Ok::<_, roomlink_domain::error::Error>((target, read))
        };
        let (target, read) = match asked.await {
            Ok(asked) => asked,
            Err(e) => {
                return self
                    .save(job, position, &RoomState::Done(unreachable(&e)))
                    .await;
            }
        };
        let decision = room.decide(&read);
        if decision.writes.is_empty() {
            let outcome = RoomState::Done(decision.finish(&SettingOutcomes::new()));
            return self.save(job, position, &outcome).await;
        }
        // Saved before anything is written: after a crash between here and the outcome, the
        // values the room held are known, and so is what the job replaced.
        let writing = RoomState::Writing {
            previous: decision.previous.clone(),
        };
        if !self.save(job, position, &writing).await? {
            return Ok(false);
        }
        let outcome = match self
            .control
            .transport
            .write_configuration(&target, &decision.writes, decision.mode)
            .await
        {
            Ok(written) => decision.finish(&written),
            Err(e) => decision.failed(&e),
        };
        self.save(job, position, &RoomState::Done(outcome)).await
    }

    async fn save(&self, job: &TemplateJob, position: usize, state: &RoomState) -> Result<bool> {
        let now = self.clock.now_ms();
        let saved = self
            .jobs
            .save_job_room(
                &job.enterprise_id,
                &job.id,
                position,
                state,
                &self.owner,
                now + self.policy.lease_ms,
            )
            .await?;
        if saved && matches!(state, RoomState::Done(_)) {
            self.changes.changed(&job.enterprise_id, LiveTopic::Jobs);
        }
        Ok(saved)
    }
}

/// How a job names who started it: a user by name, a token by its creator (or its id).
fn created_by(actor: &Actor) -> String {
    actor.username.clone().unwrap_or_else(|| actor.id.clone())
}

/// The trail's entry for a finished job: roomlink itself, with the counts.
fn finished_entry(job: &TemplateJob, p: &JobProgress, now: i64) -> AuditEntry {
    AuditEntry {
        enterprise_id: job.enterprise_id.clone(),
        at: now,
        actor: Actor {
            kind: roomlink_domain::audit::ActorKind::Scheduler,
            id: "template-jobs".to_owned(),
            username: None,
            roles: roomlink_domain::access::RoleSet::read_write(),
        },
        operation: FINISHED.to_owned(),
        target_id: Some(job.id.as_str().to_owned()),
        outcome: OK.to_owned(),
        detail: Some(format!(
            "{} job of template {}: {} rooms, {} unreachable; settings {} applied, {} \
             unchanged, {} refused, {} unsupported, {} unreadable, {} skipped",
            job.kind.name(),
            job.template_id,
            p.rooms,
            p.unreachable,
            p.applied,
            p.unchanged,
            p.refused,
            p.unsupported,
            p.unreadable,
            p.skipped
        )),
    }
}

/// The audit operation of a job's end (the start is the caller's `templates.apply` or
/// `jobs.undo`).
pub const FINISHED: &str = "jobs.finished";

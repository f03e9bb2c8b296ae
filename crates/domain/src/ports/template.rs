//! Configuration templates: [`TemplateStore`], the jobs applying them: [`TemplateJobStore`], and
//! the rooms they are assigned to, with their drift checks: [`TemplateAssignmentStore`].

use crate::audit::AuditEntry;
use crate::error::Result;
use crate::ids::{EndpointId, EnterpriseId, JobId, TemplateId};
use crate::template::Template;
use crate::template::drift::{Assignment, DriftRecord};
use crate::template::job::{RoomState, TemplateJob};
use crate::webhook::Event;
use async_trait::async_trait;
#[cfg(feature = "mock")]
use mockall::automock;

/// An enterprise's templates. Names are unique per enterprise as
/// [`crate::template::record::name_key`] compares them: a write that would take another
/// template's name is `Conflict` (entity class `Template`), also when two writes race.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait TemplateStore: Send + Sync {
    /// `LimitReached` (entity class `Template`) when the enterprise holds
    /// [`crate::template::record::MAX_TEMPLATES`] already; `Conflict` for a taken name.
    async fn insert_template(&self, template: &Template, audit: &AuditEntry) -> Result<()>;
    /// By name (as compared), then id: the order a person scans a list in.
    async fn templates(&self, enterprise: &EnterpriseId) -> Result<Vec<Template>>;
    async fn template(
        &self,
        enterprise: &EnterpriseId,
        id: &TemplateId,
    ) -> Result<Option<Template>>;
    /// Replaces name, description, settings and `updated_at` of the template with this id in
    /// its enterprise; `false` if there is none. `Conflict` for a taken name.
    async fn replace_template(&self, template: &Template, audit: &AuditEntry) -> Result<bool>;
    async fn delete_template(
        &self,
        enterprise: &EnterpriseId,
        id: &TemplateId,
        audit: &AuditEntry,
    ) -> Result<bool>;
}

/// Template jobs (apply, undo) with their rooms. A job is run by one instance at a time: the
/// one holding its claim, renewed with each room's state and lapsing after
/// [`crate::template::job::JOB_LEASE_MS`] without one; the claim is what makes a job resumable
/// after a restart and safe with several instances. Rooms are addressed by position.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait TemplateJobStore: Send + Sync {
    /// Stores a new job, claimed by `owner` until `lease_until`. `Conflict` (entity class
    /// `Job`, naming the running job) while another of the enterprise's jobs is running: one at
    /// a time keeps two jobs from writing one room in turns.
    async fn insert_job(
        &self,
        job: &TemplateJob,
        owner: &str,
        lease_until: i64,
        audit: &AuditEntry,
    ) -> Result<()>;
    async fn job(&self, enterprise: &EnterpriseId, id: &JobId) -> Result<Option<TemplateJob>>;
    /// The enterprise's newest jobs first, at most `limit`, each with its rooms.
    async fn jobs(&self, enterprise: &EnterpriseId, limit: usize) -> Result<Vec<TemplateJob>>;
    /// Running jobs whose claim lapsed before `now`, of every enterprise (for the resumer).
    async fn orphaned_jobs(&self, now: i64) -> Result<Vec<(EnterpriseId, JobId)>>;
    /// Claims a running job for `owner` until `lease_until`: `true` when it was unclaimed,
    /// lapsed before `now`, or `owner`'s already. Atomic: of two instances one wins.
    async fn claim_job(
        &self,
        enterprise: &EnterpriseId,
        id: &JobId,
        owner: &str,
        now: i64,
        lease_until: i64,
    ) -> Result<bool>;
    /// Records one room's state and renews the claim, if `owner` still holds it: `false` (and
    /// nothing written) when another instance took the job over.
    #[allow(clippy::too_many_arguments)]
    async fn save_job_room(
        &self,
        enterprise: &EnterpriseId,
        id: &JobId,
        position: usize,
        state: &RoomState,
        owner: &str,
        lease_until: i64,
    ) -> Result<bool>;
    /// Cancels the enterprise's job `id` if it is running: state `cancelled`, finished at `at`,
    /// its claim gone (so the instance running it finds at its next save that it lost it and
    /// stops), the audit entry written with it. `false` (nothing written) when the job is not
    /// running (or not there).
    async fn cancel_job(
        &self,
        enterprise: &EnterpriseId,
        id: &JobId,
        at: i64,
        audit: &AuditEntry,
    ) -> Result<bool>;
    /// Lapses every claim `owner` holds on a running job, for a graceful stop: the next
    /// instance to look resumes those jobs at once instead of after the lease. Returns how many.
    async fn release_jobs(&self, owner: &str) -> Result<u64>;
    /// Deletes the jobs of every enterprise that finished (or were cancelled) before `cutoff`,
    /// with their rooms; running jobs stay whatever their age. Returns how many jobs went.
    async fn purge_jobs(&self, cutoff: i64) -> Result<u64>;
    /// Marks the job finished at `at` and releases its claim, if `owner` holds it.
    async fn finish_job(
        &self,
        enterprise: &EnterpriseId,
        id: &JobId,
        owner: &str,
        at: i64,
        audit: &AuditEntry,
    ) -> Result<bool>;
}

/// Which template each room is assigned (one at most), and the last drift check of each
/// assigned room. Deleting a template or an endpoint removes its assignments.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait TemplateAssignmentStore: Send + Sync {
    /// Assigns `template` to `endpoints` (each of the enterprise's), moving a room assigned
    /// another template (its drift record goes: it was about the other one); a room already
    /// assigned `template` keeps its record. Returns how many rooms were assigned or moved.
    /// `NotFound` (entity class `Template`) when the template is not the enterprise's.
    async fn assign_template(
        &self,
        enterprise: &EnterpriseId,
        template: &TemplateId,
        endpoints: &[EndpointId],
        at: i64,
        audit: &AuditEntry,
    ) -> Result<usize>;
    /// Ends the assignment of those of `endpoints` assigned `template`; returns how many.
    async fn unassign_template(
        &self,
        enterprise: &EnterpriseId,
        template: &TemplateId,
        endpoints: &[EndpointId],
        audit: &AuditEntry,
    ) -> Result<usize>;
    /// The rooms assigned `template`, by endpoint name then id, each with the endpoint's name.
    async fn assignments(
        &self,
        enterprise: &EnterpriseId,
        template: &TemplateId,
    ) -> Result<Vec<Assignment>>;
    /// The assignments of those of `endpoints` that have one (any template), in no order.
    async fn assignments_of(
        &self,
        enterprise: &EnterpriseId,
        endpoints: &[EndpointId],
    ) -> Result<Vec<Assignment>>;
    /// Stores a check's record, and `event` in the webhook outbox in the same transaction, if
    /// `endpoint` is still assigned `template`: `false` (nothing written) otherwise.
    async fn save_drift<'a>(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
        template: &TemplateId,
        record: &DriftRecord,
        event: Option<&'a Event>,
    ) -> Result<bool>;
}

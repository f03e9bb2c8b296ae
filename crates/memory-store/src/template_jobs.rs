//! TemplateJobStore of the in-memory store: jobs held whole, with their claims beside them;
//! one running job per enterprise and every claim decided under the one mutex.

use super::{MemoryStore, State};
use async_trait::async_trait;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::error::Result;
use roomlink_domain::ids::{EnterpriseId, JobId};
use roomlink_domain::ports::TemplateJobStore;
use roomlink_domain::template::job::{JobState, RoomState, TemplateJob, still_running};

/// A stored job and who holds it until when.
pub(crate) struct Held {
    pub(crate) job: TemplateJob,
    owner: Option<String>,
    lease_until: i64,
}

impl State {
    fn held_job(&mut self, enterprise: &EnterpriseId, id: &JobId) -> Option<&mut Held> {
        self.template_jobs
            .iter_mut()
            .find(|h| h.job.enterprise_id == *enterprise && h.job.id == *id)
    }
}

impl Held {
    fn running_for(&self, owner: &str) -> bool {
        self.job.state == JobState::Running && self.owner.as_deref() == Some(owner)
    }
}

#[async_trait]
impl TemplateJobStore for MemoryStore {
    async fn insert_job(
        &self,
        job: &TemplateJob,
        owner: &str,
        lease_until: i64,
        audit: &AuditEntry,
    ) -> Result<()> {
        let mut s = self.lock()?;
        let running = s
            .template_jobs
            .iter()
            .find(|h| h.job.enterprise_id == job.enterprise_id && h.job.state == JobState::Running);
        if let Some(running) = running {
            return Err(still_running(running.job.id.as_str()));
        }
        s.template_jobs.push(Held {
            job: job.clone(),
            owner: Some(owner.to_owned()),
            lease_until,
        });
        s.audit(audit);
        Ok(())
    }

    async fn job(&self, enterprise: &EnterpriseId, id: &JobId) -> Result<Option<TemplateJob>> {
        Ok(self.lock()?.held_job(enterprise, id).map(|h| h.job.clone()))
    }

    async fn jobs(&self, enterprise: &EnterpriseId, limit: usize) -> Result<Vec<TemplateJob>> {
        let mut list: Vec<TemplateJob> = self
            .lock()?
            .template_jobs
            .iter()
            .filter(|h| h.job.enterprise_id == *enterprise)
            .map(|h| h.job.clone())
            .collect();
        list.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
        list.truncate(limit);
        Ok(list)
    }

    async fn orphaned_jobs(&self, now: i64) -> Result<Vec<(EnterpriseId, JobId)>> {
        let s = self.lock()?;
        let mut lapsed: Vec<&Held> = s
            .template_jobs
            .iter()
            .filter(|h| h.job.state == JobState::Running && h.lease_until < now)
            .collect();
        lapsed.sort_by(|a, b| (a.job.created_at, &a.job.id).cmp(&(b.job.created_at, &b.job.id)));
        Ok(lapsed
            .into_iter()
            .map(|h| (h.job.enterprise_id.clone(), h.job.id.clone()))
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
        let mut s = self.lock()?;
        let Some(held) = s.held_job(enterprise, id) else {
            return Ok(false);
        };
        let free = match &held.owner {
            None => true,
            Some(holder) => holder == owner || held.lease_until < now,
        };
        if held.job.state != JobState::Running || !free {
            return Ok(false);
        }
        held.owner = Some(owner.to_owned());
        held.lease_until = lease_until;
        Ok(true)
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
        let mut s = self.lock()?;
        let Some(held) = s.held_job(enterprise, id) else {
            return Ok(false);
        };
        if !held.running_for(owner) {
            return Ok(false);
        }
        // The database renews the claim even for a position it has not: so does this.
        held.lease_until = lease_until;
        let Some(room) = held.job.rooms.get_mut(position) else {
            return Ok(false);
        };
        room.state = state.clone();
        Ok(true)
    }

    async fn cancel_job(
        &self,
        enterprise: &EnterpriseId,
        id: &JobId,
        at: i64,
        audit: &AuditEntry,
    ) -> Result<bool> {
        let mut s = self.lock()?;
        let Some(held) = s.held_job(enterprise, id) else {
            return Ok(false);
        };
        if held.job.state != JobState::Running {
            return Ok(false);
        }
        // As the database does: whoever held the claim holds it no more.
        held.job.state = JobState::Cancelled;
        held.job.finished_at = Some(at);
        held.owner = None;
        held.lease_until = 0;
        s.audit(audit);
        Ok(true)
    }

    async fn release_jobs(&self, owner: &str) -> Result<u64> {
        let mut s = self.lock()?;
        let mut n = 0;
        for held in s.template_jobs.iter_mut().filter(|h| h.running_for(owner)) {
            // As the database does: no holder, and lapsed before any `now`.
            held.owner = None;
            held.lease_until = 0;
            n += 1;
        }
        Ok(n)
    }

    async fn purge_jobs(&self, cutoff: i64) -> Result<u64> {
        let mut s = self.lock()?;
        let before = s.template_jobs.len();
        s.template_jobs.retain(|h| {
            // Finished or cancelled: every job not running.
            h.job.state == JobState::Running || h.job.finished_at.is_none_or(|at| at >= cutoff)
        });
        Ok((before - s.template_jobs.len()) as u64)
    }

    async fn finish_job(
        &self,
        enterprise: &EnterpriseId,
        id: &JobId,
        owner: &str,
        at: i64,
        audit: &AuditEntry,
    ) -> Result<bool> {
        let mut s = self.lock()?;
        let Some(held) = s.held_job(enterprise, id) else {
            return Ok(false);
        };
        if !held.running_for(owner) {
            return Ok(false);
        }
        held.job.state = JobState::Finished;
        held.job.finished_at = Some(at);
        held.owner = None;
        s.audit(audit);
        Ok(true)
    }
}

//! Housekeeping: records that stop mattering with time are deleted now and then, and the
//! process's health as probes and metrics see it.
//!
//! Correctness never depends on the purge (every read filters expired tokens and paired
//! statuses by time); it only keeps the tables small. Failures are the exception: nothing
//! expires them, and an offline listener adds one per poll, so they are kept for
//! [`FAILURE_RETENTION_MS`], audit entries for their configured [`AuditRetention`], and
//! finished template jobs (with what each room held before) for [`JobRetention`].

use roomlink_domain::audit::DEFAULT_RETENTION_DAYS;
use roomlink_domain::error::Result;
use roomlink_domain::ports::{
    AuditStore, AuthFailureLedger, AutoJoinStore, Clock, FailureStore, PairingStore, PoolStatus,
    StoreHealth, TemplateJobStore, TokenStore, UsageStore, WebhookStore,
};
use roomlink_domain::usage::UsageRetention;
use std::sync::Arc;

/// How long command and polling failures stay listed in `GET /api/failures`: a week.
pub const FAILURE_RETENTION_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// How long finished webhook deliveries (delivered, or failed for good) stay listed: a week,
/// long enough to look into a weekend's failures.
pub const WEBHOOK_DELIVERY_RETENTION_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// How long auto-join claims are kept after their meeting started: a week, longer than any
/// meeting, so a claim is never purged while its occurrence can still be due.
pub const AUTO_JOIN_RETENTION_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// How long audit entries are kept (`audit.retention_days`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditRetention {
    pub days: u32,
}

impl Default for AuditRetention {
    fn default() -> Self {
        AuditRetention {
            days: DEFAULT_RETENTION_DAYS,
        }
    }
}

const DAY_MS: i64 = 24 * 60 * 60 * 1000;

/// `days` days before `now`.
fn days_before(now: i64, days: u32) -> i64 {
    now.saturating_sub(i64::from(days).saturating_mul(DAY_MS))
}

impl AuditRetention {
    /// Entries dated before this are deleted.
    pub fn cutoff(&self, now: i64) -> i64 {
        days_before(now, self.days)
    }
}

/// How long finished template jobs are kept (`templates.job_retention_days`): an apply job
/// can be undone as long as it is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobRetention {
    pub days: u32,
}

impl Default for JobRetention {
    fn default() -> Self {
        JobRetention { days: 90 }
    }
}

impl JobRetention {
    /// Jobs finished before this are deleted.
    pub fn cutoff(&self, now: i64) -> i64 {
        days_before(now, self.days)
    }
}

pub struct Housekeeping {
    pub tokens: Arc<dyn TokenStore>,
    pub pairing: Arc<dyn PairingStore>,
    pub failures: Arc<dyn FailureStore>,
    pub auth_failures: Arc<dyn AuthFailureLedger>,
    pub audit: Arc<dyn AuditStore>,
    pub auto_joins: Arc<dyn AutoJoinStore>,
    pub usage: Arc<dyn UsageStore>,
    pub webhooks: Arc<dyn WebhookStore>,
    pub template_jobs: Arc<dyn TemplateJobStore>,
    pub health: Arc<dyn StoreHealth>,
    pub clock: Arc<dyn Clock>,
    pub audit_retention: AuditRetention,
    pub usage_retention: UsageRetention,
    pub job_retention: JobRetention,
}

/// How many records one purge deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Purged {
    pub tokens: u64,
    pub paired: u64,
    pub failures: u64,
    pub audit: u64,
    pub auto_joins: u64,
    pub call_sessions: u64,
    pub webhook_deliveries: u64,
    pub health_changes: u64,
    pub auth_failures: u64,
    pub template_jobs: u64,
}

impl Purged {
    pub fn total(&self) -> u64 {
        self.tokens
            + self.paired
            + self.failures
            + self.audit
            + self.auto_joins
            + self.call_sessions
            + self.webhook_deliveries
            + self.health_changes
            + self.auth_failures
            + self.template_jobs
    }
}

impl Housekeeping {
    /// Deletes expired access tokens, expired paired statuses, failures older than the
    /// retention and refilled failed-authentication allowances. Stops at the first storage error; the next round tries again.
    pub async fn purge(&self) -> Result<Purged> {
        let now = self.clock.now_ms();
        Ok(Purged {
            tokens: self.tokens.purge_expired_tokens(now).await?,
            paired: self.pairing.purge_expired_paired(now).await?,
            failures: self
                .failures
                .purge_failures(now - FAILURE_RETENTION_MS)
                .await?,
            audit: self
                .audit
                .purge_audit(self.audit_retention.cutoff(now))
                .await?,
            auto_joins: self
                .auto_joins
                .purge_auto_joins(now - AUTO_JOIN_RETENTION_MS)
                .await?,
            call_sessions: self
                .usage
                .purge_call_sessions(self.usage_retention.cutoff(now))
                .await?,
            webhook_deliveries: self
                .webhooks
                .purge_deliveries(now - WEBHOOK_DELIVERY_RETENTION_MS)
                .await?,
            health_changes: self
                .webhooks
                .purge_health_history(now - roomlink_domain::health::HISTORY_DAYS * DAY_MS)
                .await?,
            // Allowances that have refilled: the same as none.
            auth_failures: self.auth_failures.purge_auth_failures(now).await?,
            template_jobs: self
                .template_jobs
                .purge_jobs(self.job_retention.cutoff(now))
                .await?,
        })
    }

    /// Readiness: the database answers (`StorageUnavailable` otherwise).
    pub async fn ready(&self) -> Result<()> {
        self.health.ping().await
    }

    /// The connection pool's occupancy, for metrics; `None` where there is no pool.
    pub fn pool_status(&self) -> Option<PoolStatus> {
        self.health.pool_status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mockall::predicate::eq;
    use roomlink_domain::ports::{
        MockAuditStore, MockAuthFailureLedger, MockAutoJoinStore, MockClock, MockFailureStore,
        MockPairingStore, MockStoreHealth, MockTemplateJobStore, MockTokenStore, MockUsageStore,
        MockWebhookStore,
    };

    const NOW: i64 = 1_800_000_000_000;

    #[tokio::test]
    async fn purges_expired_records_and_failures_past_the_retention() {
        let mut tokens = MockTokenStore::new();
        tokens
            .expect_purge_expired_tokens()
            .with(eq(NOW))
            .return_once(|_| Ok(2));
        let mut pairing = MockPairingStore::new();
        pairing
            .expect_purge_expired_paired()
            .with(eq(NOW))
            .return_once(|_| Ok(1));
        let mut failures = MockFailureStore::new();
        failures
            .expect_purge_failures()
            .with(eq(NOW - 7 * 24 * 3_600_000))
            .return_once(|_| Ok(5));
        let mut audit = MockAuditStore::new();
        audit
            .expect_purge_audit()
            .with(eq(NOW - 24 * 60 * 60 * 1000))
            .return_once(|_| Ok(3));
        let mut auto_joins = MockAutoJoinStore::new();
        auto_joins
            .expect_purge_auto_joins()
            .with(eq(NOW - 7 * 24 * 3_600_000))
            .return_once(|_| Ok(4));
        let mut usage = MockUsageStore::new();
        usage
            .expect_purge_call_sessions()
            .with(eq(NOW - 2 * 24 * 3_600_000))
            .return_once(|_| Ok(6));
        let mut webhooks = MockWebhookStore::new();
        webhooks
            .expect_purge_deliveries()
            .with(eq(NOW - 7 * 24 * 3_600_000))
            .return_once(|_| Ok(7));
        webhooks
            .expect_purge_health_history()
            .with(eq(NOW - 30 * 24 * 3_600_000))
            .return_once(|_| Ok(8));
        let mut auth_failures = MockAuthFailureLedger::new();
        auth_failures
            .expect_purge_auth_failures()
            .with(eq(NOW))
            .return_once(|_| Ok(9));
        let mut template_jobs = MockTemplateJobStore::new();
        template_jobs
            .expect_purge_jobs()
            .with(eq(NOW - 3 * 24 * 3_600_000))
            .return_once(|_| Ok(10));
        let mut clock = MockClock::new();
        clock.expect_now_ms().return_const(NOW);
        let housekeeping = Housekeeping {
            auth_failures: Arc::new(auth_failures),
            webhooks: Arc::new(webhooks),
            template_jobs: Arc::new(template_jobs),
            tokens: Arc::new(tokens),
            pairing: Arc::new(pairing),
            failures: Arc::new(failures),
            audit: Arc::new(audit),
            auto_joins: Arc::new(auto_joins),
            usage: Arc::new(usage),
            health: Arc::new(MockStoreHealth::new()),
            clock: Arc::new(clock),
            audit_retention: AuditRetention { days: 1 },
            usage_retention: UsageRetention { days: 2 },
            job_retention: JobRetention { days: 3 },
        };
        let purged = housekeeping.purge().await.unwrap();
        assert_eq!(
            purged,
            Purged {
                tokens: 2,
                paired: 1,
                failures: 5,
                audit: 3,
                auto_joins: 4,
                call_sessions: 6,
                webhook_deliveries: 7,
                health_changes: 8,
                auth_failures: 9,
                template_jobs: 10,
            }
        );
        assert_eq!(purged.total(), 55);
    }
}

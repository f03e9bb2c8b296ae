//! Room usage: `GET /api/analytics/usage` and the sessions behind it.

use super::auth::Principal;
use roomlink_domain::access::{Operation, Target};
use roomlink_domain::civil::MS_PER_DAY;
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ports::{Clock, UsageStore};
use roomlink_domain::usage::{
    CallSession, MAX_SESSION_EXPORT, UsageGroup, UsageGrouping, UsageQuery, usage_groups,
};
use std::sync::Arc;

pub struct UsageService {
    pub store: Arc<dyn UsageStore>,
    pub clock: Arc<dyn Clock>,
}

/// A usage answer: the groups, and the period's totals.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageReport {
    pub query: UsageQuery,
    /// When it was computed: a call still going counts up to here.
    pub at: i64,
    pub groups: Vec<UsageGroup>,
    pub calls: u64,
    pub minutes_in_call: f64,
}

/// The period when a question names none: the 30 days before now.
pub const DEFAULT_PERIOD_MS: i64 = 30 * MS_PER_DAY;

impl UsageService {
    /// The question for `from`..`to`: `to` defaults to now, `from` to [`DEFAULT_PERIOD_MS`]
    /// before `to`; `Invalid` as [`UsageQuery::new`].
    pub fn period(
        &self,
        from: Option<i64>,
        to: Option<i64>,
        grouping: UsageGrouping,
    ) -> Result<UsageQuery> {
        let to = to.unwrap_or_else(|| self.clock.now_ms());
        let from = from.unwrap_or_else(|| to.saturating_sub(DEFAULT_PERIOD_MS).max(0));
        UsageQuery::new(from, to, grouping)
    }

    /// The enterprise's usage in the period, grouped.
    pub async fn usage(&self, principal: &Principal, query: UsageQuery) -> Result<UsageReport> {
        principal.authorize(Operation::ReadUsage, Target::Enterprise)?;
        let now = self.clock.now_ms();
        let totals = self
            .store
            .usage(&principal.enterprise_id, &query, now)
            .await?;
        let groups = usage_groups(query.group_by, totals)?;
        let calls = groups.iter().map(|g| g.calls).sum();
        // A fold from +0.0: the float sum of nothing is -0.0, which JSON would show.
        let minutes = groups.iter().fold(0.0, |sum, g| sum + g.minutes_in_call);
        Ok(UsageReport {
            query,
            at: now,
            groups,
            calls,
            minutes_in_call: (minutes * 10.0).round() / 10.0,
        })
    }

    /// Every session overlapping the period, oldest first; `Invalid` when there are more than
    /// [`MAX_SESSION_EXPORT`] (a CSV cut short would look complete).
    pub async fn sessions(
        &self,
        principal: &Principal,
        query: UsageQuery,
    ) -> Result<Vec<CallSession>> {
        principal.authorize(Operation::ListCallSessions, Target::Enterprise)?;
        let sessions = self
            .store
            .call_sessions(
                &principal.enterprise_id,
                query.from,
                query.to,
                MAX_SESSION_EXPORT + 1,
            )
            .await?;
        if sessions.len() > MAX_SESSION_EXPORT {
            return Err(Error::invalid(format!(
                "from, to: the period holds more than {MAX_SESSION_EXPORT} call sessions; \
                 ask for a shorter one"
            )));
        }
        Ok(sessions)
    }
}

//! UsageStore of the in-memory store, and the call sessions following the status writes
//! (`roomlink_domain::usage::SESSION_RULE`).

use super::{MemoryStore, State};
use async_trait::async_trait;
use roomlink_domain::error::Result;
use roomlink_domain::ids::EnterpriseId;
use roomlink_domain::ports::UsageStore;
use roomlink_domain::status::EndpointStatus;
use roomlink_domain::usage::{self, CallSession, JoinSource, UsageQuery, UsageTotals};
use roomlink_domain::webhook::Event;

impl State {
    /// After `status` was written: its room's call session follows it.
    pub(crate) fn follow_sessions(&mut self, enterprise: &EnterpriseId, status: &EndpointStatus) {
        let open = self.sessions.iter_mut().find(|(e, s)| {
            e == enterprise && s.endpoint_id == status.endpoint_id && s.ended_ms.is_none()
        });
        match (open, status.call_active) {
            (Some((_, session)), false) => {
                session.ended_ms = Some(status.timestamp);
                let event = Event::call_ended(
                    session.endpoint_id.as_str(),
                    session.started_ms,
                    status.timestamp,
                    session.source.as_str(),
                );
                self.emit(enterprise, &event, None);
            }
            (None, true) => {
                // Spent by the call it opens.
                let join = self
                    .joins
                    .remove(&(enterprise.clone(), status.endpoint_id.clone()));
                self.sessions.push((
                    enterprise.clone(),
                    CallSession {
                        endpoint_id: status.endpoint_id.clone(),
                        started_ms: status.timestamp,
                        ended_ms: None,
                        source: JoinSource::attributed(join, status.timestamp),
                    },
                ));
                let source = JoinSource::attributed(join, status.timestamp);
                let event = Event::call_started(
                    status.endpoint_id.as_str(),
                    status.timestamp,
                    source.as_str(),
                );
                self.emit(enterprise, &event, None);
            }
            _ => {}
        }
    }
}

#[async_trait]
impl UsageStore for MemoryStore {
    async fn usage(
        &self,
        enterprise: &EnterpriseId,
        query: &UsageQuery,
        now: i64,
    ) -> Result<Vec<UsageTotals>> {
        let s = self.lock()?;
        let mine = s
            .sessions
            .iter()
            .filter(|(e, _)| e == enterprise)
            .map(|(_, session)| session);
        Ok(usage::sum_sessions(query, mine, now))
    }

    async fn call_sessions(
        &self,
        enterprise: &EnterpriseId,
        from: i64,
        to: i64,
        limit: usize,
    ) -> Result<Vec<CallSession>> {
        let s = self.lock()?;
        let mut found: Vec<CallSession> = s
            .sessions
            .iter()
            .filter(|(e, session)| {
                e == enterprise
                    && session.started_ms < to
                    && session.ended_ms.is_none_or(|end| end > from)
            })
            .map(|(_, session)| session.clone())
            .collect();
        // Stable: sessions that started together stay in the order they were opened.
        found.sort_by_key(|session| session.started_ms);
        found.truncate(limit);
        Ok(found)
    }

    async fn purge_call_sessions(&self, cutoff: i64) -> Result<u64> {
        let mut s = self.lock()?;
        let before = s.sessions.len();
        s.sessions
            .retain(|(_, session)| session.ended_ms.is_none_or(|end| end >= cutoff));
        Ok((before - s.sessions.len()) as u64)
    }
}

//! Inbound listeners' health: once per status poll round, the poll lease holder asks each
//! inbound listener what it is (`GET /v1/info`) and records the answer for the listeners API
//! (`health`, `listenerVersion`, `lastContact`). Outbound listeners need no check: their open
//! connection says it.

use super::control::{ControlService, listener_secret};
use futures::future::join_all;
use roomlink_domain::error::Result;
use roomlink_domain::ids::EnterpriseId;
use roomlink_domain::listener::{ListenerCheck, ListenerRoute, ListenerService};
use roomlink_domain::ports::ListenerAddress;

impl ControlService {
    /// Checks every inbound listener of the enterprise, all at once (each bounded by the
    /// command timeout), and records the outcomes. A failed check is recorded with the
    /// listener, not as a failure: an idle listener that is down would add one every round.
    /// Returns how many listeners were checked.
    pub async fn check_listeners(&self, enterprise: &EnterpriseId) -> Result<usize> {
        let listeners = self.listeners.list_listeners(enterprise).await?;
        let inbound = listeners
            .into_iter()
            .filter(|l| matches!(l.route(), ListenerRoute::Http(_)));
        let checks = join_all(inbound.map(|listener| self.check(listener))).await;
        for check in &checks {
            self.listeners.record_check(check).await?;
        }
        Ok(checks.len())
    }

    async fn check(&self, listener: ListenerService) -> ListenerCheck {
        let answer = match listener_secret(self.sealer.as_ref(), &listener) {
            Ok(listener_secret) => {
                let address = ListenerAddress {
                    listener_id: listener.id.clone(),
                    route: listener.route(),
                    listener_secret,
                };
                self.transport.check(&address).await
            }
            Err(e) => Err(e),
        };
        let now = self.clock.now_ms();
        match answer {
            Ok(version) => ListenerCheck::answered(listener.id, now, version),
            Err(error) => ListenerCheck::failed(listener.id, now, &error),
        }
    }
}

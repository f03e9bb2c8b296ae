//! The resolver the HTTP client connects through: it resolves a name and hands on only the
//! addresses the rule permits. Checking when a subscription is saved is not enough: a name
//! can resolve elsewhere by the time of an attempt (DNS rebinding), so the rule applies to
//! the very addresses connected to.

use crate::target::{Refused, permitted};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use roomlink_domain::webhook::target::TargetRule;
use std::net::SocketAddr;

#[derive(Debug, Clone, Copy)]
pub struct GuardedResolver {
    pub rule: TargetRule,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let rule = self.rule;
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // Port 0: the client puts the URL's port in (reqwest::dns::Resolve's contract).
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map_err(|_| Refused("the host name does not resolve".to_owned()))?
                .collect();
            let kept = permitted(rule, addrs).map_err(Refused)?;
            Ok(Box::new(kept.into_iter()) as Addrs)
        })
    }
}

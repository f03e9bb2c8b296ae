//! `[webhooks]`: delivering webhooks.

use super::SettingsError;
use serde::Deserialize;

/// Delivering webhooks (docs/operations.md "Webhooks").
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookSettings {
    /// Which non-public networks targets may be in: a comma-separated list of `loopback` and
    /// `private`; empty (the default) allows public addresses only.
    pub allow_networks: String,
    /// The hosts subscriptions may name, comma-separated; empty (the default): any host whose
    /// addresses `allow_networks` permits.
    pub allowed_hosts: String,
    /// How long an attempt waits for the receiver's answer.
    pub timeout_ms: u64,
    /// How long an instance's claim on a subscription's outbox lasts; a stopped instance's
    /// claims are taken over after it. Longer than `timeout_ms`.
    pub lease_secs: u64,
    /// How often each instance looks for deliveries due.
    pub delivery_interval_ms: u64,
}

impl WebhookSettings {
    /// `allow_networks` read: `SettingsError` naming a word that is neither `loopback` nor
    /// `private`.
    pub fn target_rule(
        &self,
    ) -> Result<roomlink_domain::webhook::target::TargetRule, SettingsError> {
        let mut rule = roomlink_domain::webhook::target::TargetRule::default();
        for word in self
            .allow_networks
            .split(',')
            .map(str::trim)
            .filter(|w| !w.is_empty())
        {
            match word {
                "loopback" => rule.allow_loopback = true,
                "private" => rule.allow_private_networks = true,
                _ => {
                    return Err(SettingsError::new(
                        "webhooks.allow_networks: a comma-separated list of loopback and private",
                    ));
                }
            }
        }
        Ok(rule)
    }
}

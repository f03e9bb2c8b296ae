//! `[templates]`: running template jobs.

use serde::Deserialize;

/// Running template jobs (docs/operations.md "Applying a template").
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TemplateJobSettings {
    /// How long an instance's claim on a running job lasts without a room finished; a
    /// stopped instance's jobs are resumed after it (by any instance, itself restarted too).
    pub job_lease_secs: u64,
    /// Rooms of one listener service written at once.
    pub rooms_per_listener: u64,
}

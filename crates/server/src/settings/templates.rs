//! `[templates]`: running template jobs, and checking assigned rooms for drift.

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
    /// How long a finished job (and what it replaced, for its undo) is kept.
    pub job_retention_days: u32,
    /// How often a room assigned a template is checked for drift.
    pub drift_check_minutes: u32,
    /// Rooms of one listener service checked per status poll round (0: no checks in rounds).
    pub drift_checks_per_round: u32,
}

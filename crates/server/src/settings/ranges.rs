//! The numeric settings' allowed values, checked when the settings are read.

use super::SettingsError;

/// The allowed values of a numeric setting.
pub struct Range {
    pub key: &'static str,
    pub bounds: Bounds,
}

#[derive(Clone, Copy)]
pub enum Bounds {
    /// A whole number from `min` to `max`.
    Whole { min: u64, max: u64 },
    /// A finite number at least `min`.
    AtLeast { min: f64 },
}

/// Every numeric setting and its range (`docs/operations.md` lists the same).
pub const RANGES: &[Range] = &[
    whole("server.workers", 0, 1024),
    whole("server.shutdown_timeout_secs", 1, 3600),
    whole("server.endpoint_list_cache_mib", 0, 65_536),
    whole("database.max_connections", 1, 1000),
    whole("database.connect_timeout_ms", 1, 600_000),
    whole("platform.oauth2.timeout_ms", 1, 600_000),
    whole("platform.oauth2.cache_ttl_ms", 0, 86_400_000),
    whole("listener.command_timeout_ms", 1, 600_000),
    whole("listener.status_poll_interval_ms", 1000, 86_400_000),
    whole("pairing.rotation_interval_secs", 60, 31_536_000),
    whole("audit.retention_days", 1, 36_500),
    whole("usage.retention_days", 1, 36_500),
    whole("inventory.refresh_minutes", 1, 10_080),
    whole("inventory.reads_per_round", 0, 1000),
    whole("webhooks.timeout_ms", 100, 60_000),
    whole("webhooks.lease_secs", 5, 3_600),
    whole("webhooks.delivery_interval_ms", 50, 60_000),
    whole("templates.job_lease_secs", 5, 3_600),
    whole("templates.rooms_per_listener", 1, 16),
    whole("templates.job_retention_days", 1, 3_650),
    whole("templates.drift_check_minutes", 1, 10_080),
    whole("templates.drift_checks_per_round", 0, 1000),
    whole("security.bcrypt_cost", 4, 31),
    whole("security.verified_password_cache_secs", 0, 3600),
    whole("security.token_cache_ms", 0, 60_000),
    whole("security.stream_recheck_ms", 1_000, 3_600_000),
    whole("calendar.auto_join_lead_secs", 0, 3600),
    whole("calendar.auto_join_grace_secs", 0, 86_400),
    whole("calendar.auto_join_interval_ms", 100, 3_600_000),
    whole("calendar.poll_interval_ms", 0, 3_600_000),
    whole("calendar.requests_per_second", 0, 100_000),
    whole("calendar.push_interval_ms", 100, 86_400_000),
    Range {
        key: "limits.address_rate_per_sec",
        bounds: Bounds::AtLeast { min: 0.0 },
    },
    whole("limits.address_burst", 0, 1_000_000),
    Range {
        key: "limits.token_rate_per_sec",
        bounds: Bounds::AtLeast { min: 0.0 },
    },
    whole("limits.token_burst", 0, 1_000_000),
    whole("limits.auth_failures_per_minute", 0, 1_000_000),
    whole("limits.max_header_bytes", 0, 131_072),
];

const fn whole(key: &'static str, min: u64, max: u64) -> Range {
    Range {
        key,
        bounds: Bounds::Whole { min, max },
    }
}

impl Range {
    /// Refuses a value outside the range. Numbers are quoted; anything else is not, as a
    /// misplaced value could be a secret.
    pub(super) fn check(&self, value: &config::ValueKind) -> Result<(), SettingsError> {
        use config::ValueKind;
        let number: Option<f64> = match value {
            ValueKind::I64(n) => Some(*n as f64),
            ValueKind::I128(n) => Some(*n as f64),
            ValueKind::U64(n) => Some(*n as f64),
            ValueKind::U128(n) => Some(*n as f64),
            ValueKind::Float(x) => Some(*x),
            ValueKind::String(text) => text.trim().parse::<f64>().ok(),
            _ => None,
        };
        let key = self.key;
        let Some(number) = number.filter(|x| x.is_finite()) else {
            return Err(SettingsError::new(format!(
                "{key}: must be a number {}",
                self.bounds
            )));
        };
        let fits = match self.bounds {
            Bounds::Whole { min, max } => {
                number.fract() == 0.0 && number >= min as f64 && number <= max as f64
            }
            Bounds::AtLeast { min } => number >= min,
        };
        if fits {
            return Ok(());
        }
        let what = match self.bounds {
            Bounds::Whole { .. } if number.fract() != 0.0 => "a whole number ",
            _ => "",
        };
        Err(SettingsError::new(format!(
            "{key}: must be {what}{} (got {number})",
            self.bounds
        )))
    }
}

impl std::fmt::Display for Bounds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Bounds::Whole { min, max } => write!(f, "from {min} to {max}"),
            Bounds::AtLeast { min } => write!(f, ">= {min}"),
        }
    }
}

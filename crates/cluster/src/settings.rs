//! How to reach NATS, and the client options roomlink always uses.

use crate::subject::DEFAULT_PREFIX;
use async_nats::{ConnectOptions, Event, ServerAddr};
use roomlink_domain::secret::Secret;
use std::path::PathBuf;
use std::time::Duration;
use tracing::{debug, info, warn};

/// Where the NATS servers are and how to authenticate. Credentials go in `user`/`password` or
/// `token`, never in the URL (a URL ends up in logs). Production NATS should use TLS: request
/// bodies may hold endpoint passwords.
#[derive(Debug, Clone)]
pub struct ClusterSettings {
    /// One server URL or several separated by commas (`nats://10.0.0.1:4222,nats://...`);
    /// `tls://` forces TLS.
    pub url: String,
    pub user: Option<String>,
    pub password: Option<Secret>,
    pub token: Option<Secret>,
    /// Require TLS (implied by `ca_file`).
    pub tls: bool,
    /// A PEM file of CA certificates to trust besides the system's.
    pub ca_file: Option<PathBuf>,
    /// The first token(s) of every subject: instances of different deployments sharing one
    /// NATS must use different prefixes.
    pub subject_prefix: String,
}

impl Default for ClusterSettings {
    fn default() -> Self {
        ClusterSettings {
            url: "nats://127.0.0.1:4222".into(),
            user: None,
            password: None,
            token: None,
            tls: false,
            ca_file: None,
            subject_prefix: DEFAULT_PREFIX.into(),
        }
    }
}

/// Why [`connect`](crate::connect) refused to start.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error("the instance id must be 1 to 64 of [A-Za-z0-9_-]")]
    InstanceId,
    #[error("the subject prefix must be dot-separated tokens of [A-Za-z0-9_-]")]
    SubjectPrefix,
    #[error("invalid NATS URL: {0}")]
    Url(String),
    #[error("invalid cluster settings: {0}")]
    Settings(&'static str),
    #[error("cannot start the NATS client: {0}")]
    Connect(String),
    #[error("cannot subscribe to the event subject: {0}")]
    Subscribe(String),
    #[error("cannot publish events: {0}")]
    Publish(String),
}

impl ClusterSettings {
    pub(crate) fn servers(&self) -> Result<Vec<ServerAddr>, ClusterError> {
        let urls: Vec<&str> = self.url.split(',').map(str::trim).collect();
        if urls.iter().any(|u| u.contains('@')) {
            // Refused without echoing the URL: it holds a credential.
            return Err(ClusterError::Settings(
                "credentials go in user/password or token, not in the URL",
            ));
        }
        urls.iter()
            .map(|u| u.parse().map_err(|_| ClusterError::Url((*u).to_owned())))
            .collect()
    }

    pub(crate) fn options(&self, instance: &str) -> Result<ConnectOptions, ClusterError> {
        let mut options = ConnectOptions::new()
            .name(format!("roomlink {instance}"))
            .retry_on_initial_connect()
            .max_reconnects(None)
            .reconnect_delay_callback(reconnect_delay)
            // Own events are delivered in-process at once (see `events`), not echoed back.
            .no_echo()
            .event_callback(|event| async move { log_event(event) });
        options = match (&self.user, &self.password, &self.token) {
            (None, None, None) => options,
            (Some(user), Some(password), None) => {
                options.user_and_password(user.clone(), password.expose().to_owned())
            }
            (None, None, Some(token)) => options.token(token.expose().to_owned()),
            (_, _, Some(_)) => {
                return Err(ClusterError::Settings(
                    "either user and password or a token, not both",
                ));
            }
            _ => return Err(ClusterError::Settings("a user and a password go together")),
        };
        if let Some(ca) = &self.ca_file {
            options = options.add_root_certificates(ca.clone());
        }
        if self.tls || self.ca_file.is_some() {
            options = options.require_tls(true);
        }
        Ok(options)
    }
}

/// Connection events; none of them carries a credential.
fn log_event(event: Event) {
    match event {
        Event::Connected => info!("cluster: connected to NATS"),
        Event::Disconnected => warn!(
            "cluster: disconnected from NATS; events are lost and listeners held elsewhere \
             are offline until it reconnects"
        ),
        Event::LameDuckMode => info!("cluster: the NATS server is entering lame duck mode"),
        Event::SlowConsumer(sid) => warn!(sid, "cluster: slow consumer, messages dropped"),
        Event::ServerError(e) => warn!(error = %e, "cluster: NATS server error"),
        Event::ClientError(e) => warn!(error = %e, "cluster: NATS client error"),
        Event::Draining | Event::Closed => debug!(%event, "cluster: NATS connection"),
    }
}

/// The pause before reconnection attempt `attempts`: at once, then doubling from 2 ms up to
/// 1 s. The client's default goes up to 4 s; a NATS server back after an outage should find
/// every instance back within about a second (docs/cluster.md), and an attempt a second
/// costs a NATS server nothing.
fn reconnect_delay(attempts: usize) -> Duration {
    const MAX: Duration = Duration::from_secs(1);
    match attempts {
        0 | 1 => Duration::ZERO,
        n => u32::try_from(n - 1)
            .ok()
            .and_then(|exp| 2u64.checked_pow(exp))
            .map_or(MAX, |ms| Duration::from_millis(ms).min(MAX)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconnection_attempts_back_off_to_a_second() {
        let delays: Vec<u64> = (0..13)
            .map(|n| reconnect_delay(n).as_millis() as u64)
            .collect();
        assert_eq!(
            delays,
            [0, 0, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000, 1000]
        );
        assert_eq!(reconnect_delay(usize::MAX), Duration::from_secs(1));
    }

    #[test]
    fn credentials_stay_out_of_urls_and_debug() {
        let mut s = ClusterSettings {
            url: "nats://u:hunter2@host:4222".into(),
            ..Default::default()
        };
        let e = s.servers().unwrap_err().to_string();
        assert!(!e.contains("hunter2"), "{e}");
        s.url = "nats://a:4222, nats://b:4222".into();
        assert_eq!(s.servers().unwrap().len(), 2);
        s.token = Some(Secret::new("hunter2"));
        assert!(!format!("{s:?}").contains("hunter2"));
        s.user = Some("u".into());
        assert!(s.options("a").is_err());
        s.token = None;
        assert!(s.options("a").is_err());
        s.password = Some(Secret::new("hunter2"));
        assert!(s.options("a").is_ok());
    }
}

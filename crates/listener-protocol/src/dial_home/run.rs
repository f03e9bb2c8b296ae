//! The connect loop: dial the next URL, serve the socket while it lasts, wait a jittered
//! backoff, again, until shutdown.

use crate::dial_home::Handler;
use crate::dial_home::backoff::Backoff;
use crate::dial_home::connect::{Dialer, Failed};
use crate::dial_home::session::{Ended, serve};
use crate::dial_home::settings::DialHomeSettings;
use crate::dial_home::tls::client_config;
use crate::version::Version;
use roomlink_domain::ports::Clock;
use roomlink_domain::system::SystemClock;
use std::future::Future;
use std::sync::Arc;
use tokio::time::Instant;

/// Keeps a connection to roomlink until `shutdown` completes (then closes it with 1001).
/// Fails only at the start, for settings it cannot use.
pub async fn run<H: Handler>(
    settings: DialHomeSettings,
    version: Version,
    handler: Arc<H>,
    shutdown: impl Future<Output = ()>,
) -> Result<(), String> {
    let urls = settings.connect_urls()?;
    let tls = if urls.iter().any(|u| u.starts_with("wss://")) {
        Some(client_config(settings.ca_file.as_deref())?)
    } else {
        None
    };
    let dialer = Dialer {
        secret: settings.secret.clone(),
        version,
        tls,
    };
    let timing = &settings.timing;
    let mut backoff = Backoff::new(timing.initial_delay, timing.max_delay);
    let shutdown = std::pin::pin!(shutdown);
    let mut shutdown = shutdown;
    let mut attempt = 0usize;
    loop {
        let url = &urls[attempt % urls.len()];
        let dialed = tokio::select! {
            () = shutdown.as_mut() => return Ok(()),
            dialed = tokio::time::timeout(timing.handshake_timeout, dialer.dial(url)) => dialed,
        };
        match dialed {
            Ok(Ok(socket)) => {
                let up = Instant::now();
                let since_ms = SystemClock.now_ms();
                tracing::info!(%url, since_ms, "connected to roomlink");
                let ended = serve(
                    socket,
                    &handler,
                    version,
                    timing.idle_timeout,
                    &mut shutdown,
                )
                .await;
                tracing::info!(%url, reason = %ended, up_ms = up.elapsed().as_millis() as u64,
                    "disconnected from roomlink");
                if ended == Ended::Shutdown {
                    return Ok(());
                }
                if up.elapsed() >= timing.reset_after {
                    backoff.reset();
                }
                // The record is gone or changed: the next attempt will most likely be refused.
                if matches!(
                    ended,
                    Ended::Closed {
                        code: Some(4001),
                        ..
                    }
                ) {
                    backoff.to_max();
                }
            }
            Ok(Err(Failed::Refused { status })) => {
                let why = if status == 400 {
                    "is the listener registered with \"connection\": \"outbound\"?"
                } else {
                    "check the listener id and the secret"
                };
                tracing::warn!(%url, status, "roomlink refused the connection ({status}): {why}");
                backoff.to_max();
            }
            Ok(Err(Failed::Other(error))) => {
                tracing::warn!(%url, %error, "cannot connect to roomlink");
            }
            Err(_) => {
                tracing::warn!(%url, timeout_ms = timing.handshake_timeout.as_millis() as u64,
                    "cannot connect to roomlink: no WebSocket within the timeout");
            }
        }
        let wait = backoff.next_wait();
        let delay_ms = wait.as_millis() as u64;
        let next = &urls[(attempt + 1) % urls.len()];
        tracing::info!(url = %next, delay_ms, "reconnecting in {delay_ms} ms");
        tokio::select! {
            () = shutdown.as_mut() => return Ok(()),
            () = tokio::time::sleep(wait) => {}
        }
        attempt = attempt.wrapping_add(1);
    }
}

/// SIGINT or SIGTERM: when an outbound listener closes its connection and stops (in inbound
/// mode actix handles the signals itself).
pub async fn stop_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        () = interrupt => tracing::info!("SIGINT: closing the connection to roomlink"),
        () = terminate => tracing::info!("SIGTERM: closing the connection to roomlink"),
    }
}

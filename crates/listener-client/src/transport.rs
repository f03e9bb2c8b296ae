//! One exchange with a listener, over HTTP (a deadline, a bounded body, one optional retry)
//! or over the listener's own connection (its link).

use crate::errors::Call;
use reqwest::RequestBuilder;
use roomlink_domain::cluster::{LinkFailure, LinkRequest, ListenerLinks};
use roomlink_domain::error::Result;
use std::time::{Duration, Instant};

/// Status answers for 500 endpoints are a few hundred kilobytes; anything past this is not a
/// listener talking.
const MAX_ANSWER_BYTES: usize = 16 << 20;

/// A complete answer.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Whether a request may be sent twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// Commands: a second dial can drop the first call.
    Never,
    /// `info` and `status`: once more if the connection broke after the request went out.
    OnceOnReset,
}

/// Sends `request` and reads the whole answer before `deadline`. `timeout` is the configured
/// command timeout, named in `CommandTimedOut`.
pub async fn exchange(
    call: &Call<'_>,
    request: RequestBuilder,
    deadline: Instant,
    timeout: Duration,
    retry: Retry,
) -> Result<Answer> {
    let spare = match retry {
        Retry::OnceOnReset => request.try_clone(),
        Retry::Never => None,
    };
    let result = match (attempt(request, deadline).await, spare) {
        (Err(e), Some(again)) if is_reset(&e) => {
            // reqwest does not say whether the connection was a pooled one; a reset of a fresh
            // connection is retried too, which is harmless for these idempotent reads.
            tracing::debug!(listener = %call.listener_id, command = call.command, "retrying after a reset");
            attempt(again, deadline).await
        }
        (result, _) => result,
    };
    result.map_err(|e| call.from_transport(e, timeout))
}

/// A connection that broke mid-exchange (not refused, not slow).
fn is_reset(e: &reqwest::Error) -> bool {
    !e.is_connect() && !e.is_timeout() && !e.is_builder() && (e.is_request() || e.is_body())
}

async fn attempt(request: RequestBuilder, deadline: Instant) -> Result<Answer, reqwest::Error> {
    let remaining = deadline.saturating_duration_since(Instant::now());
    // A zero timeout would mean "none" to nobody; the smallest one fails at once as a timeout.
    let mut response = request
        .timeout(remaining.max(Duration::from_millis(1)))
        .send()
        .await?;
    let status = response.status().as_u16();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            // Keep what fits: the parse that follows fails and names the answer as not the
            // protocol, which is what an endless answer is.
            body.extend_from_slice(&chunk[..MAX_ANSWER_BYTES - body.len()]);
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Answer { status, body })
}

/// Sends `request` over the listener's link and waits for the answer until `deadline`. Links
/// are never retried: a request in flight when a socket closed may have reached the room.
pub async fn exchange_link(
    call: &Call<'_>,
    links: &dyn ListenerLinks,
    request: LinkRequest,
    deadline: Instant,
    timeout: Duration,
) -> Result<Answer> {
    let remaining = deadline.saturating_duration_since(Instant::now());
    match links.exchange(call.listener_id, request, remaining).await {
        Ok(answer) => {
            let mut body = answer.body.into_bytes();
            body.truncate(MAX_ANSWER_BYTES);
            Ok(Answer {
                status: answer.status,
                body,
            })
        }
        Err(LinkFailure::Offline) => Err(call.offline(
            "the listener is not connected to roomlink, or its connection closed".to_owned(),
        )),
        Err(LinkFailure::TimedOut) => Err(call.timed_out(timeout)),
    }
}

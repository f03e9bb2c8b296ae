//! One outbound listener's socket, from the upgrade to the close: request frames out, answer
//! frames in, pings every [`PING_EVERY`], closed after [`IDLE_LIMIT`] with nothing heard.

use super::registry::{LinkRegistry, Outgoing, Waiting};
use actix_ws::{AggregatedMessage, AggregatedMessageStream, CloseCode, CloseReason, Session};
use roomlink_domain::cluster::LinkAnswer;
use roomlink_domain::ids::ListenerServiceId;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

pub(crate) const PING_EVERY: Duration = Duration::from_secs(15);
pub(crate) const IDLE_LIMIT: Duration = Duration::from_secs(45);
/// The largest frame either side sends (docs/listener-protocol.md).
pub(crate) const MAX_FRAME_BYTES: usize = 16 << 20;

/// An answer frame. `body` is kept as the listener wrote it: the listener client parses it.
#[derive(Deserialize)]
struct AnswerFrame<'a> {
    id: u64,
    status: u16,
    #[serde(default)]
    version: Option<String>,
    #[serde(borrow, default)]
    body: Option<&'a RawValue>,
}

/// Why a socket ended, for the log line.
#[derive(Debug)]
pub(crate) enum Ended {
    ClosedByListener,
    ClosedByRoomlink(&'static str),
    Idle,
    Broken(String),
}

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ended::ClosedByListener => f.write_str("closed by the listener"),
            Ended::ClosedByRoomlink(reason) => write!(f, "closed by roomlink: {reason}"),
            Ended::Idle => write!(f, "nothing heard for {} s", IDLE_LIMIT.as_secs()),
            Ended::Broken(cause) => write!(f, "broken: {cause}"),
        }
    }
}

/// Serves one socket until it closes; every request still waiting then answers `Offline`
/// (their senders are dropped with `waiting`).
pub(crate) async fn serve(
    registry: Arc<LinkRegistry>,
    listener: ListenerServiceId,
    mut session: Session,
    mut stream: AggregatedMessageStream,
) -> Ended {
    let (outbox, mut requests) = mpsc::unbounded_channel();
    let waiting = Arc::new(Waiting::default());
    let serial = registry.attach(&listener, outbox, waiting.clone());
    let mut ping = tokio::time::interval(PING_EVERY);
    ping.tick().await;
    let mut heard = Instant::now();
    let ended = loop {
        tokio::select! {
            message = stream.recv() => {
                heard = Instant::now();
                match message {
                    Some(Ok(AggregatedMessage::Text(text))) => answer(&listener, &waiting, &text),
                    Some(Ok(AggregatedMessage::Ping(bytes))) => {
                        if session.pong(&bytes).await.is_err() {
                            break Ended::ClosedByListener;
                        }
                    }
                    Some(Ok(AggregatedMessage::Pong(_))) => {}
                    Some(Ok(AggregatedMessage::Binary(_))) => {
                        tracing::warn!(listener = %listener, "binary frame from a listener ignored");
                    }
                    Some(Ok(AggregatedMessage::Close(_))) | None => break Ended::ClosedByListener,
                    Some(Err(e)) => break Ended::Broken(e.to_string()),
                }
            }
            outgoing = requests.recv() => match outgoing {
                Some(Outgoing::Frame(text)) => {
                    if session.text(text).await.is_err() {
                        break Ended::ClosedByListener;
                    }
                }
                Some(Outgoing::Close(code, reason)) => {
                    let _ = session
                        .clone()
                        .close(Some(CloseReason {
                            code: CloseCode::Other(code),
                            description: Some(reason.to_owned()),
                        }))
                        .await;
                    break Ended::ClosedByRoomlink(reason);
                }
                None => break Ended::ClosedByRoomlink("unregistered"),
            },
            _ = ping.tick() => {
                if heard.elapsed() > IDLE_LIMIT {
                    let _ = session.clone().close(Some(CloseCode::Away.into())).await;
                    break Ended::Idle;
                }
                if session.ping(b"").await.is_err() {
                    break Ended::ClosedByListener;
                }
            }
        }
    };
    registry.detach(&listener, serial);
    waiting
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clear();
    ended
}

/// Hands an answer frame to the request waiting for it; anything else is logged and dropped.
fn answer(listener: &ListenerServiceId, waiting: &Waiting, text: &str) {
    let frame = match serde_json::from_str::<AnswerFrame>(text) {
        Ok(frame) => frame,
        Err(e) => {
            // Never the frame itself: it may quote a room system's answer.
            tracing::warn!(listener = %listener, error = %e, "a listener frame is not an answer");
            return;
        }
    };
    let sender = waiting
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&frame.id);
    let Some(sender) = sender else {
        tracing::debug!(listener = %listener, id = frame.id, "late answer dropped");
        return;
    };
    let _ = sender.send(LinkAnswer {
        status: frame.status,
        version: frame.version,
        body: frame.body.map(|b| b.get().to_owned()).unwrap_or_default(),
    });
}

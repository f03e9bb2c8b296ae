//! One open socket: requests are read, each handled in its own task (a slow join never holds
//! up a status), answers written as they finish; the socket ends on a close, an error,
//! silence, a handler's reset or shutdown.

use crate::dial_home::Handler;
use crate::dial_home::connect::Socket;
use crate::dial_home::frames::{AnswerBody, Decoded, decode, encode};
use crate::server::{Answer, Route, no_handler};
use crate::version::Version;
use futures::{SinkExt, StreamExt};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

/// How long a closing socket waits for the other side's close frame.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

/// Why a socket ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// roomlink closed it (the close code, when it sent one).
    Closed { code: Option<u16>, reason: String },
    /// Nothing arrived for the idle timeout.
    Idle(Duration),
    /// The connection failed (reset, broken pipe, a protocol error).
    Failed(String),
    /// A handler asked for the connection to be dropped (the simulator's `listener_reset`).
    Reset,
    /// The listener is stopping; it closed with 1001.
    Shutdown,
}

impl fmt::Display for Ended {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ended::Closed { code, reason } => {
                let meaning = match code {
                    Some(1000) => "normal closure",
                    Some(1001) => "roomlink is stopping",
                    Some(4000) => "replaced by a newer connection of this listener id",
                    Some(4001) => {
                        "the listener record was deleted, made inbound or given a new secret"
                    }
                    _ => "",
                };
                match code {
                    Some(code) => write!(f, "closed by roomlink with {code}")?,
                    None => write!(f, "closed by roomlink")?,
                }
                if !meaning.is_empty() {
                    write!(f, " ({meaning})")?;
                }
                if !reason.is_empty() {
                    write!(f, ": {reason}")?;
                }
                Ok(())
            }
            Ended::Idle(after) => write!(f, "nothing received for {} s", after.as_secs()),
            Ended::Failed(why) => write!(f, "connection failed: {why}"),
            Ended::Reset => f.write_str("dropped without answering (simulated listener_reset)"),
            Ended::Shutdown => f.write_str("the listener is stopping"),
        }
    }
}

/// Serves requests on `socket` until it ends.
pub async fn serve<H: Handler, F: Future<Output = ()>>(
    socket: Socket,
    handler: &Arc<H>,
    version: Version,
    idle: Duration,
    shutdown: &mut Pin<&mut F>,
) -> Ended {
    let (mut sink, mut stream) = socket.split();
    // Dropping the set (the socket ended) aborts requests still running: nobody waits for them.
    let mut tasks: JoinSet<(u64, Answer)> = JoinSet::new();
    let mut deadline = Instant::now() + idle;
    let ended = loop {
        tokio::select! {
            () = shutdown.as_mut() => {
                let close = CloseFrame { code: CloseCode::Away, reason: "listener stopping".into() };
                let _ = sink.send(Message::Close(Some(close))).await;
                break Ended::Shutdown;
            }
            () = tokio::time::sleep_until(deadline) => break Ended::Idle(idle),
            Some(done) = tasks.join_next(), if !tasks.is_empty() => {
                let Ok((id, answer)) = done else {
                    tracing::error!("a request's handler panicked; it stays unanswered");
                    continue;
                };
                let Some(body) = AnswerBody::of(answer) else {
                    break Ended::Reset;
                };
                if let Err(e) = sink.send(Message::text(encode(id, version, body))).await {
                    break Ended::Failed(e.to_string());
                }
            }
            message = stream.next() => {
                deadline = Instant::now() + idle;
                let frame = match message {
                    None => break Ended::Failed("closed without a close frame".into()),
                    Some(Err(e)) => break Ended::Failed(e.to_string()),
                    Some(Ok(Message::Close(frame))) => break Ended::Closed {
                        code: frame.as_ref().map(|f| u16::from(f.code)),
                        reason: frame.map(|f| f.reason.to_string()).unwrap_or_default(),
                    },
                    // Pongs to pings are queued by tungstenite and sent on the next read.
                    Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => continue,
                    Some(Ok(Message::Text(text))) => text.as_bytes().to_vec(),
                    Some(Ok(Message::Binary(bytes))) => bytes.to_vec(),
                };
                match decode(&frame) {
                    Decoded::Request(request) => {
                        let handler = Arc::clone(handler);
                        tasks.spawn(async move {
                            let body = serde_json::to_vec(&request.body).unwrap_or_default();
                            let answer = match Route::of(&request.method, &request.path) {
                                Some(route) => handler.handle(route, &body).await,
                                None => Answer::failure(&no_handler(&request.method, &request.path)),
                            };
                            (request.id, answer)
                        });
                    }
                    Decoded::Invalid { id, failure } => {
                        tracing::warn!(id, message = %failure.message, "answered a frame that is not a request");
                        let text = encode(id, version, AnswerBody::of(Answer::failure(&failure))
                            .unwrap_or(AnswerBody::NotProtocol(String::new())));
                        if let Err(e) = sink.send(Message::text(text)).await {
                            break Ended::Failed(e.to_string());
                        }
                    }
                    Decoded::Unanswerable(why) => {
                        tracing::warn!(reason = %why, "dropped a frame without an id");
                    }
                }
            }
        }
    };
    // A close handshake is finished (tungstenite answers roomlink's close frame while reading,
    // and reads roomlink's answer to ours); a reset or a dead connection is simply dropped.
    if matches!(ended, Ended::Shutdown | Ended::Closed { .. }) {
        let _ = tokio::time::timeout(CLOSE_WAIT, async {
            while let Some(Ok(_)) = stream.next().await {}
        })
        .await;
    }
    ended
}

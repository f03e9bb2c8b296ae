//! Live updates to browsers as server-sent events (`text/event-stream`).
//!
//! [`LiveHub`] is a sink of the cluster bus: every instance hears every change (a status
//! written on one instance reaches browsers connected to any), numbers it, keeps the last
//! [`KEPT`] for reconnecting browsers and hands it to this instance's open streams. A stream
//! names only what changed (`event: statuses`, `health`, `inventory`, `listeners`); the page
//! reads that part again through the API, with the caller's rights, so no data travels on the
//! stream that the caller could not read anyway.
//!
//! Resuming: each event's `id:` is this process's epoch and the event's number. A browser that
//! reconnects sends it back (`Last-Event-ID`); what it missed is sent again when this process
//! still holds it, otherwise `event: resync` tells it to read everything again.
//!
//! Ending: a stream opened with a token ends when the token is revoked (the bus says so); one
//! opened with a service user's Basic credentials asks every `recheck_every` whether they
//! still hold (the user disabled, deleted or given a new password: no bus event names them,
//! and an admin command may run where no bus reaches).

use actix_web::web::Bytes;
use futures::future::BoxFuture;
use roomlink_domain::cluster::{ClusterEvent, EventSink};
use roomlink_domain::ids::EnterpriseId;
use roomlink_domain::live::{EventPosition, KEEP_ALIVE_MS, LiveTopic, RECONNECT_DELAY_MS};
use roomlink_domain::token::TokenHash;
use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::{broadcast, watch};

/// Changes kept for reconnecting browsers (all enterprises together): at one change per
/// enterprise and poll round, minutes of a fleet's changes.
const KEPT: usize = 4096;

/// Changes a slow stream may fall behind by before it is told to read everything again.
const BACKLOG: usize = 1024;

/// How often a stream opened with Basic credentials checks them, unless told otherwise
/// (`security.stream_recheck_ms`).
const RECHECK_EVERY: Duration = Duration::from_secs(60);

/// Asks whether the credentials a stream was opened with still hold; `false` ends it.
pub(crate) type CredentialCheck = Box<dyn FnMut() -> BoxFuture<'static, bool> + Send>;

/// A stream's periodic check, with the one under way (kept across the other events the
/// stream wakes for, so that a busy stream still completes its checks).
struct Recheck {
    every: tokio::time::Interval,
    check: CredentialCheck,
    pending: Option<BoxFuture<'static, bool>>,
}

/// The next answer of the stream's check; never, for a stream that has none.
async fn recheck(recheck: &mut Option<Recheck>) -> bool {
    let Some(r) = recheck else {
        return std::future::pending().await;
    };
    loop {
        if let Some(pending) = r.pending.as_mut() {
            let still = pending.await;
            r.pending = None;
            return still;
        }
        r.every.tick().await;
        r.pending = Some((r.check)());
    }
}

/// One change, numbered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    pub seq: u64,
    pub enterprise: EnterpriseId,
    pub topic: LiveTopic,
}

#[derive(Debug, Clone)]
enum Signal {
    Changed(Change),
    /// An access token was revoked: streams opened with it end.
    Revoked(TokenHash),
}

struct Kept {
    /// The number of the last change (0: none yet).
    seq: u64,
    recent: VecDeque<Change>,
}

/// Hands the bus's changes to this instance's open streams.
pub struct LiveHub {
    epoch: u64,
    kept: Mutex<Kept>,
    signals: broadcast::Sender<Signal>,
    stopping: watch::Sender<bool>,
    recheck_every: Duration,
}

impl Default for LiveHub {
    fn default() -> Self {
        LiveHub::new()
    }
}

/// Where a new stream starts.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Start {
    /// Sent nothing before (or resumed exactly where this process is): the stream starts at
    /// this position.
    Fresh(EventPosition),
    /// Resumed: these changes of its enterprise were missed.
    Replay(Vec<Change>),
    /// Resumed from a position this process cannot replay from (another process's, or
    /// changes no longer kept): the page reads everything again.
    Resync(EventPosition),
}

impl LiveHub {
    pub fn new() -> LiveHub {
        LiveHub::with_recheck(RECHECK_EVERY)
    }

    /// A hub whose Basic-credential streams check their credentials every `recheck_every`.
    pub fn with_recheck(recheck_every: Duration) -> LiveHub {
        // A process's epoch: random, so a restarted process or another instance never
        // passes for this one.
        let epoch =
            u64::from_str_radix(&roomlink_domain::ids::random_entity_id()[..16], 16).unwrap_or(1);
        LiveHub {
            epoch,
            kept: Mutex::new(Kept {
                seq: 0,
                recent: VecDeque::with_capacity(KEPT),
            }),
            signals: broadcast::channel(BACKLOG).0,
            stopping: watch::channel(false).0,
            recheck_every,
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn position(&self, seq: u64) -> EventPosition {
        EventPosition {
            epoch: self.epoch,
            seq,
        }
    }

    /// Numbers and keeps a change, and hands it to the open streams.
    fn changed(&self, enterprise: &EnterpriseId, topic: LiveTopic) {
        // Sent under the lock: a stream subscribing meanwhile gets it either from what is kept
        // or from the channel, never both and never neither.
        let mut kept = self.kept();
        kept.seq += 1;
        let change = Change {
            seq: kept.seq,
            enterprise: enterprise.clone(),
            topic,
        };
        if kept.recent.len() == KEPT {
            kept.recent.pop_front();
        }
        kept.recent.push_back(change.clone());
        let _ = self.signals.send(Signal::Changed(change));
    }

    /// Follows `enterprise`'s changes from `last_event_id` (a browser's `Last-Event-ID`).
    /// A new stream of `enterprise`'s changes; `check`, when given, is asked every
    /// `recheck_every` whether the caller's credentials still hold.
    pub(crate) fn follow(
        &self,
        enterprise: EnterpriseId,
        token: Option<TokenHash>,
        last_event_id: Option<&str>,
        check: Option<CredentialCheck>,
    ) -> LiveStream {
        let kept = self.kept();
        let signals = self.signals.subscribe();
        let start = match last_event_id {
            None => Start::Fresh(self.position(kept.seq)),
            Some(text) => match EventPosition::parse(text) {
                Some(p) if p.epoch == self.epoch && p.seq == kept.seq => {
                    Start::Fresh(self.position(kept.seq))
                }
                Some(p)
                    if p.epoch == self.epoch
                        && p.seq < kept.seq
                        && kept.recent.front().is_some_and(|c| c.seq <= p.seq + 1) =>
                {
                    Start::Replay(
                        kept.recent
                            .iter()
                            .filter(|c| c.seq > p.seq && c.enterprise == enterprise)
                            .cloned()
                            .collect(),
                    )
                }
                _ => Start::Resync(self.position(kept.seq)),
            },
        };
        let position = self.position(kept.seq);
        drop(kept);
        LiveStream {
            enterprise,
            token,
            start: Some(start),
            position,
            signals,
            stopping: self.stopping.subscribe(),
            keep_alive: tokio::time::interval_at(
                tokio::time::Instant::now() + Duration::from_millis(KEEP_ALIVE_MS),
                Duration::from_millis(KEEP_ALIVE_MS),
            ),
            recheck: check.map(|check| Recheck {
                every: tokio::time::interval_at(
                    tokio::time::Instant::now() + self.recheck_every,
                    self.recheck_every,
                ),
                check,
                pending: None,
            }),
            ended: false,
        }
    }

    /// Ends every open stream (roomlink is stopping): browsers reconnect, to another instance
    /// if there is one.
    pub fn close_all(&self) {
        self.stopping.send_replace(true);
    }

    /// Streams open on this instance.
    pub fn open_streams(&self) -> usize {
        self.signals.receiver_count()
    }
}

impl EventSink for LiveHub {
    fn apply(&self, event: &ClusterEvent) {
        match event {
            ClusterEvent::StatusesChanged { enterprise } => {
                self.changed(enterprise, LiveTopic::Statuses)
            }
            ClusterEvent::FleetChanged { enterprise, topic } => self.changed(enterprise, *topic),
            ClusterEvent::TokenDeleted { hash } => {
                let _ = self.signals.send(Signal::Revoked(hash.clone()));
            }
            ClusterEvent::ListenerChanged { .. }
            | ClusterEvent::LinkTaken { .. }
            | ClusterEvent::RequestsAdmitted { .. } => {}
        }
    }
}

/// One browser's stream: [`LiveStream::next_chunk`] until `None`.
pub(crate) struct LiveStream {
    enterprise: EnterpriseId,
    /// The token the stream was opened with (a ticket's or the header's), if any.
    token: Option<TokenHash>,
    start: Option<Start>,
    /// The last position sent.
    position: EventPosition,
    signals: broadcast::Receiver<Signal>,
    stopping: watch::Receiver<bool>,
    keep_alive: tokio::time::Interval,
    recheck: Option<Recheck>,
    ended: bool,
}

/// One event in the stream's framing.
fn event(id: Option<EventPosition>, name: &str, data: &str) -> Bytes {
    let id = id.map_or(String::new(), |p| format!("id: {}\n", p.render()));
    Bytes::from(format!("{id}event: {name}\ndata: {data}\n\n"))
}

fn topic_event(change: &Change, epoch: u64) -> Bytes {
    event(
        Some(EventPosition {
            epoch,
            seq: change.seq,
        }),
        change.topic.name(),
        &format!(r#"{{"topic":"{}"}}"#, change.topic.name()),
    )
}

impl LiveStream {
    /// The next bytes to send; `None` once the stream has ended.
    pub(crate) async fn next_chunk(&mut self) -> Option<Bytes> {
        if self.ended {
            return None;
        }
        if let Some(start) = self.start.take() {
            return Some(self.opening(start));
        }
        loop {
            tokio::select! {
                // An ended hub stops its streams too.
                _ = async { drop(self.stopping.wait_for(|stopping| *stopping).await) } => {
                    return Some(self.end("shuttingDown"));
                }
                signal = self.signals.recv() => match signal {
                    Ok(Signal::Changed(change)) => {
                        if change.enterprise == self.enterprise && change.seq > self.position.seq {
                            self.position.seq = change.seq;
                            return Some(topic_event(&change, self.position.epoch));
                        }
                    }
                    Ok(Signal::Revoked(hash)) => {
                        if self.token.as_ref() == Some(&hash) {
                            return Some(self.end("tokenRevoked"));
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        return Some(event(
                            None,
                            "resync",
                            r#"{"reason":"fellBehind"}"#,
                        ));
                    }
                    Err(broadcast::error::RecvError::Closed) => return None,
                },
                _ = self.keep_alive.tick() => return Some(Bytes::from_static(b": keep-alive\n\n")),
                still = recheck(&mut self.recheck) => {
                    if !still {
                        return Some(self.end("credentialsRevoked"));
                    }
                }
            }
        }
    }

    fn opening(&mut self, start: Start) -> Bytes {
        let mut text = format!("retry: {RECONNECT_DELAY_MS}\n\n").into_bytes();
        match start {
            Start::Fresh(p) => {
                self.position = p;
                text.extend_from_slice(&event(Some(p), "ready", "{}"));
            }
            Start::Resync(p) => {
                self.position = p;
                text.extend_from_slice(&event(Some(p), "resync", r#"{"reason":"cannotResume"}"#));
            }
            Start::Replay(changes) => {
                for c in &changes {
                    text.extend_from_slice(&topic_event(c, self.position.epoch));
                }
                // The stream goes on from where this process is, missed or not.
                text.extend_from_slice(&event(Some(self.position), "ready", "{}"));
            }
        }
        Bytes::from(text)
    }

    /// The last event of a stream the server ends, saying why; a browser's `EventSource`
    /// reconnects by itself (and a revoked token's ticket then fails).
    fn end(&mut self, reason: &str) -> Bytes {
        self.ended = true;
        event(None, "closing", &format!(r#"{{"reason":"{reason}"}}"#))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enterprise(id: &str) -> EnterpriseId {
        EnterpriseId::from_trusted(id.into())
    }

    fn text(b: Bytes) -> String {
        String::from_utf8(b.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn a_stream_gets_its_enterprises_changes_in_order_and_resumes_where_it_was() {
        let hub = LiveHub::new();
        let (e, other) = (enterprise("e"), enterprise("other"));
        let mut stream = hub.follow(e.clone(), None, None, None);
        let opening = text(stream.next_chunk().await.unwrap());
        let epoch = format!("{:x}", hub.epoch);
        assert_eq!(
            opening,
            format!("retry: 3000\n\nid: {epoch}.0\nevent: ready\ndata: {{}}\n\n")
        );
        hub.apply(&ClusterEvent::StatusesChanged {
            enterprise: other.clone(),
        });
        hub.apply(&ClusterEvent::FleetChanged {
            enterprise: e.clone(),
            topic: LiveTopic::Health,
        });
        assert_eq!(
            text(stream.next_chunk().await.unwrap()),
            format!("id: {epoch}.2\nevent: health\ndata: {{\"topic\":\"health\"}}\n\n"),
            "the other enterprise's change is not sent"
        );
        hub.apply(&ClusterEvent::StatusesChanged {
            enterprise: e.clone(),
        });
        // Reconnecting from .1: the change of .2 and .3 (its own) again, then ready at .3.
        let mut again = hub.follow(e.clone(), None, Some(&format!("{epoch}.1")), None);
        let replay = text(again.next_chunk().await.unwrap());
        assert_eq!(
            replay,
            format!(
                "retry: 3000\n\nid: {epoch}.2\nevent: health\ndata: {{\"topic\":\"health\"}}\n\n\
                 id: {epoch}.3\nevent: statuses\ndata: {{\"topic\":\"statuses\"}}\n\n\
                 id: {epoch}.3\nevent: ready\ndata: {{}}\n\n"
            )
        );
        // Another process's id, or a number from the future: read everything again.
        for id in ["1.1".to_owned(), format!("{epoch}.9"), "garbage".to_owned()] {
            let mut s = hub.follow(e.clone(), None, Some(&id), None);
            let opening = text(s.next_chunk().await.unwrap());
            assert!(opening.contains("event: resync\n"), "{id}: {opening}");
            assert!(opening.contains(&format!("id: {epoch}.3\n")), "{opening}");
        }
    }

    #[tokio::test]
    async fn a_resume_older_than_what_is_kept_resyncs() {
        let hub = LiveHub::new();
        let e = enterprise("e");
        for _ in 0..KEPT + 2 {
            hub.apply(&ClusterEvent::StatusesChanged {
                enterprise: e.clone(),
            });
        }
        let epoch = format!("{:x}", hub.epoch);
        let mut s = hub.follow(e.clone(), None, Some(&format!("{epoch}.1")), None);
        assert!(text(s.next_chunk().await.unwrap()).contains("event: resync\n"));
        let mut s = hub.follow(e, None, Some(&format!("{epoch}.2")), None);
        let opening = text(s.next_chunk().await.unwrap());
        assert_eq!(opening.matches("event: statuses\n").count(), KEPT);
    }

    #[tokio::test]
    async fn revoking_its_token_or_stopping_ends_a_stream_with_why() {
        let hub = LiveHub::new();
        let e = enterprise("e");
        let hash = TokenHash::from_stored("ab".repeat(32));
        let mut by_token = hub.follow(e.clone(), Some(hash.clone()), None, None);
        let mut other = hub.follow(e.clone(), None, None, None);
        by_token.next_chunk().await.unwrap();
        other.next_chunk().await.unwrap();
        assert_eq!(hub.open_streams(), 2);
        hub.apply(&ClusterEvent::TokenDeleted { hash });
        assert_eq!(
            text(by_token.next_chunk().await.unwrap()),
            "event: closing\ndata: {\"reason\":\"tokenRevoked\"}\n\n"
        );
        assert!(by_token.next_chunk().await.is_none());
        hub.close_all();
        assert_eq!(
            text(other.next_chunk().await.unwrap()),
            "event: closing\ndata: {\"reason\":\"shuttingDown\"}\n\n"
        );
        assert!(other.next_chunk().await.is_none());
    }

    #[tokio::test(start_paused = true)]
    async fn a_quiet_stream_sends_keep_alive_comments() {
        let hub = LiveHub::new();
        let mut s = hub.follow(enterprise("e"), None, None, None);
        s.next_chunk().await.unwrap();
        // Time is paused: the runtime jumps to the keep-alive's deadline.
        assert_eq!(text(s.next_chunk().await.unwrap()), ": keep-alive\n\n");
    }

    #[tokio::test(start_paused = true)]
    async fn a_stream_whose_credentials_stop_holding_ends_at_its_next_check() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let hub = LiveHub::with_recheck(Duration::from_secs(60));
        let asked = Arc::new(AtomicUsize::new(0));
        let counted = asked.clone();
        // Holds at the first check, not at the second.
        let check: CredentialCheck = Box::new(move || {
            let n = counted.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move { n == 0 })
        });
        let mut s = hub.follow(enterprise("e"), None, None, Some(check));
        assert!(text(s.next_chunk().await.unwrap()).contains("event: ready"));
        let started = tokio::time::Instant::now();
        let mut keep_alives = 0;
        let closing = loop {
            let chunk = text(s.next_chunk().await.unwrap());
            if chunk.starts_with(": keep-alive") {
                keep_alives += 1;
                continue;
            }
            break chunk;
        };
        assert_eq!(
            closing,
            "event: closing\ndata: {\"reason\":\"credentialsRevoked\"}\n\n"
        );
        assert_eq!(asked.load(Ordering::SeqCst), 2, "checked twice");
        assert_eq!(started.elapsed(), Duration::from_secs(120));
        // Keep-alives at 20, 40, ... 100 s went out between the checks; the one due at 120 s
        // with the second check may go before it or not (the stream picks either).
        assert!(
            (5..=6).contains(&keep_alives),
            "the stream went on between the checks: {keep_alives}"
        );
        assert!(s.next_chunk().await.is_none());
    }
}

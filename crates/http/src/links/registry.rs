//! Which outbound listeners are connected here, and requests to them.
//!
//! Each held connection has an outbox (frames for its socket task to send) and a table of
//! requests waiting for their answers. A request is a frame with a fresh id; its answer comes
//! back through the socket task. A connection that closes drops its table, which answers every
//! waiting request `Offline`.

use async_trait::async_trait;
use roomlink_domain::cluster::{
    ClusterEvent, EventSink, LinkAnswer, LinkFailure, LinkObserver, LinkRequest, ListenerLinks,
};
use roomlink_domain::ids::ListenerServiceId;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Close codes (docs/listener-protocol.md).
pub const CLOSE_GOING_AWAY: u16 = 1001;
pub const CLOSE_REPLACED: u16 = 4000;
pub const CLOSE_CHANGED: u16 = 4001;

/// What a socket task is told to do.
#[derive(Debug)]
pub(crate) enum Outgoing {
    /// A request frame to send.
    Frame(String),
    /// Close the socket with this code and reason.
    Close(u16, &'static str),
}

/// Requests waiting for their answers on one connection, by frame id.
pub(crate) type Waiting = Mutex<HashMap<u64, oneshot::Sender<LinkAnswer>>>;

#[derive(Clone)]
struct Held {
    serial: u64,
    outbox: mpsc::UnboundedSender<Outgoing>,
    waiting: Arc<Waiting>,
}

/// The connections this instance holds.
pub struct LinkRegistry {
    instance: String,
    held: Mutex<HashMap<ListenerServiceId, Held>>,
    observer: RwLock<Option<Arc<dyn LinkObserver>>>,
    /// Connection serials and frame ids: unique within this process.
    counter: AtomicU64,
}

impl LinkRegistry {
    /// `instance` names this process among roomlink instances (random per start).
    pub fn new(instance: impl Into<String>) -> Self {
        LinkRegistry {
            instance: instance.into(),
            held: Mutex::default(),
            observer: RwLock::default(),
            counter: AtomicU64::new(1),
        }
    }

    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// Who hears of connections starting and ending here (the cluster bus).
    pub fn observe(&self, observer: Arc<dyn LinkObserver>) {
        *self
            .observer
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(observer);
    }

    /// How many connections are held here.
    pub fn count(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ListenerServiceId, Held>> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn observer(&self) -> Option<Arc<dyn LinkObserver>> {
        self.observer
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn next(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::Relaxed)
    }

    /// A new connection of `listener`; an older one held here is closed as replaced. Returns
    /// the connection's serial, for [`LinkRegistry::detach`].
    pub(crate) fn attach(
        &self,
        listener: &ListenerServiceId,
        outbox: mpsc::UnboundedSender<Outgoing>,
        waiting: Arc<Waiting>,
    ) -> u64 {
        let serial = self.next();
        let previous = self.lock().insert(
            listener.clone(),
            Held {
                serial,
                outbox,
                waiting,
            },
        );
        if let Some(previous) = previous {
            let _ = previous
                .outbox
                .send(Outgoing::Close(CLOSE_REPLACED, "replaced"));
        }
        if let Some(observer) = self.observer() {
            observer.attached(listener);
        }
        serial
    }

    /// The connection `serial` of `listener` ended; nothing happens if a newer one replaced it.
    pub(crate) fn detach(&self, listener: &ListenerServiceId, serial: u64) {
        let removed = {
            let mut held = self.lock();
            match held.get(listener) {
                Some(h) if h.serial == serial => held.remove(listener).is_some(),
                _ => false,
            }
        };
        if removed && let Some(observer) = self.observer() {
            observer.detached(listener);
        }
    }

    /// Closes the listener's connection held here, if any.
    pub fn close(&self, listener: &ListenerServiceId, code: u16, reason: &'static str) {
        if let Some(h) = self.lock().get(listener) {
            let _ = h.outbox.send(Outgoing::Close(code, reason));
        }
    }

    /// Closes every connection (roomlink is stopping): listeners reconnect to another
    /// instance.
    pub fn close_all(&self) {
        for h in self.lock().values() {
            let _ = h
                .outbox
                .send(Outgoing::Close(CLOSE_GOING_AWAY, "roomlink is stopping"));
        }
    }
}

/// A request frame: the body is JSON text already (written by the listener client).
fn frame(id: u64, request: &LinkRequest) -> String {
    let text = |s: &str| serde_json::Value::from(s).to_string();
    format!(
        r#"{{"id":{id},"method":{},"path":{},"body":{}}}"#,
        text(&request.method),
        text(&request.path),
        request.body.as_deref().unwrap_or("null")
    )
}

/// Forgets a waiting request whose caller stopped waiting (deadline or cancellation).
struct Forget<'a> {
    waiting: &'a Waiting,
    id: u64,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

#[async_trait]
impl ListenerLinks for LinkRegistry {
    async fn exchange(
        &self,
        listener: &ListenerServiceId,
        request: LinkRequest,
        timeout: Duration,
    ) -> Result<LinkAnswer, LinkFailure> {
        let held = self.lock().get(listener).cloned();
        let Some(held) = held else {
            return Err(LinkFailure::Offline);
        };
        let id = self.next();
        let (tx, rx) = oneshot::channel();
        held.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, tx);
        let _forget = Forget {
            waiting: &held.waiting,
            id,
        };
        if held
            .outbox
            .send(Outgoing::Frame(frame(id, &request)))
            .is_err()
        {
            return Err(LinkFailure::Offline);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(answer)) => Ok(answer),
            // The socket closed with the request unanswered.
            Ok(Err(_)) => Err(LinkFailure::Offline),
            Err(_) => Err(LinkFailure::TimedOut),
        }
    }

    fn held_here(&self, listener: &ListenerServiceId) -> bool {
        self.lock().contains_key(listener)
    }
}

/// Connections to close because of what happened elsewhere.
impl EventSink for LinkRegistry {
    fn apply(&self, event: &ClusterEvent) {
        match event {
            ClusterEvent::ListenerChanged {
                listener,
                drop_link: true,
            } => self.close(listener, CLOSE_CHANGED, "the listener record changed"),
            ClusterEvent::LinkTaken { listener, instance } if *instance != self.instance => {
                self.close(listener, CLOSE_REPLACED, "replaced")
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> ListenerServiceId {
        ListenerServiceId::from_trusted(s.to_owned())
    }

    fn request() -> LinkRequest {
        LinkRequest {
            method: "GET".into(),
            path: "/v1/info".into(),
            body: None,
        }
    }

    #[test]
    fn frames_quote_method_and_path_and_carry_the_body_as_json() {
        let r = LinkRequest {
            method: "POST".into(),
            path: "/v1/commands/join".into(),
            body: Some(r#"{"a":1}"#.into()),
        };
        assert_eq!(
            frame(7, &r),
            r#"{"id":7,"method":"POST","path":"/v1/commands/join","body":{"a":1}}"#
        );
        assert_eq!(
            frame(8, &request()),
            r#"{"id":8,"method":"GET","path":"/v1/info","body":null}"#
        );
    }

    #[tokio::test]
    async fn answers_are_matched_by_id_and_a_closed_socket_is_offline() {
        let registry = Arc::new(LinkRegistry::new("a"));
        let l = id("l1");
        assert_eq!(
            registry
                .exchange(&l, request(), Duration::from_secs(1))
                .await,
            Err(LinkFailure::Offline)
        );
        let (tx, mut rx) = mpsc::unbounded_channel();
        let waiting = Arc::new(Waiting::default());
        let serial = registry.attach(&l, tx, waiting.clone());
        assert!(registry.held_here(&l));
        // A socket task that answers the first frame.
        let answerer = tokio::spawn(async move {
            let Some(Outgoing::Frame(text)) = rx.recv().await else {
                panic!("no frame");
            };
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            let id = v["id"].as_u64().unwrap();
            let tx = waiting.lock().unwrap().remove(&id).unwrap();
            tx.send(LinkAnswer {
                status: 200,
                version: Some("3.0.0".into()),
                body: "{}".into(),
            })
            .unwrap();
            rx
        });
        let answer = registry
            .exchange(&l, request(), Duration::from_secs(5))
            .await
            .unwrap();
        assert_eq!(answer.status, 200);
        let mut rx = answerer.await.unwrap();
        // No answer: the deadline.
        let r = registry
            .exchange(&l, request(), Duration::from_millis(50))
            .await;
        assert_eq!(r, Err(LinkFailure::TimedOut));
        // A newer connection replaces this one: it is told to close.
        let (tx2, _rx2) = mpsc::unbounded_channel();
        let serial2 = registry.attach(&l, tx2, Arc::default());
        let _ = rx.recv().await; // the unanswered frame
        assert!(matches!(
            rx.recv().await,
            Some(Outgoing::Close(CLOSE_REPLACED, _))
        ));
        // The old connection's end does not detach the new one.
        registry.detach(&l, serial);
        assert!(registry.held_here(&l));
        registry.detach(&l, serial2);
        assert!(!registry.held_here(&l));
    }

    #[test]
    fn events_close_what_changed_elsewhere() {
        let registry = LinkRegistry::new("a");
        let (tx, mut rx) = mpsc::unbounded_channel();
        registry.attach(&id("l1"), tx, Arc::default());
        registry.apply(&ClusterEvent::LinkTaken {
            listener: id("l1"),
            instance: "a".into(),
        });
        assert!(rx.try_recv().is_err(), "its own taking closes nothing");
        registry.apply(&ClusterEvent::LinkTaken {
            listener: id("l1"),
            instance: "b".into(),
        });
        assert!(matches!(
            rx.try_recv(),
            Ok(Outgoing::Close(CLOSE_REPLACED, _))
        ));
        registry.apply(&ClusterEvent::ListenerChanged {
            listener: id("l1"),
            drop_link: true,
        });
        assert!(matches!(
            rx.try_recv(),
            Ok(Outgoing::Close(CLOSE_CHANGED, _))
        ));
    }
}

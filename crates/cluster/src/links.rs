//! Requests to outbound listeners wherever their connection is held: here through the local
//! registry, elsewhere as a NATS request to the holder, which serves `{prefix}.links.{id}`.

use crate::redact::JsonError;
use crate::subject::Subjects;
use async_nats::connection::State;
use async_nats::{Client, Message, Request, RequestErrorKind};
use async_trait::async_trait;
use futures::StreamExt;
use roomlink_domain::cluster::{
    ClusterEvent, EventBus, LinkAnswer, LinkFailure, LinkObserver, LinkRequest, ListenerLinks,
};
use roomlink_domain::ids::ListenerServiceId;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::runtime::Handle;
use tokio::task::AbortHandle;
use tokio::time::Instant;
use tracing::{debug, warn};

/// The longest wait a holder accepts from a request (a corrupt or hostile `timeout_ms` must
/// not keep a task alive for days).
const MAX_SERVED_TIMEOUT: Duration = Duration::from_secs(600);

/// How long the refusal of a malformed request may wait to be sent.
const MALFORMED_REPLY_WAIT: Duration = Duration::from_secs(1);

/// A request's payload. `request.body` may hold an endpoint password: never logged.
#[derive(Serialize, Deserialize)]
struct LinkCall {
    request: LinkRequest,
    /// What is left of the requester's deadline; the holder waits no longer.
    timeout_ms: u64,
}

/// A reply's payload: `{"Ok":{"status":..,"version":..,"body":..}}` or `{"Err":"Offline"}`.
type LinkReply = Result<LinkAnswer, LinkFailure>;

/// [`ListenerLinks`] for the whole cluster, and the [`LinkObserver`] the local registry tells
/// which listeners it holds.
pub struct ClusterLinks {
    pub(crate) client: Client,
    pub(crate) local: Arc<dyn ListenerLinks>,
    pub(crate) bus: Arc<dyn EventBus>,
    pub(crate) subjects: Subjects,
    pub(crate) instance: String,
    pub(crate) runtime: Handle,
    /// The task serving each listener held here; aborting it drops its subscription.
    pub(crate) served: Mutex<HashMap<ListenerServiceId, AbortHandle>>,
}

#[async_trait]
impl ListenerLinks for ClusterLinks {
    async fn exchange(
        &self,
        listener: &ListenerServiceId,
        request: LinkRequest,
        timeout: Duration,
    ) -> Result<LinkAnswer, LinkFailure> {
        if self.local.held_here(listener) {
            return self.local.exchange(listener, request, timeout).await;
        }
        let Some(subject) = self.subjects.link(listener) else {
            warn!("cluster: a malformed listener id cannot be routed");
            return Err(LinkFailure::Offline);
        };
        // A request could not leave before reconnection: answer now rather than at the deadline.
        if self.client.connection_state() != State::Connected {
            return Err(LinkFailure::Offline);
        }
        let call = LinkCall {
            request,
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        };
        let payload = serde_json::to_vec(&call).map_err(|e| {
            warn!(error = %JsonError(&e), "cluster: link request not serializable");
            LinkFailure::Offline
        })?;
        let sent = self.client.send_request(
            subject,
            Request::new()
                .payload(payload.into())
                .timeout(Some(timeout)),
        );
        // The client's own timeout covers the wait for a reply, this one the queueing too.
        let reply = match tokio::time::timeout(timeout, sent).await {
            Err(_) => return Err(LinkFailure::TimedOut),
            Ok(Err(e)) => {
                return Err(match e.kind() {
                    RequestErrorKind::NoResponders => LinkFailure::Offline,
                    RequestErrorKind::TimedOut => LinkFailure::TimedOut,
                    _ => {
                        warn!(%listener, error = %e, "cluster: link request failed");
                        LinkFailure::Offline
                    }
                });
            }
            Ok(Ok(reply)) => reply,
        };
        serde_json::from_slice::<LinkReply>(&reply.payload).unwrap_or_else(|e| {
            warn!(%listener, error = %JsonError(&e), "cluster: undecodable link reply");
            Err(LinkFailure::Offline)
        })
    }

    fn held_here(&self, listener: &ListenerServiceId) -> bool {
        self.local.held_here(listener)
    }
}

impl LinkObserver for ClusterLinks {
    /// Serves the listener's subject, then tells the others (`LinkTaken`) so that one still
    /// holding an older connection closes it. The event follows the subscription on the same
    /// connection, so the server knows the new holder before the old one lets go.
    fn attached(&self, listener: &ListenerServiceId) {
        let Some(subject) = self.subjects.link(listener) else {
            warn!("cluster: a listener with a malformed id is not served");
            return;
        };
        let (client, local, bus) = (self.client.clone(), self.local.clone(), self.bus.clone());
        let (id, instance, runtime) = (
            listener.clone(),
            self.instance.clone(),
            self.runtime.clone(),
        );
        let task = self.runtime.spawn(async move {
            let subscriber = client.subscribe(subject).await;
            bus.publish(ClusterEvent::LinkTaken {
                listener: id.clone(),
                instance,
            });
            let mut subscriber = match subscriber {
                Ok(subscriber) => subscriber,
                Err(e) => {
                    warn!(listener = %id, error = %e, "cluster: cannot serve the listener");
                    return;
                }
            };
            while let Some(message) = subscriber.next().await {
                runtime.spawn(serve(client.clone(), local.clone(), id.clone(), message));
            }
        });
        if let Ok(mut served) = self.served.lock()
            && let Some(older) = served.insert(listener.clone(), task.abort_handle())
        {
            older.abort();
        }
    }

    fn detached(&self, listener: &ListenerServiceId) {
        if let Ok(mut served) = self.served.lock()
            && let Some(task) = served.remove(listener)
        {
            task.abort();
        }
    }
}

impl Drop for ClusterLinks {
    fn drop(&mut self) {
        if let Ok(served) = self.served.lock() {
            served.values().for_each(AbortHandle::abort);
        }
    }
}

/// Answers one request for a listener held here; every wait is bounded by its timeout.
async fn serve(
    client: Client,
    local: Arc<dyn ListenerLinks>,
    listener: ListenerServiceId,
    message: Message,
) {
    let Some(reply_to) = message.reply else {
        debug!(%listener, "cluster: link request without a reply subject dropped");
        return;
    };
    // A reply after the requester's deadline is useless: the deadline bounds both waits.
    let (reply, deadline) = match serde_json::from_slice::<LinkCall>(&message.payload) {
        Ok(call) => {
            let timeout = Duration::from_millis(call.timeout_ms).min(MAX_SERVED_TIMEOUT);
            let deadline = Instant::now() + timeout;
            let answer = local.exchange(&listener, call.request, timeout);
            let reply = tokio::time::timeout_at(deadline, answer)
                .await
                .unwrap_or(Err(LinkFailure::TimedOut));
            (reply, deadline)
        }
        Err(e) => {
            warn!(%listener, error = %JsonError(&e), "cluster: malformed link request");
            (
                Err(LinkFailure::Offline),
                Instant::now() + MALFORMED_REPLY_WAIT,
            )
        }
    };
    let payload = match serde_json::to_vec(&reply) {
        Ok(payload) => payload,
        Err(e) => {
            warn!(%listener, error = %JsonError(&e), "cluster: link reply not serializable");
            return;
        }
    };
    match tokio::time::timeout_at(deadline, client.publish(reply_to, payload.into())).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => warn!(%listener, error = %e, "cluster: link reply not sent"),
        Err(_) => warn!(%listener, "cluster: link reply not sent in time"),
    }
}

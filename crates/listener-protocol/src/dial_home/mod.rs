//! The outbound ("dial-home") transport, listener side (docs/listener-protocol.md, "Transport:
//! outbound WebSocket"): the listener connects to roomlink, keeps one WebSocket open and
//! answers the requests roomlink sends down it. Shared by both listener binaries; each gives
//! a [`Handler`] that answers a request exactly as its HTTP routes do.
//!
//! - [`settings`]: URLs, listener id, secret, CA file, timings; the connect URL.
//! - [`connect`]: one attempt (TCP, TLS, handshake); [`tls`]: trust for `wss://`.
//! - [`session`]: one open socket; [`frames`]: request and answer frames.
//! - [`backoff`]: reconnect delays; [`run`]: the loop that ties them together.

pub mod backoff;
pub mod connect;
pub mod frames;
pub mod run;
pub mod session;
pub mod settings;
pub mod tls;

pub use run::{run, stop_signal};
pub use settings::{DialHomeSettings, ListenerSecret, Timing};

use crate::server::{Answer, Route};
use std::future::Future;

/// A listener's request handling, as its HTTP routes do it after the secret check (the socket
/// was authenticated when it opened). A future that never ends leaves its request unanswered.
pub trait Handler: Send + Sync + 'static {
    /// The answer to `route` with the request's JSON `body` (`null` when there is none).
    fn handle(&self, route: Route<'_>, body: &[u8]) -> impl Future<Output = Answer> + Send;
}

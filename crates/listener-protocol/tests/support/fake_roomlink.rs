//! A small roomlink for tests of the outbound transport: a WebSocket server on 127.0.0.1:0
//! that checks the connect path, the bearer secret and the subprotocol, records every attempt,
//! and hands each accepted socket to the test. Shared by the crates' tests (`#[path]`).
//! [`FakeRoomlink::start_with`] puts a layer under the WebSocket (TLS, in fake_roomlink_tls.rs).

#![allow(dead_code)]
// tungstenite's handshake callback fixes its error type (a whole HTTP response).
#![allow(clippy::result_large_err)]

use futures::future::BoxFuture;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Mutex, mpsc};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

pub const WAIT: Duration = Duration::from_secs(15);

/// One connection attempt as roomlink saw it.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub path: String,
    pub authorized: bool,
    pub subprotocol: bool,
    pub version: Option<String>,
    /// What roomlink answered: 101, or the refusal's status.
    pub status: u16,
}

/// A plain or TLS byte stream, roomlink's end.
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

/// What roomlink does with an accepted TCP connection before the WebSocket handshake (a TLS
/// handshake, say); an error ends the connection.
pub type Layer =
    Arc<dyn Fn(TcpStream) -> BoxFuture<'static, Result<Box<dyn Io>, String>> + Send + Sync>;

pub struct FakeRoomlink {
    pub base: String,
    attempts: Arc<Mutex<mpsc::UnboundedReceiver<Attempt>>>,
    /// Each TCP connection's layer outcome (always `Ok` without a layer), before any attempt.
    layers: Arc<Mutex<mpsc::UnboundedReceiver<Result<(), String>>>>,
    sockets: mpsc::UnboundedReceiver<Conn>,
    /// The next this many attempts are refused with 401 whatever they present.
    pub refuse_next: Arc<AtomicUsize>,
    /// Every TCP connection's peer address, in the order they were accepted.
    peers: Arc<std::sync::Mutex<Vec<SocketAddr>>>,
    /// The probes of [`FakeRoomlink::connections_so_far`], held open so that they never end in
    /// a layer outcome of their own.
    probes: Mutex<Vec<TcpStream>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeRoomlink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeRoomlink {
    pub async fn start(listener_id: &str, secret: &str) -> FakeRoomlink {
        FakeRoomlink::start_many(&[listener_id], secret).await
    }

    /// One server for several listeners sharing one secret: any of their connect paths.
    pub async fn start_many(listener_ids: &[&str], secret: &str) -> FakeRoomlink {
        let plain: Layer =
            Arc::new(|tcp| Box::pin(async move { Ok(Box::new(tcp) as Box<dyn Io>) }));
        Self::serve(listener_ids, secret, "http", plain).await
    }

    /// A roomlink whose base URL has `scheme` and whose connections go through `layer` first.
    pub async fn start_with(
        listener_id: &str,
        secret: &str,
        scheme: &str,
        layer: Layer,
    ) -> FakeRoomlink {
        Self::serve(&[listener_id], secret, scheme, layer).await
    }

    async fn serve(
        listener_ids: &[&str],
        secret: &str,
        scheme: &str,
        layer: Layer,
    ) -> FakeRoomlink {
        let tcp = TcpListener::bind("127.0.0.1:0").await.expect("binds");
        let base = format!("{scheme}://{}", tcp.local_addr().expect("addr"));
        let (attempt_tx, attempt_rx) = mpsc::unbounded_channel();
        let (layer_tx, layer_rx) = mpsc::unbounded_channel();
        let (socket_tx, socket_rx) = mpsc::unbounded_channel();
        let refuse_next = Arc::new(AtomicUsize::new(0));
        let paths: Arc<Vec<String>> = Arc::new(
            listener_ids
                .iter()
                .map(|id| format!("/api/listenerservices/{id}/connect"))
                .collect(),
        );
        let bearer = format!("Bearer {secret}");
        let refuse = Arc::clone(&refuse_next);
        let peers = Arc::new(std::sync::Mutex::new(Vec::new()));
        let accepted = Arc::clone(&peers);
        let task = tokio::spawn(async move {
            while let Ok((stream, peer)) = tcp.accept().await {
                accepted.lock().expect("not poisoned").push(peer);
                let (paths, bearer) = (Arc::clone(&paths), bearer.clone());
                let (attempt_tx, socket_tx) = (attempt_tx.clone(), socket_tx.clone());
                let refuse = Arc::clone(&refuse);
                let (layer, layer_tx) = (Arc::clone(&layer), layer_tx.clone());
                tokio::spawn(async move {
                    let layered = layer(stream).await;
                    let _ = layer_tx.send(layered.as_ref().map(|_| ()).map_err(Clone::clone));
                    let Ok(stream) = layered else {
                        return;
                    };
                    let callback = |req: &Request, mut resp: Response| {
                        let header = |name: &str| {
                            req.headers()
                                .get(name)
                                .and_then(|v| v.to_str().ok())
                                .map(str::to_owned)
                        };
                        let mut attempt = Attempt {
                            path: req.uri().path().to_owned(),
                            authorized: header("authorization").as_deref() == Some(&bearer),
                            subprotocol: header("sec-websocket-protocol").as_deref()
                                == Some("roomlink-listener.v1"),
                            version: header("x-listener-version"),
                            status: 101,
                        };
                        let refused = refuse
                            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                            .is_ok();
                        let status =
                            if !paths.contains(&attempt.path) || !attempt.authorized || refused {
                                Some(StatusCode::UNAUTHORIZED)
                            } else if !attempt.subprotocol {
                                Some(StatusCode::BAD_REQUEST)
                            } else {
                                None
                            };
                        if let Some(status) = status {
                            attempt.status = status.as_u16();
                            let _ = attempt_tx.send(attempt);
                            let mut refusal = ErrorResponse::new(Some(
                                json!({"error": "BadCredentialsException"}).to_string(),
                            ));
                            *refusal.status_mut() = status;
                            return Err(refusal);
                        }
                        let _ = attempt_tx.send(attempt);
                        resp.headers_mut().insert(
                            "sec-websocket-protocol",
                            HeaderValue::from_static("roomlink-listener.v1"),
                        );
                        Ok(resp)
                    };
                    if let Ok(socket) = tokio_tungstenite::accept_hdr_async(stream, callback).await
                    {
                        let _ = socket_tx.send(Conn {
                            socket,
                            next_id: AtomicU64::new(1),
                        });
                    }
                });
            }
        });
        FakeRoomlink {
            base,
            attempts: Arc::new(Mutex::new(attempt_rx)),
            layers: Arc::new(Mutex::new(layer_rx)),
            sockets: socket_rx,
            refuse_next,
            peers,
            probes: Mutex::new(Vec::new()),
            task,
        }
    }

    /// How many TCP connections were made to this roomlink before now, proved by observing
    /// rather than by waiting a while: a probe connection of the test's own is accepted after
    /// every connection made before it (one accept loop, in arrival order).
    pub async fn connections_so_far(&self) -> usize {
        let address = self.base.split("://").nth(1).expect("a base URL");
        let probe = TcpStream::connect(address)
            .await
            .expect("the probe connects");
        let mine = probe.local_addr().expect("the probe's address");
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let before = {
                let peers = self.peers.lock().expect("not poisoned");
                peers.iter().position(|peer| *peer == mine)
            };
            if let Some(before) = before {
                self.probes.lock().await.push(probe);
                return before;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the probe is accepted in time"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// The next connection attempt (accepted or refused).
    pub async fn attempt(&self) -> Attempt {
        let mut attempts = self.attempts.lock().await;
        tokio::time::timeout(WAIT, attempts.recv())
            .await
            .expect("an attempt in time")
            .expect("the server runs")
    }

    /// The next TCP connection's layer outcome: `Err` with why, for a TLS handshake that failed.
    pub async fn layer(&self) -> Result<(), String> {
        self.try_layer(WAIT).await.expect("a connection in time")
    }

    /// The next TCP connection's layer outcome, or `None` when none comes within `wait`.
    async fn try_layer(&self, wait: Duration) -> Option<Result<(), String>> {
        let mut layers = self.layers.lock().await;
        tokio::time::timeout(wait, layers.recv())
            .await
            .ok()
            .flatten()
    }

    /// A socket accepted and not yet taken by the test, without waiting.
    pub fn accepted_already(&mut self) -> Option<Conn> {
        self.sockets.try_recv().ok()
    }

    /// The next accepted socket.
    pub async fn accept(&mut self) -> Conn {
        tokio::time::timeout(WAIT, self.sockets.recv())
            .await
            .expect("the listener connects in time")
            .expect("the server runs")
    }
}

/// An accepted socket, roomlink's end.
pub struct Conn {
    socket: WebSocketStream<Box<dyn Io>>,
    next_id: AtomicU64,
}

impl Conn {
    /// Sends a request frame; answers its id.
    pub async fn send(&mut self, method: &str, path: &str, body: Value) -> u64 {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let frame = json!({"id": id, "method": method, "path": path, "body": body});
        self.send_text(frame.to_string()).await;
        id
    }

    pub async fn send_text(&mut self, text: String) {
        self.socket
            .send(Message::text(text))
            .await
            .expect("the frame is sent");
    }

    /// The next answer frame.
    pub async fn answer(&mut self) -> Value {
        self.try_answer(WAIT).await.expect("an answer in time")
    }

    /// The next answer frame, or `None` when none comes within `wait` or the socket ends.
    async fn try_answer(&mut self, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let message = tokio::time::timeout_at(deadline, self.socket.next())
                .await
                .ok()??;
            match message.ok()? {
                Message::Text(text) => {
                    return Some(serde_json::from_str(text.as_str()).expect("a JSON answer"));
                }
                Message::Close(_) => return None,
                _ => {}
            }
        }
    }

    /// Sends a request and waits for its answer (nothing else in flight).
    pub async fn exchange(&mut self, method: &str, path: &str, body: Value) -> Value {
        let id = self.send(method, path, body).await;
        let answer = self.answer().await;
        assert_eq!(answer["id"], id, "{answer}");
        answer
    }

    pub async fn ping(&mut self) {
        self.socket
            .send(Message::Ping(b"p".to_vec().into()))
            .await
            .expect("ping sent");
    }

    /// Waits for a pong (other frames are skipped).
    pub async fn pong(&mut self) -> bool {
        let wait = async {
            while let Some(Ok(message)) = self.socket.next().await {
                if let Message::Pong(_) = message {
                    return true;
                }
            }
            false
        };
        tokio::time::timeout(WAIT, wait).await.unwrap_or(false)
    }

    /// Closes with `code`, as roomlink does (1001 stopping, 4000 replaced, 4001 deleted).
    pub async fn close(mut self, code: u16) {
        let frame = CloseFrame {
            code: CloseCode::from(code),
            reason: "test".into(),
        };
        let _ = self.socket.close(Some(frame)).await;
        let _ =
            tokio::time::timeout(WAIT, async { while self.socket.next().await.is_some() {} }).await;
    }

    /// Waits for the listener to end the socket: its close code, or `None` for a drop
    /// without a close frame.
    pub async fn closed(self) -> Option<u16> {
        self.answers_until_closed().await.1
    }

    /// Every answer frame the listener sent until it ended the socket, and its close code
    /// (`None` for a drop without a close frame): proof over the socket's whole life that a
    /// request was never answered.
    pub async fn answers_until_closed(mut self) -> (Vec<Value>, Option<u16>) {
        let mut answers = Vec::new();
        let wait = async {
            while let Some(message) = self.socket.next().await {
                match message {
                    Ok(Message::Close(frame)) => return frame.map(|f| u16::from(f.code)),
                    Ok(Message::Text(text)) => {
                        answers.push(serde_json::from_str(text.as_str()).expect("a JSON answer"))
                    }
                    Ok(_) => {}
                    Err(_) => return None,
                }
            }
            None
        };
        let code = tokio::time::timeout(WAIT, wait)
            .await
            .expect("the listener ends the socket");
        (answers, code)
    }
}

//! A real HTTP receiver on 127.0.0.1 (an ephemeral port) that records what reaches it and
//! answers as told; and the sender's settings for tests.

#![allow(dead_code)] // each test file uses part of it

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{HeaderMap, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use roomlink_domain::secret::Secret;
use roomlink_domain::webhook::target::TargetRule;
use roomlink_webhook_sender::{HttpWebhookSender, SenderSettings};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};

pub const SECRET: &str = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
/// A receiver's token in a URL's query: it must appear in no outcome.
pub const TOKEN: &str = "rcv-token-5f3a9c";

pub fn secret() -> Secret {
    Secret::new(SECRET)
}

/// A sender that may reach loopback (or not) with a `timeout`.
pub fn sender(allow_loopback: bool, timeout: Duration) -> HttpWebhookSender {
    HttpWebhookSender::new(SenderSettings {
        timeout,
        rule: TargetRule {
            allow_loopback,
            allow_private_networks: false,
        },
    })
    .expect("the client builds")
}

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct Received {
    pub method: String,
    pub path_and_query: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("no {name} header"))
    }
}

/// How the receiver answers.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub location: Option<String>,
    /// Waits this long before answering.
    pub delay: Duration,
}

impl Reply {
    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            location: None,
            delay: Duration::ZERO,
        }
    }
}

pub struct Receiver {
    pub addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
    accept: JoinHandle<()>,
}

impl Receiver {
    pub async fn start(reply: Reply) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address");
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = received.clone();
        let accept = tokio::spawn(async move {
            // Owned by the accept task: aborting it closes the connections too.
            let mut connections = JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                let (log, reply) = (log.clone(), reply.clone());
                let service =
                    service_fn(move |request| answer(request, log.clone(), reply.clone()));
                connections.spawn(async move {
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Receiver {
            addr,
            received,
            accept,
        }
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn received(&self) -> Vec<Received> {
        self.received.lock().expect("lock").clone()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn answer(
    request: Request<Incoming>,
    log: Arc<Mutex<Vec<Received>>>,
    reply: Reply,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    log.lock().expect("lock").push(Received {
        method: parts.method.to_string(),
        path_and_query: parts
            .uri
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_default(),
        headers: parts.headers,
        body,
    });
    tokio::time::sleep(reply.delay).await;
    let mut response = Response::new(Full::new(Bytes::from_static(b"{}")));
    *response.status_mut() = StatusCode::from_u16(reply.status).expect("status");
    if let Some(location) = reply.location {
        response
            .headers_mut()
            .insert("location", location.parse().expect("location"));
    }
    Ok(response)
}

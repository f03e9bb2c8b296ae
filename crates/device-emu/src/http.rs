//! HTTP/1.1 serving for the emulator's HTTP front ends (hyper, with tokio-rustls for HTTPS):
//! one accept loop per listening socket, the connections it accepted owned by it, so that
//! stopping the loop closes them too.

use futures::future::BoxFuture;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::header::HeaderMap;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;

/// Bodies larger than this are refused (413): nothing the emulator reads comes close.
const MAX_BODY: usize = 1 << 20;

/// One request, read whole.
#[derive(Debug)]
pub struct Request {
    pub method: Method,
    pub path: String,
    pub query: Option<String>,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// The address the connection arrived on: which device it is for.
    pub local: SocketAddr,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The decoded value of query parameter `name`.
    pub fn query_param(&self, name: &str) -> Option<String> {
        let query = self.query.as_deref()?;
        form_urlencoded::parse(query.as_bytes())
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    }
}

/// The handler's verdict: an answer, or [`Hangup`] to close the connection without one.
pub type Answer = Result<Response, Hangup>;

pub type Response = hyper::Response<Full<Bytes>>;

/// Close the connection without answering (hyper drops a connection whose service fails).
#[derive(Debug)]
pub struct Hangup;

impl std::fmt::Display for Hangup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection closed without an answer (emulated fault)")
    }
}

impl std::error::Error for Hangup {}

pub type Handler = Arc<dyn Fn(Request) -> BoxFuture<'static, Answer> + Send + Sync>;

/// A response with `status`, `content_type` and `body`.
pub fn respond(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response {
    let mut response = hyper::Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    if let Ok(value) = content_type.parse() {
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}

/// Serves `handler` on every listener (HTTPS when `tls` is given); one task per listener.
pub fn serve(
    listeners: Vec<TcpListener>,
    tls: Option<TlsAcceptor>,
    handler: Handler,
) -> Vec<JoinHandle<()>> {
    listeners
        .into_iter()
        .map(|listener| tokio::spawn(accept_loop(listener, tls.clone(), handler.clone())))
        .collect()
}

async fn accept_loop(listener: TcpListener, tls: Option<TlsAcceptor>, handler: Handler) {
    // Dropped (so aborting every connection) when this task is aborted.
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        let (stream, _peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors and the like: wait instead of spinning.
                tracing::warn!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(local) = stream.local_addr() else {
            continue;
        };
        let handler = handler.clone();
        let tls = tls.clone();
        connections.spawn(async move {
            match tls {
                Some(acceptor) => match acceptor.accept(stream).await {
                    Ok(stream) => serve_connection(TokioIo::new(stream), local, handler).await,
                    Err(e) => tracing::debug!(%local, error = %e, "TLS handshake failed"),
                },
                None => serve_connection(TokioIo::new(stream), local, handler).await,
            }
        });
    }
}

async fn serve_connection<I>(io: I, local: SocketAddr, handler: Handler)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let service = service_fn(move |request: hyper::Request<Incoming>| {
        let handler = handler.clone();
        async move {
            let (parts, body) = request.into_parts();
            let body = match Limited::new(body, MAX_BODY).collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(_) => {
                    return Ok(respond(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "text/plain",
                        "request body too large or unreadable\n",
                    ));
                }
            };
            handler(Request {
                method: parts.method,
                path: parts.uri.path().to_owned(),
                query: parts.uri.query().map(str::to_owned),
                headers: parts.headers,
                body,
                local,
            })
            .await
        }
    });
    let served = http1::Builder::new()
        .timer(TokioTimer::new())
        .serve_connection(io, service)
        .await;
    if let Err(e) = served {
        tracing::debug!(%local, error = %e, "connection ended");
    }
}

/// `user`, `password` from an `Authorization: Basic ...` value (the Cisco and Mesh servers).
pub fn basic_credentials(value: &str) -> Option<(String, String)> {
    use base64::Engine;
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (user, password) = decoded.split_once(':')?;
    Some((user.to_owned(), password.to_owned()))
}

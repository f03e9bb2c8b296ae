//! One connection attempt: TCP, TLS for `wss://`, the WebSocket handshake with the secret,
//! the subprotocol and the listener's version.

use crate::server::{BODY_LIMIT, VERSION_HEADER};
use crate::version::Version;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Error as WsError};

/// The subprotocol both sides agree on.
pub const SUBPROTOCOL: &str = "roomlink-listener.v1";

/// A plain or TLS byte stream.
pub trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

pub type Socket = WebSocketStream<Box<dyn Io>>;

/// Why an attempt failed.
#[derive(Debug)]
pub enum Failed {
    /// roomlink refused without upgrading (401/403: id or secret; 400: an inbound listener).
    Refused { status: u16 },
    /// Anything else: unreachable, TLS, a handshake that is not a WebSocket's, a timeout.
    Other(String),
}

/// What an attempt needs besides the URL.
pub struct Dialer {
    pub secret: crate::dial_home::ListenerSecret,
    pub version: Version,
    /// Built once, when some URL is `wss://`.
    pub tls: Option<Arc<rustls::ClientConfig>>,
}

impl Dialer {
    pub async fn dial(&self, url: &str) -> Result<Socket, Failed> {
        let mut request = url
            .into_client_request()
            .map_err(|e| Failed::Other(e.to_string()))?;
        let mut bearer = HeaderValue::try_from(format!("Bearer {}", self.secret.expose()))
            .map_err(|_| Failed::Other("the secret is not a valid header value".into()))?;
        // `http` prints sensitive values as "Sensitive", should the request ever be printed.
        bearer.set_sensitive(true);
        let headers = request.headers_mut();
        headers.insert("Authorization", bearer);
        headers.insert(
            "Sec-WebSocket-Protocol",
            HeaderValue::from_static(SUBPROTOCOL),
        );
        if let Ok(version) = HeaderValue::try_from(self.version.to_string()) {
            headers.insert(VERSION_HEADER, version);
        }
        let uri = request.uri();
        let tls = uri.scheme_str() == Some("wss");
        let host = uri
            .host()
            .ok_or_else(|| Failed::Other("no host".into()))?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned();
        let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
        let tcp = TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| Failed::Other(format!("cannot connect: {e}")))?;
        let _ = tcp.set_nodelay(true);
        let stream: Box<dyn Io> = if tls {
            let config = self
                .tls
                .clone()
                .ok_or_else(|| Failed::Other("no TLS configuration".into()))?;
            let name = rustls::pki_types::ServerName::try_from(host)
                .map_err(|e| Failed::Other(format!("TLS server name: {e}")))?;
            let tls = tokio_rustls::TlsConnector::from(config)
                .connect(name, tcp)
                .await
                .map_err(|e| Failed::Other(format!("TLS: {e}")))?;
            Box::new(tls)
        } else {
            Box::new(tcp)
        };
        let config = WebSocketConfig::default()
            .max_message_size(Some(BODY_LIMIT))
            .max_frame_size(Some(BODY_LIMIT));
        match tokio_tungstenite::client_async_with_config(request, stream, Some(config)).await {
            Ok((socket, _response)) => Ok(socket),
            Err(WsError::Http(response)) => match response.status().as_u16() {
                status @ (400 | 401 | 403) => Err(Failed::Refused { status }),
                status => Err(Failed::Other(format!(
                    "answered HTTP {status} instead of upgrading to a WebSocket"
                ))),
            },
            Err(e) => Err(Failed::Other(handshake_error(&e))),
        }
    }
}

/// The handshake's failure in words; the subprotocol's is the one an operator can act on.
fn handshake_error(e: &WsError) -> String {
    match e {
        WsError::Protocol(tungstenite::error::ProtocolError::SecWebSocketSubProtocolError(_)) => {
            format!("the server did not accept the subprotocol {SUBPROTOCOL} (is it roomlink?)")
        }
        other => format!("WebSocket handshake: {other}"),
    }
}

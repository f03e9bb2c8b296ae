//! A Relay Mesh driver server (device-drivers.md end of §3, relay-facts.md §6): the HTTP
//! contract a listener calls for endpoints whose `controlProtocol` is `MESH`. One address serves
//! every device; the device is the path's `{ip}` segment.
//!
//! - `GET {ip}/capabilities` → 200 `{"JOIN":true,"HANGUP":true,"STATUS":true,"MUTE_MICROPHONE":true,"CALENDAR_PUSH":false}`
//! - `GET {ip}/status?port=&name=` → 200 `{"callActive":bool,"microphoneMuted":bool}`
//!   (`callActive` is any call, dialling or connected); `GET {ip}/callactive` → `{"callActive":bool}`
//!   (the contract's oldest form).
//! - `POST {ip}/join?dialString=&meetingId=&passcode=&bridgeAddress=`, body the endpoint JSON →
//!   204. The dial string is dialled as sent (`last_dialed`), the body's `signalingProtocol`
//!   is the dial's protocol, the other parameters land in `last_dial_extras`. No `dialString`,
//!   or a body that is not a JSON object → 400.
//! - `POST {ip}/hangup`, `{ip}/mutemicrophone`, `{ip}/unmutemicrophone` → 204.
//! - Known operation, other method → 405; anything else → 404.
//!
//! Only the last two path segments are read, so any base path works (`/mesh/{ip}/status`).
//! The contract has no DTMF: this server offers none (the listener's MESH driver reports no
//! DTMF capability; the Mesh server gets meeting id and passcode and answers IVRs itself).
//!
//! Every request needs `Authorization: Basic` with the device's user name and password, else
//! 401 with a `WWW-Authenticate` challenge. Faults, in this order: [`Fault::Slow`] delays the
//! answer by `slow_ms`; [`Fault::DropConnection`] closes the connection with no answer;
//! [`Fault::RateLimit`] → 503 with `Retry-After: 1` [I: 503, as the Cisco rate limit, over
//! 429]; [`Fault::BadCredentials`] → 401. `IntegratorRole` and `TcFirmware` have no Mesh meaning.

use crate::Frontend;
use crate::device::{Device, Devices, Fault};
use crate::net;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue, RETRY_AFTER, WWW_AUTHENTICATE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use std::collections::BTreeMap;
use std::io;
use std::net::IpAddr;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// The capabilities every emulated device reports.
pub const CAPABILITIES: &str =
    r#"{"JOIN":true,"HANGUP":true,"STATUS":true,"MUTE_MICROPHONE":true,"CALENDAR_PUSH":false}"#;

/// Serves the Mesh contract on `host:port` (0: a free port).
pub async fn start(host: IpAddr, port: u16, devices: Devices) -> io::Result<Frontend> {
    let (port, listeners) = net::bind_all(&[host], port).await?;
    let tasks = listeners
        .into_iter()
        .map(|listener| tokio::spawn(accept_loop(listener, devices.clone())))
        .collect();
    Ok(Frontend { port, tasks })
}

async fn accept_loop(listener: TcpListener, devices: Devices) {
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        match listener.accept().await {
            Ok((stream, peer)) => {
                let devices = devices.clone();
                connections.spawn(async move {
                    let service = service_fn(move |request| handle(request, devices.clone()));
                    if let Err(e) = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await
                    {
                        tracing::debug!(%peer, error = %e, "mesh connection ended");
                    }
                });
            }
            Err(e) => {
                tracing::warn!(error = %e, "mesh accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// The error a handler returns to make hyper close the connection without an answer.
#[derive(Debug)]
struct Dropped;

impl std::fmt::Display for Dropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection dropped by the drop_connection fault")
    }
}

impl std::error::Error for Dropped {}

type Answer = Response<Full<Bytes>>;

async fn handle(request: Request<Incoming>, devices: Devices) -> Result<Answer, Dropped> {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let query: BTreeMap<String, String> =
        form_urlencoded::parse(request.uri().query().unwrap_or("").as_bytes())
            .into_owned()
            .collect();
    let credentials = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| basic_credentials(v.as_bytes()));
    let Ok(body) = request.into_body().collect().await else {
        return Err(Dropped);
    };
    let body = body.to_bytes();

    let mut segments = path.split('/').filter(|s| !s.is_empty()).rev();
    let (Some(operation), Some(ip)) = (segments.next(), segments.next()) else {
        return Ok(text(StatusCode::NOT_FOUND, "no such path"));
    };
    let (slow, drop, rate_limited) = devices.with(ip, |d| {
        (
            d.has(Fault::Slow).then_some(d.slow_ms),
            d.has(Fault::DropConnection),
            d.has(Fault::RateLimit),
        )
    });
    if let Some(ms) = slow {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    if drop {
        return Err(Dropped);
    }
    if rate_limited {
        let mut answer = text(StatusCode::SERVICE_UNAVAILABLE, "too many requests");
        answer
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from_static("1"));
        return Ok(answer);
    }
    let accepted = credentials
        .is_some_and(|(user, password)| devices.with(ip, |d| d.accepts(&user, &password)));
    if !accepted {
        let mut answer = text(StatusCode::UNAUTHORIZED, "unauthorized");
        answer.headers_mut().insert(
            WWW_AUTHENTICATE,
            HeaderValue::from_static("Basic realm=\"mesh\""),
        );
        return Ok(answer);
    }
    Ok(devices.with(ip, |d| operate(d, &method, operation, &query, &body)))
}

/// Carries out one operation on an authenticated device.
fn operate(
    device: &mut Device,
    method: &Method,
    operation: &str,
    query: &BTreeMap<String, String>,
    body: &[u8],
) -> Answer {
    let expected = match operation {
        "capabilities" | "status" | "callactive" => Method::GET,
        "join" | "hangup" | "mutemicrophone" | "unmutemicrophone" => Method::POST,
        _ => return text(StatusCode::NOT_FOUND, "no such operation"),
    };
    if *method != expected {
        return text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed");
    }
    let call_active = device.active_calls() > 0;
    match operation {
        "capabilities" => json(CAPABILITIES.to_owned()),
        "status" => json(
            serde_json::json!({
                "callActive": call_active,
                "microphoneMuted": device.microphone_muted,
            })
            .to_string(),
        ),
        "callactive" => json(serde_json::json!({ "callActive": call_active }).to_string()),
        "join" => {
            let Some(dial_string) = query.get("dialString").filter(|s| !s.is_empty()) else {
                return text(StatusCode::BAD_REQUEST, "dialString is required");
            };
            let endpoint = if body.is_empty() {
                serde_json::Value::Object(serde_json::Map::new())
            } else {
                match serde_json::from_slice::<serde_json::Value>(body) {
                    Ok(v @ serde_json::Value::Object(_)) => v,
                    _ => return text(StatusCode::BAD_REQUEST, "the body is not endpoint JSON"),
                }
            };
            let protocol = endpoint["signalingProtocol"].as_str();
            device.dial(dial_string, protocol);
            for key in ["meetingId", "passcode", "bridgeAddress"] {
                if let Some(value) = query.get(key).filter(|v| !v.is_empty()) {
                    device
                        .last_dial_extras
                        .insert(key.to_owned(), value.clone());
                }
            }
            no_content()
        }
        "hangup" => {
            device.hang_up();
            no_content()
        }
        "mutemicrophone" => {
            device.set_muted(true);
            no_content()
        }
        _ => {
            device.set_muted(false);
            no_content()
        }
    }
}

/// `user`, `password` from an `Authorization: Basic ...` header value.
fn basic_credentials(value: &[u8]) -> Option<(String, String)> {
    crate::http::basic_credentials(std::str::from_utf8(value).ok()?)
}

fn text(status: StatusCode, body: &'static str) -> Answer {
    let mut answer = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *answer.status_mut() = status;
    answer.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    answer
}

fn json(body: String) -> Answer {
    let mut answer = Response::new(Full::new(Bytes::from(body)));
    answer
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    answer
}

fn no_content() -> Answer {
    let mut answer = Response::new(Full::new(Bytes::new()));
    *answer.status_mut() = StatusCode::NO_CONTENT;
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn basic_credentials_decode_and_other_schemes_do_not() {
        use base64::Engine;
        // "admin:pw:with:colons"
        let header = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode("admin:pw:with:colons")
        );
        assert_eq!(
            basic_credentials(header.as_bytes()),
            Some(("admin".into(), "pw:with:colons".into()))
        );
        assert_eq!(basic_credentials(b"Bearer abc"), None);
        assert_eq!(basic_credentials(b"Basic !!!"), None);
    }

    #[test]
    fn join_records_the_dial_and_its_parameters() {
        let mut d = Device::new("admin", "pw", Duration::ZERO);
        let q = query(&[
            ("dialString", "111.222@bridge.example"),
            ("meetingId", "111"),
            ("passcode", "222"),
            ("bridgeAddress", "bridge.example"),
        ]);
        let answer = operate(
            &mut d,
            &Method::POST,
            "join",
            &q,
            br#"{"signalingProtocol":"SIP"}"#,
        );
        assert_eq!(answer.status(), StatusCode::NO_CONTENT);
        assert_eq!(d.last_dialed.as_deref(), Some("111.222@bridge.example"));
        assert_eq!(d.last_dial_protocol.as_deref(), Some("SIP"));
        assert_eq!(d.last_dial_extras["passcode"], "222");
        let answer = operate(&mut d, &Method::POST, "join", &query(&[]), b"");
        assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
        let answer = operate(&mut d, &Method::POST, "join", &q, b"[1]");
        assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
    }

    #[test]
    fn methods_and_paths_are_checked() {
        let mut d = Device::new("admin", "pw", Duration::ZERO);
        let none = query(&[]);
        let status = |a: Answer| a.status();
        assert_eq!(
            status(operate(&mut d, &Method::GET, "hangup", &none, b"")),
            StatusCode::METHOD_NOT_ALLOWED
        );
        assert_eq!(
            status(operate(&mut d, &Method::POST, "senddtmf", &none, b"")),
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            status(operate(&mut d, &Method::POST, "mutemicrophone", &none, b"")),
            StatusCode::NO_CONTENT
        );
        assert!(d.microphone_muted);
    }
}

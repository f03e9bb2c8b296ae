//! The emulated Cisco codec's HTTP(S) XML API (device-drivers.md §1.2): `POST /putxml`,
//! `GET /getxml?location=…` (and `GET /status.xml`), `POST /xmlapi/session/begin|end`.
//! Served with hyper (tokio-rustls for HTTPS); the device is the local address a connection
//! arrived on.
//!
//! Decisions where the reference is silent ([I], kept in docs/drivers.md):
//! - 401 answers carry `WWW-Authenticate: Basic realm="Cisco Codec"`; a request
//!   authenticates with Basic or a `SessionId` cookie from `/xmlapi/session/begin`
//!   (`204`, `Set-Cookie: SessionId=<32 hex>; Path=/; HttpOnly`, `; Secure` over HTTPS).
//!   Sessions never time out and their number is not limited. `session/end` ends the cookie's
//!   session (`204`).
//! - The Basic-auth rate limit of RoomOS (1 request/s, queue 30, per device) is enforced when
//!   [`Options::basic_rate_limit`] is on: each Basic request takes the next one-second slot and
//!   waits for it; with 30 already waiting the answer is `503`. The session-cookie limit
//!   (15/s, queue 90) is not emulated.
//! - Faults: `rate_limit` → `503 Service Unavailable` (text/plain) for every request;
//!   `bad_credentials` → `401` for every request, session or not; `slow` → every answer after
//!   `slow_ms`; `drop_connection` → an authenticated `putxml` gets its connection closed with
//!   no answer (the command is not carried out); `tc_firmware` → `session/begin` answers `302`
//!   to `/login.html`, session cookies are not accepted, `DTMFSend` is top-level and the
//!   version is TC7.3; `integrator_role` → no DTMF, no `/Status/Call` (see
//!   [`crate::cisco_xapi`]).
//! - A `putxml` body that is not XML: `400` with `<Result status="Error"><Reason>…`.
//! - A `putxml` `<Configuration>` document and a `getxml` of `/Configuration/…` are the
//!   device's configuration ([`crate::cisco_config`]).

use crate::Frontend;
use crate::cisco_config;
use crate::cisco_firmware::Firmware;
use crate::cisco_xapi::{self, Role};
use crate::device::{Devices, Fault};
use crate::http::{self, Answer, Hangup, Request, respond};
use crate::net;
use crate::tls::TlsIdentity;
use crate::xml::Element;
use hyper::header::{HeaderValue, LOCATION, SET_COOKIE, WWW_AUTHENTICATE};
use hyper::{Method, StatusCode};
use std::collections::HashMap;
use std::io;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const XML: &str = "text/xml; charset=UTF-8";
const REALM: &str = "Basic realm=\"Cisco Codec\"";
/// Basic-auth requests waiting for their slot, at most (RoomOS release notes: "queue 30").
const BASIC_QUEUE: u32 = 30;

/// Behaviour switches of the front end.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Enforce RoomOS's Basic-auth rate limit (1 request/s per device, queue 30, then 503).
    pub basic_rate_limit: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            basic_rate_limit: true,
        }
    }
}

struct State {
    devices: Devices,
    options: Options,
    https: bool,
    /// Session id → device address.
    sessions: Mutex<HashMap<String, String>>,
    /// Device address → the start of the next free Basic-auth slot.
    basic_slots: Mutex<HashMap<String, Instant>>,
}

/// Serves the XML API on `port` of every host, over HTTPS when `tls` is given.
pub async fn start(
    hosts: &[IpAddr],
    port: u16,
    devices: Devices,
    tls: Option<&TlsIdentity>,
) -> io::Result<Frontend> {
    start_with(hosts, port, devices, tls, Options::default()).await
}

/// [`start`] with explicit [`Options`].
pub async fn start_with(
    hosts: &[IpAddr],
    port: u16,
    devices: Devices,
    tls: Option<&TlsIdentity>,
    options: Options,
) -> io::Result<Frontend> {
    let acceptor = match tls {
        Some(identity) => Some(tokio_rustls::TlsAcceptor::from(identity.server_config()?)),
        None => None,
    };
    let (port, listeners) = net::bind_all(hosts, port).await?;
    let state = Arc::new(State {
        devices,
        options,
        https: acceptor.is_some(),
        sessions: Mutex::default(),
        basic_slots: Mutex::default(),
    });
    let handler: http::Handler = Arc::new(move |request| {
        let state = state.clone();
        Box::pin(async move { state.handle(request).await })
    });
    let tasks = http::serve(listeners, acceptor, handler);
    Ok(Frontend { port, tasks })
}

/// How long a Basic-auth request waits for its slot, or `None` when the queue is full.
/// `next` is the device's next free slot, moved on by one second per admitted request.
fn basic_slot(next: &mut Option<Instant>, now: Instant) -> Option<Duration> {
    let slot = next.map_or(now, |n| n.max(now));
    let wait = slot - now;
    if wait > Duration::from_secs(u64::from(BASIC_QUEUE)) {
        return None;
    }
    *next = Some(slot + Duration::from_secs(1));
    Some(wait)
}

fn xml_answer(status: StatusCode, element: &Element) -> Answer {
    let body = format!("<?xml version=\"1.0\"?>\n{}\n", element.to_xml());
    Ok(respond(status, XML, body))
}

fn plain(status: StatusCode, text: &str) -> Answer {
    Ok(respond(
        status,
        "text/plain; charset=UTF-8",
        format!("{text}\n"),
    ))
}

fn unauthorized() -> Answer {
    let mut response = respond(
        StatusCode::UNAUTHORIZED,
        "text/plain; charset=UTF-8",
        "401 Unauthorized\n",
    );
    response
        .headers_mut()
        .insert(WWW_AUTHENTICATE, HeaderValue::from_static(REALM));
    Ok(response)
}

fn rate_limited() -> Answer {
    plain(StatusCode::SERVICE_UNAVAILABLE, "503 Service Unavailable")
}

/// `user:password` from an `Authorization: Basic` header.
fn basic_credentials(request: &Request) -> Option<(String, String)> {
    crate::http::basic_credentials(request.header("authorization")?)
}

fn session_cookie(request: &Request) -> Option<String> {
    request
        .headers
        .get_all("cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == "SessionId")
        .map(|(_, value)| value.to_owned())
}

fn new_session_id() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// What a request authenticated as.
enum Login {
    Session(String),
    Basic,
}

impl State {
    async fn handle(&self, request: Request) -> Answer {
        let address = net::device_address(request.local);
        let (faults, slow_ms) = self
            .devices
            .with(&address, |d| (d.faults.clone(), d.slow_ms));
        tracing::debug!(%address, method = %request.method, path = %request.path, "cisco-http request");
        if faults.contains(&Fault::Slow) {
            tokio::time::sleep(Duration::from_millis(slow_ms)).await;
        }
        if faults.contains(&Fault::RateLimit) {
            return rate_limited();
        }
        let firmware = if faults.contains(&Fault::TcFirmware) {
            Firmware::Tc
        } else {
            Firmware::Ce
        };
        let role = if faults.contains(&Fault::IntegratorRole) {
            Role::Integrator
        } else {
            Role::Admin
        };
        let method = request.method.clone();
        match (request.path.as_str(), method) {
            ("/xmlapi/session/begin", Method::POST) => {
                self.begin_session(&request, &address, firmware).await
            }
            ("/xmlapi/session/end", Method::POST) => {
                match self.authenticate(&request, &address, firmware).await {
                    Ok(Login::Session(id)) => {
                        self.lock_sessions().remove(&id);
                        Ok(respond(StatusCode::NO_CONTENT, "text/plain", ""))
                    }
                    Ok(Login::Basic) => Ok(respond(StatusCode::NO_CONTENT, "text/plain", "")),
                    Err(answer) => answer,
                }
            }
            ("/getxml", Method::GET) => {
                if let Err(answer) = self.authenticate(&request, &address, firmware).await {
                    return answer;
                }
                let Some(location) = request.query_param("location") else {
                    return plain(StatusCode::BAD_REQUEST, "missing parameter: location");
                };
                self.status(&address, &location)
            }
            ("/status.xml", Method::GET) => {
                if let Err(answer) = self.authenticate(&request, &address, firmware).await {
                    return answer;
                }
                self.status(&address, "/Status")
            }
            ("/putxml", Method::POST) => {
                if let Err(answer) = self.authenticate(&request, &address, firmware).await {
                    return answer;
                }
                if self
                    .devices
                    .with(&address, |d| d.has(Fault::DropConnection))
                {
                    tracing::info!(%address, "putxml: closing the connection (drop_connection)");
                    return Err(Hangup);
                }
                self.command(&request, &address, firmware, role)
            }
            ("/xmlapi/session/begin" | "/xmlapi/session/end" | "/putxml", _) => {
                plain(StatusCode::METHOD_NOT_ALLOWED, "405 Method Not Allowed")
            }
            ("/getxml" | "/status.xml", _) => {
                plain(StatusCode::METHOD_NOT_ALLOWED, "405 Method Not Allowed")
            }
            _ => plain(StatusCode::NOT_FOUND, "404 Not Found"),
        }
    }

    fn lock_sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Waits for the request's Basic-auth slot; `Err` is the 503 of a full queue.
    async fn basic_turn(&self, address: &str) -> Result<(), Answer> {
        if !self.options.basic_rate_limit {
            return Ok(());
        }
        let wait = {
            let mut slots = self
                .basic_slots
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let mut next = slots.get(address).copied();
            let wait = basic_slot(&mut next, Instant::now());
            if let Some(next) = next {
                slots.insert(address.to_owned(), next);
            }
            wait
        };
        match wait {
            Some(wait) => {
                if !wait.is_zero() {
                    tokio::time::sleep(wait).await;
                }
                Ok(())
            }
            None => Err(rate_limited()),
        }
    }

    async fn authenticate(
        &self,
        request: &Request,
        address: &str,
        firmware: Firmware,
    ) -> Result<Login, Answer> {
        if self.devices.with(address, |d| d.has(Fault::BadCredentials)) {
            return Err(unauthorized());
        }
        if firmware == Firmware::Ce
            && let Some(id) = session_cookie(request)
            && self.lock_sessions().get(&id).is_some_and(|a| a == address)
        {
            return Ok(Login::Session(id));
        }
        let Some((user, password)) = basic_credentials(request) else {
            return Err(unauthorized());
        };
        self.basic_turn(address).await?;
        if self.devices.with(address, |d| d.accepts(&user, &password)) {
            Ok(Login::Basic)
        } else {
            tracing::info!(%address, "login refused");
            Err(unauthorized())
        }
    }

    async fn begin_session(&self, request: &Request, address: &str, firmware: Firmware) -> Answer {
        if firmware == Firmware::Tc {
            // No XML API sessions before CE: the web server sends the client to its login page.
            let mut response = respond(StatusCode::FOUND, "text/html", "");
            response
                .headers_mut()
                .insert(LOCATION, HeaderValue::from_static("/login.html"));
            return Ok(response);
        }
        if basic_credentials(request).is_none() {
            return unauthorized();
        }
        if let Err(answer) = self.authenticate(request, address, firmware).await {
            return answer;
        }
        let id = new_session_id().map_err(|e| {
            tracing::error!(error = %e, "no randomness for a session id");
            Hangup
        })?;
        self.lock_sessions().insert(id.clone(), address.to_owned());
        let secure = if self.https { "; Secure" } else { "" };
        let cookie = format!("SessionId={id}; Path=/; HttpOnly{secure}");
        let mut response = respond(StatusCode::NO_CONTENT, "text/plain", "");
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            response.headers_mut().insert(SET_COOKIE, value);
        }
        tracing::info!(%address, "xmlapi session begun");
        Ok(response)
    }

    fn status(&self, address: &str, location: &str) -> Answer {
        let read = |d: &mut crate::device::Device| {
            if cisco_config::location_words(location).is_some() {
                cisco_config::read(d, location)
            } else {
                cisco_xapi::read_status(d, location)
            }
        };
        match self.devices.with(address, read) {
            Ok(found) => xml_answer(StatusCode::OK, &found),
            Err(fault) => xml_answer(StatusCode::OK, &fault),
        }
    }

    fn command(&self, request: &Request, address: &str, firmware: Firmware, role: Role) -> Answer {
        let parsed = std::str::from_utf8(&request.body)
            .map_err(|e| e.to_string())
            .and_then(Element::parse);
        let doc = match parsed {
            Ok(doc) => doc,
            Err(e) => {
                let error = Element::new("Result")
                    .attr("status", "Error")
                    .child(Element::leaf("Reason", format!("XML parse error: {e}")));
                return xml_answer(StatusCode::BAD_REQUEST, &error);
            }
        };
        if doc.name == "Configuration" {
            tracing::info!(%address, "xConfiguration");
            let answer = self
                .devices
                .with(address, |d| cisco_config::putxml(&doc, d));
            return xml_answer(StatusCode::OK, &answer);
        }
        let answer = match cisco_xapi::find_command(&doc, firmware) {
            Ok(command) => {
                tracing::info!(%address, command = %command.path.join(" "), "xCommand");
                self.devices.with(address, |d| {
                    cisco_xapi::execute(&command, d, firmware, role)
                })
            }
            Err(answer) => answer,
        };
        xml_answer(StatusCode::OK, &answer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_slots_are_one_second_apart_and_the_queue_holds_thirty() {
        let now = Instant::now();
        let mut next = None;
        assert_eq!(basic_slot(&mut next, now), Some(Duration::ZERO));
        for i in 1..=30 {
            assert_eq!(basic_slot(&mut next, now), Some(Duration::from_secs(i)));
        }
        assert_eq!(
            basic_slot(&mut next, now),
            None,
            "the 32nd request finds the queue full"
        );
        // Time passes: slots free up again.
        let later = now + Duration::from_secs(40);
        assert_eq!(basic_slot(&mut next, later), Some(Duration::ZERO));
    }
}

//! `TANDBERG_HTTP`: Cisco TC/CE/RoomOS codecs over their HTTP(S) XML API
//! (device-drivers.md §1.2): `POST /putxml` for commands, `GET /getxml?location=` for status.
//!
//! Per device (address, port, user) the driver keeps a login and the firmware generation, and
//! sends one request at a time:
//! - Login: `POST /xmlapi/session/begin` with Basic. `204` → the `SessionId` cookie is sent
//!   from then on (a `401` with it: log in again once); `301/302/303/307/308/404` → TC-era
//!   firmware without sessions: Basic on every request; `401/403` → bad credentials.
//!   [`CiscoHttpDriver::close_sessions`] (and `Driver::shutdown`) end the sessions, which do not
//!   time out on the codec.
//! - A `503` (RoomOS's rate limit) is retried after 250 ms, 500 ms and 1 s for reads
//!   (`getxml`, session begin); never for commands, which answer `server_error` at once.
//! - DTMF in chunks of at most 32 tones: `Call DTMFSend` on CE/RoomOS, top-level `DTMFSend` on
//!   TC (software version from `/Status/SystemUnit/Software/Version` starting with `TC`/`TE`).
//! - Status: `/Status/Call` (`Connected`/`Synced`/`OnHold`/`Preserved`/`RemotePreserved` →
//!   connected; `Dialling`/`Connecting`/`Ringing`/`EarlyMedia` → dialling; element or
//!   attribute form); when it lists no call or is refused (Integrator role),
//!   `NumberOfActiveCalls` > 0 → connected (Microsoft Teams mode lists no `Call`);
//!   plus `/Status/Audio/Microphones/Mute`.
//!
//! - Inventory: `getxml` of `/Status/SystemUnit`, `/Status/Network`, `/Status/Peripherals`
//!   and `/Status/Cameras`; a refused location is `notReported`, not a failure.
//! - Template settings (issue #36): one `getxml`/`putxml` per key, see `configuration`.
//! - Calendar push: `Bookings Put` with the JSON payload of `cisco::bookings_payload` as its
//!   `<body>` parameter (a multiline command over HTTP, RoomOS HttpApi.md); `OK` replaces the
//!   codec's stored bookings (docs/drivers.md, "Calendar push").
//!
//! Failure kinds: connection refused/reset or closed before an answer → unreachable; no answer
//! in time → timeout; `401`/`403` at login → bad credentials; TLS refused (untrusted or
//! unpinned certificate, not TLS), `404`, unknown command, permission denied, an answer that
//! is not the XML API → misprovisioned; `5xx`, `503` after retries, `*Result` not `OK` →
//! server error. A hang-up answered `No active call` is a success (nothing to hang up).

pub mod bodies;
mod configuration;
mod failures;
mod inventory;
mod pin;
pub mod xml;

pub use pin::{format_fingerprint, parse_fingerprint};

use crate::driver::{
    Action, CallPhase, Capability, Device, DeviceStatus, Driver, DriverFailure, SettingOutcomes,
};
use async_trait::async_trait;
use bodies::{bookings_body, call_phase, dial_body, dtmf_body, firmware_of, form_encode};
use failures::{
    error_chain, http_failure, not_the_api, refused_login, response_head, rustls_error,
    session_cookie, tls_cause,
};
use reqwest::StatusCode;
use roomlink_domain::template::{SettingKey, TemplateSettings};
use roomlink_listener_protocol::failure::FailureKind;
use roomlink_listener_protocol::wire::WireInventory;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use xml::Node;

pub const PROTOCOL: &str = "TANDBERG_HTTP";

pub use super::cisco::DTMF_CHUNK;

const RETRY_DELAYS: [Duration; 3] = [
    Duration::from_millis(250),
    Duration::from_millis(500),
    Duration::from_millis(1000),
];

/// How much of an answer's body goes into `remote_response`.
const RESPONSE_TEXT_MAX: usize = 4_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scheme {
    /// The codecs' default (`NetworkServices HTTP Mode: HTTPS`).
    #[default]
    Https,
    Http,
}

impl Scheme {
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Https => "https",
            Scheme::Http => "http",
        }
    }

    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Https => 443,
            Scheme::Http => 80,
        }
    }
}

/// Which HTTPS certificates the driver trusts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TlsPolicy {
    /// The platform's trust store (codecs with a CA-signed certificate).
    #[default]
    Verify,
    /// Any certificate (codecs' self-signed certificates; no protection from interception).
    AcceptAny,
    /// Device address (as in the endpoint's `ipAddress`) → SHA-256 fingerprint of its
    /// certificate (hex, colons allowed). Addresses without a pin are refused.
    Pinned(BTreeMap<String, String>),
}

#[derive(Debug, Clone)]
pub struct CiscoHttpSettings {
    pub scheme: Scheme,
    pub tls: TlsPolicy,
    pub connect_timeout: Duration,
    /// The bound of one HTTP exchange (request sent, answer read).
    pub request_timeout: Duration,
}

impl Default for CiscoHttpSettings {
    fn default() -> Self {
        CiscoHttpSettings {
            scheme: Scheme::Https,
            tls: TlsPolicy::Verify,
            connect_timeout: Duration::from_secs(3),
            request_timeout: Duration::from_secs(10),
        }
    }
}

/// How the driver is logged in to one device.
#[derive(Clone, Default)]
enum Login {
    #[default]
    None,
    /// The `SessionId` cookie value (a credential: never logged or shown).
    Session(String),
    /// TC-era firmware: Basic on every request.
    Basic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Firmware {
    Ce,
    Tc,
}

/// What the driver keeps per device; its lock makes requests to one device sequential.
#[derive(Default)]
struct Session {
    login: Login,
    /// A digest of the password the login was made with: a request with another password (the
    /// room's password changed in roomlink) must not ride on the old login.
    credential: Option<[u8; 32]>,
    firmware: Option<Firmware>,
    /// `scheme://host:port`, for ending the session at shutdown.
    base: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `getxml` and session begin: a 503 is retried.
    Read,
    /// `putxml`: never retried.
    Command,
}

/// One HTTP exchange to make.
struct Exchange {
    method: reqwest::Method,
    path: String,
    body: Option<String>,
    kind: Kind,
}

impl Exchange {
    fn getxml(location: &str) -> Exchange {
        let query: String = form_encode(location);
        Exchange {
            method: reqwest::Method::GET,
            path: format!("/getxml?location={query}"),
            body: None,
            kind: Kind::Read,
        }
    }

    fn putxml(body: String) -> Exchange {
        Exchange {
            method: reqwest::Method::POST,
            path: "/putxml".into(),
            body: Some(body),
            kind: Kind::Command,
        }
    }
}

/// An answer, with the redacted texts of the exchange for failures.
struct Reply {
    status: StatusCode,
    /// The `SessionId` cookie the answer set, if any.
    session_id: Option<String>,
    body: String,
    request_text: String,
    response_text: String,
}

enum Auth<'a> {
    Basic(&'a Device),
    Cookie(&'a str),
}

pub struct CiscoHttpDriver {
    client: reqwest::Client,
    scheme: Scheme,
    request_timeout: Duration,
    sessions: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Session>>>>,
}

impl CiscoHttpDriver {
    /// `Err` when the TLS policy cannot be set up (a pin that is not a fingerprint).
    pub fn new(settings: CiscoHttpSettings) -> Result<Self, String> {
        let builder = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .timeout(settings.request_timeout)
            // A 302 from session/begin means "TC firmware", not "go there".
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy();
        let builder = match &settings.tls {
            TlsPolicy::Verify => builder.tls_backend_rustls(),
            TlsPolicy::AcceptAny => builder
                .tls_backend_rustls()
                .tls_danger_accept_invalid_certs(true),
            TlsPolicy::Pinned(pins) => {
                builder.tls_backend_preconfigured(pin::pinned_client_config(pins)?)
            }
        };
        let client = builder
            .build()
            .map_err(|e| format!("cannot set up the HTTP client: {e}"))?;
        Ok(CiscoHttpDriver {
            client,
            scheme: settings.scheme,
            request_timeout: settings.request_timeout,
            sessions: Mutex::default(),
        })
    }

    fn base(&self, device: &Device) -> String {
        format!(
            "{}://{}",
            self.scheme.name(),
            device.socket_text(self.scheme.default_port())
        )
    }

    fn session_of(&self, device: &Device) -> Arc<tokio::sync::Mutex<Session>> {
        let base = self.base(device);
        let key = format!("{base}|{}", device.username());
        let mut sessions = self
            .sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        sessions
            .entry(key)
            .or_insert_with(|| {
                Arc::new(tokio::sync::Mutex::new(Session {
                    base,
                    ..Session::default()
                }))
            })
            .clone()
    }

    /// Ends every XML API session the driver holds (codecs allow few and never expire them).
    pub async fn close_sessions(&self) {
        let all: Vec<_> = self
            .sessions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .values()
            .cloned()
            .collect();
        for session in all {
            self.end_session(&mut *session.lock().await).await;
        }
    }

    /// Forgets the session's login, ending it on the codec when it is an XML API session.
    async fn end_session(&self, session: &mut Session) {
        session.credential = None;
        if let Login::Session(id) = std::mem::take(&mut session.login) {
            let ended = self
                .client
                .post(format!("{}/xmlapi/session/end", session.base))
                .header("Cookie", format!("SessionId={id}"))
                .send()
                .await;
            match ended {
                Ok(r) => {
                    tracing::debug!(device = %session.base, status = %r.status(), "session ended")
                }
                Err(e) => {
                    tracing::debug!(device = %session.base, error = %e, "ending the session failed")
                }
            }
        }
    }

    /// Sends one request once.
    async fn send(
        &self,
        device: &Device,
        exchange: &Exchange,
        auth: &Auth<'_>,
    ) -> Result<Reply, DriverFailure> {
        let host = device.socket_text(self.scheme.default_port());
        let mut request_text = format!(
            "{} {} HTTP/1.1\nHost: {host}\n",
            exchange.method, exchange.path
        );
        let mut request = self.client.request(
            exchange.method.clone(),
            format!("{}{}", self.base(device), exchange.path),
        );
        match auth {
            Auth::Basic(device) => {
                request = request.basic_auth(device.username(), Some(device.password()));
                request_text.push_str("Authorization: Basic [redacted]\n");
            }
            Auth::Cookie(id) => {
                request = request.header("Cookie", format!("SessionId={id}"));
                request_text.push_str("Cookie: [redacted]\n");
            }
        }
        if let Some(body) = &exchange.body {
            request = request
                .header("Content-Type", "text/xml")
                .body(body.clone());
            request_text.push_str(&format!("Content-Type: text/xml\n\n{body}"));
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) => return Err(self.transport_failure(device, &e, request_text)),
        };
        let status = response.status();
        let head = response_head(status, response.headers());
        let session_id = session_cookie(response.headers());
        let body = match response.text().await {
            Ok(body) => body,
            Err(e) => return Err(self.transport_failure(device, &e, request_text)),
        };
        let mut response_text = head;
        if !body.is_empty() {
            response_text.push('\n');
            response_text.extend(body.chars().take(RESPONSE_TEXT_MAX));
        }
        Ok(Reply {
            status,
            session_id,
            body,
            request_text,
            response_text,
        })
    }

    /// [`Self::send`], retrying reads that meet the rate limit.
    async fn send_retrying(
        &self,
        device: &Device,
        exchange: &Exchange,
        auth: &Auth<'_>,
    ) -> Result<Reply, DriverFailure> {
        let mut delays = RETRY_DELAYS.iter();
        loop {
            let reply = self.send(device, exchange, auth).await?;
            if reply.status != StatusCode::SERVICE_UNAVAILABLE || exchange.kind == Kind::Command {
                return Ok(reply);
            }
            match delays.next() {
                Some(delay) => {
                    tracing::debug!(device = %device.address, path = %exchange.path, "503: retrying");
                    tokio::time::sleep(*delay).await;
                }
                None => return Ok(reply),
            }
        }
    }

    /// Logs in if not logged in.
    async fn login(&self, device: &Device, session: &mut Session) -> Result<(), DriverFailure> {
        let credential = device.password_digest();
        if !matches!(session.login, Login::None) {
            if session.credential == Some(credential) {
                return Ok(());
            }
            // Another password than the login's: that login proves nothing about this one.
            tracing::debug!(device = %device.address, "the password changed: logging in again");
            self.end_session(session).await;
        }
        let begin = Exchange {
            method: reqwest::Method::POST,
            path: "/xmlapi/session/begin".into(),
            body: None,
            kind: Kind::Read,
        };
        let reply = self
            .send_retrying(device, &begin, &Auth::Basic(device))
            .await?;
        match reply.status.as_u16() {
            200 | 204 => {
                session.login = match reply.session_id {
                    Some(id) => Login::Session(id),
                    // Accepted without a session: keep authenticating every request.
                    None => Login::Basic,
                };
                session.credential = Some(credential);
                Ok(())
            }
            301 | 302 | 303 | 307 | 308 | 404 => {
                tracing::debug!(device = %device.address, "no XML API sessions (TC-era firmware): Basic per request");
                session.login = Login::Basic;
                session.credential = Some(credential);
                Ok(())
            }
            401 | 403 => Err(refused_login(device, reply)),
            _ => Err(http_failure(device, reply)),
        }
    }

    /// One authenticated exchange, logging in (again) as needed; non-2xx answers are failures.
    async fn call(
        &self,
        device: &Device,
        session: &mut Session,
        exchange: &Exchange,
    ) -> Result<Reply, DriverFailure> {
        let mut logged_in_again = false;
        loop {
            self.login(device, session).await?;
            let login = session.login.clone();
            let auth = match &login {
                Login::Session(id) => Auth::Cookie(id),
                _ => Auth::Basic(device),
            };
            let reply = self.send_retrying(device, exchange, &auth).await?;
            if reply.status == StatusCode::UNAUTHORIZED {
                if matches!(login, Login::Session(_)) && !logged_in_again {
                    // The codec forgot the session (reboot, session ended elsewhere).
                    session.login = Login::None;
                    logged_in_again = true;
                    continue;
                }
                return Err(refused_login(device, reply));
            }
            if !reply.status.is_success() {
                return Err(http_failure(device, reply));
            }
            return Ok(reply);
        }
    }

    /// Sends a command document and returns its `*Result` when `OK`.
    async fn command(
        &self,
        device: &Device,
        session: &mut Session,
        what: &str,
        body: String,
    ) -> Result<(), DriverFailure> {
        let reply = self.call(device, session, &Exchange::putxml(body)).await?;
        let result = xml::parse(&reply.body)
            .ok()
            .as_ref()
            .and_then(xml::command_result);
        match result {
            Some(result) if result.ok() => Ok(()),
            Some(result)
                if what == "hang up"
                    && result
                        .reason
                        .as_deref()
                        .is_some_and(|r| r.eq_ignore_ascii_case("No active call")) =>
            {
                tracing::debug!(device = %device.address, "hang up: no call to end");
                Ok(())
            }
            Some(result) => {
                let reason = result
                    .reason
                    .clone()
                    .unwrap_or_else(|| format!("status {}", result.status));
                let (kind, message) = if result.not_permitted() {
                    (
                        FailureKind::Misprovisioned,
                        format!(
                            "{} refused to {what}: {reason} (the user's role or the firmware lacks the command)",
                            device.address
                        ),
                    )
                } else {
                    (
                        FailureKind::ServerError,
                        format!("{} could not {what}: {reason}", device.address),
                    )
                };
                Err(DriverFailure::new(kind, message)
                    .cause(format!("{} status={}", result.name, result.status))
                    .cause(reason)
                    .exchange(Some(reply.request_text), Some(reply.response_text)))
            }
            None => Err(not_the_api(device, reply)),
        }
    }

    /// Reads a `<Status>` document; `Ok(Err(reason))` when the codec refused the location.
    async fn read(
        &self,
        device: &Device,
        session: &mut Session,
        location: &str,
    ) -> Result<(Result<Node, String>, Reply), DriverFailure> {
        let reply = match self
            .call(device, session, &Exchange::getxml(location))
            .await
        {
            Err(failure)
                if failure.kind == FailureKind::Misprovisioned
                    && failure.causes.iter().any(|c| c.starts_with("HTTP 403")) =>
            {
                // Some firmware may answer a role's forbidden location with 403.
                return Ok((
                    Err("HTTP 403 Forbidden".into()),
                    Reply {
                        status: StatusCode::FORBIDDEN,
                        session_id: None,
                        body: String::new(),
                        request_text: failure.remote_request.unwrap_or_default(),
                        response_text: failure.remote_response.unwrap_or_default(),
                    },
                ));
            }
            other => other?,
        };
        match xml::parse(&reply.body) {
            Ok(root) => Ok((xml::status_document(root), reply)),
            Err(_) => Err(not_the_api(device, reply)),
        }
    }

    /// A status value that must be there.
    async fn read_value(
        &self,
        device: &Device,
        session: &mut Session,
        location: &str,
        path: &[&str],
    ) -> Result<String, DriverFailure> {
        let (document, reply) = self.read(device, session, location).await?;
        let found = match &document {
            Ok(root) => root.text_at(path).map(str::to_owned),
            Err(_) => None,
        };
        found.ok_or_else(|| {
            let reason = document
                .err()
                .unwrap_or_else(|| "no such value in the answer".into());
            DriverFailure::new(
                FailureKind::Misprovisioned,
                format!("{} did not report {location}: {reason}", device.address),
            )
            .cause(reason)
            .exchange(Some(reply.request_text), Some(reply.response_text))
        })
    }

    async fn firmware(
        &self,
        device: &Device,
        session: &mut Session,
    ) -> Result<Firmware, DriverFailure> {
        if let Some(firmware) = session.firmware {
            return Ok(firmware);
        }
        let (document, _) = self
            .read(device, session, "/Status/SystemUnit/Software/Version")
            .await?;
        let version = document
            .ok()
            .and_then(|root| {
                root.text_at(&["SystemUnit", "Software", "Version"])
                    .map(str::to_owned)
            })
            .unwrap_or_default();
        let firmware = firmware_of(&version);
        tracing::debug!(device = %device.address, %version, ?firmware, "software version");
        session.firmware = Some(firmware);
        Ok(firmware)
    }

    async fn send_dtmf(
        &self,
        device: &Device,
        session: &mut Session,
        tones: &str,
    ) -> Result<(), DriverFailure> {
        let firmware = self.firmware(device, session).await?;
        let chars: Vec<char> = tones.chars().collect();
        let mut sent = 0;
        for chunk in chars.chunks(DTMF_CHUNK) {
            let chunk: String = chunk.iter().collect();
            let body = dtmf_body(firmware, &chunk);
            self.command(device, session, "send tones", body)
                .await
                .map_err(|mut f| {
                    if sent > 0 {
                        f.causes
                            .push(format!("{sent} of {} tones were sent before", chars.len()));
                    }
                    f
                })?;
            sent += chunk.chars().count();
        }
        Ok(())
    }

    fn transport_failure(
        &self,
        device: &Device,
        error: &reqwest::Error,
        request_text: String,
    ) -> DriverFailure {
        let host = device.socket_text(self.scheme.default_port());
        let mut causes = error_chain(error);
        let tls_error = rustls_error(error);
        if let Some(tls) = tls_error {
            causes.push(tls_cause(tls));
        }
        let tls = tls_error.is_some()
            || causes.iter().any(|c| {
                let c = c.to_ascii_lowercase();
                c.contains("certificate") || c.contains("tls handshake")
            });
        let (kind, message) = if error.is_timeout() {
            (
                FailureKind::Timeout,
                format!(
                    "{host} did not answer within {} ms",
                    self.request_timeout.as_millis()
                ),
            )
        } else if tls {
            (
                FailureKind::Misprovisioned,
                format!(
                    "TLS with {host} failed (untrusted or unpinned certificate, or not HTTPS): check tandberg_http.tls and the scheme"
                ),
            )
        } else if error.is_connect() {
            (
                FailureKind::Unreachable,
                format!("cannot connect to {host}"),
            )
        } else {
            (
                FailureKind::Unreachable,
                format!("the connection to {host} ended before an answer"),
            )
        };
        let mut failure = DriverFailure::new(kind, message).exchange(Some(request_text), None);
        failure.causes = causes;
        failure
    }
}

#[async_trait]
impl Driver for CiscoHttpDriver {
    fn protocol(&self) -> &'static str {
        PROTOCOL
    }

    fn capabilities(&self) -> &'static [Capability] {
        &[
            Capability::Join,
            Capability::Hangup,
            Capability::Status,
            Capability::MuteMicrophone,
            Capability::Dtmf,
            Capability::CalendarPush,
            Capability::Inventory,
            Capability::Configuration,
        ]
    }

    async fn perform(&self, device: &Device, action: &Action) -> Result<(), DriverFailure> {
        let session = self.session_of(device);
        let mut session = session.lock().await;
        match action {
            Action::Join {
                plan, signaling, ..
            } => {
                let body = dial_body(&plan.dial_string, *signaling);
                self.command(device, &mut session, "dial", body).await
            }
            Action::Hangup => {
                let body = "<Command><Call><Disconnect command=\"True\"/></Call></Command>";
                self.command(device, &mut session, "hang up", body.into())
                    .await
            }
            Action::Dtmf(tones) => self.send_dtmf(device, &mut session, tones).await,
            Action::PushCalendar(bookings) => {
                let body = bookings_body(bookings);
                self.command(device, &mut session, "store the bookings", body)
                    .await
            }
            Action::Mute => {
                let body = "<Command><Audio><Microphones><Mute command=\"True\"/></Microphones></Audio></Command>";
                self.command(device, &mut session, "mute the microphones", body.into())
                    .await
            }
            Action::Unmute => {
                let body = "<Command><Audio><Microphones><Unmute command=\"True\"/></Microphones></Audio></Command>";
                self.command(device, &mut session, "unmute the microphones", body.into())
                    .await
            }
        }
    }

    async fn status(&self, device: &Device) -> Result<DeviceStatus, DriverFailure> {
        let session = self.session_of(device);
        let mut session = session.lock().await;
        let (calls, _) = self.read(device, &mut session, "/Status/Call").await?;
        let listed = match calls {
            Ok(calls) => call_phase(&calls),
            Err(reason) => {
                tracing::debug!(device = %device.address, %reason, "Call status refused: counting active calls");
                CallPhase::Idle
            }
        };
        // No call listed (or the list refused, Integrator role): a codec in Microsoft Teams
        // mode lists none under `Call` yet counts its call (AVI-SPL's recorded Room Bar).
        let call = match listed {
            CallPhase::Idle => {
                let count = self
                    .read_value(
                        device,
                        &mut session,
                        "/Status/SystemUnit/State/NumberOfActiveCalls",
                        &["SystemUnit", "State", "NumberOfActiveCalls"],
                    )
                    .await?;
                if count.trim().parse::<u32>().unwrap_or(0) > 0 {
                    CallPhase::Connected
                } else {
                    CallPhase::Idle
                }
            }
            phase => phase,
        };
        let mute = self
            .read_value(
                device,
                &mut session,
                "/Status/Audio/Microphones/Mute",
                &["Audio", "Microphones", "Mute"],
            )
            .await?;
        Ok(DeviceStatus {
            call,
            microphone_muted: mute.eq_ignore_ascii_case("On"),
        })
    }

    async fn inventory(&self, device: &Device) -> Result<WireInventory, DriverFailure> {
        self.read_inventory(device).await
    }

    async fn read_configuration(
        &self,
        device: &Device,
        keys: &[SettingKey],
    ) -> Result<SettingOutcomes, DriverFailure> {
        self.read_settings(device, keys).await
    }

    async fn write_configuration(
        &self,
        device: &Device,
        settings: &TemplateSettings,
    ) -> Result<SettingOutcomes, DriverFailure> {
        self.write_settings(device, settings).await
    }

    async fn shutdown(&self) {
        self.close_sessions().await;
    }
}

#[cfg(test)]
mod tests;

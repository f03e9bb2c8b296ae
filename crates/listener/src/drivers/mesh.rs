//! `MESH`: the Relay Mesh contract (relay-facts.md §6): the listener calls an integrator's
//! driver server at the endpoint's `meshBaseUri`, which drives the room system.
//!
//! Protocol decisions:
//! - Paths are relative to `meshBaseUri` whether or not it ends in `/`: `{base}/{ip}/{op}`,
//!   `{ip}` the endpoint's `ipAddress` as one path segment. No `meshBaseUri`, or one that is not
//!   an http(s) URL → Misprovisioned. Certificates are verified (a Mesh server is a server, not a
//!   codec with a self-signed certificate).
//! - Every request carries the endpoint's credentials as `Authorization: Basic` (when it has a
//!   user name or password) and, for POSTs, the endpoint JSON as body.
//! - join: `POST {ip}/join?dialString=&meetingId=&passcode=&bridgeAddress=`; `meetingId` and
//!   `passcode` only when roomlink sent them; `bridgeAddress` = the dial string's part after
//!   its last `@`, or the whole dial string. The IVR is the Mesh server's business (it has the
//!   meeting id and passcode).
//! - hangup / mute / unmute: `POST {ip}/hangup|mutemicrophone|unmutemicrophone`. Any 2xx is
//!   success (the contract says 204).
//! - status: `GET {ip}/status?port=&name=` (empty values when unknown) →
//!   `{"callActive","microphoneMuted"}`; the contract cannot tell dialling from connected, so an
//!   active call is Connected. A missing `microphoneMuted` (the contract's oldest servers) is
//!   unmuted.
//! - capabilities: `GET {ip}/capabilities?port=&name=`, cached a minute per base URI and
//!   address; an operation the server disclaims → Misprovisioned without calling it. A 404 means
//!   a server older than the capabilities call: everything but calendar push assumed.
//! - No DTMF: the contract has none, so the driver does not report the capability and refuses
//!   `senddtmf` as Misprovisioned.
//! - Answers: 401/403 → BadCredentials; 404/405 → Misprovisioned (no such driver path); other
//!   4xx, 429 and 5xx → ServerError (no retries: a join must not be repeated blindly); connect
//!   errors and connections closed without an answer → Unreachable; timeouts → Timeout; an
//!   answer that is not the contract's JSON → Misprovisioned.

use crate::driver::{Action, CallPhase, Capability, Device, DeviceStatus, Driver, DriverFailure};
use async_trait::async_trait;
use reqwest::{Method, StatusCode, Url};
use roomlink_listener_protocol::failure::FailureKind;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a Mesh server's capabilities are trusted.
const CAPABILITIES_TTL: Duration = Duration::from_secs(60);
/// Most characters kept of an answer body, for `remoteResponse`.
const MAX_BODY: usize = 2000;

#[derive(Debug, Clone)]
pub struct MeshSettings {
    /// How long a whole request may take.
    pub request_timeout: Duration,
    /// How long the connection may take.
    pub connect_timeout: Duration,
}

impl Default for MeshSettings {
    fn default() -> Self {
        MeshSettings {
            request_timeout: Duration::from_secs(15),
            connect_timeout: Duration::from_secs(5),
        }
    }
}

/// What a Mesh server says it can do for one device (`GET {ip}/capabilities`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct MeshCapabilities {
    #[serde(rename = "JOIN", default)]
    pub join: bool,
    #[serde(rename = "HANGUP", default)]
    pub hangup: bool,
    #[serde(rename = "STATUS", default)]
    pub status: bool,
    #[serde(rename = "MUTE_MICROPHONE", default)]
    pub mute_microphone: bool,
    #[serde(rename = "CALENDAR_PUSH", default)]
    pub calendar_push: bool,
}

impl MeshCapabilities {
    /// What a server older than the capabilities call is taken to offer.
    const LEGACY: MeshCapabilities = MeshCapabilities {
        join: true,
        hangup: true,
        status: true,
        mute_microphone: true,
        calendar_push: false,
    };
}

pub struct MeshDriver {
    client: reqwest::Client,
    settings: MeshSettings,
    /// By capabilities URL (base URI + address): when fetched, and the answer.
    capabilities: Mutex<HashMap<String, (Instant, MeshCapabilities)>>,
}

impl MeshDriver {
    pub fn new(settings: MeshSettings) -> Self {
        let client = reqwest::Client::builder()
            .connect_timeout(settings.connect_timeout)
            .timeout(settings.request_timeout)
            .build()
            // Only a TLS backend that cannot start fails here: nothing could be reached.
            .expect("the HTTP client starts (TLS backend available)");
        MeshDriver {
            client,
            settings,
            capabilities: Mutex::default(),
        }
    }

    /// The Mesh server's capabilities for `device` (cached a minute).
    pub async fn remote_capabilities(
        &self,
        device: &Device,
    ) -> Result<MeshCapabilities, DriverFailure> {
        let url = with_port_and_name(url(device, "capabilities")?, device);
        let key = url.to_string();
        if let Some((at, caps)) = self.cache().get(&key)
            && at.elapsed() < CAPABILITIES_TTL
        {
            return Ok(*caps);
        }
        let caps = match self.call(device, Method::GET, url, false).await {
            Ok(body) => parse::<MeshCapabilities>(&body, "capabilities")?,
            Err(f) if f.kind == FailureKind::Misprovisioned && is_not_found(&f) => {
                MeshCapabilities::LEGACY
            }
            Err(f) => return Err(f),
        };
        self.cache().insert(key, (Instant::now(), caps));
        Ok(caps)
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Instant, MeshCapabilities)>> {
        self.capabilities
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Sends one request; returns the body of a 2xx answer.
    async fn call(
        &self,
        device: &Device,
        method: Method,
        url: Url,
        with_body: bool,
    ) -> Result<String, DriverFailure> {
        let mut request_text = format!("{method} {}", shown(&url));
        // The server by its origin: a base URI's user info never reaches a message.
        let server = url.origin().ascii_serialization();
        let mut request = self.client.request(method, url);
        if device.username.is_some() || device.password.is_some() {
            request = request.basic_auth(device.username(), Some(device.password()));
            request_text.push_str("\nAuthorization: Basic [redacted]");
        }
        if with_body {
            let body = serde_json::to_string(&device.endpoint).unwrap_or_else(|_| "{}".into());
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.clone());
            request_text.push_str("\nContent-Type: application/json\n\n");
            request_text.push_str(&body);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(e) => return Err(transport_failure(&e, &server, &self.settings, request_text)),
        };
        let status = response.status();
        let body = match response.text().await {
            Ok(body) => body,
            Err(e) => return Err(transport_failure(&e, &server, &self.settings, request_text)),
        };
        if status.is_success() {
            return Ok(body);
        }
        Err(status_failure(status, &server, device, request_text, &body))
    }

    /// Refuses an operation the server disclaims.
    async fn require(
        &self,
        device: &Device,
        name: &str,
        offered: fn(&MeshCapabilities) -> bool,
    ) -> Result<(), DriverFailure> {
        let caps = self.remote_capabilities(device).await?;
        if offered(&caps) {
            return Ok(());
        }
        Err(DriverFailure::new(
            FailureKind::Misprovisioned,
            format!(
                "the Mesh server for {} does not offer {name}",
                device.address
            ),
        ))
    }
}

#[async_trait]
impl Driver for MeshDriver {
    fn protocol(&self) -> &'static str {
        "MESH"
    }

    fn capabilities(&self) -> &'static [Capability] {
        &[
            Capability::Join,
            Capability::Hangup,
            Capability::Status,
            Capability::MuteMicrophone,
        ]
    }

    async fn perform(&self, device: &Device, action: &Action) -> Result<(), DriverFailure> {
        let (operation, name, offered): (&str, &str, fn(&MeshCapabilities) -> bool) = match action {
            Action::Join { .. } => ("join", "JOIN", |c| c.join),
            Action::Hangup => ("hangup", "HANGUP", |c| c.hangup),
            Action::Mute => ("mutemicrophone", "MUTE_MICROPHONE", |c| c.mute_microphone),
            Action::Unmute => ("unmutemicrophone", "MUTE_MICROPHONE", |c| c.mute_microphone),
            Action::Dtmf(_) => {
                return Err(DriverFailure::new(
                    FailureKind::Misprovisioned,
                    "the Relay Mesh contract has no DTMF",
                ));
            }
            Action::PushCalendar(_) => {
                return Err(DriverFailure::new(
                    FailureKind::Misprovisioned,
                    "the Relay Mesh contract has no calendar push operation",
                ));
            }
        };
        let mut url = url(device, operation)?;
        self.require(device, name, offered).await?;
        if let Action::Join {
            plan,
            meeting_id,
            passcode,
            ..
        } = action
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("dialString", &plan.dial_string);
            if let Some(id) = meeting_id {
                query.append_pair("meetingId", id);
            }
            if let Some(passcode) = passcode {
                query.append_pair("passcode", passcode);
            }
            query.append_pair("bridgeAddress", bridge_address(&plan.dial_string));
        }
        self.call(device, Method::POST, url, true).await.map(|_| ())
    }

    async fn status(&self, device: &Device) -> Result<DeviceStatus, DriverFailure> {
        let url = with_port_and_name(url(device, "status")?, device);
        self.require(device, "STATUS", |c| c.status).await?;
        let body = self.call(device, Method::GET, url, false).await?;
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Status {
            call_active: bool,
            #[serde(default)]
            microphone_muted: bool,
        }
        let status = parse::<Status>(&body, "status")?;
        Ok(DeviceStatus {
            call: if status.call_active {
                CallPhase::Connected
            } else {
                CallPhase::Idle
            },
            microphone_muted: status.microphone_muted,
        })
    }
}

/// `{meshBaseUri}/{ip}/{operation}`.
fn url(device: &Device, operation: &str) -> Result<Url, DriverFailure> {
    let misprovisioned = |why: String| DriverFailure::new(FailureKind::Misprovisioned, why);
    let base = device
        .endpoint
        .mesh_base_uri
        .as_deref()
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .ok_or_else(|| misprovisioned("a MESH endpoint needs a meshBaseUri".into()))?;
    let mut url = Url::parse(base)
        .map_err(|e| misprovisioned(format!("the meshBaseUri is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(misprovisioned(format!(
            "the meshBaseUri must be http or https, not {}",
            url.scheme()
        )));
    }
    if device.address.trim().is_empty() {
        return Err(misprovisioned("the endpoint has no ipAddress".into()));
    }
    url.set_fragment(None);
    url.path_segments_mut()
        .map_err(|()| misprovisioned("the meshBaseUri cannot have paths".into()))?
        .pop_if_empty()
        .push(device.address.trim())
        .push(operation);
    Ok(url)
}

/// Adds the contract's `port=&name=`.
fn with_port_and_name(mut url: Url, device: &Device) -> Url {
    let port = device
        .port
        .or(device.endpoint.port)
        .map(|p| p.to_string())
        .unwrap_or_default();
    let name = device.endpoint.name.clone().unwrap_or_default();
    url.query_pairs_mut()
        .append_pair("port", &port)
        .append_pair("name", &name);
    url
}

/// The bridge a dial string reaches: after its last `@`, or all of it.
pub fn bridge_address(dial_string: &str) -> &str {
    dial_string
        .rsplit_once('@')
        .map_or(dial_string, |(_, host)| host)
}

/// A URL for messages: without any user name or password it carries.
fn shown(url: &Url) -> String {
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.to_string()
}

fn parse<T: serde::de::DeserializeOwned>(body: &str, what: &str) -> Result<T, DriverFailure> {
    serde_json::from_str(body).map_err(|e| {
        DriverFailure::new(
            FailureKind::Misprovisioned,
            format!("the Mesh server's {what} answer is not the contract's JSON"),
        )
        .cause(e.to_string())
        .exchange(None, Some(bounded(body)))
    })
}

fn is_not_found(failure: &DriverFailure) -> bool {
    failure
        .remote_response
        .as_deref()
        .is_some_and(|r| r.starts_with("HTTP 404"))
}

fn status_failure(
    status: StatusCode,
    server: &str,
    device: &Device,
    request_text: String,
    body: &str,
) -> DriverFailure {
    let (kind, what) = match status.as_u16() {
        401 | 403 => (
            FailureKind::BadCredentials,
            "refused the endpoint's credentials",
        ),
        404 | 405 => (
            FailureKind::Misprovisioned,
            "has no such driver path (wrong meshBaseUri?)",
        ),
        429 | 503 => (FailureKind::ServerError, "is busy or rate limited"),
        _ => (FailureKind::ServerError, "refused the request"),
    };
    DriverFailure::new(
        kind,
        format!(
            "the Mesh server {server} {what} for {} (HTTP {})",
            device.address,
            status.as_u16()
        ),
    )
    .cause(format!("HTTP {status}"))
    .exchange(
        Some(request_text),
        Some(format!("HTTP {status}\n\n{}", bounded(body))),
    )
}

fn transport_failure(
    error: &reqwest::Error,
    server: &str,
    settings: &MeshSettings,
    request_text: String,
) -> DriverFailure {
    let (kind, message) = if error.is_timeout() {
        (
            FailureKind::Timeout,
            format!(
                "the Mesh server {server} did not answer within {} ms",
                settings.request_timeout.as_millis()
            ),
        )
    } else if error.is_connect() {
        (
            FailureKind::Unreachable,
            format!("cannot connect to the Mesh server {server}"),
        )
    } else {
        (
            FailureKind::Unreachable,
            format!("the Mesh server {server} closed the connection without an answer"),
        )
    };
    let mut failure = DriverFailure::new(kind, message).exchange(Some(request_text), None);
    // The error's chain, without the URL reqwest adds.
    let mut source: Option<&dyn std::error::Error> = Some(error);
    while let Some(e) = source {
        let text = match e.downcast_ref::<reqwest::Error>() {
            Some(r) if r.url().is_some() => text_without_url(r),
            _ => e.to_string(),
        };
        if !failure.causes.contains(&text) {
            failure.causes.push(text);
        }
        source = e.source();
    }
    failure
}

/// A reqwest error's own text without its URL.
fn text_without_url(error: &reqwest::Error) -> String {
    let text = error.to_string();
    match text.split_once(" for url (") {
        Some((head, _)) => head.to_owned(),
        None => text,
    }
}

fn bounded(body: &str) -> String {
    if body.len() <= MAX_BODY {
        return body.to_owned();
    }
    let mut cut = MAX_BODY;
    while !body.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &body[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;
    use roomlink_listener_protocol::wire::WireEndpoint;

    fn device(base: Option<&str>) -> Device {
        Device {
            endpoint: WireEndpoint {
                mesh_base_uri: base.map(str::to_owned),
                name: Some("Board room".into()),
                ..WireEndpoint::default()
            },
            address: "10.1.2.3".into(),
            port: Some(443),
            username: Some("admin".into()),
            password: None,
        }
    }

    #[test]
    fn paths_are_relative_to_the_base_with_or_without_a_slash() {
        for base in [
            "https://mesh.example/drivers",
            "https://mesh.example/drivers/",
        ] {
            let u = url(&device(Some(base)), "hangup").expect("url");
            assert_eq!(u.as_str(), "https://mesh.example/drivers/10.1.2.3/hangup");
        }
        let u = url(&device(Some("http://mesh.example:8080")), "status").expect("url");
        let u = with_port_and_name(u, &device(None));
        assert_eq!(
            u.as_str(),
            "http://mesh.example:8080/10.1.2.3/status?port=443&name=Board+room"
        );
    }

    #[test]
    fn a_missing_or_odd_base_is_misprovisioned() {
        for base in [None, Some(" "), Some("ftp://x/"), Some("not a url")] {
            let f = url(&device(base), "join").expect_err("no url");
            assert_eq!(f.kind, FailureKind::Misprovisioned);
        }
    }

    #[test]
    fn the_bridge_is_after_the_last_at() {
        assert_eq!(bridge_address("111.222@bridge.example"), "bridge.example");
        assert_eq!(bridge_address("bridge.example"), "bridge.example");
    }

    #[test]
    fn shown_urls_lose_their_user_info() {
        let u = Url::parse("https://user:secret@mesh.example/a").expect("url");
        assert_eq!(shown(&u), "https://mesh.example/a");
    }
}

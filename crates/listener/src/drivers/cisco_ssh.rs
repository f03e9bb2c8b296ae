//! `TANDBERG_SSH`: Cisco TC/CE/RoomOS codecs over their SSH xAPI (device-drivers.md §1.3).
//!
//! - One shell session per device (address, port, user), opened on first use and kept for the
//!   next commands and status reads; a session that breaks (closed, silent past the deadline)
//!   is dropped and the next call opens a new one. Reconnection is on demand: the next command
//!   or status poll (every `listener.status_poll_interval_ms` of roomlink) retries.
//! - Login: password, then keyboard-interactive (every prompt answered with the password), as
//!   Cisco's own client does. The host key is checked by policy: recorded on first use and
//!   demanded after (a changed key refuses the connection), or accepted as is.
//! - After the banner's `OK`: `echo off`, `xpreferences outputmode json`. Commands carry
//!   `| resultId="n"` and the answer is the JSON object with that `ResultId` (objects without
//!   one are feedback and skipped). TC-era firmware (banner `Release TC…`) gets top-level
//!   `xCommand DTMFSend`.
//! - Status: `xStatus Call` (when it lists no call or is refused for an integrator user,
//!   `xStatus SystemUnit State NumberOfActiveCalls` > 0 is read as connected: Microsoft Teams
//!   mode lists no `Call`) and `xStatus Audio Microphones Mute`.
//! - Template settings (issue #36): one `xConfiguration` line per key, see `configuration`.
//! - Inventory: `xStatus SystemUnit`, `Network`, `Peripherals`, `Cameras`; a refused part is
//!   `notReported`.
//!
//! Failure kinds: refused/no route → unreachable; closed before the answer → unreachable;
//! silence → timeout; login refused → bad credentials; not an SSH server, not a Cisco shell,
//! a changed host key, permission denied or an unknown command → misprovisioned; any other
//! result whose `status` is not `OK` → server error (a hang-up with no call is a success).

pub mod answers;
pub mod configuration;
mod inventory;
mod known_hosts;

use super::cisco::{self, dtmf_chunks};
use crate::driver::{
    Action, CallPhase, Capability, Device, DeviceStatus, Driver, DriverFailure, SettingOutcomes,
};
use answers::Outcome;
use async_trait::async_trait;
use known_hosts::{KnownHosts, Verdict};
use roomlink_domain::template::{SettingKey, TemplateSettings};
use roomlink_listener_protocol::failure::FailureKind;
use roomlink_listener_protocol::wire::WireInventory;
use russh::client::{self, AuthResult, KeyboardInteractiveAuthResponse};
use russh::keys::{HashAlg, PublicKeyOrCertificate};
use russh::{Channel, ChannelMsg, Preferred};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const PROTOCOL: &str = "TANDBERG_SSH";
pub const DEFAULT_PORT: u16 = 22;

/// How the codec's host key is trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostKeyPolicy {
    /// Recorded in `file` the first time, demanded after.
    PinOnFirstUse {
        file: PathBuf,
    },
    AcceptAny,
}

#[derive(Debug, Clone)]
pub struct CiscoSshSettings {
    pub host_keys: HostKeyPolicy,
    /// Also offer SHA-1 key exchange and MACs (TC-era and older units).
    pub legacy_algorithms: bool,
    pub connect_timeout: Duration,
    /// How long one answer (login, banner, command) may take.
    pub answer_timeout: Duration,
}

type SessionSlot = Arc<tokio::sync::Mutex<Option<Shell>>>;

pub struct CiscoSshDriver {
    settings: CiscoSshSettings,
    config: Arc<client::Config>,
    known: Option<Arc<KnownHosts>>,
    sessions: Mutex<HashMap<String, SessionSlot>>,
    connections: AtomicU64,
}

/// An open shell on one codec.
struct Shell {
    /// [`Device::password_digest`] of the password it logged in with.
    credential: [u8; 32],
    _handle: client::Handle<HostCheck>,
    channel: Channel<client::Msg>,
    buffer: Vec<u8>,
    tc: bool,
    next_id: u64,
}

/// The client side's host-key check; its verdict is read after the handshake.
struct HostCheck {
    host: String,
    known: Option<Arc<KnownHosts>>,
    verdict: Arc<Mutex<Option<Result<(), String>>>>,
}

impl client::Handler for HostCheck {
    type Error = russh::Error;

    async fn check_server_key(
        &mut self,
        key: &PublicKeyOrCertificate,
    ) -> Result<bool, Self::Error> {
        let PublicKeyOrCertificate::PublicKey { key, .. } = key else {
            self.record(Err(
                "the codec presented a certificate; a host key was expected".into(),
            ));
            return Ok(false);
        };
        let Some(known) = &self.known else {
            return Ok(true);
        };
        let outcome = match known.check(&self.host, key) {
            Ok(Verdict::Known) => Ok(()),
            Ok(Verdict::Learned) => {
                tracing::info!(host = %self.host, fingerprint = %key.fingerprint(HashAlg::Sha256),
                    "SSH host key recorded on first use");
                Ok(())
            }
            Ok(Verdict::Changed { recorded }) => Err(format!(
                "the host key of {} changed: recorded {recorded}, presented {}",
                self.host,
                key.fingerprint(HashAlg::Sha256)
            )),
            Err(e) => Err(e),
        };
        let accepted = outcome.is_ok();
        self.record(outcome);
        Ok(accepted)
    }
}

impl HostCheck {
    fn record(&self, outcome: Result<(), String>) {
        *self.verdict.lock().unwrap_or_else(|p| p.into_inner()) = Some(outcome);
    }
}

/// Why reading from the shell stopped.
enum ReadError {
    Closed,
    Silent,
}

impl Shell {
    /// Reads until `take` finds what it wants in the buffer, or the deadline passes.
    async fn read_until<T>(
        &mut self,
        deadline: Instant,
        mut take: impl FnMut(&mut Vec<u8>) -> Option<T>,
    ) -> Result<T, ReadError> {
        loop {
            if let Some(found) = take(&mut self.buffer) {
                return Ok(found);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.channel.wait()).await {
                Err(_) => return Err(ReadError::Silent),
                Ok(None | Some(ChannelMsg::Eof | ChannelMsg::Close)) => {
                    return Err(ReadError::Closed);
                }
                Ok(Some(ChannelMsg::Data { data })) => self.buffer.extend_from_slice(&data),
                Ok(Some(_)) => {}
            }
        }
    }

    async fn send(&mut self, line: &str) -> Result<(), ReadError> {
        self.channel
            .data_bytes(format!("{line}\n").into_bytes())
            .await
            .map_err(|_| ReadError::Closed)
    }
}

fn legacy_preferred() -> Preferred {
    let mut kex = Preferred::DEFAULT.kex.to_vec();
    kex.push(russh::kex::DH_G14_SHA1);
    let mut mac = Preferred::DEFAULT.mac.to_vec();
    mac.push(russh::mac::HMAC_SHA1);
    Preferred {
        kex: Cow::Owned(kex),
        mac: Cow::Owned(mac),
        ..Preferred::DEFAULT
    }
}

fn failure(kind: FailureKind, message: impl Into<String>) -> DriverFailure {
    DriverFailure::new(kind, message)
}

impl CiscoSshDriver {
    pub fn new(settings: CiscoSshSettings) -> Self {
        let config = client::Config {
            inactivity_timeout: None,
            keepalive_interval: Some(Duration::from_secs(30)),
            keepalive_max: 3,
            preferred: if settings.legacy_algorithms {
                legacy_preferred()
            } else {
                Preferred::DEFAULT
            },
            ..client::Config::default()
        };
        let known = match &settings.host_keys {
            HostKeyPolicy::PinOnFirstUse { file } => Some(Arc::new(KnownHosts::new(file))),
            HostKeyPolicy::AcceptAny => None,
        };
        CiscoSshDriver {
            settings,
            config: Arc::new(config),
            known,
            sessions: Mutex::new(HashMap::new()),
            connections: AtomicU64::new(0),
        }
    }

    /// SSH connections opened so far (sessions are reused: tests count them).
    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::Relaxed)
    }

    fn slot(&self, device: &Device) -> SessionSlot {
        let key = format!("{} {}", device.socket_text(DEFAULT_PORT), device.username());
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions.entry(key).or_default().clone()
    }

    async fn open(&self, device: &Device) -> Result<Shell, DriverFailure> {
        let at = device.socket_text(DEFAULT_PORT);
        let deadline = Instant::now() + self.settings.answer_timeout;
        let stream = match tokio::time::timeout(
            self.settings.connect_timeout,
            tokio::net::TcpStream::connect((device.address.as_str(), device.port_or(DEFAULT_PORT))),
        )
        .await
        {
            Err(_) => {
                return Err(failure(
                    FailureKind::Timeout,
                    format!("no SSH connection to {at} in time"),
                )
                .cause(format!(
                    "connect timed out after {} ms",
                    self.settings.connect_timeout.as_millis()
                )));
            }
            Ok(Err(e)) => {
                return Err(failure(
                    FailureKind::Unreachable,
                    format!("the room system at {at} cannot be reached"),
                )
                .cause(format!("connect to {at}: {e}")));
            }
            Ok(Ok(stream)) => stream,
        };
        self.connections.fetch_add(1, Ordering::Relaxed);
        let verdict = Arc::new(Mutex::new(None));
        let check = HostCheck {
            host: at.clone(),
            known: self.known.clone(),
            verdict: verdict.clone(),
        };
        let handshake = tokio::time::timeout(
            deadline.saturating_duration_since(Instant::now()),
            client::connect_stream(self.config.clone(), stream, check),
        )
        .await;
        let mut handle = match handshake {
            Err(_) => {
                return Err(failure(
                    FailureKind::Timeout,
                    format!("{at} did not complete the SSH handshake in time"),
                ));
            }
            Ok(Err(e)) => {
                let refused_key = verdict.lock().unwrap_or_else(|p| p.into_inner()).take();
                if let Some(Err(why)) = refused_key {
                    return Err(failure(FailureKind::Misprovisioned, why));
                }
                return Err(failure(
                    FailureKind::Misprovisioned,
                    format!("{at} does not speak SSH as a Cisco codec does"),
                )
                .cause(format!("SSH handshake: {e}")));
            }
            Ok(Ok(handle)) => handle,
        };
        self.log_in(&mut handle, device, &at).await?;
        let channel = handle.channel_open_session().await.map_err(|e| {
            failure(
                FailureKind::Misprovisioned,
                format!("{at} refused a shell session"),
            )
            .cause(e.to_string())
        })?;
        channel.request_shell(true).await.map_err(|e| {
            failure(FailureKind::Misprovisioned, format!("{at} refused a shell"))
                .cause(e.to_string())
        })?;
        let mut shell = Shell {
            credential: device.password_digest(),
            _handle: handle,
            channel,
            buffer: Vec::new(),
            tc: false,
            next_id: 0,
        };
        let closed = |what: &str| {
            failure(
                FailureKind::Unreachable,
                format!("{at} closed the SSH session {what}"),
            )
        };
        let silent = |what: &str| {
            failure(
                FailureKind::Misprovisioned,
                format!("{at} is not a Cisco xAPI shell: no {what}"),
            )
        };
        let banner = shell
            .read_until(deadline, |buffer| {
                let text = String::from_utf8_lossy(buffer).into_owned();
                let at_ok = text.contains("Login successful") && answers::take_ok(buffer);
                at_ok.then_some(text)
            })
            .await
            .map_err(|e| match e {
                ReadError::Closed => closed("before its banner"),
                ReadError::Silent => silent("banner ending in OK"),
            })?;
        shell.tc = banner
            .lines()
            .find_map(|l| l.split("Release").nth(1))
            .is_some_and(cisco::is_tc);
        for line in ["echo off", "xpreferences outputmode json"] {
            shell
                .send(line)
                .await
                .map_err(|_| closed("during set-up"))?;
            shell
                .read_until(deadline, |buffer| answers::take_ok(buffer).then_some(()))
                .await
                .map_err(|e| match e {
                    ReadError::Closed => closed("during set-up"),
                    // It greeted as a codec: silence now is slowness, not another protocol.
                    ReadError::Silent => failure(
                        FailureKind::Timeout,
                        format!("{at} did not acknowledge `{line}` in time"),
                    ),
                })?;
        }
        tracing::debug!(device = %device.address, tc = shell.tc, "SSH xAPI session open");
        Ok(shell)
    }

    async fn log_in(
        &self,
        handle: &mut client::Handle<HostCheck>,
        device: &Device,
        at: &str,
    ) -> Result<(), DriverFailure> {
        let refused = || {
            failure(
                FailureKind::BadCredentials,
                "the room system refused the login",
            )
            .cause(format!(
                "SSH authentication as {} refused by {at}",
                device.username()
            ))
        };
        let broken = |e: russh::Error| {
            failure(
                FailureKind::Unreachable,
                format!("{at} broke the SSH login"),
            )
            .cause(e.to_string())
        };
        match handle
            .authenticate_password(device.username(), device.password())
            .await
            .map_err(broken)?
        {
            AuthResult::Success => return Ok(()),
            AuthResult::Failure { .. } => {}
        }
        let mut reply = handle
            .authenticate_keyboard_interactive_start(device.username(), None)
            .await
            .map_err(broken)?;
        // A codec asks once; a few rounds are allowed, not a loop without end.
        for _ in 0..3 {
            match reply {
                KeyboardInteractiveAuthResponse::Success => return Ok(()),
                KeyboardInteractiveAuthResponse::Failure { .. } => return Err(refused()),
                KeyboardInteractiveAuthResponse::InfoRequest { prompts, .. } => {
                    let answers = prompts
                        .iter()
                        .map(|_| device.password().to_owned())
                        .collect();
                    reply = handle
                        .authenticate_keyboard_interactive_respond(answers)
                        .await
                        .map_err(broken)?;
                }
            }
        }
        Err(refused())
    }

    /// Sends one xAPI line on the device's session (opening it if needed) and returns the
    /// JSON answer tagged for it.
    async fn run(&self, device: &Device, line: &str) -> Result<Value, DriverFailure> {
        let slot = self.slot(device);
        let mut held = slot.lock().await;
        if let Some(old) = held.take_if(|s| s.credential != device.password_digest()) {
            // Another password than the shell's login (changed in roomlink): log in again.
            let _ = old.channel.data_bytes(b"bye\n".to_vec()).await;
        }
        if held.is_none() {
            *held = Some(self.open(device).await?);
        }
        let Some(shell) = held.as_mut() else {
            return Err(failure(FailureKind::Unreachable, "no SSH session"));
        };
        shell.next_id += 1;
        let id = format!("roomlink-{}", shell.next_id);
        let tagged = format!("{line} | resultId=\"{id}\"");
        let deadline = Instant::now() + self.settings.answer_timeout;
        let sent = shell.send(&tagged).await;
        let answer = match sent {
            Ok(()) => {
                shell
                    .read_until(deadline, |buffer| {
                        loop {
                            let object = answers::take_object(buffer)?;
                            if object.get("ResultId").and_then(Value::as_str) == Some(id.as_str()) {
                                return Some(object);
                            }
                        }
                    })
                    .await
            }
            Err(e) => Err(e),
        };
        match answer {
            Ok(answer) => Ok(answer),
            Err(e) => {
                // An answer may still come, or never: this session cannot be trusted again.
                *held = None;
                let at = device.socket_text(DEFAULT_PORT);
                Err(match e {
                    ReadError::Closed => failure(
                        FailureKind::Unreachable,
                        format!("the room system at {at} closed the connection before answering"),
                    )
                    .cause("SSH channel closed before the answer"),
                    ReadError::Silent => failure(
                        FailureKind::Timeout,
                        format!("the room system at {at} did not answer in time"),
                    )
                    .cause(format!(
                        "no answer within {} ms",
                        self.settings.answer_timeout.as_millis()
                    )),
                }
                .exchange(Some(line.to_owned()), None))
            }
        }
    }

    /// Runs a command and checks its result.
    async fn command(
        &self,
        device: &Device,
        line: &str,
        ok_when: Option<&str>,
    ) -> Result<(), DriverFailure> {
        let answer = self.run(device, line).await?;
        match answers::outcome(&answer) {
            Outcome::Ok => Ok(()),
            Outcome::Failed { reason, .. }
                if ok_when.is_some_and(|r| r.eq_ignore_ascii_case(&reason)) =>
            {
                Ok(())
            }
            Outcome::Failed { status, reason } => {
                Err(refusal(&device.address, line, &status, reason, &answer))
            }
        }
    }

    /// Whether the device runs TC-era firmware, as its open session's banner said; `None`
    /// while no session is open.
    async fn firmware_is_tc(&self, device: &Device) -> Option<bool> {
        let slot = self.slot(device);
        slot.lock().await.as_ref().map(|s| s.tc)
    }
}

/// The failure for a command the codec answered with an error `status`. A `ParameterError`
/// carries no `Reason` (cisco-ce/jsxapi's recorded answers): the status is then the reason.
fn refusal(
    address: &str,
    line: &str,
    status: &str,
    reason: String,
    answer: &Value,
) -> DriverFailure {
    let reason = if reason.is_empty() {
        format!("status {status}")
    } else {
        reason
    };
    let lower = reason.to_ascii_lowercase();
    let kind = if lower.contains("permission")
        || lower.contains("unknown command")
        || lower.contains("access denied")
    {
        FailureKind::Misprovisioned
    } else {
        FailureKind::ServerError
    };
    failure(
        kind,
        format!("the room system at {address} refused `{line}`: {reason}"),
    )
    .cause(format!("status={status}"))
    .cause(reason)
    .exchange(Some(line.to_owned()), Some(answer.to_string()))
}

/// A JSON string literal, as the xAPI takes string parameters (no newlines survive).
fn quoted(text: &str) -> String {
    serde_json::to_string(&text.replace(['\r', '\n'], " ")).unwrap_or_default()
}

/// The `Value` at a path of a `{"Status": …}` answer.
pub fn status_value<'a>(answer: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut node = answer.get("Status")?;
    for word in path {
        node = node.get(word)?;
    }
    node.get("Value").and_then(Value::as_str)
}

/// Why a status read was refused, if it was. Three shapes are known: the emulator's and
/// device-drivers.md's `{"CommandResponse": {"Status": {...}}}`, the same under the path's root
/// (`{"CommandResponse": {"Configuration": {"status": "Error", ...}}}`, recorded by cisco-ce/jsxapi's
/// tests) and the error at the top level (`{"Status": {"status": "Error", ...}}`, recorded by
/// PlaceOS's driver tests); see crates/listener/tests/recorded/SOURCES.md.
pub fn status_refused(answer: &Value) -> Option<String> {
    let is_error = |v: &&Value| v.get("status").and_then(Value::as_str) == Some("Error");
    let response = answer.get("CommandResponse");
    let error = response
        .and_then(|r| r.get("Status"))
        .or_else(|| {
            response
                .and_then(Value::as_object)
                .and_then(|r| r.values().find(is_error))
        })
        .or_else(|| answer.get("Status").filter(is_error))?;
    Some(
        error
            .get("Reason")
            .and_then(|r| r.get("Value"))
            .and_then(Value::as_str)
            .unwrap_or("refused")
            .to_owned(),
    )
}

#[async_trait]
impl Driver for CiscoSshDriver {
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
            Capability::Inventory,
            Capability::Configuration,
        ]
    }

    async fn perform(&self, device: &Device, action: &Action) -> Result<(), DriverFailure> {
        match action {
            Action::Join {
                plan, signaling, ..
            } => {
                let protocol = super::cisco::dial_protocol(*signaling)
                    .map(|p| format!(" Protocol: {p}"))
                    .unwrap_or_default();
                let line = format!(
                    "xCommand Dial Number: {}{protocol}",
                    quoted(&plan.dial_string)
                );
                self.command(device, &line, None).await
            }
            Action::PushCalendar(_) => Err(DriverFailure::new(
                FailureKind::Misprovisioned,
                "calendar push over SSH is not built (TANDBERG_HTTP pushes bookings)",
            )),
            Action::Hangup => {
                self.command(device, "xCommand Call Disconnect", Some("No active call"))
                    .await
            }
            Action::Mute => {
                self.command(device, "xCommand Audio Microphones Mute", None)
                    .await
            }
            Action::Unmute => {
                self.command(device, "xCommand Audio Microphones Unmute", None)
                    .await
            }
            Action::Dtmf(tones) => {
                // The banner tells the firmware generation: without an open session, a cheap
                // read opens one first.
                let tc = match self.firmware_is_tc(device).await {
                    Some(tc) => tc,
                    None => {
                        self.run(device, "xStatus SystemUnit State NumberOfActiveCalls")
                            .await?;
                        self.firmware_is_tc(device).await.unwrap_or(false)
                    }
                };
                for chunk in dtmf_chunks(tones) {
                    let verb = if tc {
                        "xCommand DTMFSend"
                    } else {
                        "xCommand Call DTMFSend"
                    };
                    self.command(
                        device,
                        &format!("{verb} DTMFString: {}", quoted(&chunk)),
                        None,
                    )
                    .await?;
                }
                Ok(())
            }
        }
    }

    async fn status(&self, device: &Device) -> Result<DeviceStatus, DriverFailure> {
        let calls = self.run(device, "xStatus Call").await?;
        let listed = match status_refused(&calls) {
            None => {
                let entries = calls
                    .get("Status")
                    .and_then(|s| s.get("Call"))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                cisco::overall(entries.iter().map(|c| {
                    cisco::call_phase(
                        c.get("Status")
                            .and_then(|s| s.get("Value"))
                            .and_then(Value::as_str)
                            .unwrap_or(""),
                    )
                }))
            }
            Some(_) => CallPhase::Idle,
        };
        // No call listed (or the list refused, Integrator role): a codec in Microsoft Teams
        // mode lists none under `Call` yet counts its call (AVI-SPL's recorded Room Bar).
        let call = match listed {
            CallPhase::Idle => {
                let count = self
                    .run(device, "xStatus SystemUnit State NumberOfActiveCalls")
                    .await?;
                let active = status_value(&count, &["SystemUnit", "State", "NumberOfActiveCalls"])
                    .and_then(|n| n.parse::<u32>().ok())
                    .unwrap_or(0);
                if active > 0 {
                    CallPhase::Connected
                } else {
                    CallPhase::Idle
                }
            }
            phase => phase,
        };
        let mute = self.run(device, "xStatus Audio Microphones Mute").await?;
        let muted = match status_value(&mute, &["Audio", "Microphones", "Mute"]) {
            Some(v) => v.eq_ignore_ascii_case("On"),
            None => {
                return Err(failure(
                    FailureKind::Misprovisioned,
                    format!("{} did not report its microphone state", device.address),
                )
                .exchange(
                    Some("xStatus Audio Microphones Mute".into()),
                    Some(mute.to_string()),
                ));
            }
        };
        Ok(DeviceStatus {
            call,
            microphone_muted: muted,
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
        let slots: Vec<SessionSlot> = self
            .sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect();
        for slot in slots {
            if let Some(shell) = slot.lock().await.take() {
                let _ = shell.channel.data_bytes(b"bye\n".to_vec()).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_without_a_reason_names_its_status() {
        let answer =
            serde_json::json!({"CommandResponse": {"DialResult": {"status": "ParameterError"}}});
        let line = "xCommand Dial Number: \"x\"";
        let failed = refusal("127.0.0.9", line, "ParameterError", String::new(), &answer);
        assert_eq!(failed.kind, FailureKind::ServerError);
        assert_eq!(
            failed.message,
            format!("the room system at 127.0.0.9 refused `{line}`: status ParameterError")
        );
        let denied = refusal(
            "127.0.0.9",
            line,
            "Error",
            "Permission denied".into(),
            &answer,
        );
        assert_eq!(denied.kind, FailureKind::Misprovisioned);
        assert!(denied.message.ends_with(": Permission denied"));
    }

    #[test]
    fn strings_are_json_quoted_without_newlines() {
        assert_eq!(quoted("a\"b\nc"), "\"a\\\"b c\"");
        assert_eq!(quoted("123.4@bridge.example"), "\"123.4@bridge.example\"");
    }

    #[test]
    fn status_answers_are_read_and_refusals_seen() {
        let mute = serde_json::json!({"Status": {"Audio": {"Microphones": {"Mute": {"Value": "On"}}}}, "ResultId": "1"});
        assert_eq!(
            status_value(&mute, &["Audio", "Microphones", "Mute"]),
            Some("On")
        );
        let refused = serde_json::json!({"CommandResponse": {"Status": {"status": "Error", "Reason": {"Value": "Permission denied"}}}});
        assert_eq!(
            status_refused(&refused).as_deref(),
            Some("Permission denied")
        );
        assert!(status_refused(&mute).is_none());
    }
}

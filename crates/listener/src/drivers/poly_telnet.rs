//! `POLYCOM_TELNET`: Poly HDX / Group Series codecs through their Telnet API
//! (device-drivers.md §2.1), default port 24 (the API-only Telnet port [I]).
//!
//! Protocol decisions:
//! - One connection per action and per status read (Poly codecs hold few API sessions; the
//!   listener serializes commands per device), closed with `exit`.
//! - Login: the codec asks only for a password (`Password:`), never a user name; the stored
//!   user name is not used. `Password:` shown again after the answer → BadCredentials. A codec
//!   with no password set goes straight to the `->` prompt.
//! - A command's answer is the first line ending CR LF that answers it; lines ending LF CR are
//!   echoes and skipped, other lines (notifications) are skipped too.
//! - join: `dial manual 1920 "<dial string>" [h323|sip]` (the type from the endpoint's
//!   `signalingProtocol`, none = the codec's choice) → `dialing manual`. 1920 kbps is asked
//!   and the codec negotiates down [I].
//! - hangup: `hangup all` → `hanging up all`. DTMF: one `gendial <tone>` per tone → `gendial
//!   <tone>`. mute/unmute: `mute near on|off` → `mute near on|off`; the other state answered →
//!   Ignored.
//! - status: `callinfo all` then `mute near get`. `system is not in a call` → Idle; a
//!   `callinfo:` line's connection status (4th field from the end) `connected` → Connected,
//!   `disconnecting`/`disconnected` → no call, anything else (`opened`, `connecting`, ...) →
//!   Dialling [I].
//! - inventory: `whoami` and `status` on one connection (see `inventory`); no uptime, release
//!   date or hardware platform is reported.
//! - `error: command not found` → Misprovisioned (not a Poly API port, or a firmware without
//!   the command); any other `error:` → ServerError.
//! - configuration (template settings, issue #36): see `configuration` and `poly_config`.

mod configuration;
mod inventory;
mod session;

use crate::driver::{
    Action, CallPhase, Capability, Device, DeviceStatus, Driver, DriverFailure, SettingOutcomes,
};
use async_trait::async_trait;
use roomlink_domain::enums::SignalingProtocol;
use roomlink_domain::template::{SettingKey, TemplateSettings};
use roomlink_listener_protocol::failure::FailureKind;
use roomlink_listener_protocol::wire::WireInventory;
use session::{Session, Wait};
use std::time::Duration;

/// The Telnet API port when the endpoint names none.
pub const DEFAULT_PORT: u16 = 24;
/// The call speed `dial manual` asks for, in kbps.
pub const DIAL_SPEED: u32 = 1920;

#[derive(Debug, Clone)]
pub struct PolyTelnetSettings {
    /// How long the TCP connection may take.
    pub connect_timeout: Duration,
    /// How long the login and each command's answer may take.
    pub answer_timeout: Duration,
}

impl Default for PolyTelnetSettings {
    fn default() -> Self {
        PolyTelnetSettings {
            connect_timeout: Duration::from_secs(5),
            answer_timeout: Duration::from_secs(10),
        }
    }
}

pub struct PolyTelnetDriver {
    settings: PolyTelnetSettings,
}

impl PolyTelnetDriver {
    pub fn new(settings: PolyTelnetSettings) -> Self {
        PolyTelnetDriver { settings }
    }
}

/// What a command's answer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Dialing,
    HangingUp,
    Gendial(char),
    Mute,
    CallInfo,
}

/// A command's answer.
#[derive(Debug)]
enum Answer {
    Done,
    Muted(bool),
    /// The `callinfo:` lines (none: not in a call).
    Calls(Vec<String>),
}

#[async_trait]
impl Driver for PolyTelnetDriver {
    fn protocol(&self) -> &'static str {
        "POLYCOM_TELNET"
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
        let commands = commands(action)?;
        let mut session =
            Session::open(device, device.port_or(DEFAULT_PORT), &self.settings).await?;
        for (command, expect) in &commands {
            let answer = exchange(&mut session, command, *expect).await?;
            if let (Expect::Mute, Answer::Muted(muted)) = (expect, &answer) {
                let wanted = matches!(action, Action::Mute);
                if *muted != wanted {
                    return Err(DriverFailure::new(
                        FailureKind::Ignored,
                        format!(
                            "the codec at {} kept its microphone {}",
                            session.target(),
                            if *muted { "muted" } else { "unmuted" }
                        ),
                    )
                    .exchange(
                        Some(command.clone()),
                        Some(format!("mute near {}", if *muted { "on" } else { "off" })),
                    ));
                }
            }
        }
        session.close().await;
        Ok(())
    }

    async fn status(&self, device: &Device) -> Result<DeviceStatus, DriverFailure> {
        let mut session =
            Session::open(device, device.port_or(DEFAULT_PORT), &self.settings).await?;
        let call = match exchange(&mut session, "callinfo all", Expect::CallInfo).await? {
            Answer::Calls(lines) => call_phase(&lines),
            _ => CallPhase::Idle,
        };
        let microphone_muted = matches!(
            exchange(&mut session, "mute near get", Expect::Mute).await?,
            Answer::Muted(true)
        );
        session.close().await;
        Ok(DeviceStatus {
            call,
            microphone_muted,
        })
    }

    async fn inventory(&self, device: &Device) -> Result<WireInventory, DriverFailure> {
        let mut session =
            Session::open(device, device.port_or(DEFAULT_PORT), &self.settings).await?;
        let inventory = inventory::read(&mut session).await?;
        session.close().await;
        Ok(inventory)
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
}

/// The command lines an action takes, each with its expected answer.
fn commands(action: &Action) -> Result<Vec<(String, Expect)>, DriverFailure> {
    Ok(match action {
        Action::Join {
            plan, signaling, ..
        } => {
            let dial = &plan.dial_string;
            if dial.is_empty() || dial.chars().any(|c| c == '"' || c.is_control()) {
                return Err(DriverFailure::new(
                    FailureKind::Misprovisioned,
                    format!("the dial string {dial:?} cannot be sent over the Poly Telnet API"),
                ));
            }
            let kind = match signaling {
                Some(SignalingProtocol::H323) => " h323",
                Some(SignalingProtocol::Sip) => " sip",
                None => "",
            };
            vec![(
                format!("dial manual {DIAL_SPEED} \"{dial}\"{kind}"),
                Expect::Dialing,
            )]
        }
        Action::Hangup => vec![("hangup all".to_owned(), Expect::HangingUp)],
        Action::Dtmf(tones) => {
            if let Some(bad) = tones
                .chars()
                .find(|c| !(c.is_ascii_digit() || *c == '*' || *c == '#'))
            {
                return Err(DriverFailure::new(
                    FailureKind::Misprovisioned,
                    format!("{bad:?} is not a DTMF tone the Poly Telnet API can send"),
                ));
            }
            tones
                .chars()
                .map(|t| (format!("gendial {t}"), Expect::Gendial(t)))
                .collect()
        }
        Action::PushCalendar(_) => {
            return Err(DriverFailure::new(
                FailureKind::Misprovisioned,
                "the Poly Telnet API has no documented way to give a codec its meetings",
            ));
        }
        Action::Mute => vec![("mute near on".to_owned(), Expect::Mute)],
        Action::Unmute => vec![("mute near off".to_owned(), Expect::Mute)],
    })
}

/// Sends `command` and reads lines until its answer.
async fn exchange(
    session: &mut Session<'_>,
    command: &str,
    expect: Expect,
) -> Result<Answer, DriverFailure> {
    session.send_line(command).await?;
    let deadline = session.deadline();
    let mut heard = String::new();
    let mut calls: Option<Vec<String>> = None;
    loop {
        let line = match session.next_line(deadline).await {
            Ok(line) => line,
            Err(wait) => return Err(silence(session, command, &heard, wait)),
        };
        if !heard.is_empty() {
            heard.push('\n');
        }
        heard.push_str(&line.text);
        if line.echo || line.text.is_empty() {
            continue;
        }
        let text = line.text.as_str();
        if text.to_ascii_lowercase().starts_with("error") {
            let kind = if text.contains("command not found") {
                FailureKind::Misprovisioned
            } else {
                FailureKind::ServerError
            };
            return Err(DriverFailure::new(
                kind,
                format!(
                    "the codec at {} refused `{command}`: {text}",
                    session.target()
                ),
            )
            .cause(text.to_owned())
            .exchange(Some(command.to_owned()), Some(session.transcript(&heard))));
        }
        match expect {
            Expect::Dialing if text.starts_with("dialing") => return Ok(Answer::Done),
            Expect::HangingUp if text.starts_with("hanging up") => return Ok(Answer::Done),
            Expect::Gendial(tone) if text == format!("gendial {tone}") => {
                return Ok(Answer::Done);
            }
            Expect::Mute if text == "mute near on" => return Ok(Answer::Muted(true)),
            Expect::Mute if text == "mute near off" => return Ok(Answer::Muted(false)),
            Expect::CallInfo if text == "system is not in a call" => {
                return Ok(Answer::Calls(Vec::new()));
            }
            Expect::CallInfo if text == "callinfo begin" => calls = Some(Vec::new()),
            Expect::CallInfo if text == "callinfo end" => {
                return Ok(Answer::Calls(calls.take().unwrap_or_default()));
            }
            Expect::CallInfo if text.starts_with("callinfo:") => {
                calls.get_or_insert_with(Vec::new).push(text.to_owned());
            }
            // Notifications and anything else: not this command's answer.
            _ => {}
        }
    }
}

/// The failure for a command whose answer did not come.
fn silence(session: &Session<'_>, command: &str, heard: &str, wait: Wait) -> DriverFailure {
    let target = session.target();
    let (kind, message, cause) = match wait {
        Wait::TimedOut => (
            FailureKind::Timeout,
            format!(
                "the codec at {target} did not answer `{command}` within {} ms",
                session.answer_timeout().as_millis()
            ),
            None,
        ),
        Wait::Closed => (
            FailureKind::Unreachable,
            format!("the codec at {target} closed the connection without answering `{command}`"),
            None,
        ),
        Wait::Failed(e) => (
            FailureKind::Unreachable,
            format!("the connection to the codec at {target} broke during `{command}`"),
            Some(e),
        ),
    };
    let mut failure = DriverFailure::new(kind, message).exchange(
        Some(command.to_owned()),
        (!heard.is_empty()).then(|| session.transcript(heard)),
    );
    if let Some(cause) = cause {
        failure = failure.cause(cause);
    }
    failure
}

/// The driver's line reading on its own, for the fuzz target `poly_lines` (fuzz/); not an API.
#[doc(hidden)]
pub mod fuzzing {
    use crate::driver::CallPhase;
    use roomlink_listener_protocol::wire::WireInventory;

    /// What a fresh session keeps of received bytes, Telnet commands removed.
    pub fn telnet_data(bytes: &[u8]) -> Vec<u8> {
        let mut state = super::session::Telnet::Data;
        bytes.iter().filter_map(|b| state.feed(*b)).collect()
    }

    /// The first complete line of `text`: its text, whether it is an echo, the bytes it used.
    pub fn split_line(text: &[u8]) -> Option<(String, bool, usize)> {
        super::session::split_line(text).map(|(line, used)| (line.text, line.echo, used))
    }

    /// The call phase from `callinfo:` lines.
    pub fn call_phase(lines: &[String]) -> CallPhase {
        super::call_phase(lines)
    }

    /// The inventory from `whoami`'s and `status`'s lines (`None`: no such command).
    pub fn inventory(whoami: Option<&[String]>, status: Option<&[String]>) -> WireInventory {
        super::inventory::inventory(whoami, status)
    }
}

/// The call phase from `callinfo:` lines.
fn call_phase(lines: &[String]) -> CallPhase {
    let mut phase = CallPhase::Idle;
    for line in lines {
        let fields: Vec<&str> = line.split(':').collect();
        let status = if fields.len() >= 7 {
            fields[fields.len() - 4].trim().to_ascii_lowercase()
        } else {
            String::new()
        };
        match status.as_str() {
            "connected" => return CallPhase::Connected,
            "disconnecting" | "disconnected" => {}
            _ => phase = CallPhase::Dialling,
        }
    }
    phase
}

#[cfg(test)]
mod tests {
    use super::*;
    use roomlink_domain::rules::dial_plan::DialPlan;

    #[test]
    fn callinfo_lines_map_onto_phases() {
        let line = |status: &str| {
            format!("callinfo:43:Far Site:10.0.0.1:384:{status}:notmuted:outgoing:videocall")
        };
        assert_eq!(call_phase(&[]), CallPhase::Idle);
        assert_eq!(call_phase(&[line("connecting")]), CallPhase::Dialling);
        assert_eq!(call_phase(&[line("connected")]), CallPhase::Connected);
        assert_eq!(call_phase(&[line("disconnecting")]), CallPhase::Idle);
        // Without a far site name, as the manual's second example.
        let short = "callinfo:36:192.168.1.102:256:connected:muted:outgoing:videocall".to_owned();
        assert_eq!(call_phase(&[short]), CallPhase::Connected);
    }

    #[test]
    fn a_join_is_one_dial_manual_and_tones_one_gendial_each() {
        let join = Action::Join {
            plan: DialPlan {
                dial_string: "111.222@bridge.example".into(),
                ivr_steps: vec![],
            },
            signaling: Some(SignalingProtocol::Sip),
            meeting_id: None,
            passcode: None,
        };
        let got = commands(&join).expect("commands");
        assert_eq!(got[0].0, "dial manual 1920 \"111.222@bridge.example\" sip");
        let got = commands(&Action::Dtmf("1#*".into())).expect("commands");
        let lines: Vec<&str> = got.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(lines, ["gendial 1", "gendial #", "gendial *"]);
        assert!(commands(&Action::Dtmf("1a".into())).is_err());
    }
}

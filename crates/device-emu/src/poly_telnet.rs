//! The Poly HDX / Group Series Telnet API (device-drivers.md §2.1), one session per connection,
//! the device chosen by the local address the connection arrived on.
//!
//! Session, as emulated:
//! - On connect: `IAC WILL ECHO`, `IAC WILL SUPPRESS-GO-AHEAD` (a telnet server's usual opening;
//!   the client's replies are skipped, never awaited) [I].
//! - Login [I]: HDX's Telnet API asks for a password only (the remote access password), never a
//!   user name: `Password: ` (no line end). The stored user name is ignored: the answer is checked
//!   with `device.accepts(device.username, answer)`. A device whose stored password is empty has
//!   none set and goes straight to the prompt (unless it has [`Fault::BadCredentials`]). A wrong
//!   password is answered by the prompt again; the third wrong one closes the connection.
//! - Then `Polycom Command Shell` and the prompt `-> ` (no line end), shown once after login [I].
//! - Every command line is echoed at once followed by LF CR; its answer lines end in CR LF
//!   [V PIRM p.105], so a client waits for the answer, not the echo (which comes even for an
//!   unknown command).
//!
//! Commands: `dial manual <speed> "<dialstr>" [h323|sip]` → `dialing manual`; `hangup all` →
//! `hanging up all` (`hangup video [<callid>]` → `hanging up video`); `gendial <0-9|*|#>` →
//! `gendial <tone>`; `mute near on|off|toggle|get` → `mute near on|off` (the state after);
//! `callinfo all` → `callinfo begin`, one `callinfo:` line, `callinfo end`, or
//! `system is not in a call`; `callstate get` → one `cs:` line or `system is not in a call`;
//! `whoami` and `status` (see [`crate::poly_inventory`]); `autoanswer`, `muteautoanswer`,
//! `sleeptime`, `systemname` (see [`crate::poly_config`]); `exit` closes. Unknown: `error:
//! command not found`; too few words: `error: command needs more parameters to execute
//! successfully`; a bad value (tone, dial type, mute word, setting): `error: command has illegal
//! parameters` [I].
//!
//! The `callinfo` line follows the HDX manual's format
//! `callinfo:<callid>:<far site name>:<far site number>:<speed>:<connection status>:<mute status>:<call direction>:<call type>`:
//! far site name and number are both the dial string, the connection status is `connecting`
//! while dialling and `connected` after (the values of HDX call status notifications), mute
//! status is the near microphone's `muted`/`notmuted`, direction `outgoing`, type `videocall`.
//!
//! Faults: [`Fault::BadCredentials`] refuses every password; [`Fault::Slow`] delays each answer
//! by `slow_ms` (the echo comes at once); [`Fault::DropConnection`] closes the connection after
//! the echo, before the command is carried out; [`Fault::Provisioned`] refuses setting writes
//! ([`crate::poly_config`]). `IntegratorRole`, `TcFirmware`, `RateLimit` and `TeamsMode` have
//! no Poly meaning and are ignored.

use crate::Frontend;
use crate::device::{Device, Devices, Fault, Phase};
use crate::net;
use crate::poly_config::Refusal;
use std::io;
use std::net::IpAddr;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;

/// The login prompt (no line end).
pub const PASSWORD_PROMPT: &str = "Password: ";
/// The command prompt shown after login (no line end).
pub const PROMPT: &str = "-> ";
/// Wrong passwords before the connection is closed.
pub const MAX_PASSWORD_ATTEMPTS: u32 = 3;

const NOT_FOUND: &str = "error: command not found";
/// The answer to a command missing a word.
pub const MORE_PARAMETERS: &str = "error: command needs more parameters to execute successfully";
/// The answer to a word the command does not take [I].
pub const ILLEGAL: &str = "error: command has illegal parameters";
const NOT_IN_CALL: &str = "system is not in a call";
/// The speed a `callinfo` line shows when the dial asked for none it could read.
const DEFAULT_SPEED: u32 = 384;

/// Serves the Telnet API on `port` of every host (0: a free port).
pub async fn start(hosts: &[IpAddr], port: u16, devices: Devices) -> io::Result<Frontend> {
    let (port, listeners) = net::bind_all(hosts, port).await?;
    let tasks = listeners
        .into_iter()
        .map(|listener| tokio::spawn(accept_loop(listener, devices.clone())))
        .collect();
    Ok(Frontend { port, tasks })
}

/// Accepts connections; the sessions live in a set owned by this task, so aborting the front
/// end ends them too.
async fn accept_loop(listener: TcpListener, devices: Devices) {
    let mut sessions = JoinSet::new();
    loop {
        while sessions.try_join_next().is_some() {}
        match listener.accept().await {
            Ok((stream, peer)) => {
                let devices = devices.clone();
                sessions.spawn(async move {
                    if let Err(e) = session(stream, devices).await {
                        tracing::debug!(%peer, error = %e, "poly telnet session ended");
                    }
                });
            }
            Err(e) => {
                tracing::warn!(error = %e, "poly telnet accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

async fn session(stream: TcpStream, devices: Devices) -> io::Result<()> {
    let address = net::device_address(stream.local_addr()?);
    let (reader, mut writer) = stream.into_split();
    let mut lines = LineReader::new(reader);
    writer
        .write_all(&[IAC, WILL, OPT_ECHO, IAC, WILL, OPT_SGA])
        .await?;

    let needs_password = devices.with(&address, |d| {
        !d.password.is_empty() || d.has(Fault::BadCredentials)
    });
    if needs_password {
        let mut failures = 0;
        loop {
            writer.write_all(PASSWORD_PROMPT.as_bytes()).await?;
            let Some(answer) = lines.next_line().await? else {
                return Ok(());
            };
            // The client does not echo (we said WILL ECHO) and we do not echo a password:
            // only the line end.
            writer.write_all(b"\r\n").await?;
            if devices.with(&address, |d| d.accepts(&d.username, &answer)) {
                break;
            }
            failures += 1;
            tracing::debug!(%address, failures, "poly telnet password refused");
            if failures >= MAX_PASSWORD_ATTEMPTS {
                return Ok(());
            }
        }
    }
    writer
        .write_all(format!("Polycom Command Shell\r\n{PROMPT}").as_bytes())
        .await?;

    while let Some(line) = lines.next_line().await? {
        let command = line.trim();
        if command.is_empty() {
            continue;
        }
        writer.write_all(echo(command).as_bytes()).await?;
        if command == "exit" {
            break;
        }
        let (drop, slow) = devices.with(&address, |d| {
            (
                d.has(Fault::DropConnection),
                d.has(Fault::Slow).then_some(d.slow_ms),
            )
        });
        if drop {
            tracing::debug!(%address, command, "poly telnet: dropping the connection");
            return Ok(());
        }
        if let Some(ms) = slow {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        let answer = devices.with(&address, |d| answer(d, command));
        let mut out = String::new();
        for line in &answer {
            out.push_str(&ack(line));
        }
        writer.write_all(out.as_bytes()).await?;
    }
    Ok(())
}

/// A command's echo: the line as typed, then LF CR.
pub fn echo(command: &str) -> String {
    format!("{command}\n\r")
}

/// One answer line: the text, then CR LF.
pub fn ack(line: &str) -> String {
    format!("{line}\r\n")
}

/// Carries out one command line on the device and returns its answer lines.
pub fn answer(device: &mut Device, command: &str) -> Vec<String> {
    let words = split_words(command);
    let words: Vec<&str> = words.iter().map(String::as_str).collect();
    let one = |s: &str| vec![s.to_owned()];
    match words.as_slice() {
        ["dial", "manual", speed, dialstr, rest @ ..] => {
            let protocol = match rest.last() {
                None => None,
                Some(p) if ["h323", "sip", "auto"].contains(p) => Some(*p),
                Some(_) => return one(ILLEGAL),
            };
            if speed.parse::<u32>().is_err() && *speed != "auto" {
                return one(ILLEGAL);
            }
            device.dial(dialstr, protocol);
            one("dialing manual")
        }
        ["dial", "manual", ..] | ["dial"] => one(MORE_PARAMETERS),
        ["dial", ..] => one(ILLEGAL),
        ["hangup", "all"] => {
            device.hang_up();
            one("hanging up all")
        }
        ["hangup", "video", ..] => {
            device.hang_up();
            one("hanging up video")
        }
        ["hangup"] => one(MORE_PARAMETERS),
        ["hangup", ..] => one(ILLEGAL),
        ["gendial", tone] if is_tone(tone) => {
            // Tones outside a connected call are accepted and lost, as on a codec.
            device.send_dtmf(tone);
            one(&format!("gendial {tone}"))
        }
        ["gendial"] => one(MORE_PARAMETERS),
        ["gendial", ..] => one(ILLEGAL),
        ["mute", "near", word] => {
            match *word {
                "on" => device.set_muted(true),
                "off" => device.set_muted(false),
                "toggle" => device.set_muted(!device.microphone_muted),
                "get" => {}
                _ => return one(ILLEGAL),
            }
            let state = if device.microphone_muted { "on" } else { "off" };
            one(&format!("mute near {state}"))
        }
        ["mute"] | ["mute", "near"] => one(MORE_PARAMETERS),
        ["mute", ..] => one(ILLEGAL),
        ["callinfo", "all"] => match call_line(device) {
            None => one(NOT_IN_CALL),
            Some(line) => vec!["callinfo begin".into(), line, "callinfo end".into()],
        },
        ["callinfo"] => one(MORE_PARAMETERS),
        ["callstate", "get"] => match device.phase() {
            Phase::Idle => one(NOT_IN_CALL),
            phase => {
                let state = if phase == Phase::Connected {
                    "COMPLETE"
                } else {
                    "RINGING"
                };
                let dialstr = device.last_dialed.clone().unwrap_or_default();
                one(&format!(
                    "cs: call[{}] chan[0] dialstr[{dialstr}] state[{state}]",
                    device.call_id
                ))
            }
        },
        ["callstate"] => one(MORE_PARAMETERS),
        ["whoami"] => crate::poly_inventory::whoami(device),
        ["status"] => crate::poly_inventory::status(device),
        _ => match crate::poly_config::answer(device, &words) {
            None => one(NOT_FOUND),
            Some(Ok(line)) => vec![line],
            Some(Err(Refusal::MoreParameters)) => one(MORE_PARAMETERS),
            Some(Err(Refusal::Illegal)) => one(ILLEGAL),
            Some(Err(Refusal::Provisioned)) => one(crate::poly_config::PROVISIONED),
        },
    }
}

/// The `callinfo:` line of the current call, if any.
fn call_line(device: &Device) -> Option<String> {
    let status = match device.phase() {
        Phase::Idle => return None,
        Phase::Dialling => "connecting",
        Phase::Connected => "connected",
    };
    let far = device.last_dialed.clone().unwrap_or_default();
    let mute = if device.microphone_muted {
        "muted"
    } else {
        "notmuted"
    };
    Some(format!(
        "callinfo:{}:{far}:{far}:{DEFAULT_SPEED}:{status}:{mute}:outgoing:videocall",
        device.call_id
    ))
}

fn is_tone(word: &str) -> bool {
    let mut chars = word.chars();
    matches!((chars.next(), chars.next()), (Some(c), None) if c.is_ascii_digit() || c == '*' || c == '#')
}

/// Splits a command line into words; a double-quoted word may hold spaces (quotes dropped).
pub fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(first) = chars.next() else {
            return words;
        };
        let mut word = String::new();
        if first == '"' {
            for c in chars.by_ref() {
                if c == '"' {
                    break;
                }
                word.push(c);
            }
        } else {
            word.push(first);
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                word.push(c);
            }
        }
        words.push(word);
    }
}

const IAC: u8 = 255;
const WILL: u8 = 251;
const SB: u8 = 250;
const SE: u8 = 240;
const OPT_ECHO: u8 = 1;
const OPT_SGA: u8 = 3;
/// Longest line kept; the rest of a longer line is dropped.
const MAX_LINE: usize = 4096;

/// Reads a client's lines: telnet commands (`IAC ...`) skipped, a line ends at CR LF, CR NUL,
/// CR or LF.
struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    telnet: TelnetState,
    /// The last line ended with CR: a following LF or NUL belongs to it.
    after_cr: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum TelnetState {
    Data,
    Iac,
    /// After `IAC WILL|WONT|DO|DONT`: the option byte.
    Option,
    /// Inside `IAC SB ... IAC SE`.
    Sub,
    SubIac,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    fn new(inner: R) -> Self {
        LineReader {
            inner,
            buf: Vec::new(),
            pos: 0,
            telnet: TelnetState::Data,
            after_cr: false,
        }
    }

    async fn next_byte(&mut self) -> io::Result<Option<u8>> {
        loop {
            if self.pos == self.buf.len() {
                self.buf.resize(1024, 0);
                let n = self.inner.read(&mut self.buf).await?;
                self.buf.truncate(n);
                self.pos = 0;
                if n == 0 {
                    return Ok(None);
                }
            }
            let byte = self.buf[self.pos];
            self.pos += 1;
            self.telnet = match (self.telnet, byte) {
                (TelnetState::Data, IAC) => TelnetState::Iac,
                (TelnetState::Data, b) => return Ok(Some(b)),
                (TelnetState::Iac, IAC) => {
                    self.telnet = TelnetState::Data;
                    return Ok(Some(IAC));
                }
                (TelnetState::Iac, SB) => TelnetState::Sub,
                (TelnetState::Iac, 251..=254) => TelnetState::Option,
                (TelnetState::Iac, _) | (TelnetState::Option, _) => TelnetState::Data,
                (TelnetState::Sub, IAC) => TelnetState::SubIac,
                (TelnetState::Sub, _) => TelnetState::Sub,
                (TelnetState::SubIac, SE) => TelnetState::Data,
                (TelnetState::SubIac, _) => TelnetState::Sub,
            };
        }
    }

    /// The next line without its end; `None` at end of input (a last unterminated line is
    /// dropped: a command is only carried out once its line has ended).
    async fn next_line(&mut self) -> io::Result<Option<String>> {
        let mut line = Vec::new();
        loop {
            let Some(byte) = self.next_byte().await? else {
                return Ok(None);
            };
            let after_cr = std::mem::take(&mut self.after_cr);
            match byte {
                b'\n' | 0 if after_cr && line.is_empty() => {}
                b'\r' => {
                    self.after_cr = true;
                    return Ok(Some(String::from_utf8_lossy(&line).into_owned()));
                }
                b'\n' => return Ok(Some(String::from_utf8_lossy(&line).into_owned())),
                b if line.len() < MAX_LINE => line.push(b),
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device() -> Device {
        Device::new("admin", "pw", Duration::ZERO)
    }

    #[test]
    fn echo_ends_lf_cr_and_answers_end_cr_lf() {
        assert_eq!(echo("hangup all").as_bytes(), b"hangup all\n\r");
        assert_eq!(ack("hanging up all").as_bytes(), b"hanging up all\r\n");
    }

    #[test]
    fn quoted_words_keep_their_spaces() {
        assert_eq!(
            split_words(r#"dial manual 1920 "123.45@bridge example" sip"#),
            ["dial", "manual", "1920", "123.45@bridge example", "sip"]
        );
        assert_eq!(split_words("  mute  near get "), ["mute", "near", "get"]);
    }

    #[test]
    fn a_dial_records_the_dial_string_and_type() {
        let mut d = device();
        assert_eq!(
            answer(&mut d, r#"dial manual 1920 "1.2@bridge.example" sip"#),
            ["dialing manual"]
        );
        assert_eq!(d.last_dialed.as_deref(), Some("1.2@bridge.example"));
        assert_eq!(d.last_dial_protocol.as_deref(), Some("sip"));
        assert_eq!(
            answer(&mut d, "callinfo all"),
            [
                "callinfo begin",
                "callinfo:1:1.2@bridge.example:1.2@bridge.example:384:connected:notmuted:outgoing:videocall",
                "callinfo end"
            ]
        );
        assert_eq!(answer(&mut d, "hangup all"), ["hanging up all"]);
        assert_eq!(answer(&mut d, "callinfo all"), [NOT_IN_CALL]);
    }

    #[test]
    fn errors_are_the_manuals() {
        let mut d = device();
        assert_eq!(answer(&mut d, "dail manual"), [NOT_FOUND]);
        assert_eq!(answer(&mut d, "dial manual 1920"), [MORE_PARAMETERS]);
        assert_eq!(answer(&mut d, "gendial"), [MORE_PARAMETERS]);
        assert_eq!(answer(&mut d, "gendial 12"), [ILLEGAL]);
        assert_eq!(answer(&mut d, "mute near"), [MORE_PARAMETERS]);
        assert_eq!(d.dial_count, 0);
    }

    #[test]
    fn mute_answers_the_state_after() {
        let mut d = device();
        assert_eq!(answer(&mut d, "mute near on"), ["mute near on"]);
        assert_eq!(answer(&mut d, "mute near get"), ["mute near on"]);
        assert_eq!(answer(&mut d, "mute near toggle"), ["mute near off"]);
        assert!(!d.microphone_muted);
    }

    #[test]
    fn tones_are_recorded_once_connected() {
        let mut d = device();
        d.dial("x", None);
        assert_eq!(answer(&mut d, "gendial #"), ["gendial #"]);
        assert_eq!(answer(&mut d, "gendial 7"), ["gendial 7"]);
        assert_eq!(d.dtmf, "#7");
        assert!(answer(&mut d, "callstate get")[0].ends_with("state[COMPLETE]"));
    }

    #[tokio::test]
    async fn lines_skip_telnet_commands_and_every_line_end() {
        let input: &[u8] = b"\xff\xfd\x01pw\r\n\xff\xfa\x18\x01\xff\xf0mute near on\r\0gendial 1\ncallinfo all\rlast";
        let mut reader = LineReader::new(input);
        let mut lines = Vec::new();
        while let Some(line) = reader.next_line().await.expect("reads") {
            lines.push(line);
        }
        assert_eq!(lines, ["pw", "mute near on", "gendial 1", "callinfo all"]);
    }
}

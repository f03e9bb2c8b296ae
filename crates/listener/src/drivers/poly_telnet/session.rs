//! One Telnet API session with a Poly codec: connect, log in, exchange command lines.
//!
//! Framing [V PIRM p.105]: the codec echoes a command followed by LF CR and ends its answer
//! lines with CR LF; a line ending LF CR is an echo and skipped, so the session waits for the
//! answer. Also read: CR CR LF (Group Series), bare CR or LF. Telnet commands (`IAC ...`) are
//! skipped and never answered. A leading `-> ` prompt is taken off a line.

use super::PolyTelnetSettings;
use crate::driver::{Device, DriverFailure};
use roomlink_listener_protocol::failure::FailureKind;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// Most bytes kept of what a codec said, for `remoteResponse`.
const MAX_TRANSCRIPT: usize = 2000;

/// One line a codec sent.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Line {
    pub text: String,
    /// Ended LF CR: the echo of a command, not an answer.
    pub echo: bool,
}

pub(super) struct Session<'a> {
    stream: TcpStream,
    /// What was received and not yet consumed, telnet commands removed.
    text: Vec<u8>,
    telnet: Telnet,
    answer_timeout: Duration,
    /// `address:port`, for messages.
    target: String,
    /// For taking the password out of anything echoed back.
    password: &'a str,
}

impl<'a> Session<'a> {
    /// Connects and logs in: answers `Password:` once, then waits for the `->` prompt.
    pub async fn open(
        device: &'a Device,
        port: u16,
        settings: &PolyTelnetSettings,
    ) -> Result<Session<'a>, DriverFailure> {
        let target = device.socket_text(port);
        let stream = match tokio::time::timeout(
            settings.connect_timeout,
            TcpStream::connect(&target),
        )
        .await
        {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => {
                return Err(DriverFailure::new(
                    FailureKind::Unreachable,
                    format!("cannot connect to the Poly Telnet API at {target}"),
                )
                .cause(e.to_string()));
            }
            Err(_) => {
                return Err(DriverFailure::new(
                    FailureKind::Timeout,
                    format!(
                        "the Poly Telnet API at {target} did not accept a connection within {} ms",
                        settings.connect_timeout.as_millis()
                    ),
                ));
            }
        };
        let mut session = Session {
            stream,
            text: Vec::new(),
            telnet: Telnet::Data,
            answer_timeout: settings.answer_timeout,
            target,
            password: device.password(),
        };
        session.log_in().await?;
        Ok(session)
    }

    async fn log_in(&mut self) -> Result<(), DriverFailure> {
        let deadline = Instant::now() + self.answer_timeout;
        let mut password_sent = false;
        loop {
            let shown = String::from_utf8_lossy(&self.text).into_owned();
            let tail = shown.trim_end().to_ascii_lowercase();
            if tail.ends_with("password:") {
                if password_sent {
                    return Err(self.login_failure(
                        FailureKind::BadCredentials,
                        "refused the password",
                        &shown,
                    ));
                }
                let mut answer = zeroize::Zeroizing::new(self.password.as_bytes().to_vec());
                answer.extend_from_slice(b"\r\n");
                self.text.clear();
                self.send(&answer).await?;
                password_sent = true;
                continue;
            }
            if tail.ends_with("->") {
                self.text.clear();
                return Ok(());
            }
            if shown.starts_with("SSH-") || shown.starts_with("HTTP/") {
                return Err(self.login_failure(
                    FailureKind::Misprovisioned,
                    "speaks another protocol, not the Poly Telnet API",
                    &shown,
                ));
            }
            match self.read_more(deadline).await {
                Ok(true) => {}
                Ok(false) | Err(Wait::Closed) => {
                    return Err(self.login_failure(
                        FailureKind::Unreachable,
                        "closed the connection before showing its prompt",
                        &shown,
                    ));
                }
                Err(Wait::TimedOut) if shown.trim().is_empty() => {
                    return Err(self.login_failure(
                        FailureKind::Timeout,
                        "showed no password or command prompt in time",
                        &shown,
                    ));
                }
                Err(Wait::TimedOut) => {
                    return Err(self.login_failure(
                        FailureKind::Misprovisioned,
                        "did not show the Poly Telnet API's prompt (another service on this port?)",
                        &shown,
                    ));
                }
                Err(Wait::Failed(e)) => {
                    return Err(DriverFailure::new(
                        FailureKind::Unreachable,
                        format!(
                            "the connection to the Poly Telnet API at {} broke during login",
                            self.target
                        ),
                    )
                    .cause(e));
                }
            }
        }
    }

    fn login_failure(&self, kind: FailureKind, what: &str, shown: &str) -> DriverFailure {
        DriverFailure::new(
            kind,
            format!("the Poly Telnet API at {} {what}", self.target),
        )
        .exchange(
            Some("Password: [redacted]".to_owned()),
            Some(self.transcript(shown)),
        )
    }

    /// Sends one command line (CR LF, the Telnet line end).
    pub async fn send_line(&mut self, command: &str) -> Result<(), DriverFailure> {
        self.send(format!("{command}\r\n").as_bytes()).await
    }

    async fn send(&mut self, bytes: &[u8]) -> Result<(), DriverFailure> {
        self.stream.write_all(bytes).await.map_err(|e| {
            DriverFailure::new(
                FailureKind::Unreachable,
                format!(
                    "the connection to the Poly Telnet API at {} broke",
                    self.target
                ),
            )
            .cause(e.to_string())
        })
    }

    /// The next complete line, echo or answer, before `deadline`.
    pub async fn next_line(&mut self, deadline: Instant) -> Result<Line, Wait> {
        loop {
            if let Some((line, used)) = split_line(&self.text) {
                self.text.drain(..used);
                return Ok(line);
            }
            if !self.read_more(deadline).await? {
                return Err(Wait::Closed);
            }
        }
    }

    /// Reads what is there (telnet commands removed); `false` at end of stream.
    async fn read_more(&mut self, deadline: Instant) -> Result<bool, Wait> {
        let mut buf = [0u8; 2048];
        let n = match tokio::time::timeout_at(deadline, self.stream.read(&mut buf)).await {
            Err(_) => return Err(Wait::TimedOut),
            Ok(Err(e)) => return Err(Wait::Failed(e.to_string())),
            Ok(Ok(n)) => n,
        };
        for &byte in &buf[..n] {
            if let Some(b) = self.telnet.feed(byte) {
                self.text.push(b);
            }
        }
        Ok(n > 0)
    }

    /// When the command's answer is due.
    pub fn deadline(&self) -> Instant {
        Instant::now() + self.answer_timeout
    }

    pub fn answer_timeout(&self) -> Duration {
        self.answer_timeout
    }

    pub fn target(&self) -> &str {
        &self.target
    }

    /// `text` made fit for a failure: bounded, and without the password.
    pub fn transcript(&self, text: &str) -> String {
        let mut text = if self.password.is_empty() {
            text.to_owned()
        } else {
            text.replace(self.password, "[redacted]")
        };
        if text.len() > MAX_TRANSCRIPT {
            let mut cut = MAX_TRANSCRIPT;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push('…');
        }
        text
    }

    /// Says goodbye (`exit`) and closes; a codec holds few API sessions, so never leave one
    /// open. Errors do not matter any more.
    pub async fn close(mut self) {
        let _ = self.stream.write_all(b"exit\r\n").await;
        let _ = self.stream.shutdown().await;
    }
}

/// Why no line came.
#[derive(Debug)]
pub(super) enum Wait {
    TimedOut,
    Closed,
    Failed(String),
}

/// The first complete line of `text` and the bytes it used, if one has ended. A line end at the
/// very end of `text` waits for the next byte, which says whether it is LF CR or CR LF.
pub(super) fn split_line(text: &[u8]) -> Option<(Line, usize)> {
    let end = text.iter().position(|b| *b == b'\r' || *b == b'\n')?;
    let (echo, used) = match text[end] {
        b'\n' => match text.get(end + 1)? {
            b'\r' => (true, end + 2),
            _ => (false, end + 1),
        },
        _ => {
            // CR, CR CR ... LF, or a bare CR before text.
            let mut after = end;
            while text.get(after) == Some(&b'\r') {
                after += 1;
            }
            match text.get(after)? {
                b'\n' => (false, after + 1),
                _ => (false, after),
            }
        }
    };
    let raw = String::from_utf8_lossy(&text[..end]);
    let mut line = raw.trim();
    while let Some(rest) = line.strip_prefix("->") {
        line = rest.trim_start();
    }
    Some((
        Line {
            text: line.to_owned(),
            echo,
        },
        used,
    ))
}

const IAC: u8 = 255;
const SB: u8 = 250;
const SE: u8 = 240;

/// Telnet command skipping: `IAC IAC` is a data byte, `IAC WILL|WONT|DO|DONT <opt>` three bytes,
/// `IAC SB ... IAC SE` a subnegotiation, any other `IAC <cmd>` two bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Telnet {
    Data,
    Iac,
    Option,
    Sub,
    SubIac,
}

impl Telnet {
    /// Takes one received byte; returns it if it is data.
    pub(super) fn feed(&mut self, byte: u8) -> Option<u8> {
        let (next, data) = match (*self, byte) {
            (Telnet::Data, IAC) => (Telnet::Iac, None),
            (Telnet::Data, b) => (Telnet::Data, Some(b)),
            (Telnet::Iac, IAC) => (Telnet::Data, Some(IAC)),
            (Telnet::Iac, SB) => (Telnet::Sub, None),
            (Telnet::Iac, 251..=254) => (Telnet::Option, None),
            (Telnet::Iac | Telnet::Option, _) => (Telnet::Data, None),
            (Telnet::Sub, IAC) => (Telnet::SubIac, None),
            (Telnet::Sub, _) => (Telnet::Sub, None),
            (Telnet::SubIac, SE) => (Telnet::Data, None),
            (Telnet::SubIac, _) => (Telnet::Sub, None),
        };
        *self = next;
        data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(mut text: &[u8]) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        while let Some((line, used)) = split_line(text) {
            out.push((line.text, line.echo));
            text = &text[used..];
        }
        out
    }

    #[test]
    fn echoes_end_lf_cr_and_answers_cr_lf() {
        let got = lines(b"gendial 1\n\rgendial 1\r\nmute near get\n\r-> mute near on\r\r\n");
        let want = [
            ("gendial 1", true),
            ("gendial 1", false),
            ("mute near get", true),
            ("mute near on", false),
        ];
        let want: Vec<(String, bool)> = want.iter().map(|(t, e)| ((*t).into(), *e)).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_line_end_at_the_end_waits_for_the_next_byte() {
        assert!(split_line(b"hangup all\n").is_none());
        assert!(split_line(b"hanging up all\r").is_none());
        assert!(split_line(b"partial").is_none());
        let (line, used) = split_line(b"hanging up all\r\nrest").expect("a line");
        assert_eq!(
            (line.text.as_str(), line.echo, used),
            ("hanging up all", false, 16)
        );
    }

    #[test]
    fn telnet_commands_are_skipped() {
        let mut state = Telnet::Data;
        let input = b"\xff\xfb\x01\xff\xfb\x03Pass\xff\xfa\x18\x01\xff\xf0word\xff\xff:";
        let data: Vec<u8> = input.iter().filter_map(|b| state.feed(*b)).collect();
        assert_eq!(data, b"Password\xff:");
        assert_eq!(state, Telnet::Data);
    }
}

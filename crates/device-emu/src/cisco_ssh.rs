//! The emulated Cisco codec's SSH API: password and keyboard-interactive login against the
//! device the connection arrived for (its local address), a `shell` channel that prints the
//! codec's banner and then speaks the xAPI text protocol ([`crate::cisco_tsh`]).
//!
//! Faults: BadCredentials (every login refused), Slow (each answer after `slow_ms`),
//! DropConnection (the channel is closed when a command arrives, unanswered), TcFirmware (TC
//! banner and commands), IntegratorRole (no DTMF, no `Call` status). RateLimit is an HTTP
//! limit and has no effect here.

use crate::cisco_firmware::Firmware;
use crate::cisco_tsh::{self, Shell};
use crate::device::{Devices, Fault};
use crate::{Frontend, net};
use russh::keys::ssh_key::private::Ed25519Keypair;
use russh::keys::{HashAlg, PrivateKey};
use russh::server::{Auth, Config, Handler, Msg, Response, Session};
use russh::{Channel, ChannelId, MethodKind, MethodSet};
use std::borrow::Cow;
use std::io;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

/// A fresh Ed25519 host key.
pub fn generate_host_key() -> io::Result<PrivateKey> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| io::Error::other(e.to_string()))?;
    Ok(PrivateKey::from(Ed25519Keypair::from_seed(&seed)))
}

/// `SHA256:…`, as `ssh-keygen -l` prints it.
pub fn fingerprint(key: &PrivateKey) -> String {
    key.public_key().fingerprint(HashAlg::Sha256).to_string()
}

fn config(host_key: PrivateKey) -> Arc<Config> {
    let mut methods = MethodSet::empty();
    methods.push(MethodKind::Password);
    methods.push(MethodKind::KeyboardInteractive);
    Arc::new(Config {
        server_id: russh::SshId::Standard(Cow::Borrowed("SSH-2.0-OpenSSH_8.9")),
        methods,
        auth_rejection_time: Duration::from_millis(50),
        auth_rejection_time_initial: Some(Duration::ZERO),
        keys: vec![host_key],
        inactivity_timeout: Some(Duration::from_secs(600)),
        ..Config::default()
    })
}

/// Serves the SSH API on `port` of every host.
pub async fn start(
    hosts: &[IpAddr],
    port: u16,
    devices: Devices,
    host_key: PrivateKey,
) -> io::Result<Frontend> {
    let (port, listeners) = net::bind_all(hosts, port).await?;
    let config = config(host_key);
    let tasks = listeners
        .into_iter()
        .map(|listener| {
            let devices = devices.clone();
            let config = config.clone();
            tokio::spawn(async move {
                // Each connection's session runs in its own task; aborting this loop leaves
                // them to end with their clients.
                while let Ok((stream, _)) = listener.accept().await {
                    let Ok(local) = stream.local_addr() else {
                        continue;
                    };
                    let handler = Connection {
                        devices: devices.clone(),
                        address: net::device_address(local),
                        user: String::new(),
                    };
                    let config = config.clone();
                    tokio::spawn(async move {
                        match russh::server::run_stream(config, stream, handler).await {
                            Ok(session) => {
                                let _ = session.await;
                            }
                            Err(e) => tracing::debug!(error = %e, "cisco-ssh handshake failed"),
                        }
                    });
                }
            })
        })
        .collect();
    Ok(Frontend { port, tasks })
}

/// One SSH connection to one device.
struct Connection {
    devices: Devices,
    address: String,
    user: String,
}

impl Connection {
    fn login(&mut self, user: &str, password: &str) -> Auth {
        let ok = self
            .devices
            .with(&self.address, |d| d.accepts(user, password));
        tracing::info!(address = %self.address, user, accepted = ok, "cisco-ssh login");
        if ok {
            self.user = user.to_owned();
            Auth::Accept
        } else {
            Auth::reject()
        }
    }
}

impl Handler for Connection {
    type Error = russh::Error;

    async fn auth_password(&mut self, user: &str, password: &str) -> Result<Auth, Self::Error> {
        Ok(self.login(user, password))
    }

    async fn auth_keyboard_interactive<'a>(
        &'a mut self,
        user: &str,
        _submethods: &str,
        response: Option<Response<'a>>,
    ) -> Result<Auth, Self::Error> {
        let Some(mut response) = response else {
            return Ok(Auth::Partial {
                name: Cow::Borrowed(""),
                instructions: Cow::Borrowed(""),
                prompts: Cow::Owned(vec![(Cow::Borrowed("Password: "), false)]),
            });
        };
        let answer = response
            .next()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        Ok(self.login(user, &answer))
    }

    async fn channel_open_session(
        &mut self,
        channel: Channel<Msg>,
        reply: russh::server::ChannelOpenHandle,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        reply.accept().await;
        tokio::spawn(serve_shell(
            channel,
            self.devices.clone(),
            self.address.clone(),
        ));
        Ok(())
    }

    async fn shell_request(
        &mut self,
        channel: ChannelId,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.channel_success(channel)?;
        let firmware = self.devices.with(&self.address, |d| Firmware::of(d));
        session.data(channel, cisco_tsh::banner(&self.address, firmware))?;
        Ok(())
    }
}

/// Reads lines from the shell channel and answers each.
async fn serve_shell(mut channel: Channel<Msg>, devices: Devices, address: String) {
    let mut shell = Shell::default();
    let mut pending: Vec<u8> = Vec::new();
    while let Some(message) = channel.wait().await {
        let russh::ChannelMsg::Data { data } = message else {
            continue;
        };
        pending.extend_from_slice(&data);
        while let Some(end) = pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let line = String::from_utf8_lossy(&line).trim().to_owned();
            if line.is_empty() {
                continue;
            }
            let (faults, slow_ms) = devices.with(&address, |d| (d.faults.clone(), d.slow_ms));
            let command = line.to_ascii_lowercase();
            let is_command = command.starts_with("xcommand") || command.starts_with("xstatus");
            if is_command && faults.contains(&Fault::DropConnection) {
                tracing::info!(%address, "cisco-ssh drops the connection (fault)");
                let _ = channel.close().await;
                return;
            }
            if faults.contains(&Fault::Slow) {
                tokio::time::sleep(Duration::from_millis(slow_ms)).await;
            }
            if command == "bye" {
                let _ = channel.close().await;
                return;
            }
            let mut answer = String::new();
            if !shell.echo_off {
                answer.push_str(&line);
                answer.push_str("\r\n");
            }
            answer.push_str(&devices.with(&address, |d| cisco_tsh::answer(&line, &mut shell, d)));
            tracing::debug!(%address, line = %line, "cisco-ssh command");
            if channel.data_bytes(answer.into_bytes()).await.is_err() {
                return;
            }
        }
    }
}

//! Template settings over the Telnet API (issue #36): one connection per call, one command per
//! key (`poly_config` maps them).
//!
//! - A read sends `<command> get`, a write `<command> <value>`; the first answer line that is
//!   the command's (`poly_config::answer`) gives the key's outcome. A write's answer is the
//!   value the codec now holds, so that value, not the one sent, is the outcome.
//! - An `error:` line is that key's refusal with the codec's text, except `command not found`
//!   and `not supported on this model`: that key is unsupported on this firmware. The
//!   provisioning answer (`this setting is controlled by a provisioning service …`) is a
//!   refusal too. Other keys are still asked.
//! - Keys the mapping does not support are answered without connecting; when none is left,
//!   nothing is sent at all.
//! - A refused login, a broken connection or a missing answer ends the whole call with that
//!   failure; a write's failure names the keys applied before it.

use super::session::Session;
use super::{DEFAULT_PORT, PolyTelnetDriver, silence};
use crate::driver::{Device, DriverFailure, SettingOutcome, SettingOutcomes};
use crate::drivers::poly_config::{self, Answer};
use roomlink_domain::template::{SettingKey, TemplateSettings};

impl PolyTelnetDriver {
    pub(super) async fn read_settings(
        &self,
        device: &Device,
        keys: &[SettingKey],
    ) -> Result<SettingOutcomes, DriverFailure> {
        let mut outcomes = SettingOutcomes::new();
        let mut lines = Vec::new();
        for &key in keys {
            match poly_config::read_line(key) {
                Some(line) => lines.push((key, line)),
                None => {
                    outcomes.insert(key, unsupported(key));
                }
            }
        }
        self.ask_all(device, lines, outcomes, false).await
    }

    pub(super) async fn write_settings(
        &self,
        device: &Device,
        settings: &TemplateSettings,
    ) -> Result<SettingOutcomes, DriverFailure> {
        let mut outcomes = SettingOutcomes::new();
        let mut lines = Vec::new();
        for (key, value) in settings.iter() {
            if poly_config::command(key).is_err() {
                outcomes.insert(key, unsupported(key));
                continue;
            }
            match poly_config::write_line(key, value) {
                Ok(line) => lines.push((key, line)),
                Err(why) => {
                    outcomes.insert(key, SettingOutcome::Refused(why));
                }
            }
        }
        self.ask_all(device, lines, outcomes, true).await
    }

    /// Sends each line on one session and adds each key's outcome; `writes` names the keys
    /// applied before a failure.
    async fn ask_all(
        &self,
        device: &Device,
        lines: Vec<(SettingKey, String)>,
        mut outcomes: SettingOutcomes,
        writes: bool,
    ) -> Result<SettingOutcomes, DriverFailure> {
        if lines.is_empty() {
            return Ok(outcomes);
        }
        let mut session =
            Session::open(device, device.port_or(DEFAULT_PORT), &self.settings).await?;
        for (key, line) in lines {
            match ask(&mut session, key, &line).await {
                Ok(outcome) => {
                    if let SettingOutcome::Refused(reason) = &outcome {
                        tracing::info!(device = %device.address, %key, %reason, "configuration refused");
                    }
                    outcomes.insert(key, outcome);
                }
                Err(failure) if writes => return Err(failure.written_before(&outcomes)),
                Err(failure) => return Err(failure),
            }
        }
        session.close().await;
        Ok(outcomes)
    }
}

fn unsupported(key: SettingKey) -> SettingOutcome {
    SettingOutcome::Unsupported(poly_config::unsupported(key).to_owned())
}

/// Sends `command` and reads lines until the answer that is `key`'s.
async fn ask(
    session: &mut Session<'_>,
    key: SettingKey,
    command: &str,
) -> Result<SettingOutcome, DriverFailure> {
    session.send_line(command).await?;
    let deadline = session.deadline();
    let mut heard = String::new();
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
        match poly_config::answer(key, &line.text) {
            Some(Answer::Value(value)) => return Ok(SettingOutcome::Value(value)),
            Some(Answer::Unsupported(why)) => {
                return Ok(SettingOutcome::Unsupported(session.transcript(&why)));
            }
            Some(Answer::Refused(text)) => {
                return Ok(SettingOutcome::Refused(session.transcript(&text)));
            }
            // Notifications and other commands' answers.
            None => {}
        }
    }
}

//! `readconfiguration` and `writeconfiguration` (listener 3.4.0): template settings of one room
//! system, read or written in the device's turn. The request is checked before any driver runs
//! (`roomlink_listener_protocol::configuration`): nothing is sent for a refused one.

use super::{ListenerState, unsupported};
use crate::request;
use roomlink_domain::template::SettingOutcome;
use roomlink_listener_protocol::configuration::{ConfigurationRequest, answer_of};
use roomlink_listener_protocol::server::Answer;
use roomlink_listener_protocol::wire::{CommandBody, Failure};

/// `readconfiguration` or `writeconfiguration` (`name`).
pub(super) async fn configuration(state: &ListenerState, name: &str, body: &[u8]) -> Answer {
    let body: CommandBody = match serde_json::from_slice(body) {
        Ok(body) => body,
        Err(e) => return Answer::bad_request(format!("the body is not a {name} command: {e}")),
    };
    let wanted = match ConfigurationRequest::of(name, body.params.unwrap_or_default()) {
        Ok(wanted) => wanted,
        Err(problem) => return Answer::bad_request(problem),
    };
    let protocol = body.endpoint.control_protocol.as_deref();
    let Some(driver) = protocol.and_then(|p| state.drivers.get(p)) else {
        return Answer::failure(&unsupported(protocol));
    };
    let device = match request::device(
        &body.endpoint,
        body.credential.as_ref(),
        state.private_key.as_ref(),
    ) {
        Ok(device) => device,
        Err(f) => return Answer::failure(&f),
    };
    let started = std::time::Instant::now();
    let keys = wanted.keys();
    let outcome = match &wanted {
        ConfigurationRequest::Read(keys) => {
            state
                .control
                .read_configuration(driver.as_ref(), &device, keys)
                .await
        }
        ConfigurationRequest::Write(settings) => {
            state
                .control
                .write_configuration(driver.as_ref(), &device, settings)
                .await
        }
    };
    match outcome {
        Ok(outcomes) => {
            let count =
                |pick: fn(&SettingOutcome) -> bool| outcomes.values().filter(|o| pick(o)).count();
            tracing::info!(command = %name, address = %device.address, keys,
                unsupported = count(|o| matches!(o, SettingOutcome::Unsupported(_))),
                refused = count(|o| matches!(o, SettingOutcome::Refused(_))),
                elapsed_ms = started.elapsed().as_millis() as u64, "configuration done");
            match serde_json::to_value(answer_of(outcomes)) {
                Ok(body) => Answer::ok(body),
                Err(e) => Answer::failure(&Failure::listener(500, "internal", e.to_string())),
            }
        }
        Err(f) => {
            tracing::info!(command = %name, address = %device.address,
                failure = f.kind.name(), message = %f.message, "configuration failed");
            Answer::failure(&f.into_wire())
        }
    }
}

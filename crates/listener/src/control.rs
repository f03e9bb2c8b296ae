//! Carrying out commands and status reads: one thing at a time per device, every device call
//! bounded by the configured deadline, a join's IVR tones sent once its call connects.

use crate::devices::{DeviceTable, Slot};
use crate::driver::{
    Action, CallPhase, Capability, Device, DeviceStatus, Driver, DriverFailure, SettingOutcomes,
};
use crate::settings::{CommandSettings, IvrSettings};
use roomlink_domain::ports::Clock;
use roomlink_domain::system::SystemClock;
use roomlink_domain::template::{SettingKey, TemplateSettings};
use roomlink_listener_protocol::failure::FailureKind;
use roomlink_listener_protocol::wire::WireInventory;
use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// What command and status execution needs.
pub struct Control {
    pub devices: DeviceTable,
    pub commands: CommandSettings,
    pub ivr: IvrSettings,
}

/// Runs `call` with a deadline; silence past it is the room system's `timeout`.
async fn bounded<T>(
    deadline_ms: u64,
    what: &str,
    device: &Device,
    call: impl Future<Output = Result<T, DriverFailure>>,
) -> Result<T, DriverFailure> {
    match tokio::time::timeout(Duration::from_millis(deadline_ms), call).await {
        Ok(outcome) => outcome,
        Err(_) => Err(DriverFailure::new(
            FailureKind::Timeout,
            format!(
                "the room system at {} did not answer {what} in time",
                device.address
            ),
        )
        .cause(format!("no answer within {deadline_ms} ms"))),
    }
}

impl Control {
    fn slot(&self, driver: &dyn Driver, device: &Device) -> Slot {
        self.devices
            .slot(driver.protocol(), &device.address, device.port)
    }

    /// Carries out `action` and answers the device's state after it.
    pub async fn command(
        &self,
        driver: Arc<dyn Driver>,
        device: Device,
        action: Action,
    ) -> Result<Value, DriverFailure> {
        let slot = self.slot(driver.as_ref(), &device);
        let turn = slot.turn.lock().await;
        bounded(
            self.commands.timeout_ms,
            action.name(),
            &device,
            driver.perform(&device, &action),
        )
        .await?;
        if let Action::Join { .. } = action {
            slot.remember(|m| m.last_dial_ms = Some(SystemClock.now_ms()));
        }
        // The state after the command; a failed read leaves what the command implies.
        match bounded(
            self.commands.status_timeout_ms,
            "status",
            &device,
            driver.status(&device),
        )
        .await
        {
            Ok(status) => {
                slot.remember(|m| m.last_status = Some(status));
                check_effect(&action, &status, &device)?;
            }
            Err(failure) => {
                tracing::info!(address = %device.address, failure = failure.kind.name(),
                    "status after the command could not be read");
                let status = implied(&action, slot.last_status());
                slot.remember(|m| m.last_status = Some(status));
            }
        }
        drop(turn);
        let state = slot.state();
        // A driver without DTMF (Mesh) hands the meeting id and passcode to its server instead.
        if let Action::Join { plan, .. } = &action
            && !plan.ivr_steps.is_empty()
            && driver.capabilities().contains(&Capability::Dtmf)
        {
            let steps = plan.ivr_steps.clone();
            tokio::spawn(send_ivr_steps(
                driver,
                device,
                steps,
                slot,
                self.ivr.clone(),
                self.commands.timeout_ms,
            ));
        }
        Ok(state)
    }

    /// The device's state for a batched status. A device busy with a command answers what the
    /// listener last knew instead of queueing behind it.
    pub async fn status(
        &self,
        driver: &dyn Driver,
        device: &Device,
    ) -> Result<Value, DriverFailure> {
        let slot = self.slot(driver, device);
        let Ok(_turn) = slot.turn.try_lock() else {
            return Ok(slot.state());
        };
        let status = bounded(
            self.commands.status_timeout_ms,
            "status",
            device,
            driver.status(device),
        )
        .await?;
        slot.remember(|m| m.last_status = Some(status));
        Ok(slot.state())
    }
}

impl Control {
    /// Reads the device's inventory in its turn (after a running command, like a command),
    /// bounded by `commands.timeout_ms`.
    pub async fn inventory(
        &self,
        driver: &dyn Driver,
        device: &Device,
    ) -> Result<WireInventory, DriverFailure> {
        let slot = self.slot(driver, device);
        let _turn = slot.turn.lock().await;
        bounded(
            self.commands.timeout_ms,
            "readinventory",
            device,
            driver.inventory(device),
        )
        .await
    }

    /// Reads template settings in the device's turn, bounded by `commands.timeout_ms`.
    pub async fn read_configuration(
        &self,
        driver: &dyn Driver,
        device: &Device,
        keys: &[SettingKey],
    ) -> Result<SettingOutcomes, DriverFailure> {
        let slot = self.slot(driver, device);
        let _turn = slot.turn.lock().await;
        bounded(
            self.commands.timeout_ms,
            "readconfiguration",
            device,
            driver.read_configuration(device, keys),
        )
        .await
    }

    /// Writes template settings in the device's turn, bounded by `commands.timeout_ms`.
    pub async fn write_configuration(
        &self,
        driver: &dyn Driver,
        device: &Device,
        settings: &TemplateSettings,
    ) -> Result<SettingOutcomes, DriverFailure> {
        let slot = self.slot(driver, device);
        let _turn = slot.turn.lock().await;
        bounded(
            self.commands.timeout_ms,
            "writeconfiguration",
            device,
            driver.write_configuration(device, settings),
        )
        .await
    }
}

/// What a command implies about the state when the state cannot be read after it.
fn implied(action: &Action, before: Option<DeviceStatus>) -> DeviceStatus {
    let mut status = before.unwrap_or(DeviceStatus {
        call: CallPhase::Idle,
        microphone_muted: false,
    });
    match action {
        Action::Join { .. } => status.call = CallPhase::Dialling,
        Action::Hangup => status.call = CallPhase::Idle,
        Action::Mute => status.microphone_muted = true,
        Action::Unmute => status.microphone_muted = false,
        Action::Dtmf(_) | Action::PushCalendar(_) => {}
    }
    status
}

/// A mute or unmute the room system acknowledged but did not carry out is `ignored`.
fn check_effect(
    action: &Action,
    status: &DeviceStatus,
    device: &Device,
) -> Result<(), DriverFailure> {
    let expected = match action {
        Action::Mute => true,
        Action::Unmute => false,
        _ => return Ok(()),
    };
    if status.microphone_muted == expected {
        return Ok(());
    }
    Err(DriverFailure::new(
        FailureKind::Ignored,
        format!(
            "the room system at {} accepted {} but its microphone is still {}",
            device.address,
            action.name(),
            if status.microphone_muted {
                "muted"
            } else {
                "unmuted"
            }
        ),
    ))
}

/// Waits for the join's call to connect, then sends each step's tones. Runs after the join
/// has been answered; what happens is logged (never the tones: they hold the passcode).
async fn send_ivr_steps(
    driver: Arc<dyn Driver>,
    device: Device,
    steps: Vec<String>,
    slot: Slot,
    ivr: IvrSettings,
    timeout_ms: u64,
) {
    let address = device.address.clone();
    let waited = tokio::time::timeout(Duration::from_millis(ivr.connect_wait_ms), async {
        loop {
            tokio::time::sleep(Duration::from_millis(ivr.poll_ms)).await;
            let _turn = slot.turn.lock().await;
            match driver.status(&device).await {
                Ok(s) if s.call == CallPhase::Connected => return true,
                Ok(s) if s.call == CallPhase::Idle => return false,
                _ => {}
            }
        }
    })
    .await;
    if waited != Ok(true) {
        tracing::warn!(%address, "the joined call did not connect; IVR tones not sent");
        return;
    }
    tokio::time::sleep(Duration::from_millis(ivr.delay_ms)).await;
    for (i, tones) in steps.iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(ivr.step_gap_ms)).await;
        }
        let _turn = slot.turn.lock().await;
        let action = Action::Dtmf(tones.clone());
        let sent = bounded(
            timeout_ms,
            "senddtmf",
            &device,
            driver.perform(&device, &action),
        )
        .await;
        if let Err(failure) = sent {
            tracing::warn!(%address, step = i + 1, failure = failure.kind.name(),
                message = %failure.message, "IVR tones not sent");
            return;
        }
    }
    tracing::info!(%address, steps = steps.len(), "IVR tones sent");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_imply_a_state_when_none_can_be_read() {
        let s = implied(&Action::Mute, None);
        assert!(s.microphone_muted && s.call == CallPhase::Idle);
        let s = implied(
            &Action::Hangup,
            Some(DeviceStatus {
                call: CallPhase::Connected,
                microphone_muted: true,
            }),
        );
        assert_eq!(s.call, CallPhase::Idle);
        assert!(s.microphone_muted);
    }
}

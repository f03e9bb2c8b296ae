//! One slot per room system: the lock that makes a device do one thing at a time, and what
//! the listener remembers of it (the last status read, when it last dialled).

use crate::driver::{CallPhase, DeviceStatus};
use roomlink_listener_protocol::wire::WireState;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What the listener remembers about one device.
#[derive(Debug, Clone, Default)]
pub struct Memory {
    pub last_status: Option<DeviceStatus>,
    pub last_dial_ms: Option<i64>,
}

impl Memory {
    /// The protocol's `state` object from the last status known.
    pub fn state(&self) -> Value {
        let status = self.last_status.unwrap_or(DeviceStatus {
            call: CallPhase::Idle,
            microphone_muted: false,
        });
        json!(WireState {
            call_active: status.call_active(),
            dialing: status.dialing(),
            microphone_muted: status.microphone_muted,
            reserved: false,
            last_dial_timestamp_millis: self.last_dial_ms,
        })
    }
}

/// A device's slot: hold `turn` while talking to it; `memory` is readable at any time, so a
/// busy device can still be reported.
#[derive(Default)]
pub struct DeviceSlot {
    pub turn: tokio::sync::Mutex<()>,
    memory: Mutex<Memory>,
}

impl DeviceSlot {
    pub fn remember(&self, f: impl FnOnce(&mut Memory)) {
        f(&mut self.memory.lock().unwrap_or_else(|p| p.into_inner()));
    }

    pub fn state(&self) -> Value {
        self.memory
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .state()
    }

    pub fn last_status(&self) -> Option<DeviceStatus> {
        self.memory
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .last_status
    }
}

pub type Slot = Arc<DeviceSlot>;

/// Every device seen, keyed by protocol, address and port (two protocols to one address are
/// two conversations, but one room system: they are kept apart only by port).
#[derive(Default)]
pub struct DeviceTable {
    slots: Mutex<HashMap<String, Slot>>,
}

impl DeviceTable {
    pub fn slot(&self, protocol: &str, address: &str, port: Option<u16>) -> Slot {
        let key = format!("{protocol} {address} {}", port.unwrap_or(0));
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        slots.entry(key).or_default().clone()
    }

    pub fn len(&self) -> usize {
        self.slots.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_slot_per_device_and_an_idle_state_before_any_status() {
        let table = DeviceTable::default();
        let a = table.slot("TANDBERG_SSH", "127.77.0.1", Some(22));
        let b = table.slot("TANDBERG_SSH", "127.77.0.1", Some(22));
        assert!(Arc::ptr_eq(&a, &b));
        let _c = table.slot("TANDBERG_SSH", "127.77.0.2", Some(22));
        assert_eq!(table.len(), 2);
        let state = Memory::default().state();
        assert_eq!(state["callActive"], false);
        assert_eq!(state["lastDialTimestampMillis"], Value::Null);
    }
}

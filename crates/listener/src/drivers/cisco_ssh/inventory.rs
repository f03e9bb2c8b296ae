//! `readinventory` over SSH: `xStatus <part>` on the device's shell; a part the codec refuses
//! leaves its fields `notReported` (see [`crate::drivers::cisco_inventory`]).

use super::{CiscoSshDriver, status_refused};
use crate::driver::{Device, DriverFailure};
use crate::drivers::cisco_inventory::{self, Part};
use roomlink_listener_protocol::wire::WireInventory;

impl CiscoSshDriver {
    pub(super) async fn read_inventory(
        &self,
        device: &Device,
    ) -> Result<WireInventory, DriverFailure> {
        let mut readings = Vec::with_capacity(Part::ALL.len());
        for part in Part::ALL {
            let answer = self.run(device, &part.xstatus()).await?;
            let document = match status_refused(&answer) {
                Some(reason) => Err(reason),
                None => cisco_inventory::status_node(&answer)
                    .ok_or_else(|| "no Status in the answer".to_owned()),
            };
            if let Err(reason) = &document {
                tracing::debug!(device = %device.address, part = part.name(), %reason,
                    "inventory part refused");
            }
            readings.push((part, document));
        }
        Ok(cisco_inventory::inventory(&readings))
    }
}

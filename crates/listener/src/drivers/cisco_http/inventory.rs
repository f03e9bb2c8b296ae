//! `readinventory` over HTTP: `getxml` of each part on the device's session (login, retries
//! and failures as for status reads); a location the codec refuses leaves its part
//! `notReported` (see [`crate::drivers::cisco_inventory`]).

use super::CiscoHttpDriver;
use crate::driver::{Device, DriverFailure};
use crate::drivers::cisco_inventory::{self, Part};
use roomlink_listener_protocol::wire::WireInventory;

impl CiscoHttpDriver {
    pub(super) async fn read_inventory(
        &self,
        device: &Device,
    ) -> Result<WireInventory, DriverFailure> {
        let session = self.session_of(device);
        let mut session = session.lock().await;
        let mut readings = Vec::with_capacity(Part::ALL.len());
        for part in Part::ALL {
            let (document, _) = self.read(device, &mut session, &part.location()).await?;
            if let Err(reason) = &document {
                tracing::debug!(device = %device.address, part = part.name(), %reason,
                    "inventory part refused");
            }
            readings.push((part, document));
        }
        Ok(cisco_inventory::inventory(&readings))
    }
}

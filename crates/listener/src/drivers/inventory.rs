//! What every driver's `readinventory` shares: the wire's peripheral kinds, its list limit,
//! and the clean-up of what devices report (empty means "not said").

use roomlink_listener_protocol::wire::{MAX_INVENTORY_ITEMS, WireAddress, WireInventory};

/// The wire's peripheral kinds.
pub const TOUCH_PANEL: &str = "touchPanel";
pub const CAMERA: &str = "camera";
pub const MICROPHONE: &str = "microphone";
pub const SPEAKER: &str = "speaker";
pub const CONTROL_SYSTEM: &str = "controlSystem";
pub const DISPLAY: &str = "display";
pub const OTHER: &str = "other";

/// The `notReported` names of the wire's fields.
pub mod field {
    pub const PRODUCT: &str = "product";
    pub const MODEL: &str = "model";
    pub const SERIAL_NUMBER: &str = "serialNumber";
    pub const SOFTWARE_VERSION: &str = "softwareVersion";
    pub const SOFTWARE_RELEASE_DATE: &str = "softwareReleaseDate";
    pub const UPTIME_SECONDS: &str = "uptimeSeconds";
    pub const ADDRESSES: &str = "addresses";
    pub const PERIPHERALS: &str = "peripherals";
}

/// A reported text, `None` when the device left it empty.
pub fn said(text: &str) -> Option<String> {
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// A release date as `YYYY-MM-DD` (a longer date-time is cut to its date); `None` otherwise.
pub fn release_date(text: &str) -> Option<String> {
    let date = text.trim().get(..10)?;
    let shaped = date.char_indices().all(|(i, c)| {
        if i == 4 || i == 7 {
            c == '-'
        } else {
            c.is_ascii_digit()
        }
    });
    shaped.then(|| date.to_owned())
}

/// Adds an address unless it is empty or already listed.
pub fn add_address(inventory: &mut WireInventory, kind: &str, value: &str) {
    let Some(value) = said(value) else { return };
    if inventory
        .addresses
        .iter()
        .any(|a| a.kind == kind && a.value.eq_ignore_ascii_case(&value))
    {
        return;
    }
    inventory.addresses.push(WireAddress {
        kind: kind.to_owned(),
        value,
    });
}

/// Marks fields as not readable (once each).
pub fn not_reported(inventory: &mut WireInventory, fields: &[&str]) {
    for field in fields {
        if !inventory.not_reported.iter().any(|f| f == field) {
            inventory.not_reported.push((*field).to_owned());
        }
    }
}

/// Holds the lists to the protocol's limit.
pub fn capped(mut inventory: WireInventory) -> WireInventory {
    inventory.addresses.truncate(MAX_INVENTORY_ITEMS);
    inventory.peripherals.truncate(MAX_INVENTORY_ITEMS);
    inventory
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_texts_and_dates_are_cleaned_up() {
        assert_eq!(said("  "), None);
        assert_eq!(said(" x "), Some("x".into()));
        assert_eq!(release_date("2024-02-29"), Some("2024-02-29".into()));
        assert_eq!(
            release_date("2024-02-29 10:12:54"),
            Some("2024-02-29".into())
        );
        assert_eq!(release_date("29.02.2024"), None);
        assert_eq!(release_date("2024"), None);
        let mut inventory = WireInventory::default();
        add_address(&mut inventory, "mac", "02:00:7F:00:00:01");
        add_address(&mut inventory, "mac", "02:00:7f:00:00:01");
        add_address(&mut inventory, "ipv6", "");
        assert_eq!(inventory.addresses.len(), 1);
        not_reported(&mut inventory, &[field::MODEL, field::MODEL]);
        assert_eq!(inventory.not_reported, ["model"]);
        inventory.peripherals = vec![Default::default(); MAX_INVENTORY_ITEMS + 5];
        assert_eq!(capped(inventory).peripherals.len(), MAX_INVENTORY_ITEMS);
    }
}

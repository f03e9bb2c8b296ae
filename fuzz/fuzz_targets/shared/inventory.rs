//! What every driver's `readinventory` promises of the inventory it builds from what a device
//! said, whatever it said (shared by `cisco_xml`, `cisco_tsh` and `poly_lines`).

use roomlink_listener_protocol::wire::{MAX_INVENTORY_ITEMS, WireInventory};

/// The wire's peripheral kinds and address kinds.
const PERIPHERAL_KINDS: [&str; 7] = [
    "touchPanel",
    "camera",
    "microphone",
    "speaker",
    "controlSystem",
    "display",
    "other",
];
const ADDRESS_KINDS: [&str; 3] = ["ipv4", "ipv6", "mac"];
const FIELDS: [&str; 8] = [
    "product",
    "model",
    "serialNumber",
    "softwareVersion",
    "softwareReleaseDate",
    "uptimeSeconds",
    "addresses",
    "peripherals",
];

/// A reported text is trimmed and not empty ("not said" is `None`).
fn said(text: &Option<String>) {
    if let Some(text) = text {
        assert!(!text.is_empty() && text.trim() == text, "{text:?}");
    }
}

pub fn check(inventory: &WireInventory, vendor: &str) {
    assert_eq!(inventory.vendor.as_deref(), Some(vendor));
    for text in [
        &inventory.product,
        &inventory.model,
        &inventory.serial_number,
        &inventory.software_version,
    ] {
        said(text);
    }
    if let Some(date) = &inventory.software_release_date {
        let shaped = date.len() == 10
            && date.char_indices().all(|(i, c)| {
                if i == 4 || i == 7 {
                    c == '-'
                } else {
                    c.is_ascii_digit()
                }
            });
        assert!(shaped, "{date:?} is not YYYY-MM-DD");
    }
    assert!(inventory.addresses.len() <= MAX_INVENTORY_ITEMS);
    assert!(inventory.peripherals.len() <= MAX_INVENTORY_ITEMS);
    for (i, address) in inventory.addresses.iter().enumerate() {
        assert!(
            ADDRESS_KINDS.contains(&address.kind.as_str()),
            "{address:?}"
        );
        assert!(!address.value.is_empty() && address.value.trim() == address.value);
        let twice = inventory.addresses[..i]
            .iter()
            .any(|a| a.kind == address.kind && a.value.eq_ignore_ascii_case(&address.value));
        assert!(!twice, "{address:?} listed twice");
        if address.kind == "ipv4" && vendor == "Poly" {
            assert!(address.value.parse::<std::net::Ipv4Addr>().is_ok());
        }
    }
    for peripheral in &inventory.peripherals {
        assert!(
            PERIPHERAL_KINDS.contains(&peripheral.kind.as_str()),
            "{peripheral:?}"
        );
        for text in [
            &peripheral.id,
            &peripheral.name,
            &peripheral.model,
            &peripheral.serial_number,
            &peripheral.software_version,
        ] {
            said(text);
        }
    }
    for (i, field) in inventory.not_reported.iter().enumerate() {
        assert!(FIELDS.contains(&field.as_str()), "{field}");
        assert!(
            !inventory.not_reported[..i].contains(field),
            "{field} twice"
        );
    }
    // What the listener answers reads back as itself on roomlink's side.
    let json = serde_json::to_string(inventory).expect("an inventory writes");
    let back: WireInventory = serde_json::from_str(&json).expect("and reads back");
    assert_eq!(&back, inventory);
}

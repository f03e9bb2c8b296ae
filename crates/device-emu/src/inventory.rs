//! What an emulated room system says about itself (the listener's `readinventory`): serial
//! number, MAC address and peripherals, all derived from the device's address so that the same
//! address gives the same values on every run, and the software the front ends report.
//!
//! Decided here ([I], docs/drivers.md): the MAC address is the locally administered
//! `02:00:` followed by the four IPv4 octets (`127.77.20.1` → `02:00:7F:4D:14:01`; upper case
//! for Cisco, lower case for Poly, as each writes them); serial numbers are a hash of the
//! address (Cisco `FOC` + 8 characters, Poly 14 hex digits); every Cisco codec has a touch
//! panel, a camera and a table microphone whose `ID`s are MAC addresses `02:01:…`, `02:02:…`,
//! `02:03:…` of the same octets; every Poly codec has `microphones`, `camera` and
//! `remotecontrol` (the words of its `status` answer, which are also their ids here).

use serde_json::{Value, json};
use std::net::Ipv4Addr;

/// One peripheral of an emulated Cisco codec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CiscoPeripheral {
    /// `Peripherals ConnectedDevice[n]` item number.
    pub item: u32,
    pub id: String,
    /// The xAPI `Type` (`TouchPanel`, `Camera`, `AudioMicrophone`).
    pub kind: &'static str,
    pub name: &'static str,
    pub hardware: &'static str,
    pub serial: String,
}

/// The peripheral words of a Poly codec's `status` answer, in its order.
pub const POLY_PERIPHERALS: [&str; 3] = ["remotecontrol", "microphones", "camera"];

/// The device's IPv4 octets (`0.0.0.0` for an address that is not IPv4).
fn octets(address: &str) -> [u8; 4] {
    address
        .parse::<Ipv4Addr>()
        .map(|a| a.octets())
        .unwrap_or_default()
}

/// FNV-1a of the address and a salt: stable across runs and platforms.
fn hash(address: &str, salt: u8) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in address.bytes().chain([salt]) {
        h ^= u64::from(byte);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn mac_with(prefix: u8, address: &str) -> String {
    let [a, b, c, d] = octets(address);
    format!("02:{prefix:02X}:{a:02X}:{b:02X}:{c:02X}:{d:02X}")
}

/// The device's Ethernet MAC address, upper case (`02:00:7F:4D:14:01`).
pub fn mac(address: &str) -> String {
    mac_with(0, address)
}

/// A Cisco serial number (`FOC` + 8 upper-case letters and digits), `salt` 0 for the codec.
pub fn cisco_serial(address: &str, salt: u8) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHJKLMNPQRSTUVWXYZ";
    let mut h = hash(address, salt);
    let mut out = String::from("FOC");
    for _ in 0..8 {
        out.push(char::from(ALPHABET[(h % ALPHABET.len() as u64) as usize]));
        h /= ALPHABET.len() as u64;
    }
    out
}

/// A Poly serial number: 14 upper-case hex digits.
pub fn poly_serial(address: &str) -> String {
    format!("{:014X}", hash(address, 0x50) & 0x00FF_FFFF_FFFF_FFFF)
}

/// The Cisco codec's peripherals, in `ConnectedDevice` order.
pub fn cisco_peripherals(address: &str) -> Vec<CiscoPeripheral> {
    vec![
        CiscoPeripheral {
            item: 1001,
            id: mac_with(1, address),
            kind: "TouchPanel",
            name: "Cisco TelePresence Touch",
            hardware: "Touch 10",
            serial: cisco_serial(address, 1),
        },
        CiscoPeripheral {
            item: 1002,
            id: mac_with(2, address),
            kind: "Camera",
            name: "Cisco Quad Camera",
            hardware: "Quad Camera",
            serial: cisco_serial(address, 2),
        },
        CiscoPeripheral {
            item: 1003,
            id: mac_with(3, address),
            kind: "AudioMicrophone",
            name: "Cisco Table Microphone Pro",
            hardware: "Table Microphone Pro",
            serial: cisco_serial(address, 3),
        },
    ]
}

/// Whether `id` names a peripheral of the device (Cisco or Poly).
pub fn has_peripheral(address: &str, id: &str) -> bool {
    POLY_PERIPHERALS.contains(&id) || cisco_peripherals(address).iter().any(|p| p.id == id)
}

/// Every peripheral id of the device, for error messages.
pub fn peripheral_ids(address: &str) -> Vec<String> {
    let mut ids: Vec<String> = cisco_peripherals(address)
        .into_iter()
        .map(|p| p.id)
        .collect();
    ids.extend(POLY_PERIPHERALS.iter().map(|p| (*p).to_owned()));
    ids
}

/// The control surface's view of what the device at `address` reports about itself, with
/// `connected` saying which peripherals it sees.
pub fn view(address: &str, connected: impl Fn(&str) -> bool) -> Value {
    let cisco: Vec<Value> = cisco_peripherals(address)
        .into_iter()
        .map(|p| {
            json!({"id": p.id, "type": p.kind, "name": p.name, "serialNumber": p.serial,
                "connected": connected(&p.id)})
        })
        .collect();
    let poly: Vec<Value> = POLY_PERIPHERALS
        .iter()
        .map(|p| json!({"id": p, "connected": connected(p)}))
        .collect();
    json!({
        "macAddress": mac(address),
        "cisco": {"serialNumber": cisco_serial(address, 0), "peripherals": cisco},
        "poly": {"serialNumber": poly_serial(address), "peripherals": poly},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_the_address_and_nothing_else() {
        assert_eq!(mac("127.77.20.1"), "02:00:7F:4D:14:01");
        assert_eq!(
            cisco_serial("127.77.20.1", 0),
            cisco_serial("127.77.20.1", 0)
        );
        assert_ne!(
            cisco_serial("127.77.20.1", 0),
            cisco_serial("127.77.20.2", 0)
        );
        assert_ne!(
            cisco_serial("127.77.20.1", 0),
            cisco_serial("127.77.20.1", 1)
        );
        let serial = cisco_serial("127.77.20.1", 0);
        assert!(serial.starts_with("FOC") && serial.len() == 11, "{serial}");
        assert_eq!(poly_serial("127.77.20.1").len(), 14);
        let peripherals = cisco_peripherals("127.77.20.1");
        assert_eq!(peripherals[0].id, "02:01:7F:4D:14:01");
        assert!(has_peripheral("127.77.20.1", "02:03:7F:4D:14:01"));
        assert!(has_peripheral("127.77.20.1", "camera"));
        assert!(!has_peripheral("127.77.20.1", "02:03:7F:4D:14:02"));
    }
}

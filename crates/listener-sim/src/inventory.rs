//! `readinventory` of a simulated room system (listener 3.3.0): a plausible inventory derived
//! from the room's address and control protocol, the same on every run, changed only by the
//! control surface (a peripheral disconnected, another software version).
//!
//! Cisco rooms (`TANDBERG_*`) look like the device emulator's CE codec (a Room Kit with a touch
//! panel, a camera and a table microphone whose ids are MAC addresses `02:01:…`, `02:02:…`,
//! `02:03:…` of the IPv4 octets); Poly rooms (`POLYCOM_*`) like its Group Series codec
//! (`microphones`, `camera`, `remotecontrol`; no model, release date or uptime). Other
//! protocols (`MESH`) have no inventory, as in the production listener. The uptime is a fixed
//! number derived from the address: simulated rooms keep no clock.

use roomlink_listener_protocol::wire::{WireAddress, WireInventory, WirePeripheral};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};

/// The vendor a control protocol speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vendor {
    Cisco,
    Poly,
}

impl Vendor {
    /// `None` for protocols without inventory.
    pub fn of(protocol: &str) -> Option<Vendor> {
        if protocol.starts_with("TANDBERG_") {
            Some(Vendor::Cisco)
        } else if protocol.starts_with("POLYCOM_") {
            Some(Vendor::Poly)
        } else {
            None
        }
    }
}

/// A software version set through the control surface (`PUT /sim/endpoints/{ip}/software`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Software {
    pub version: String,
    #[serde(default)]
    pub release_date: Option<String>,
}

impl Software {
    /// `Err` says what is wrong: an empty or multi-line version, a date not `YYYY-MM-DD`.
    pub fn check(&self) -> Result<(), String> {
        let v = &self.version;
        if v.trim().is_empty() || v.len() > 100 || v.chars().any(char::is_control) {
            return Err("version: 1 to 100 characters on one line".into());
        }
        let date_ok = self.release_date.as_deref().is_none_or(|d| {
            d.len() == 10
                && d.char_indices().all(|(i, c)| {
                    if i == 4 || i == 7 {
                        c == '-'
                    } else {
                        c.is_ascii_digit()
                    }
                })
        });
        if !date_ok {
            return Err("releaseDate: YYYY-MM-DD".into());
        }
        Ok(())
    }
}

/// What the control surface changed about a room's inventory.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    pub software: Option<Software>,
    pub disconnected: BTreeSet<String>,
}

const POLY_PERIPHERALS: [(&str, &str); 3] = [
    ("remotecontrol", "other"),
    ("microphones", "microphone"),
    ("camera", "camera"),
];

fn hash(address: &str, salt: u8) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in address.bytes().chain([salt]) {
        h ^= u64::from(byte);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fn mac(prefix: u8, address: &str) -> String {
    let [a, b, c, d] = address
        .parse::<Ipv4Addr>()
        .map(|a| a.octets())
        .unwrap_or_default();
    format!("02:{prefix:02X}:{a:02X}:{b:02X}:{c:02X}:{d:02X}")
}

fn cisco_serial(address: &str, salt: u8) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHJKLMNPQRSTUVWXYZ";
    let mut h = hash(address, salt);
    let mut out = String::from("FOC");
    for _ in 0..8 {
        out.push(char::from(ALPHABET[(h % ALPHABET.len() as u64) as usize]));
        h /= ALPHABET.len() as u64;
    }
    out
}

/// Whether `id` names a peripheral of a room at `address` (Cisco or Poly).
pub fn has_peripheral(address: &str, id: &str) -> bool {
    POLY_PERIPHERALS.iter().any(|(p, _)| *p == id) || (1..=3).any(|n| mac(n, address) == id)
}

fn addresses(address: &str, mac: String) -> Vec<WireAddress> {
    let mut out = Vec::new();
    match address.parse::<IpAddr>() {
        Ok(IpAddr::V4(_)) => out.push(("ipv4", address.to_owned())),
        Ok(IpAddr::V6(_)) => out.push(("ipv6", address.to_owned())),
        Err(_) => {}
    }
    out.push(("mac", mac));
    out.into_iter()
        .map(|(kind, value)| WireAddress {
            kind: kind.into(),
            value,
        })
        .collect()
}

/// The room's inventory as a listener of `vendor` reads it.
pub fn inventory(address: &str, vendor: Vendor, changes: &Changes) -> WireInventory {
    let connected = |id: &str| !changes.disconnected.contains(id);
    match vendor {
        Vendor::Cisco => {
            let version = changes
                .software
                .as_ref()
                .map_or("ce9.15.17.4.4c8b7f1a3e2", |s| s.version.as_str());
            let peripheral = |n: u8, kind: &str, name: &str| {
                let id = mac(n, address);
                WirePeripheral {
                    kind: kind.into(),
                    connected: connected(&id),
                    id: Some(id),
                    name: Some(name.into()),
                    model: Some(name.trim_start_matches("Cisco ").into()),
                    serial_number: Some(cisco_serial(address, n)),
                    software_version: Some(version.into()),
                }
            };
            WireInventory {
                vendor: Some("Cisco".into()),
                product: Some("Cisco Webex Room Kit".into()),
                model: Some("Room Kit".into()),
                serial_number: Some(cisco_serial(address, 0)),
                software_version: Some(version.into()),
                software_release_date: Some(
                    changes
                        .software
                        .as_ref()
                        .and_then(|s| s.release_date.clone())
                        .unwrap_or_else(|| "2024-02-29".into()),
                ),
                uptime_seconds: Some(3_600 + hash(address, 9) % 2_000_000),
                addresses: addresses(address, mac(0, address)),
                peripherals: vec![
                    peripheral(1, "touchPanel", "Cisco Room Navigator"),
                    peripheral(2, "camera", "Cisco Quad Camera"),
                    peripheral(3, "microphone", "Cisco Table Microphone Pro"),
                ],
                not_reported: Vec::new(),
            }
        }
        Vendor::Poly => WireInventory {
            vendor: Some("Poly".into()),
            product: Some("Group 500".into()),
            serial_number: Some(format!(
                "{:014X}",
                hash(address, 0x50) & 0x00FF_FFFF_FFFF_FFFF
            )),
            software_version: Some(
                changes
                    .software
                    .as_ref()
                    .map_or("6.2.2.4-520003", |s| s.version.as_str())
                    .into(),
            ),
            addresses: addresses(address, mac(0, address).to_ascii_lowercase()),
            peripherals: POLY_PERIPHERALS
                .iter()
                .map(|(id, kind)| WirePeripheral {
                    kind: (*kind).into(),
                    id: Some((*id).into()),
                    connected: connected(id),
                    ..WirePeripheral::default()
                })
                .collect(),
            not_reported: vec![
                "model".into(),
                "softwareReleaseDate".into(),
                "uptimeSeconds".into(),
            ],
            ..WireInventory::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_room_is_the_same_every_time_and_follows_its_changes() {
        let plain = Changes::default();
        let cisco = inventory("127.77.40.1", Vendor::Cisco, &plain);
        assert_eq!(cisco, inventory("127.77.40.1", Vendor::Cisco, &plain));
        assert_ne!(
            cisco.serial_number,
            inventory("127.77.40.2", Vendor::Cisco, &plain).serial_number
        );
        assert_eq!(cisco.addresses[0].value, "127.77.40.1");
        assert_eq!(cisco.addresses[1].value, "02:00:7F:4D:28:01");
        assert_eq!(
            cisco.peripherals[1].id.as_deref(),
            Some("02:02:7F:4D:28:01")
        );
        assert!(cisco.peripherals.iter().all(|p| p.connected));

        let mut changes = Changes::default();
        changes.disconnected.insert("camera".into());
        changes.software = Some(Software {
            version: "6.2.2.5-530001".into(),
            release_date: None,
        });
        let poly = inventory("127.77.40.1", Vendor::Poly, &changes);
        assert_eq!(poly.software_version.as_deref(), Some("6.2.2.5-530001"));
        let camera = poly
            .peripherals
            .iter()
            .find(|p| p.kind == "camera")
            .unwrap();
        assert!(!camera.connected);
        assert!(poly.not_reported.contains(&"uptimeSeconds".to_owned()));
        assert_eq!(Vendor::of("MESH"), None);
        assert_eq!(Vendor::of("POLYCOM_TELNET"), Some(Vendor::Poly));
        assert!(has_peripheral("127.77.40.1", "02:03:7F:4D:28:01"));
        assert!(!has_peripheral("127.77.40.1", "toaster"));
    }

    #[test]
    fn software_bodies_are_checked() {
        let ok = Software {
            version: "ce9.15.18.5".into(),
            release_date: Some("2024-06-12".into()),
        };
        assert!(ok.check().is_ok());
        for (version, date) in [("", None), ("x\ny", None), ("x", Some("June"))] {
            let bad = Software {
                version: version.into(),
                release_date: date.map(str::to_owned),
            };
            assert!(bad.check().is_err(), "{version:?} {date:?}");
        }
    }
}

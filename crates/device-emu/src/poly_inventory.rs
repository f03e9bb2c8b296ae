//! What the emulated Poly codec says about itself: `whoami` and `status` of the Telnet API.
//!
//! Decided here ([I], docs/drivers.md), after the HDX / Group Series integrator manuals'
//! examples:
//! - `whoami`: `Hi, my name is : <name>`, `Here is what I know about myself:`, then
//!   `Key: value` lines: `Model: Group 500`, `Serial Number:`, `Software Version: Release
//!   6.2.2.4-520003` (or `Release <version>` set by the control surface), `Build Information:`,
//!   `Contact Number:`, call counters, `Network Interface: NONE`, `IP Video Number:` and
//!   `IP Address:` (the device's address), `MAC Address:` (lower case), `H323 Enabled:`,
//!   `HTTP Enabled:`, `SNMP Enabled:`. The manuals show no end marker: the last line is
//!   `SNMP Enabled: True`. No uptime, no release date.
//! - `status`: one `<item> online|offline` line per item, then `status end`; the items are
//!   the manual's (`autoanswerp2p`, `remotecontrol`, `microphones`, `visualboard`,
//!   `globaldirectory`, `ipnetwork`, `gatekeeper`, `sipserver`, `logthreshold`,
//!   `meetingpassword`, `rpms`) plus `camera`; `remotecontrol`, `microphones` and `camera` are
//!   the peripherals and go `offline` when the control surface disconnects them.

use crate::device::Device;
use crate::inventory::{self, POLY_PERIPHERALS};

/// The software version when the control surface set none.
pub const DEFAULT_VERSION: &str = "6.2.2.4-520003";
/// The model `whoami` reports.
pub const MODEL: &str = "Group 500";

/// The codec's system name: `Poly` and the address's octets (`Poly-127-77-20-1`) until
/// `systemname set` changes it (`crate::poly_config`).
pub fn system_name(device: &Device) -> String {
    crate::poly_config::system_name(device)
}

/// `whoami`'s answer lines.
pub fn whoami(device: &Device) -> Vec<String> {
    let version = device
        .software
        .as_ref()
        .map_or(DEFAULT_VERSION, |s| s.version.as_str());
    let address = &device.address;
    vec![
        format!("Hi, my name is : {}", system_name(device)),
        "Here is what I know about myself:".into(),
        format!("Model: {MODEL}"),
        format!("Serial Number: {}", inventory::poly_serial(address)),
        format!("Software Version: Release {version}"),
        "Build Information: root on build-6x 2020-06-18".into(),
        "Contact Number: ".into(),
        "Time In Last Call: 0:00:00".into(),
        "Total Time In Calls: 0:00:00".into(),
        format!("Total Calls: {}", device.dial_count),
        "Network Interface: NONE".into(),
        format!("IP Video Number: {address}"),
        format!("IP Address: {address}"),
        format!(
            "MAC Address: {}",
            inventory::mac(address).to_ascii_lowercase()
        ),
        "H323 Enabled: True".into(),
        "HTTP Enabled: True".into(),
        "SNMP Enabled: True".into(),
    ]
}

/// `status`'s answer lines, ending with `status end`.
pub fn status(device: &Device) -> Vec<String> {
    let fixed = [
        ("autoanswerp2p", "offline"),
        ("visualboard", "offline"),
        ("globaldirectory", "online"),
        ("ipnetwork", "online"),
        ("gatekeeper", "offline"),
        ("sipserver", "online"),
        ("logthreshold", "offline"),
        ("meetingpassword", "offline"),
        ("rpms", "offline"),
    ];
    let mut lines = vec![format!("{} {}", fixed[0].0, fixed[0].1)];
    for item in POLY_PERIPHERALS {
        let state = if device.peripheral_connected(item) {
            "online"
        } else {
            "offline"
        };
        lines.push(format!("{item} {state}"));
    }
    lines.extend(
        fixed[1..]
            .iter()
            .map(|(item, state)| format!("{item} {state}")),
    );
    lines.push("status end".into());
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn whoami_and_status_follow_the_device() {
        let mut d = Device::new("admin", "pw", Duration::ZERO);
        d.address = "127.77.30.1".into();
        let who = whoami(&d);
        assert_eq!(who[0], "Hi, my name is : Poly-127-77-30-1");
        assert!(who.contains(&"MAC Address: 02:00:7f:4d:1e:01".to_owned()));
        assert!(who.contains(&"Software Version: Release 6.2.2.4-520003".to_owned()));
        assert_eq!(who.last().map(String::as_str), Some("SNMP Enabled: True"));
        d.disconnected_peripherals.insert("camera".into());
        let status = status(&d);
        assert!(status.contains(&"camera offline".to_owned()));
        assert!(status.contains(&"microphones online".to_owned()));
        assert_eq!(status.last().map(String::as_str), Some("status end"));
    }
}

//! The parts of the emulated Cisco codec's `<Status>` tree that say what the codec is:
//! `SystemUnit` (product, software, serial number, uptime), `Network[1]` (addresses),
//! `Peripherals ConnectedDevice[n]` and `Cameras Camera[n]`, shaped as a CE 9.x codec answers
//! `xStatus` (element names and order of the CE 9 API reference guide).
//!
//! Decided here ([I], docs/drivers.md): the product is a Room Kit (CE) or an SX20 (TC);
//! `Software Name` `s53200`/`s52020`; release dates 2024-02-29 (CE 9.15.17.4, as its display
//! name) and 2020-03-12 (TC 7.3.21); `IPv6 Address` empty (not configured); a disconnected
//! peripheral's `Status` is `ResponseTimedOut` and its camera's `Connected` is `False`;
//! peripherals' `SoftwareInfo` is the codec's version; the camera is both a connected device
//! and `Camera 1`, with the same serial number.

use crate::cisco_firmware::Firmware;
use crate::device::Device;
use crate::inventory;
use crate::xml::Element;

/// The software the codec reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Software {
    pub version: String,
    pub display_name: String,
    pub release_date: String,
    pub name: &'static str,
}

/// The firmware's software, or what the control surface set in its place.
pub fn software(device: &Device, firmware: Firmware) -> Software {
    let (release_date, name) = match firmware {
        Firmware::Ce => ("2024-02-29", "s53200"),
        Firmware::Tc => ("2020-03-12", "s52020"),
    };
    match &device.software {
        Some(set) => Software {
            version: set.version.clone(),
            display_name: set.version.clone(),
            release_date: set
                .release_date
                .clone()
                .unwrap_or_else(|| release_date.to_owned()),
            name,
        },
        None => Software {
            version: firmware.version().to_owned(),
            display_name: firmware.display_name().to_owned(),
            release_date: release_date.to_owned(),
            name,
        },
    }
}

/// `SystemUnit`, with the call `State` the caller computed.
pub fn system_unit(device: &Device, firmware: Firmware, state: Element) -> Element {
    let (product_id, platform) = firmware.product();
    let software = software(device, firmware);
    Element::new("SystemUnit")
        .child(
            Element::new("Hardware").child(Element::new("Module").child(Element::leaf(
                "SerialNumber",
                inventory::cisco_serial(&device.address, 0),
            ))),
        )
        .child(Element::leaf("ProductId", product_id))
        .child(Element::leaf("ProductPlatform", platform))
        .child(Element::leaf("ProductType", "Cisco Codec"))
        .child(
            Element::new("Software")
                .child(Element::leaf("DisplayName", software.display_name))
                .child(Element::leaf("Name", software.name))
                .child(Element::leaf("ReleaseDate", software.release_date))
                .child(Element::leaf("Version", software.version)),
        )
        .child(state)
        .child(Element::leaf("Uptime", device.uptime_secs().to_string()))
}

/// `Network[1]`: the device's own address and MAC address.
pub fn network(device: &Device) -> Element {
    Element::new("Network")
        .attr("item", "1")
        .attr("maxOccurrence", "1")
        .child(
            Element::new("Ethernet")
                .child(Element::leaf("MacAddress", inventory::mac(&device.address)))
                .child(Element::leaf("Speed", "1000full")),
        )
        .child(
            Element::new("IPv4")
                .child(Element::leaf("Address", device.address.clone()))
                .child(Element::leaf("Gateway", ""))
                .child(Element::leaf("SubnetMask", "255.255.255.0")),
        )
        .child(
            Element::new("IPv6")
                .child(Element::leaf("Address", ""))
                .child(Element::leaf("Gateway", "")),
        )
}

/// `Peripherals`: one `ConnectedDevice` per peripheral.
pub fn peripherals(device: &Device, firmware: Firmware) -> Element {
    let version = software(device, firmware).version;
    let mut peripherals = Element::new("Peripherals");
    for p in inventory::cisco_peripherals(&device.address) {
        let status = if device.peripheral_connected(&p.id) {
            "Connected"
        } else {
            "ResponseTimedOut"
        };
        peripherals = peripherals.child(
            Element::new("ConnectedDevice")
                .attr("item", p.item.to_string())
                .attr("maxOccurrence", "n")
                .child(Element::leaf("HardwareInfo", p.hardware))
                .child(Element::leaf("ID", p.id))
                .child(Element::leaf("Name", p.name))
                .child(Element::leaf("SerialNumber", p.serial))
                .child(Element::leaf("SoftwareInfo", version.clone()))
                .child(Element::leaf("Status", status))
                .child(Element::leaf("Type", p.kind))
                .child(Element::leaf("UpgradeStatus", "None")),
        );
    }
    peripherals
}

/// `Cameras`: the camera peripherals, as `Camera[n]`.
pub fn cameras(device: &Device) -> Element {
    let mut cameras = Element::new("Cameras");
    let all = inventory::cisco_peripherals(&device.address);
    for (n, p) in all.iter().filter(|p| p.kind == "Camera").enumerate() {
        let connected = if device.peripheral_connected(&p.id) {
            "True"
        } else {
            "False"
        };
        cameras = cameras.child(
            Element::new("Camera")
                .attr("item", (n + 1).to_string())
                .attr("maxOccurrence", "n")
                .child(Element::new("Capabilities").child(Element::leaf("Options", "ptzf")))
                .child(Element::leaf("Connected", connected))
                .child(Element::leaf("Flip", "Off"))
                .child(Element::leaf("HardwareID", "58020001"))
                .child(Element::leaf("MacAddress", ""))
                .child(Element::leaf("Manufacturer", "Cisco"))
                .child(Element::leaf("Model", p.name))
                .child(Element::leaf("SerialNumber", p.serial.clone()))
                .child(Element::leaf("SoftwareID", "HC9.15.17")),
        );
    }
    cameras
}

#[cfg(test)]
mod tests {
    use crate::cisco_firmware::Firmware;
    use crate::cisco_tsh::{self, Shell};
    use crate::cisco_xapi::{Role, select, status_tree};
    use crate::device::{Device, Fault, Software};
    use std::time::Duration;

    fn device() -> Device {
        let mut d = Device::new("admin", "pw", Duration::ZERO);
        d.address = "127.77.20.1".into();
        d
    }

    fn text(tree: &crate::xml::Element, location: &str) -> String {
        select(tree, location, Role::Admin)
            .expect("selected")
            .to_xml()
    }

    #[test]
    fn system_unit_network_peripherals_and_cameras_answer_getxml() {
        let mut d = device();
        let tree = status_tree(&d, Firmware::Ce, Role::Admin);
        let unit = text(&tree, "/Status/SystemUnit");
        for part in [
            "<ProductId>Cisco Webex Room Kit</ProductId>",
            "<ProductPlatform>Room Kit</ProductPlatform>",
            "<Version>ce9.15.17.4.4c8b7f1a3e2</Version>",
            "<ReleaseDate>2024-02-29</ReleaseDate>",
        ] {
            assert!(unit.contains(part), "{part} in {unit}");
        }
        assert!(unit.contains(&format!(
            "<Hardware><Module><SerialNumber>{}</SerialNumber>",
            crate::inventory::cisco_serial("127.77.20.1", 0)
        )));
        assert!(unit.contains("<Uptime>"));
        let network = text(&tree, "/Status/Network");
        assert!(network.contains("<Network item=\"1\" maxOccurrence=\"1\">"));
        assert!(network.contains("<MacAddress>02:00:7F:4D:14:01</MacAddress>"));
        assert!(network.contains("<IPv4><Address>127.77.20.1</Address>"));
        let peripherals = text(&tree, "/Status/Peripherals");
        assert_eq!(peripherals.matches("<Status>Connected</Status>").count(), 3);
        assert!(peripherals.contains("<Type>TouchPanel</Type>"));
        assert!(text(&tree, "/Status/Cameras").contains("<Connected>True</Connected>"));

        d.disconnected_peripherals
            .insert("02:02:7F:4D:14:01".into());
        d.software = Some(Software {
            version: "ce9.15.18.5.1a2b3c4d5e6".into(),
            release_date: Some("2024-06-12".into()),
        });
        let tree = status_tree(&d, Firmware::Ce, Role::Admin);
        let peripherals = text(&tree, "/Status/Peripherals");
        assert!(peripherals.contains("<Status>ResponseTimedOut</Status><Type>Camera</Type>"));
        assert!(text(&tree, "/Status/Cameras").contains("<Connected>False</Connected>"));
        let unit = text(&tree, "/Status/SystemUnit/Software");
        assert!(unit.contains("<Version>ce9.15.18.5.1a2b3c4d5e6</Version>"));
        assert!(unit.contains("<ReleaseDate>2024-06-12</ReleaseDate>"));
    }

    #[test]
    fn an_integrator_reads_all_but_the_network() {
        let d = device();
        let tree = status_tree(&d, Firmware::Ce, Role::Integrator);
        let denied = select(&tree, "/Status/Network", Role::Integrator).expect_err("refused");
        assert!(denied.to_xml().contains("Permission denied"));
        for part in [
            "/Status/SystemUnit",
            "/Status/Peripherals",
            "/Status/Cameras",
        ] {
            assert!(select(&tree, part, Role::Integrator).is_ok(), "{part}");
        }
    }

    #[test]
    fn the_shell_answers_xstatus_in_both_notations() {
        let mut d = device();
        let mut shell = Shell::default();
        let out = cisco_tsh::answer("xStatus SystemUnit", &mut shell, &mut d);
        assert!(
            out.contains("*s SystemUnit ProductId: \"Cisco Webex Room Kit\"\r\n"),
            "{out}"
        );
        assert!(out.contains("*s SystemUnit Software ReleaseDate: \"2024-02-29\"\r\n"));
        let out = cisco_tsh::answer("xStatus Peripherals", &mut shell, &mut d);
        assert!(out.contains("*s Peripherals ConnectedDevice 1001 Type: TouchPanel\r\n"));
        assert!(out.contains("*s Peripherals ConnectedDevice 1001 Status: Connected\r\n"));
        let out = cisco_tsh::answer("xStatus SystemUnit Uptime", &mut shell, &mut d);
        let uptime = out
            .strip_prefix("*s SystemUnit Uptime: ")
            .and_then(|rest| rest.strip_suffix("\r\n** end\r\n"))
            .expect("one bare number");
        assert!(uptime.parse::<u64>().is_ok(), "{out}");
        let out = cisco_tsh::answer("xStatus Network", &mut shell, &mut d);
        assert!(out.contains("*s Network 1 IPv4 Address: \"127.77.20.1\"\r\n"));
        shell.json = true;
        let out = cisco_tsh::answer("xStatus Cameras", &mut shell, &mut d);
        let v: serde_json::Value = serde_json::from_str(&out).expect("json");
        assert_eq!(
            v["Status"]["Cameras"]["Camera"][0]["Connected"]["Value"],
            "True"
        );
        d.faults.insert(Fault::IntegratorRole);
        let out = cisco_tsh::answer("xStatus Network", &mut shell, &mut d);
        assert!(out.contains("Permission denied"), "{out}");
    }
}

//! `readinventory` for both Cisco drivers: four status reads, `SystemUnit`, `Network`,
//! `Peripherals` and `Cameras`, each turned into the listener's element tree (HTTP: the
//! `getxml` document; SSH: the JSON answer, see [`status_node`]) and read here once.
//!
//! A part the codec refuses (`Permission denied` for a role, `No match on address expression`
//! on firmware without it) leaves its fields in `notReported`; it never fails the whole read.
//! Cameras are listed besides the connected devices unless a connected device has the same
//! serial number (a camera can be both).

use super::inventory::{self as common, field};
use crate::xml::Element as Node;
use roomlink_listener_protocol::wire::{WireInventory, WirePeripheral};
use serde_json::Value;

/// One status read of an inventory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    SystemUnit,
    Network,
    Peripherals,
    Cameras,
}

impl Part {
    pub const ALL: [Part; 4] = [
        Part::SystemUnit,
        Part::Network,
        Part::Peripherals,
        Part::Cameras,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Part::SystemUnit => "SystemUnit",
            Part::Network => "Network",
            Part::Peripherals => "Peripherals",
            Part::Cameras => "Cameras",
        }
    }

    /// The `getxml` location.
    pub fn location(self) -> String {
        format!("/Status/{}", self.name())
    }

    /// The SSH shell's line.
    pub fn xstatus(self) -> String {
        format!("xStatus {}", self.name())
    }

    /// The inventory fields this part is the only source of.
    fn fields(self) -> &'static [&'static str] {
        match self {
            Part::SystemUnit => &[
                field::PRODUCT,
                field::MODEL,
                field::SERIAL_NUMBER,
                field::SOFTWARE_VERSION,
                field::SOFTWARE_RELEASE_DATE,
                field::UPTIME_SECONDS,
            ],
            Part::Network => &[field::ADDRESSES],
            Part::Peripherals => &[field::PERIPHERALS],
            // Cameras add to the connected devices; alone they are not the whole list.
            Part::Cameras => &[],
        }
    }
}

/// The inventory from each part's `<Status>` document, or the reason the codec refused it.
pub fn inventory(readings: &[(Part, Result<Node, String>)]) -> WireInventory {
    let mut inventory = WireInventory {
        vendor: Some("Cisco".into()),
        ..WireInventory::default()
    };
    for (part, document) in readings {
        match document {
            Ok(status) => match part {
                Part::SystemUnit => system_unit(status, &mut inventory),
                Part::Network => network(status, &mut inventory),
                Part::Peripherals => connected_devices(status, &mut inventory),
                Part::Cameras => cameras(status, &mut inventory),
            },
            Err(_) => common::not_reported(&mut inventory, part.fields()),
        }
    }
    common::capped(inventory)
}

fn text(node: &Node, path: &[&str]) -> Option<String> {
    node.text_at(path).and_then(common::said)
}

fn system_unit(status: &Node, inventory: &mut WireInventory) {
    let unit = ["SystemUnit"];
    let at = |rest: &[&str]| text(status, &[&unit[..], rest].concat());
    inventory.product = at(&["ProductId"]);
    inventory.model = at(&["ProductPlatform"]);
    inventory.serial_number = at(&["Hardware", "Module", "SerialNumber"]);
    inventory.software_version = at(&["Software", "Version"]);
    inventory.software_release_date =
        at(&["Software", "ReleaseDate"]).and_then(|d| common::release_date(&d));
    inventory.uptime_seconds = at(&["Uptime"]).and_then(|u| u.parse().ok());
}

fn network(status: &Node, inventory: &mut WireInventory) {
    for network in status.find_all(&["Network"]) {
        for (kind, path) in [
            ("ipv4", ["IPv4", "Address"]),
            ("ipv6", ["IPv6", "Address"]),
            ("mac", ["Ethernet", "MacAddress"]),
        ] {
            if let Some(value) = network.text_at(&path) {
                common::add_address(inventory, kind, value);
            }
        }
    }
}

/// The wire's kind of a `ConnectedDevice` `Type`.
pub fn kind_of(cisco_type: &str) -> &'static str {
    match cisco_type.to_ascii_lowercase().as_str() {
        "touchpanel" | "roomscheduler" => common::TOUCH_PANEL,
        "camera" | "speakertrack" => common::CAMERA,
        "audiomicrophone" | "microphone" => common::MICROPHONE,
        "audioamplifier" | "audiospeaker" | "speaker" => common::SPEAKER,
        "controlsystem" => common::CONTROL_SYSTEM,
        "display" | "monitor" => common::DISPLAY,
        _ => common::OTHER,
    }
}

fn connected_devices(status: &Node, inventory: &mut WireInventory) {
    for device in status.find_all(&["Peripherals", "ConnectedDevice"]) {
        let status_text = device.text_at(&["Status"]).unwrap_or("");
        inventory.peripherals.push(WirePeripheral {
            kind: kind_of(device.text_at(&["Type"]).unwrap_or("")).to_owned(),
            id: text(device, &["ID"]),
            name: text(device, &["Name"]),
            model: text(device, &["HardwareInfo"]),
            serial_number: text(device, &["SerialNumber"]),
            software_version: text(device, &["SoftwareInfo"]),
            connected: status_text.eq_ignore_ascii_case("Connected"),
        });
    }
}

fn cameras(status: &Node, inventory: &mut WireInventory) {
    for camera in status.find_all(&["Cameras", "Camera"]) {
        let serial = text(camera, &["SerialNumber"]);
        let listed = serial.as_ref().is_some_and(|s| {
            inventory
                .peripherals
                .iter()
                .any(|p| p.serial_number.as_ref() == Some(s))
        });
        if listed {
            continue;
        }
        inventory.peripherals.push(WirePeripheral {
            kind: common::CAMERA.to_owned(),
            id: camera.attr("item").and_then(common::said),
            name: text(camera, &["Model"]),
            model: text(camera, &["Model"]),
            serial_number: serial,
            software_version: text(camera, &["SoftwareID"]),
            connected: camera
                .text_at(&["Connected"])
                .is_some_and(|c| c.eq_ignore_ascii_case("True")),
        });
    }
}

/// The `<Status>` tree of an SSH `{"Status": {...}}` answer: objects are elements, `Value`
/// their text, `id` an array entry's `item`, other strings attributes.
pub fn status_node(answer: &Value) -> Option<Node> {
    let status = answer.get("Status")?;
    json_nodes("Status", status).into_iter().next()
}

fn json_nodes(name: &str, value: &Value) -> Vec<Node> {
    let node = |text: String| Node {
        name: name.to_owned(),
        text,
        ..Node::default()
    };
    match value {
        Value::Array(items) => items.iter().flat_map(|i| json_nodes(name, i)).collect(),
        Value::Object(map) => {
            let mut element = node(String::new());
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("Value", Value::String(text)) => element.text = text.clone(),
                    ("Value", other) => element.text = other.to_string(),
                    ("id", Value::String(item)) => {
                        element.attrs.push(("item".into(), item.clone()))
                    }
                    (_, Value::String(attr)) => element.attrs.push((key.clone(), attr.clone())),
                    _ => element.children.extend(json_nodes(key, value)),
                }
            }
            vec![element]
        }
        Value::String(text) => vec![node(text.clone())],
        Value::Null => vec![],
        other => vec![node(other.to_string())],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::xml::parse;
    use serde_json::json;

    const UNIT: &str = "<Status product=\"Cisco Codec\"><SystemUnit><Hardware><Module><SerialNumber>FOC12345678</SerialNumber></Module></Hardware><ProductId>Cisco Webex Room Kit</ProductId><ProductPlatform>Room Kit</ProductPlatform><Software><ReleaseDate>2024-02-29</ReleaseDate><Version>ce9.15.17.4</Version></Software><Uptime>4711</Uptime></SystemUnit></Status>";
    const PERIPHERALS: &str = "<Status><Peripherals><ConnectedDevice item=\"1001\"><HardwareInfo>Touch 10</HardwareInfo><ID>02:01:00:00:00:01</ID><Name>Cisco TelePresence Touch</Name><SoftwareInfo>ce9.15.17.4</SoftwareInfo><Status>Connected</Status><Type>TouchPanel</Type></ConnectedDevice><ConnectedDevice item=\"1002\"><ID>cam</ID><SerialNumber>FOC0000CAM1</SerialNumber><Status>ResponseTimedOut</Status><Type>Camera</Type></ConnectedDevice><ConnectedDevice item=\"1003\"><Type>Byod</Type><Status>Connected</Status></ConnectedDevice></Peripherals></Status>";
    const CAMERAS: &str = "<Status><Cameras><Camera item=\"1\"><Connected>False</Connected><Model>Quad</Model><SerialNumber>FOC0000CAM1</SerialNumber></Camera><Camera item=\"2\"><Connected>True</Connected><Model>Precision 60</Model><SerialNumber>FOC0000CAM2</SerialNumber><SoftwareID>HC1</SoftwareID></Camera></Cameras></Status>";

    fn doc(xml: &str) -> Result<Node, String> {
        Ok(parse(xml).expect("xml"))
    }

    #[test]
    fn the_four_documents_make_one_inventory() {
        let network = "<Status><Network item=\"1\"><Ethernet><MacAddress>02:00:7F:00:00:01</MacAddress></Ethernet><IPv4><Address>10.1.2.3</Address></IPv4><IPv6><Address></Address></IPv6></Network></Status>";
        let got = inventory(&[
            (Part::SystemUnit, doc(UNIT)),
            (Part::Network, doc(network)),
            (Part::Peripherals, doc(PERIPHERALS)),
            (Part::Cameras, doc(CAMERAS)),
        ]);
        assert_eq!(got.vendor.as_deref(), Some("Cisco"));
        assert_eq!(got.product.as_deref(), Some("Cisco Webex Room Kit"));
        assert_eq!(got.model.as_deref(), Some("Room Kit"));
        assert_eq!(got.serial_number.as_deref(), Some("FOC12345678"));
        assert_eq!(got.software_version.as_deref(), Some("ce9.15.17.4"));
        assert_eq!(got.software_release_date.as_deref(), Some("2024-02-29"));
        assert_eq!(got.uptime_seconds, Some(4711));
        let addresses: Vec<(&str, &str)> = got
            .addresses
            .iter()
            .map(|a| (a.kind.as_str(), a.value.as_str()))
            .collect();
        assert_eq!(
            addresses,
            [("ipv4", "10.1.2.3"), ("mac", "02:00:7F:00:00:01")]
        );
        let kinds: Vec<(&str, bool)> = got
            .peripherals
            .iter()
            .map(|p| (p.kind.as_str(), p.connected))
            .collect();
        // The first camera is a connected device already; the second is added.
        assert_eq!(
            kinds,
            [
                ("touchPanel", true),
                ("camera", false),
                ("other", true),
                ("camera", true)
            ]
        );
        assert_eq!(got.peripherals[0].model.as_deref(), Some("Touch 10"));
        assert_eq!(got.peripherals[3].software_version.as_deref(), Some("HC1"));
        assert!(got.not_reported.is_empty());
    }

    #[test]
    fn refused_parts_are_not_reported_and_the_rest_is_read() {
        let got = inventory(&[
            (Part::SystemUnit, doc(UNIT)),
            (Part::Network, Err("Permission denied".into())),
            (
                Part::Peripherals,
                Err("No match on address expression.".into()),
            ),
            (Part::Cameras, doc(CAMERAS)),
        ]);
        assert_eq!(got.not_reported, ["addresses", "peripherals"]);
        assert!(got.addresses.is_empty());
        assert_eq!(got.peripherals.len(), 2, "cameras are still listed");
        assert_eq!(got.serial_number.as_deref(), Some("FOC12345678"));
    }

    #[test]
    fn ssh_json_answers_become_the_same_tree() {
        let answer = json!({"Status": {"Peripherals": {"ConnectedDevice": [
            {"id": "1001", "ID": {"Value": "02:01"}, "Status": {"Value": "Connected"},
             "Type": {"Value": "TouchPanel"}, "Name": {"Value": "Navigator"}}]},
            "SystemUnit": {"Uptime": {"Value": 99}}}, "ResultId": "roomlink-3"});
        let node = status_node(&answer).expect("status");
        assert_eq!(node.name, "Status");
        let got = inventory(&[
            (Part::Peripherals, Ok(node.clone())),
            (Part::SystemUnit, Ok(node)),
        ]);
        assert_eq!(got.peripherals[0].id.as_deref(), Some("02:01"));
        assert_eq!(got.peripherals[0].kind, "touchPanel");
        assert!(got.peripherals[0].connected);
        assert_eq!(got.uptime_seconds, Some(99));
        assert!(status_node(&json!({"CommandResponse": {}})).is_none());
    }

    #[test]
    fn vendor_types_map_onto_the_wire_kinds() {
        for (cisco, wire) in [
            ("TouchPanel", "touchPanel"),
            ("RoomScheduler", "touchPanel"),
            ("Camera", "camera"),
            ("AudioMicrophone", "microphone"),
            ("AudioAmplifier", "speaker"),
            ("ControlSystem", "controlSystem"),
            ("InputDevice", "other"),
        ] {
            assert_eq!(kind_of(cisco), wire, "{cisco}");
        }
    }
}

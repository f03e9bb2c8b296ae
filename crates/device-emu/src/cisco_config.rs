//! The emulated Cisco codec's configuration (issue #36): the values it holds for the
//! `xConfiguration` paths the listener's template mapping writes, set and read over HTTP
//! (`putxml` `<Configuration>` documents, `getxml?location=/Configuration/…`) and over SSH
//! (`xConfiguration Path: value`, `xConfiguration Path`), every write checked against Cisco's
//! published schemas (`cisco_schema::check_configuration`, with the user's role).
//!
//! Decisions ([I] unless a source is named; kept in docs/drivers.md):
//! - Defaults, plausible for a codec out of the box: `Time Zone` `Etc/UTC`, `Standby Delay`
//!   10, `Audio DefaultVolume` 50, `SIP DisplayName` empty, `Proximity Mode` On,
//!   `Conference AutoAnswer Mode`/`Mute` Off, `UserInterface OSD HalfwakeMessage` empty,
//!   `SystemUnit Name` `Cisco-` and the address's octets (`Cisco-127-77-36-1`).
//! - Three configurations no template key maps, for raw Cisco paths (issue #36's escape hatch),
//!   with the schemas' defaults: `Audio SoundsAndAlerts RingVolume` 50, `Audio Ultrasound
//!   MaxVolume` 70, `UserInterface Language` English. Their `valueSpaceRef` names
//!   (`INT_0_90`, `TTPAR_Language`) follow the recorded ones' pattern; no recording shows them.
//! - Paths compare without regard to case and are stored in the schema's spelling; only the
//!   paths below exist (the schema subset holds no others): any other is "No match on address
//!   expression" (the reason of the refused `xGet` that cisco-ce/jsxapi's tests recorded).
//! - A refused write gives the reason `Permission denied` (the role may not write the path) or
//!   `Illegal value` (outside the value space; Aldaviva/CSxAPI names the WebSocket API's error
//!   cause 27 "illegal value", device-drivers.md §1.4), with the path as `XPath`
//!   (`Configuration/Audio/DefaultVolume`).
//! - A `putxml` document is checked whole before anything is stored: one refused leaf refuses
//!   the document and nothing of it is applied. Its answer is `<Configuration/>` when stored,
//!   else `<Command><Configuration status="Error"><Reason>…</Reason><XPath>…</XPath>
//!   </Configuration></Command>`, the XML form of the JSON refusal below.
//! - `getxml` answers `<Configuration product="Cisco Codec" version=… apiVersion="4">` with the
//!   selected subtree, each leaf carrying `valueSpaceRef` as AVI-SPL's recorded ce 9.1
//!   `configuration.xml` shows (`/Valuespace/INT_0_100`, `TTPAR_OnOff`, ...); an unknown
//!   location is the status reads' `<Fault><XPathError>` with "No match on address expression.".
//! - SSH (answered in `crate::cisco_tsh`), JSON mode: a stored write answers only its
//!   `ResultId` (the successful `xSet` that cisco-ce/jsxapi recorded); a refusal answers `{"CommandResponse": {"Configuration":
//!   {"status": "Error", "Reason": {"Value": …}, "XPath": {"Value": …}}}}` (the shape jsxapi
//!   recorded for a refused `xGet` of a configuration); a read answers
//!   `{"Configuration": {"Audio": {"DefaultVolume": {"Value": "70"}}}}` like status reads.
//!   Terminal mode: `*c xConfiguration Audio DefaultVolume: 70` lines and `** end`.

use crate::cisco_firmware::Firmware;
use crate::cisco_inventory;
use crate::cisco_schema::{self, Violation};
use crate::cisco_xapi::Role;
use crate::device::Device;
use crate::xml::Element;
use std::collections::BTreeMap;

/// One configuration the emulated codec holds.
struct Entry {
    /// The path as the schemas spell it.
    path: &'static [&'static str],
    value_space_ref: &'static str,
    /// The default; `None`: derived from the device (`SystemUnit Name`).
    default: Option<&'static str>,
}

/// Every configuration the emulated codec has, in the order `getxml` lists them.
const ENTRIES: &[Entry] = &[
    Entry {
        path: &["Audio", "DefaultVolume"],
        value_space_ref: "/Valuespace/INT_0_100",
        default: Some("50"),
    },
    Entry {
        path: &["Audio", "SoundsAndAlerts", "RingVolume"],
        value_space_ref: "/Valuespace/INT_0_100",
        default: Some("50"),
    },
    Entry {
        path: &["Audio", "Ultrasound", "MaxVolume"],
        value_space_ref: "/Valuespace/INT_0_90",
        default: Some("70"),
    },
    Entry {
        path: &["Conference", "AutoAnswer", "Mode"],
        value_space_ref: "/Valuespace/TTPAR_OnOff",
        default: Some("Off"),
    },
    Entry {
        path: &["Conference", "AutoAnswer", "Mute"],
        value_space_ref: "/Valuespace/TTPAR_OnOff",
        default: Some("Off"),
    },
    Entry {
        path: &["Proximity", "Mode"],
        value_space_ref: "/Valuespace/TTPAR_OnOff",
        default: Some("On"),
    },
    Entry {
        path: &["SIP", "DisplayName"],
        value_space_ref: "/Valuespace/STR_0_550_NoFilt",
        default: Some(""),
    },
    Entry {
        path: &["Standby", "Delay"],
        value_space_ref: "/Valuespace/INT_1_480",
        default: Some("10"),
    },
    Entry {
        path: &["SystemUnit", "Name"],
        value_space_ref: "/Valuespace/STR_0_50_NoFilt",
        default: None,
    },
    Entry {
        path: &["Time", "Zone"],
        value_space_ref: "/Valuespace/TTPAR_OlsonTimeZone",
        default: Some("Etc/UTC"),
    },
    Entry {
        path: &["UserInterface", "Language"],
        value_space_ref: "/Valuespace/TTPAR_Language",
        default: Some("English"),
    },
    Entry {
        path: &["UserInterface", "OSD", "HalfwakeMessage"],
        value_space_ref: "/Valuespace/STR_0_128_NoFilt",
        default: Some(""),
    },
];

pub const NO_MATCH: &str = "No match on address expression";

/// Why the codec refused a configuration write or read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub reason: String,
    /// `Configuration/Audio/DefaultVolume`.
    pub xpath: String,
}

fn entry(path: &[String]) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| {
        e.path.len() == path.len()
            && e.path
                .iter()
                .zip(path)
                .all(|(a, b)| a.eq_ignore_ascii_case(b))
    })
}

pub fn xpath(path: &[String]) -> String {
    format!("Configuration/{}", path.join("/"))
}

/// The value the device holds at `entry`'s path.
fn value_of(device: &Device, entry: &Entry) -> String {
    let key = entry.path.join(" ");
    if let Some(value) = device.configuration.get(&key) {
        return value.clone();
    }
    match entry.default {
        Some(default) => default.to_owned(),
        None => format!("Cisco-{}", device.address.replace(['.', ':'], "-")),
    }
}

/// Every configuration the device holds (`Audio DefaultVolume` → `50`), for the control
/// surface's view.
pub fn view(device: &Device) -> BTreeMap<String, String> {
    ENTRIES
        .iter()
        .map(|e| (e.path.join(" "), value_of(device, e)))
        .collect()
}

/// Checks writing `value` to `path` as `role`: the schemas of every generation must accept.
fn check(path: &[String], value: &str, role: Role) -> Result<&'static Entry, Refused> {
    let refused = |reason: &str| Refused {
        reason: reason.to_owned(),
        xpath: xpath(path),
    };
    let entry = entry(path).ok_or_else(|| refused(NO_MATCH))?;
    let words: Vec<String> = entry.path.iter().map(|w| (*w).to_owned()).collect();
    match cisco_schema::check_configuration(&words, value, role.schema_name()) {
        Ok(()) => Ok(entry),
        Err(refusal) => {
            tracing::info!(%refusal, path = %words.join(" "), "configuration refused");
            Err(refused(match refusal.violation {
                Violation::RoleMayNot(_) => "Permission denied",
                Violation::UnknownPath => NO_MATCH,
                _ => "Illegal value",
            }))
        }
    }
}

/// Writes every `(path, value)` when all are accepted; else the first refusal and nothing is
/// stored.
pub fn write(device: &mut Device, writes: &[(Vec<String>, String)]) -> Result<(), Refused> {
    let role = Role::of(device);
    let mut accepted = Vec::with_capacity(writes.len());
    for (path, value) in writes {
        accepted.push((check(path, value, role)?, value));
    }
    device.commands += 1;
    for (entry, value) in accepted {
        device
            .configuration
            .insert(entry.path.join(" "), value.clone());
    }
    Ok(())
}

/// The leaves of a `putxml` `<Configuration>` document as paths and values.
pub fn leaves(doc: &Element) -> Vec<(Vec<String>, String)> {
    fn walk(node: &Element, path: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
        path.push(node.name.clone());
        if node.children.is_empty() {
            out.push((path.clone(), node.text.clone()));
        } else {
            for child in &node.children {
                walk(child, path, out);
            }
        }
        path.pop();
    }
    let mut out = Vec::new();
    for child in &doc.children {
        walk(child, &mut Vec::new(), &mut out);
    }
    out
}

/// The answer to a `putxml` `<Configuration>` document.
pub fn putxml(doc: &Element, device: &mut Device) -> Element {
    let writes = leaves(doc);
    if writes.is_empty() {
        return refusal_xml(&Refused {
            reason: NO_MATCH.into(),
            xpath: "Configuration".into(),
        });
    }
    match write(device, &writes) {
        Ok(()) => Element::new("Configuration"),
        Err(refused) => refusal_xml(&refused),
    }
}

fn refusal_xml(refused: &Refused) -> Element {
    Element::new("Command").child(
        Element::new("Configuration")
            .attr("status", "Error")
            .child(Element::leaf("Reason", refused.reason.clone()))
            .child(Element::leaf("XPath", refused.xpath.clone())),
    )
}

/// The `<Configuration>` subtree at `path` (words after `Configuration`; empty: all), leaves
/// with `valueSpaceRef` when `with_refs`; `None` when nothing is there.
pub fn tree(device: &Device, path: &[String], with_refs: bool) -> Option<Element> {
    let firmware = Firmware::of(device);
    let mut root = Element::new("Configuration")
        .attr("product", "Cisco Codec")
        .attr(
            "version",
            cisco_inventory::software(device, firmware).version,
        )
        .attr("apiVersion", "4");
    for entry in ENTRIES.iter().filter(|e| {
        path.len() <= e.path.len()
            && e.path
                .iter()
                .zip(path)
                .all(|(a, b)| a.eq_ignore_ascii_case(b))
    }) {
        let mut leaf = Element::leaf(
            entry.path.last().copied().unwrap_or_default(),
            value_of(device, entry),
        );
        if with_refs {
            leaf = leaf.attr("valueSpaceRef", entry.value_space_ref);
        }
        insert(&mut root, &entry.path[..entry.path.len() - 1], leaf);
    }
    (!root.children.is_empty()).then_some(root)
}

fn insert(node: &mut Element, parents: &[&str], leaf: Element) {
    let Some((first, rest)) = parents.split_first() else {
        node.children.push(leaf);
        return;
    };
    let at = match node.children.iter().position(|c| c.name == *first) {
        Some(at) => at,
        None => {
            node.children.push(Element::new(first));
            node.children.len() - 1
        }
    };
    insert(&mut node.children[at], rest, leaf);
}

/// Path words of a `getxml` location under `/Configuration`; `None` when it is not one.
pub fn location_words(location: &str) -> Option<Vec<String>> {
    let mut words = location.split('/').filter(|w| !w.is_empty());
    let first = words.next()?;
    first
        .eq_ignore_ascii_case("Configuration")
        .then(|| words.map(str::to_owned).collect())
}

/// A `getxml` of a `/Configuration` location: the document, or the `<Fault>` to answer.
pub fn read(device: &Device, location: &str) -> Result<Element, Element> {
    let words = location_words(location).unwrap_or_default();
    tree(device, &words, true).ok_or_else(|| {
        Element::new("Fault").child(
            Element::new("XPathError")
                .child(Element::leaf("Reason", format!("{NO_MATCH}.")))
                .child(Element::leaf(
                    "XPath",
                    format!("/{}", location.trim_matches('/')),
                )),
        )
    })
}

/// Splits an SSH `xConfiguration` line's words (after `xConfiguration`) into the path and, for
/// a write, the value: the path ends at the word ending in `:`; the value is the rest (each
/// JSON-quoted word unquoted, words joined by one space).
pub fn ssh_words(words: &[String]) -> (Vec<String>, Option<String>) {
    let Some(end) = words.iter().position(|w| w.ends_with(':')) else {
        return (words.to_vec(), None);
    };
    let mut path = words[..=end].to_vec();
    if let Some(last) = path.last_mut() {
        last.pop();
        if last.is_empty() {
            path.pop();
        }
    }
    let value: Vec<String> = words[end + 1..]
        .iter()
        .map(|w| {
            if w.starts_with('"') {
                serde_json::from_str::<String>(w).unwrap_or_else(|_| w.trim_matches('"').into())
            } else {
                w.clone()
            }
        })
        .collect();
    (path, Some(value.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Fault;
    use std::time::Duration;

    fn device() -> Device {
        let mut d = Device::new("admin", "pw", Duration::ZERO);
        d.address = "127.77.0.9".into();
        d
    }

    fn words(path: &str) -> Vec<String> {
        path.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn defaults_and_the_name_from_the_address() {
        let d = device();
        let all = view(&d);
        assert_eq!(all["Audio DefaultVolume"], "50");
        assert_eq!(all["Time Zone"], "Etc/UTC");
        assert_eq!(all["Standby Delay"], "10");
        assert_eq!(all["Proximity Mode"], "On");
        assert_eq!(all["SystemUnit Name"], "Cisco-127-77-0-9");
        assert_eq!(all.len(), ENTRIES.len());
    }

    #[test]
    fn a_putxml_document_is_stored_whole_or_not_at_all() {
        let mut d = device();
        let doc = Element::parse(
            "<Configuration><Audio><DefaultVolume>70</DefaultVolume></Audio>\
             <conference><autoanswer><mode>on</mode></autoanswer></conference></Configuration>",
        )
        .unwrap();
        assert_eq!(putxml(&doc, &mut d).to_xml(), "<Configuration/>");
        assert_eq!(view(&d)["Audio DefaultVolume"], "70");
        assert_eq!(view(&d)["Conference AutoAnswer Mode"], "on");

        let bad = Element::parse(
            "<Configuration><Time><Zone>Europe/Oslo</Zone></Time>\
             <Standby><Delay>0</Delay></Standby></Configuration>",
        )
        .unwrap();
        assert_eq!(
            putxml(&bad, &mut d).to_xml(),
            "<Command><Configuration status=\"Error\"><Reason>Illegal value</Reason>\
             <XPath>Configuration/Standby/Delay</XPath></Configuration></Command>"
        );
        assert_eq!(view(&d)["Time Zone"], "Etc/UTC", "nothing of it stored");
    }

    #[test]
    fn roles_unknown_paths_and_value_spaces_are_refused() {
        let mut d = device();
        d.faults.insert(Fault::IntegratorRole);
        let refused = write(&mut d, &[(words("SystemUnit Name"), "x".into())]).unwrap_err();
        assert_eq!(refused.reason, "Permission denied");
        assert_eq!(refused.xpath, "Configuration/SystemUnit/Name");
        write(&mut d, &[(words("Audio DefaultVolume"), "0".into())]).unwrap();
        let unknown = write(&mut d, &[(words("Audio Foo"), "1".into())]).unwrap_err();
        assert_eq!(unknown.reason, NO_MATCH);
        let outside = write(&mut d, &[(words("Audio DefaultVolume"), "101".into())]);
        assert_eq!(outside.unwrap_err().reason, "Illegal value");
        let long = write(
            &mut d,
            &[(words("UserInterface OSD HalfwakeMessage"), "x".repeat(129))],
        );
        assert_eq!(long.unwrap_err().reason, "Illegal value");
    }

    #[test]
    fn getxml_selects_subtrees_with_value_space_refs() {
        let d = device();
        let one = read(&d, "/Configuration/Audio/DefaultVolume").unwrap();
        assert_eq!(one.attrs[0], ("product".into(), "Cisco Codec".into()));
        assert_eq!(
            one.children[0].to_xml(),
            "<Audio><DefaultVolume valueSpaceRef=\"/Valuespace/INT_0_100\">50</DefaultVolume></Audio>"
        );
        let conference = read(&d, "/configuration/Conference").unwrap();
        assert_eq!(conference.children[0].children[0].children.len(), 2);
        assert_eq!(read(&d, "/Configuration").unwrap().children.len(), 8);
        let fault = read(&d, "/Configuration/Audio/Foo").unwrap_err();
        assert!(fault.to_xml().contains("No match on address expression."));
    }

    #[test]
    fn ssh_words_split_path_and_value() {
        let line = |s: &str| -> Vec<String> { s.split(' ').map(str::to_owned).collect() };
        assert_eq!(
            ssh_words(&line("Audio DefaultVolume: 70")),
            (words("Audio DefaultVolume"), Some("70".into()))
        );
        assert_eq!(
            ssh_words(&["SIP".into(), "DisplayName:".into(), "\"Room 4\"".into()]).1,
            Some("Room 4".into())
        );
        assert_eq!(
            ssh_words(&line("SystemUnit Name: Room 4")).1,
            Some("Room 4".into())
        );
        assert_eq!(
            ssh_words(&line("Audio DefaultVolume")),
            (words("Audio DefaultVolume"), None)
        );
        assert_eq!(
            ssh_words(&["Time".into(), "Zone:".into(), "\"Europe/Oslo\"".into()]),
            (words("Time Zone"), Some("Europe/Oslo".into()))
        );
        assert_eq!(
            ssh_words(&["SIP".into(), "DisplayName:".into()]),
            (words("SIP DisplayName"), Some(String::new()))
        );
    }
}

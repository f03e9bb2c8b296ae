//! `readinventory` over the Poly Telnet API: `whoami` then `status` on one connection.
//!
//! `whoami` has no end marker, so both commands are sent at once and the answers read in
//! order until `status end`: `Key: value` lines are `whoami`'s, `<item> online|offline` lines
//! `status`'s. An `error: command not found` is `whoami`'s when nothing came before it, else
//! `status`'s, and leaves that command's fields `notReported`; any other `error:` fails the
//! read (`server_error`).
//!
//! Read [I]: `Model:` → product; `Serial Number:`; `Software Version:` without its `Release `
//! prefix; `IP Address:` or `IP Video Number:` (when an IPv4 address) → ipv4; `MAC Address:`
//! → mac; `status`'s `microphones`, `camera` and `remotecontrol` are the peripherals (the
//! other items are services, not devices), `online` = connected. The API reports no model
//! (hardware platform), software release date or uptime: always `notReported`.

use super::session::Session;
use super::silence;
use crate::driver::DriverFailure;
use crate::drivers::inventory::{self as common, field};
use roomlink_listener_protocol::failure::FailureKind;
use roomlink_listener_protocol::wire::{WireInventory, WirePeripheral};
use std::net::Ipv4Addr;

const WHOAMI_FIELDS: [&str; 4] = [
    field::PRODUCT,
    field::SERIAL_NUMBER,
    field::SOFTWARE_VERSION,
    field::ADDRESSES,
];

/// Sends `whoami` and `status` and reads their answers.
pub(super) async fn read(session: &mut Session<'_>) -> Result<WireInventory, DriverFailure> {
    const COMMANDS: &str = "whoami, status";
    session.send_line("whoami").await?;
    session.send_line("status").await?;
    let deadline = session.deadline();
    let mut heard = String::new();
    let mut whoami: Vec<String> = Vec::new();
    let mut status: Vec<String> = Vec::new();
    let mut whoami_refused = false;
    loop {
        let line = match session.next_line(deadline).await {
            Ok(line) => line,
            Err(wait) => return Err(silence(session, COMMANDS, &heard, wait)),
        };
        if !heard.is_empty() {
            heard.push('\n');
        }
        heard.push_str(&line.text);
        let text = line.text.trim();
        if line.echo || text.is_empty() {
            continue;
        }
        if text.to_ascii_lowercase().starts_with("error") {
            if !text.contains("command not found") {
                return Err(DriverFailure::new(
                    FailureKind::ServerError,
                    format!(
                        "the codec at {} refused `{COMMANDS}`: {text}",
                        session.target()
                    ),
                )
                .cause(text.to_owned())
                .exchange(Some(COMMANDS.to_owned()), Some(session.transcript(&heard))));
            }
            // Answers come in order: an error before any of whoami's lines is whoami's.
            if !whoami_refused && whoami.is_empty() && status.is_empty() {
                whoami_refused = true;
                continue;
            }
            let whoami = (!whoami_refused).then_some(whoami.as_slice());
            return Ok(inventory(whoami, None));
        }
        if text == "status end" {
            let whoami = (!whoami_refused).then_some(whoami.as_slice());
            return Ok(inventory(whoami, Some(&status)));
        }
        if text.contains(':') {
            whoami.push(text.to_owned());
        } else {
            status.push(text.to_owned());
        }
    }
}

/// The inventory from `whoami`'s and `status`'s lines (`None`: the codec has no such
/// command).
pub(super) fn inventory(whoami: Option<&[String]>, status: Option<&[String]>) -> WireInventory {
    let mut inventory = WireInventory {
        vendor: Some("Poly".into()),
        ..WireInventory::default()
    };
    match whoami {
        Some(lines) => read_whoami(lines, &mut inventory),
        None => common::not_reported(&mut inventory, &WHOAMI_FIELDS),
    }
    match status {
        Some(lines) => read_status(lines, &mut inventory),
        None => common::not_reported(&mut inventory, &[field::PERIPHERALS]),
    }
    common::not_reported(
        &mut inventory,
        &[
            field::MODEL,
            field::SOFTWARE_RELEASE_DATE,
            field::UPTIME_SECONDS,
        ],
    );
    common::capped(inventory)
}

fn read_whoami(lines: &[String], inventory: &mut WireInventory) {
    for line in lines {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key.trim().to_ascii_lowercase().as_str() {
            "model" => inventory.product = common::said(value),
            "serial number" => inventory.serial_number = common::said(value),
            "software version" => {
                let version = value.strip_prefix("Release ").unwrap_or(value);
                inventory.software_version = common::said(version);
            }
            "ip address" | "ip video number" if value.parse::<Ipv4Addr>().is_ok() => {
                common::add_address(inventory, "ipv4", value);
            }
            "mac address" => common::add_address(inventory, "mac", value),
            _ => {}
        }
    }
}

fn read_status(lines: &[String], inventory: &mut WireInventory) {
    for line in lines {
        let mut words = line.split_whitespace();
        let (Some(item), Some(state)) = (words.next(), words.next()) else {
            continue;
        };
        let kind = match item {
            "microphones" => common::MICROPHONE,
            "camera" => common::CAMERA,
            "remotecontrol" => common::OTHER,
            _ => continue,
        };
        inventory.peripherals.push(WirePeripheral {
            kind: kind.to_owned(),
            id: Some(item.to_owned()),
            connected: state.eq_ignore_ascii_case("online"),
            ..WirePeripheral::default()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_owned).collect()
    }

    #[test]
    fn whoami_and_status_lines_are_read() {
        let whoami = lines(
            "Hi, my name is : Boardroom\nHere is what I know about myself:\nModel: Group 500\nSerial Number: 8213130FE1C4CV\nSoftware Version: Release 6.2.2.4-520003\nIP Video Number: 10.0.0.7\nIP Address: 10.0.0.7\nMAC Address: 00:e0:db:0b:12:34\nH323 Enabled: True",
        );
        let status = lines(
            "autoanswerp2p offline\nremotecontrol online\nmicrophones online\ncamera offline\nipnetwork online",
        );
        let got = inventory(Some(&whoami), Some(&status));
        assert_eq!(got.vendor.as_deref(), Some("Poly"));
        assert_eq!(got.product.as_deref(), Some("Group 500"));
        assert_eq!(got.serial_number.as_deref(), Some("8213130FE1C4CV"));
        assert_eq!(got.software_version.as_deref(), Some("6.2.2.4-520003"));
        let addresses: Vec<(&str, &str)> = got
            .addresses
            .iter()
            .map(|a| (a.kind.as_str(), a.value.as_str()))
            .collect();
        assert_eq!(
            addresses,
            [("ipv4", "10.0.0.7"), ("mac", "00:e0:db:0b:12:34")]
        );
        let peripherals: Vec<(&str, &str, bool)> = got
            .peripherals
            .iter()
            .map(|p| (p.kind.as_str(), p.id.as_deref().unwrap_or(""), p.connected))
            .collect();
        assert_eq!(
            peripherals,
            [
                ("other", "remotecontrol", true),
                ("microphone", "microphones", true),
                ("camera", "camera", false)
            ]
        );
        assert_eq!(
            got.not_reported,
            ["model", "softwareReleaseDate", "uptimeSeconds"]
        );
    }

    #[test]
    fn commands_the_codec_lacks_are_not_reported() {
        let got = inventory(None, Some(&lines("camera online")));
        assert!(got.product.is_none());
        assert!(got.not_reported.contains(&"serialNumber".to_owned()));
        assert!(got.not_reported.contains(&"addresses".to_owned()));
        assert!(!got.not_reported.contains(&"peripherals".to_owned()));
        let got = inventory(None, None);
        assert!(got.not_reported.contains(&"peripherals".to_owned()));
        // An IP Video Number that is an E.164 number is no address.
        let got = inventory(Some(&lines("IP Video Number: 5551234")), None);
        assert!(got.addresses.is_empty());
    }
}

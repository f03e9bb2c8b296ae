//! The Cisco xAPI text protocol of the SSH shell ("TSH"), without the network: one input line
//! in, the codec's answer out. Commands and status come from [`crate::cisco_xapi`], the same
//! code the HTTP front end answers with; only the notation differs.
//!
//! Decided here (device-drivers.md §1.3 leaves these open):
//! - Every answer ends with `\r\n`; JSON answers are pretty-printed objects, as the codec's
//!   `xpreferences outputmode json` prints them, with `"ResultId"` when the line had a
//!   `| resultId="…"` tag.
//! - XML → JSON: a leaf is `{"Value": text}`, attributes are plain string fields, an element
//!   with an `item` attribute is an array entry with `"id"` (`maxOccurrence` is dropped).
//! - A status path that matches nothing, or `Call` for an integrator, answers
//!   `{"CommandResponse":{"Status":{"status":"Error","Reason":…,"XPath":…}}}`.
//! - Terminal mode quotes string values (`STRING_LEAVES`), not enumerations or numbers.
//! - `xConfiguration` lines set and read [`crate::cisco_config`]'s values.
//! - `echo off|on` and `xpreferences outputmode json|terminal` answer `OK`; an unknown line
//!   answers `Command not recognized.` (in either mode, as the reference shows).

use crate::cisco_config;
use crate::cisco_firmware::Firmware;
use crate::cisco_xapi::{self, Role};
use crate::device::Device;
use crate::xml::Element;
use serde_json::{Map, Value, json};

/// What one shell session has been told.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shell {
    pub json: bool,
    pub echo_off: bool,
}

/// The banner after login.
pub fn banner(host: &str, firmware: Firmware) -> String {
    format!(
        "Welcome to {host}\r\nCisco Codec Release {}\r\nSW Release Date: 2024-02-29 10:12:54, matchbox\r\n*r Login successful\r\n\r\nOK\r\n\r\n",
        firmware.display_name()
    )
}

/// Splits off a `| resultId="x"` tag.
fn result_id(line: &str) -> (&str, Option<String>) {
    let Some((command, tag)) = line.rsplit_once('|') else {
        return (line, None);
    };
    let tag = tag.trim();
    let Some(value) = tag
        .strip_prefix("resultId=")
        .or_else(|| tag.strip_prefix("resultid="))
    else {
        return (line, None);
    };
    let id = serde_json::from_str::<String>(value).unwrap_or_else(|_| value.to_owned());
    (command.trim_end(), Some(id))
}

/// Words and `Name: value` parameters; values may be JSON-quoted strings.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut word = String::new();
        if c == '"' {
            word.push(chars.next().unwrap_or('"'));
            let mut escaped = false;
            for c in chars.by_ref() {
                word.push(c);
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    break;
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c.is_whitespace() {
                    break;
                }
                word.push(c);
                chars.next();
            }
        }
        out.push(word);
    }
    out
}

fn unquote(value: &str) -> String {
    if value.starts_with('"') {
        serde_json::from_str::<String>(value).unwrap_or_else(|_| value.trim_matches('"').to_owned())
    } else {
        value.to_owned()
    }
}

/// Path words up to the first `Name:`, then the parameters.
fn path_and_params(words: &[String]) -> (Vec<String>, Vec<(String, String)>) {
    let split = words
        .iter()
        .position(|w| w.ends_with(':'))
        .unwrap_or(words.len());
    let path = words[..split].to_vec();
    let mut params = Vec::new();
    let mut rest = words[split..].iter();
    while let Some(name) = rest.next() {
        let value = rest.next().map(|v| unquote(v)).unwrap_or_default();
        params.push((name.trim_end_matches(':').to_owned(), value));
    }
    (path, params)
}

/// An element as the codec writes it in JSON mode.
pub fn to_json(element: &Element) -> Value {
    if element.children.is_empty() && element.attrs.iter().all(|(k, _)| k == "maxOccurrence") {
        return json!({ "Value": element.text });
    }
    let mut object = Map::new();
    for (name, value) in &element.attrs {
        match name.as_str() {
            "maxOccurrence" => {}
            "item" => {
                object.insert("id".into(), Value::String(value.clone()));
            }
            _ => {
                object.insert(name.clone(), Value::String(value.clone()));
            }
        }
    }
    for child in &element.children {
        let value = to_json(child);
        if child.get_attr("item").is_some() {
            let entry = object
                .entry(child.name.clone())
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(items) = entry {
                items.push(value);
            }
        } else {
            object.insert(child.name.clone(), value);
        }
    }
    if element.children.is_empty() && !element.text.is_empty() {
        object.insert("Value".into(), Value::String(element.text.clone()));
    }
    Value::Object(object)
}

/// Status leaves whose values are strings: terminal mode quotes them
/// (`*s SystemUnit ProductId: "Cisco Webex Room Kit"`), as codecs do; enumerations and
/// numbers stay bare (`Mute: Off`, `Uptime: 4711`).
const STRING_LEAVES: &[&str] = &[
    "ProductId",
    "ProductPlatform",
    "ProductType",
    "DisplayName",
    "Name",
    "Version",
    "ReleaseDate",
    "SerialNumber",
    "Address",
    "Gateway",
    "SubnetMask",
    "MacAddress",
    "Speed",
    "ID",
    "HardwareInfo",
    "SoftwareInfo",
    "Model",
    "Manufacturer",
    "SoftwareID",
    "HardwareID",
    "Options",
    "RemoteNumber",
];

/// Terminal mode: `*s Audio Microphones Mute: Off` lines for a status element.
fn terminal_lines(prefix: &str, element: &Element, path: &mut Vec<String>, out: &mut String) {
    let mut name = element.name.clone();
    if let Some(item) = element.get_attr("item") {
        name = format!("{name} {item}");
    }
    path.push(name);
    if element.children.is_empty() {
        let value = if STRING_LEAVES.contains(&element.name.as_str()) {
            format!("\"{}\"", element.text)
        } else {
            element.text.clone()
        };
        out.push_str(&format!("{prefix} {}: {value}\r\n", path.join(" ")));
    } else {
        for child in &element.children {
            terminal_lines(prefix, child, path, out);
        }
    }
    path.pop();
}

fn json_answer(mut value: Value, id: Option<String>) -> String {
    if let (Some(id), Value::Object(object)) = (id, &mut value) {
        object.insert("ResultId".into(), Value::String(id));
    }
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    format!("{}\r\n", text.replace('\n', "\r\n"))
}

/// The `<Command>` answer in the session's notation.
fn command_answer(answer: &Element, shell: Shell, id: Option<String>) -> String {
    if shell.json {
        let mut response = Map::new();
        for child in &answer.children {
            response.insert(child.name.clone(), to_json(child));
        }
        return json_answer(json!({ "CommandResponse": response }), id);
    }
    let mut out = String::new();
    for child in &answer.children {
        let status = child.get_attr("status").unwrap_or("OK");
        out.push_str(&format!("*r {} (status={status}):\r\n", child.name));
        for field in &child.children {
            out.push_str(&format!(
                "*r {} {}: {}\r\n",
                child.name, field.name, field.text
            ));
        }
    }
    out.push_str("** end\r\n");
    out
}

fn status_answer(device: &Device, words: &[String], shell: Shell, id: Option<String>) -> String {
    let location = format!("/Status/{}", words.join("/"));
    match cisco_xapi::read_status(device, &location) {
        Ok(found) if shell.json => {
            let mut status = to_json(&found);
            if let Value::Object(object) = &mut status {
                object.retain(|k, _| !matches!(k.as_str(), "product" | "version" | "apiVersion"));
            }
            json_answer(json!({ "Status": status }), id)
        }
        Ok(found) => {
            let mut out = String::new();
            for child in &found.children {
                terminal_lines("*s", child, &mut Vec::new(), &mut out);
            }
            out.push_str("** end\r\n");
            out
        }
        Err(fault) => {
            let error = fault.children.first().cloned().unwrap_or_default();
            let reason = error
                .children
                .iter()
                .find(|c| c.name == "Reason")
                .map(|c| c.text.clone())
                .unwrap_or_default();
            let xpath = location.trim_start_matches('/').to_owned();
            if shell.json {
                json_answer(
                    json!({"CommandResponse": {"Status": {"status": "Error",
                        "Reason": {"Value": reason}, "XPath": {"Value": xpath}}}}),
                    id,
                )
            } else {
                format!(
                    "*r Status (status=Error):\r\n*r Status Reason: {reason}\r\n*r Status XPath: {xpath}\r\n** end\r\n"
                )
            }
        }
    }
}

/// The answer to an `xConfiguration` line (its words after `xConfiguration`); see
/// [`crate::cisco_config`] for the shapes.
fn configuration_answer(
    device: &mut Device,
    words: &[String],
    json: bool,
    id: Option<String>,
) -> String {
    let (path, value) = cisco_config::ssh_words(words);
    let refused = match value {
        Some(value) => match cisco_config::write(device, &[(path, value)]) {
            Ok(()) if json => return json_answer(json!({}), id),
            Ok(()) => return "** end\r\n".into(),
            Err(refused) => refused,
        },
        None => match cisco_config::tree(device, &path, false) {
            Some(found) if json => {
                let mut object = to_json(&found);
                if let Value::Object(o) = &mut object {
                    o.retain(|k, _| !matches!(k.as_str(), "product" | "version" | "apiVersion"));
                }
                return json_answer(json!({ "Configuration": object }), id);
            }
            Some(found) => {
                let mut out = String::new();
                for child in &found.children {
                    terminal_lines("*c xConfiguration", child, &mut Vec::new(), &mut out);
                }
                return out + "** end\r\n";
            }
            None => cisco_config::Refused {
                reason: cisco_config::NO_MATCH.into(),
                xpath: cisco_config::xpath(&path),
            },
        },
    };
    if json {
        json_answer(
            json!({"CommandResponse": {"Configuration": {"status": "Error",
                "Reason": {"Value": refused.reason}, "XPath": {"Value": refused.xpath}}}}),
            id,
        )
    } else {
        format!("ERROR: {}\r\n** end\r\n", refused.reason)
    }
}

/// The answer to one line.
pub fn answer(line: &str, shell: &mut Shell, device: &mut Device) -> String {
    let (command, id) = result_id(line.trim());
    let words = tokens(command);
    let Some(first) = words.first() else {
        return String::new();
    };
    match first.to_ascii_lowercase().as_str() {
        "echo" => {
            shell.echo_off = words.get(1).is_some_and(|w| w.eq_ignore_ascii_case("off"));
            "OK\r\n".into()
        }
        "xpreferences" => {
            if let (Some(what), Some(mode)) = (words.get(1), words.get(2))
                && what.eq_ignore_ascii_case("outputmode")
            {
                shell.json = mode.eq_ignore_ascii_case("json");
                return "OK\r\n".into();
            }
            "Command not recognized.\r\n".into()
        }
        "xcommand" => {
            let (path, params) = path_and_params(&words[1..]);
            let firmware = Firmware::of(device);
            let answer = match cisco_xapi::command_from_words(path, params, firmware) {
                Ok(command) => {
                    let role = Role::of(device);
                    cisco_xapi::execute(&command, device, firmware, role)
                }
                Err(unknown) => unknown,
            };
            command_answer(&answer, *shell, id)
        }
        "xstatus" => status_answer(device, &words[1..], *shell, id),
        "xconfiguration" => configuration_answer(device, &words[1..], shell.json, id),
        _ => "Command not recognized.\r\n".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Fault;
    use std::time::Duration;

    fn json_shell() -> Shell {
        Shell {
            json: true,
            echo_off: true,
        }
    }

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).expect("json")
    }

    #[test]
    fn a_dial_answers_its_result_with_the_result_id() {
        let mut device = Device::new("admin", "pw", Duration::ZERO);
        let mut shell = json_shell();
        let out = answer(
            r#"xCommand Dial Number: "123.4@bridge.example" Protocol: Sip | resultId="7""#,
            &mut shell,
            &mut device,
        );
        let v = parse(&out);
        assert_eq!(v["ResultId"], "7");
        assert_eq!(v["CommandResponse"]["DialResult"]["status"], "OK");
        assert_eq!(v["CommandResponse"]["DialResult"]["CallId"]["Value"], "1");
        assert_eq!(device.last_dialed.as_deref(), Some("123.4@bridge.example"));
        assert!(out.ends_with("\r\n"));
    }

    #[test]
    fn status_reads_and_errors_are_shaped_like_the_codecs() {
        let mut device = Device::new("admin", "pw", Duration::ZERO);
        device.set_muted(true);
        let mut shell = json_shell();
        let v = parse(&answer(
            r#"xStatus Audio Microphones Mute | resultId="s1""#,
            &mut shell,
            &mut device,
        ));
        assert_eq!(v["Status"]["Audio"]["Microphones"]["Mute"]["Value"], "On");
        device.dial("1@b", None);
        let v = parse(&answer("xStatus Call", &mut shell, &mut device));
        assert_eq!(v["Status"]["Call"][0]["Status"]["Value"], "Connected");
        assert_eq!(v["Status"]["Call"][0]["id"], "1");
        let v = parse(&answer("xStatus Wrong", &mut shell, &mut device));
        assert_eq!(v["CommandResponse"]["Status"]["status"], "Error");
        device.faults.insert(Fault::IntegratorRole);
        let v = parse(&answer("xStatus Call", &mut shell, &mut device));
        assert_eq!(
            v["CommandResponse"]["Status"]["Reason"]["Value"],
            "Permission denied"
        );
        let v = parse(&answer(
            r#"xCommand Call DTMFSend DTMFString: "1""#,
            &mut shell,
            &mut device,
        ));
        assert_eq!(v["CommandResponse"]["Result"]["status"], "Error");
    }

    #[test]
    fn tc_firmware_has_top_level_dtmfsend_only() {
        let mut device = Device::new("admin", "pw", Duration::ZERO);
        device.faults.insert(Fault::TcFirmware);
        device.dial("1@b", None);
        let mut shell = json_shell();
        let v = parse(&answer(
            r#"xCommand Call DTMFSend DTMFString: "1""#,
            &mut shell,
            &mut device,
        ));
        assert_eq!(
            v["CommandResponse"]["Result"]["Reason"]["Value"],
            "Unknown command"
        );
        let v = parse(&answer(
            r#"xCommand DTMFSend DTMFString: "12#""#,
            &mut shell,
            &mut device,
        ));
        assert_eq!(v["CommandResponse"]["DTMFSendResult"]["status"], "OK");
        assert_eq!(device.dtmf, "12#");
    }

    #[test]
    fn terminal_mode_and_preferences() {
        let mut device = Device::new("admin", "pw", Duration::ZERO);
        let mut shell = Shell::default();
        assert_eq!(answer("echo off", &mut shell, &mut device), "OK\r\n");
        let out = answer("xStatus Audio Microphones Mute", &mut shell, &mut device);
        assert_eq!(out, "*s Audio Microphones Mute: Off\r\n** end\r\n");
        assert_eq!(
            answer("xpreferences outputmode json", &mut shell, &mut device),
            "OK\r\n"
        );
        assert!(shell.json);
        assert_eq!(
            answer("reboot now", &mut shell, &mut device),
            "Command not recognized.\r\n"
        );
    }

    #[test]
    fn ssh_lines_set_read_and_refuse_as_json() {
        let mut d = Device::new("admin", "pw", Duration::ZERO);
        d.address = "127.77.0.9".into();
        let line = |s: &str| -> Vec<String> { s.split(' ').map(str::to_owned).collect() };
        let set = configuration_answer(
            &mut d,
            &line("Audio DefaultVolume: 70"),
            true,
            Some("r1".into()),
        );
        let set: serde_json::Value = serde_json::from_str(&set).unwrap();
        assert_eq!(set, serde_json::json!({"ResultId": "r1"}));
        let get = configuration_answer(
            &mut d,
            &line("audio defaultvolume"),
            true,
            Some("r2".into()),
        );
        let get: serde_json::Value = serde_json::from_str(&get).unwrap();
        assert_eq!(
            get,
            serde_json::json!({"Configuration": {"Audio": {"DefaultVolume": {"Value": "70"}}},
                "ResultId": "r2"})
        );
        let bad = configuration_answer(&mut d, &line("Audio DefaultVolume: 200"), true, None);
        let bad: serde_json::Value = serde_json::from_str(&bad).unwrap();
        assert_eq!(
            bad["CommandResponse"]["Configuration"]["Reason"]["Value"],
            "Illegal value"
        );
        assert_eq!(
            bad["CommandResponse"]["Configuration"]["XPath"]["Value"],
            "Configuration/Audio/DefaultVolume"
        );
        assert_eq!(cisco_config::view(&d)["Audio DefaultVolume"], "70");
        let missing = configuration_answer(&mut d, &line("Audio Foo"), true, None);
        assert!(
            missing.contains(cisco_config::NO_MATCH) && missing.contains("\"status\": \"Error\"")
        );
        let terminal = configuration_answer(&mut d, &line("Standby Delay"), false, None);
        assert_eq!(
            terminal,
            "*c xConfiguration Standby Delay: 10\r\n** end\r\n"
        );
    }
}

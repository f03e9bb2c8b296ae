//! The emulated Cisco codec's xAPI in XML form, protocol-free: `putxml` command documents in,
//! `<Command>` result documents out; the `<Status>` tree and its `getxml` selections.
//! (device-drivers.md §1.1, §1.2.)
//!
//! Decisions where the reference is silent ([I]), kept in docs/drivers.md:
//! - A command is the element carrying `command="True"` or, without that attribute, the first
//!   element path that is a whole command name; parameters are its child elements.
//! - Result element = the command's last two path words + `Result` (`Dial` → `DialResult`,
//!   `Call Disconnect` → `CallDisconnectResult`, `Audio Microphones Mute` →
//!   `MicrophonesMuteResult`, `Call DTMFSend` → `CallDTMFSendResult`, TC's top-level `DTMFSend`
//!   → `DTMFSendResult`).
//! - Unknown command: `<Result status="Error"><Reason>Unknown command</Reason><XPath>/Call/Foo`
//!   (XPath = the path up to the first unknown word). Bad or missing parameter:
//!   `<XxxResult status="ParameterError"/>`. A command the role may not use:
//!   `<Result status="Error"><Reason>Permission denied</Reason><XPath>/Call/DTMFSend</XPath>`.
//! - Hang-up or DTMF without a call: `<XxxResult status="Error"><Reason>No active call</Reason>`.
//! - `getxml` of an unknown path: `<Fault><XPathError><Reason>No match on address
//!   expression.</Reason><XPath>…</XPath></XPathError></Fault>` (TC5's `Fault`/`XPathError`
//!   names, the reason of the JSON form); `/Status/Call` and `/Status/Network` for an Integrator
//!   are the same fault with `Permission denied`; `/Status/Call` with no call is an empty
//!   `<Status …/>`. What the codec says about itself is built in [`crate::cisco_inventory`].
//! - Call status values: `Dialling` until the device connects, then `Connected`.

use crate::cisco_firmware::Firmware;
use crate::cisco_inventory;
use crate::cisco_schema::{self, Violation};
use crate::device::{Device, Fault, Phase};
use crate::xml::Element;

/// What the user logged in as may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Admin,
    /// No DTMF, no `Call` status (sandbox devices give only this).
    Integrator,
}

impl Role {
    /// The role's name in Cisco's xAPI schemas.
    pub fn schema_name(self) -> &'static str {
        match self {
            Role::Admin => "Admin",
            Role::Integrator => "Integrator",
        }
    }

    /// The role the device's user has: Integrator with [`Fault::IntegratorRole`], else Admin.
    pub fn of(device: &Device) -> Role {
        if device.has(Fault::IntegratorRole) {
            Role::Integrator
        } else {
            Role::Admin
        }
    }
}

/// A command named by its path words (the SSH API's `xCommand Call DTMFSend ...`); `Err` is
/// the answer to a command the firmware does not have.
pub fn command_from_words(
    path: Vec<String>,
    params: Vec<(String, String)>,
    firmware: Firmware,
) -> Result<Command, Element> {
    let known = firmware.commands().iter().any(|c| {
        c.len() == path.len() && c.iter().zip(&path).all(|(a, b)| a.eq_ignore_ascii_case(b))
    });
    if known {
        Ok(Command { path, params })
    } else {
        Err(error_result(
            "Unknown command",
            &format!("/{}", path.join("/")),
        ))
    }
}

/// A command found in a `putxml` document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The path words (`["Call", "DTMFSend"]`).
    pub path: Vec<String>,
    pub params: Vec<(String, String)>,
}

impl Command {
    fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn is(&self, words: &[&str]) -> bool {
        self.path.len() == words.len()
            && self
                .path
                .iter()
                .zip(words)
                .all(|(a, b)| a.eq_ignore_ascii_case(b))
    }

    /// The command's result element name: its last two path words + `Result`.
    pub fn result_name(&self) -> String {
        let start = self.path.len().saturating_sub(2);
        format!("{}Result", self.path[start..].concat())
    }

    fn xpath(&self) -> String {
        format!("/{}", self.path.join("/"))
    }
}

/// `<Command><Result status="Error">…` — the answer to a command that is not there.
fn error_result(reason: &str, xpath: &str) -> Element {
    Element::new("Command").child(
        Element::new("Result")
            .attr("status", "Error")
            .child(Element::leaf("Reason", reason))
            .child(Element::leaf("XPath", xpath)),
    )
}

/// Finds the command in a `putxml` document; `Err` is the document to answer.
pub fn find_command(doc: &Element, firmware: Firmware) -> Result<Command, Element> {
    if doc.name != "Command" {
        return Err(error_result("Unknown command", &format!("/{}", doc.name)));
    }
    let known = firmware.commands();
    let mut path: Vec<String> = Vec::new();
    let mut node = doc;
    loop {
        let Some(next) = node.children.first() else {
            let xpath = format!("/{}", path.join("/"));
            return Err(error_result("Unknown command", &xpath));
        };
        path.push(next.name.clone());
        let is_prefix = |c: &&[&str]| {
            c.len() >= path.len() && c.iter().zip(&path).all(|(a, b)| a.eq_ignore_ascii_case(b))
        };
        if !known.iter().any(is_prefix) {
            return Err(error_result(
                "Unknown command",
                &format!("/{}", path.join("/")),
            ));
        }
        let whole = known.iter().any(|c| c.len() == path.len() && is_prefix(c));
        let flagged = next
            .get_attr("command")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"));
        if whole || flagged {
            if !whole {
                return Err(error_result(
                    "Unknown command",
                    &format!("/{}", path.join("/")),
                ));
            }
            let params = next
                .children
                .iter()
                .map(|p| (p.name.clone(), p.text.clone()))
                .collect();
            return Ok(Command { path, params });
        }
        node = next;
    }
}

/// Carries out `command` on the device and returns the `<Command>` answer.
pub fn execute(command: &Command, device: &mut Device, firmware: Firmware, role: Role) -> Element {
    let result = Element::new(&command.result_name());
    let parameter_error = || {
        Element::new("Command")
            .child(Element::new(&command.result_name()).attr("status", "ParameterError"))
    };
    let no_call = || {
        Element::new("Command").child(
            Element::new(&command.result_name())
                .attr("status", "Error")
                .child(Element::leaf("Reason", "No active call")),
        )
    };
    let allowed = |names: &[&str]| {
        command
            .params
            .iter()
            .all(|(k, _)| names.iter().any(|n| n.eq_ignore_ascii_case(k)))
    };
    let ok = |result: Element| Element::new("Command").child(result.attr("status", "OK"));
    // CE and later: what any generation's published schema refuses is refused as the codec
    // refuses it. TC predates the published schemas: the hand-written checks below (`tc &&`)
    // stand in for them there only, so the schema stays the one referee on CE.
    let tc = firmware == Firmware::Tc;
    if firmware == Firmware::Ce
        && let Err(refusal) =
            cisco_schema::check_command(&command.path, &command.params, role.schema_name())
    {
        tracing::warn!(%refusal, command = %command.xpath(), "refused by Cisco's xAPI schema");
        return match refusal.violation {
            Violation::UnknownPath | Violation::NotPublic => {
                error_result("Unknown command", &command.xpath())
            }
            Violation::RoleMayNot(_) => error_result("Permission denied", &command.xpath()),
            _ => parameter_error(),
        };
    }
    if let Some(answer) =
        crate::cisco_bookings::execute(&command.path, &command.params, device, role == Role::Admin)
    {
        return answer;
    }

    if command.is(&["Dial"]) {
        let dial_params = [
            "Number",
            "Protocol",
            "CallRate",
            "CallType",
            "DisplayName",
            "BookingId",
            "TrackingData",
            "Appearance",
        ];
        let Some(number) = command.param("Number") else {
            return parameter_error();
        };
        let protocol = command.param("Protocol");
        let protocol_ok = protocol.is_none_or(|p| {
            ["H323", "Sip", "Spark"]
                .iter()
                .any(|v| v.eq_ignore_ascii_case(p))
        });
        let rate_ok = command
            .param("CallRate")
            .is_none_or(|r| r.parse::<u32>().is_ok_and(|r| (64..=20_000).contains(&r)));
        let type_ok = command.param("CallType").is_none_or(|t| {
            ["Audio", "Video", "Auto"]
                .iter()
                .any(|v| v.eq_ignore_ascii_case(t))
        });
        if tc
            && (number.is_empty()
                || number.chars().count() > 255
                || !protocol_ok
                || !rate_ok
                || !type_ok
                || !allowed(&dial_params))
        {
            return parameter_error();
        }
        device.dial(number, protocol);
        let id = device.call_id.to_string();
        return ok(result
            .child(Element::leaf("CallId", id.clone()))
            .child(Element::leaf("ConferenceId", id)));
    }
    if command.is(&["Call", "Disconnect"]) {
        if tc && !allowed(&["CallId"]) {
            return parameter_error();
        }
        if let Some(id) = command.param("CallId") {
            match id.parse::<u32>() {
                Ok(id) if id == device.call_id && device.phase() != Phase::Idle => {}
                Ok(_) => return no_call(),
                Err(_) => return parameter_error(),
            }
        }
        return if device.hang_up() {
            ok(result)
        } else {
            no_call()
        };
    }
    if command.is(&["Call", "DTMFSend"]) || command.is(&["DTMFSend"]) {
        if tc && role == Role::Integrator {
            return error_result("Permission denied", &command.xpath());
        }
        let Some(tones) = command.param("DTMFString") else {
            return parameter_error();
        };
        let feedback_ok = command.param("Feedback").is_none_or(|f| {
            ["Audible", "Silent"]
                .iter()
                .any(|v| v.eq_ignore_ascii_case(f))
        });
        let call_ok = command
            .param("CallId")
            .is_none_or(|id| id.parse::<u32>().is_ok());
        if tc
            && (tones.is_empty()
                || tones.chars().count() > 32
                || !feedback_ok
                || !call_ok
                || !allowed(&["DTMFString", "CallId", "Feedback"]))
        {
            return parameter_error();
        }
        if let Some(id) = command.param("CallId")
            && id.parse::<u32>().ok() != Some(device.call_id)
        {
            return no_call();
        }
        return if device.send_dtmf(tones) {
            ok(result)
        } else {
            no_call()
        };
    }
    let mute = if command.is(&["Audio", "Microphones", "Mute"]) {
        Some(true)
    } else if command.is(&["Audio", "Microphones", "Unmute"]) {
        Some(false)
    } else if command.is(&["Audio", "Microphones", "ToggleMute"]) {
        Some(!device.microphone_muted)
    } else {
        None
    };
    match mute {
        Some(_) if tc && !command.params.is_empty() => parameter_error(),
        Some(muted) => {
            device.set_muted(muted);
            ok(result)
        }
        // find_command only returns the commands above.
        None => error_result("Unknown command", &command.xpath()),
    }
}

/// The device's whole `<Status>` document, as the role sees it.
pub fn status_tree(device: &Device, firmware: Firmware, role: Role) -> Element {
    let phase = device.phase();
    let mut root = Element::new("Status")
        .attr("product", "Cisco Codec")
        .attr(
            "version",
            cisco_inventory::software(device, firmware).version,
        )
        .attr("apiVersion", "4");
    root = root.child(
        Element::new("Audio")
            .child(Element::new("Microphones").child(Element::leaf(
                "Mute",
                if device.microphone_muted { "On" } else { "Off" },
            )))
            .child(Element::leaf("Volume", "50")),
    );
    if phase != Phase::Idle && role == Role::Admin && !device.has(Fault::TeamsMode) {
        let number = device.last_dialed.clone().unwrap_or_default();
        let protocol = match device.last_dial_protocol.as_deref() {
            Some(p) if p.eq_ignore_ascii_case("h323") => "H323",
            Some(p) if p.eq_ignore_ascii_case("spark") => "Spark",
            _ => "Sip",
        };
        let status = if phase == Phase::Connected {
            "Connected"
        } else {
            "Dialling"
        };
        root = root.child(
            Element::new("Call")
                .attr("item", device.call_id.to_string())
                .attr("maxOccurrence", "n")
                .child(Element::leaf("CallType", "Video"))
                .child(Element::leaf("Direction", "Outgoing"))
                .child(Element::leaf("DisplayName", number.clone()))
                .child(Element::leaf("Protocol", protocol))
                .child(Element::leaf("RemoteNumber", number))
                .child(Element::leaf("Status", status)),
        );
    }
    let active = device.active_calls();
    let dialling = u32::from(phase == Phase::Dialling);
    let state = Element::new("State")
        .child(Element::leaf("NumberOfActiveCalls", active.to_string()))
        .child(Element::leaf(
            "NumberOfInProgressCalls",
            dialling.to_string(),
        ))
        .child(Element::leaf("NumberOfSuspendedCalls", "0"))
        .child(Element::leaf(
            "System",
            if active > 0 { "InCall" } else { "Initialized" },
        ));
    root = root.child(cisco_inventory::cameras(device));
    if role == Role::Admin {
        root = root.child(cisco_inventory::network(device));
    }
    root.child(cisco_inventory::peripherals(device, firmware))
        .child(cisco_inventory::system_unit(device, firmware, state))
}

/// Top-level status an Integrator may not read: `Call` (calls are private) and, decided here
/// [I], `Network` (the codec's addresses are an Admin's business).
const INTEGRATOR_REFUSED: [&str; 2] = ["Call", "Network"];

fn fault(reason: &str, xpath: &str) -> Element {
    Element::new("Fault").child(
        Element::new("XPathError")
            .child(Element::leaf("Reason", reason))
            .child(Element::leaf("XPath", xpath)),
    )
}

/// What a status read of `location` answers on `device`: [`select`] from its tree, after the
/// published schemas' check of the path on CE and later (an unknown path is the codec's
/// no-match fault).
pub fn read_status(device: &Device, location: &str) -> Result<Element, Element> {
    let (firmware, role) = (Firmware::of(device), Role::of(device));
    let words: Vec<String> = location
        .split('/')
        .filter(|w| !w.is_empty())
        .skip(1) // `Status`, checked by `select`
        .map(str::to_owned)
        .collect();
    if firmware == Firmware::Ce
        && !words.is_empty()
        && let Err(refusal) = cisco_schema::check_status(&words)
    {
        tracing::warn!(%refusal, location, "refused by Cisco's xAPI schema");
        let xpath = format!("/{}", location.trim_matches('/'));
        return Err(fault("No match on address expression.", &xpath));
    }
    select(&status_tree(device, firmware, role), location, role)
}

/// The part of `tree` that `location` (`/Status/Audio/Microphones/Mute`, `Call[3]` allowed,
/// names case-insensitive) selects, with its ancestors; `Err` is the `<Fault>` to answer.
pub fn select(tree: &Element, location: &str, role: Role) -> Result<Element, Element> {
    let xpath = format!("/{}", location.trim_matches('/'));
    let words: Vec<&str> = location.split('/').filter(|w| !w.is_empty()).collect();
    let no_match = || fault("No match on address expression.", &xpath);
    let Some((first, rest)) = words.split_first() else {
        return Err(no_match());
    };
    if !first.eq_ignore_ascii_case(&tree.name) {
        return Err(no_match());
    }
    if rest.first().is_some_and(|w| {
        INTEGRATOR_REFUSED
            .iter()
            .any(|r| name_of(w).eq_ignore_ascii_case(r))
    }) && role == Role::Integrator
    {
        return Err(fault("Permission denied", &xpath));
    }
    match select_in(tree, rest) {
        Some(found) => Ok(found),
        // `Call` is an array: no call is no element, not a wrong path.
        None if rest
            .first()
            .is_some_and(|w| name_of(w).eq_ignore_ascii_case("Call")) =>
        {
            Ok(Element {
                children: Vec::new(),
                text: String::new(),
                ..tree.clone()
            })
        }
        None => Err(no_match()),
    }
}

fn name_of(word: &str) -> &str {
    word.split('[').next().unwrap_or(word)
}

fn select_in(node: &Element, words: &[&str]) -> Option<Element> {
    let Some((word, rest)) = words.split_first() else {
        return Some(node.clone());
    };
    let name = name_of(word);
    let item = word
        .strip_prefix(name)
        .and_then(|w| w.strip_prefix('['))
        .and_then(|w| w.strip_suffix(']'));
    let children: Vec<Element> = node
        .children
        .iter()
        .filter(|c| c.name.eq_ignore_ascii_case(name))
        .filter(|c| item.is_none_or(|i| c.get_attr("item") == Some(i)))
        .filter_map(|c| select_in(c, rest))
        .collect();
    if children.is_empty() {
        return None;
    }
    Some(Element {
        children,
        text: String::new(),
        ..node.clone()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn device() -> Device {
        Device::new("admin", "pw", Duration::ZERO)
    }

    fn run(body: &str, device: &mut Device, firmware: Firmware, role: Role) -> String {
        let doc = Element::parse(body).expect("parses");
        match find_command(&doc, firmware) {
            Ok(command) => execute(&command, device, firmware, role).to_xml(),
            Err(answer) => answer.to_xml(),
        }
    }

    #[test]
    fn dial_answers_call_and_conference_ids_with_or_without_the_command_attribute() {
        let mut d = device();
        let out = run(
            "<Command><Dial command=\"True\"><Number>123.4@bridge.example</Number><Protocol>Sip</Protocol></Dial></Command>",
            &mut d,
            Firmware::Ce,
            Role::Admin,
        );
        assert_eq!(
            out,
            "<Command><DialResult status=\"OK\"><CallId>1</CallId><ConferenceId>1</ConferenceId></DialResult></Command>"
        );
        let out = run(
            "<Command><Dial><Number>5&amp;6</Number></Dial></Command>",
            &mut d,
            Firmware::Ce,
            Role::Admin,
        );
        assert!(out.contains("<CallId>2</CallId>"), "{out}");
        assert_eq!(d.last_dialed.as_deref(), Some("5&6"));
    }

    #[test]
    fn result_names_are_the_last_two_path_words() {
        let mut d = device();
        let cases = [
            (
                "<Command><Audio><Microphones><Mute command=\"True\"/></Microphones></Audio></Command>",
                "<Command><MicrophonesMuteResult status=\"OK\"/></Command>",
            ),
            (
                "<Command><Audio><Microphones><Unmute/></Microphones></Audio></Command>",
                "<Command><MicrophonesUnmuteResult status=\"OK\"/></Command>",
            ),
            (
                "<Command><Call><Disconnect command=\"True\"/></Call></Command>",
                "<Command><CallDisconnectResult status=\"Error\"><Reason>No active call</Reason></CallDisconnectResult></Command>",
            ),
        ];
        for (body, answer) in cases {
            assert_eq!(run(body, &mut d, Firmware::Ce, Role::Admin), answer);
        }
        assert!(!d.microphone_muted);
    }

    /// Cisco's published schemas decide first: a call id beyond `CallId`'s value space is a
    /// parameter error before the device's calls are consulted, and the Integrator role may
    /// not replace bookings (`Bookings Put` is Admin-only in every generation).
    #[test]
    fn what_the_published_schema_refuses_is_refused_as_the_codec_does() {
        let mut d = device();
        d.dial("1", None);
        let far = "<Command><Call><Disconnect command=\"True\"><CallId>70000</CallId></Disconnect></Call></Command>";
        assert_eq!(
            run(far, &mut d, Firmware::Ce, Role::Admin),
            "<Command><CallDisconnectResult status=\"ParameterError\"/></Command>"
        );
        let put =
            "<Command><Bookings><Put command=\"True\"><body>{}</body></Put></Bookings></Command>";
        assert_eq!(
            run(put, &mut d, Firmware::Ce, Role::Integrator),
            "<Command><Result status=\"Error\"><Reason>Permission denied</Reason><XPath>/Bookings/Put</XPath></Result></Command>"
        );
        assert_ne!(d.phase(), Phase::Idle, "the call was not hung up");
        let status = read_status(&d, "/Status/Call/Foo").expect_err("no such path");
        assert!(status.to_xml().contains("No match on address expression."));
    }

    #[test]
    fn dtmf_is_call_dtmfsend_on_ce_and_top_level_on_tc() {
        let ce_body = "<Command><Call><DTMFSend command=\"True\"><DTMFString>12#</DTMFString></DTMFSend></Call></Command>";
        let tc_body =
            "<Command><DTMFSend command=\"True\"><DTMFString>34*</DTMFString></DTMFSend></Command>";
        let mut d = device();
        d.dial("1", None);
        assert_eq!(
            run(ce_body, &mut d, Firmware::Ce, Role::Admin),
            "<Command><CallDTMFSendResult status=\"OK\"/></Command>"
        );
        assert_eq!(
            run(tc_body, &mut d, Firmware::Ce, Role::Admin),
            "<Command><Result status=\"Error\"><Reason>Unknown command</Reason><XPath>/DTMFSend</XPath></Result></Command>"
        );
        assert_eq!(
            run(tc_body, &mut d, Firmware::Tc, Role::Admin),
            "<Command><DTMFSendResult status=\"OK\"/></Command>"
        );
        assert!(run(ce_body, &mut d, Firmware::Tc, Role::Admin).contains("Unknown command"));
        assert_eq!(d.dtmf, "12#34*");
        let denied = run(ce_body, &mut d, Firmware::Ce, Role::Integrator);
        assert_eq!(
            denied,
            "<Command><Result status=\"Error\"><Reason>Permission denied</Reason><XPath>/Call/DTMFSend</XPath></Result></Command>"
        );
        let long = format!(
            "<Command><Call><DTMFSend><DTMFString>{}</DTMFString></DTMFSend></Call></Command>",
            "1".repeat(33)
        );
        assert_eq!(
            run(&long, &mut d, Firmware::Ce, Role::Admin),
            "<Command><CallDTMFSendResult status=\"ParameterError\"/></Command>"
        );
        assert_eq!(d.dtmf, "12#34*");
    }

    #[test]
    fn unknown_commands_and_bad_parameters_are_refused() {
        let mut d = device();
        for (body, expected) in [
            (
                "<Command><Dila><Number>1</Number></Dila></Command>",
                "<XPath>/Dila</XPath>",
            ),
            (
                "<Command><Call><Foo command=\"True\"/></Call></Command>",
                "<XPath>/Call/Foo</XPath>",
            ),
            (
                "<Command><Call command=\"True\"/></Command>",
                "<XPath>/Call</XPath>",
            ),
            ("<Configuration/>", "<XPath>/Configuration</XPath>"),
        ] {
            let out = run(body, &mut d, Firmware::Ce, Role::Admin);
            assert!(
                out.contains("Unknown command") && out.contains(expected),
                "{out}"
            );
        }
        for body in [
            "<Command><Dial><Protocol>Sip</Protocol></Dial></Command>",
            "<Command><Dial><Number>1</Number><Protocol>Skype</Protocol></Dial></Command>",
            "<Command><Dial><Number>1</Number><Colour>red</Colour></Dial></Command>",
        ] {
            assert_eq!(
                run(body, &mut d, Firmware::Ce, Role::Admin),
                "<Command><DialResult status=\"ParameterError\"/></Command>"
            );
        }
        assert_eq!(d.dial_count, 0);
    }

    #[test]
    fn status_selections_keep_their_ancestors() {
        let mut d = device();
        let tree = status_tree(&d, Firmware::Ce, Role::Admin);
        let mute = select(&tree, "/Status/Audio/Microphones/Mute", Role::Admin).expect("found");
        assert_eq!(
            mute.to_xml(),
            "<Status product=\"Cisco Codec\" version=\"ce9.15.17.4.4c8b7f1a3e2\" apiVersion=\"4\"><Audio><Microphones><Mute>Off</Mute></Microphones></Audio></Status>"
        );
        let idle = select(&tree, "/Status/Call", Role::Admin).expect("empty, not a fault");
        assert!(idle.children.is_empty());
        d.dial("42@example", Some("H323"));
        let tree = status_tree(&d, Firmware::Ce, Role::Admin);
        let call = select(&tree, "/Status/Call", Role::Admin)
            .expect("found")
            .to_xml();
        assert!(
            call.contains("<Call item=\"1\" maxOccurrence=\"n\">"),
            "{call}"
        );
        assert!(
            call.contains("<Status>Connected</Status>")
                && call.contains("<Protocol>H323</Protocol>")
        );
        let calls = select(
            &tree,
            "/Status/SystemUnit/State/NumberOfActiveCalls",
            Role::Admin,
        )
        .expect("found")
        .to_xml();
        assert!(calls.ends_with("<SystemUnit><State><NumberOfActiveCalls>1</NumberOfActiveCalls></State></SystemUnit></Status>"));
        assert!(select(&tree, "/Status/Call[1]/Status", Role::Admin).is_ok());
        let wrong = select(&tree, "/Status/Wrong", Role::Admin).expect_err("fault");
        assert_eq!(
            wrong.to_xml(),
            "<Fault><XPathError><Reason>No match on address expression.</Reason><XPath>/Status/Wrong</XPath></XPathError></Fault>"
        );
        let denied = select(&tree, "/Status/Call", Role::Integrator).expect_err("refused");
        assert!(denied.to_xml().contains("Permission denied"));
        let tc = status_tree(&d, Firmware::Tc, Role::Admin);
        let version = select(&tc, "Status/SystemUnit/Software/Version", Role::Admin)
            .expect("found")
            .to_xml();
        assert!(version.contains("<Version>TC7.3.21.d4d8b4c</Version>"));
        let integrator = status_tree(&d, Firmware::Ce, Role::Integrator).to_xml();
        assert!(!integrator.contains("<Call "));
    }
}

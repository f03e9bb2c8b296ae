//! Template settings over HTTP (issue #36): one `getxml?location=/Configuration/…` per key to
//! read, one `putxml` `<Configuration>` document per key to write, on the device's session
//! (login, retries and failures as for status reads and commands).
//!
//! - A read answered with a `<Configuration>` document holding the path gives the value
//!   (`cisco_config::neutral_value`); a `<Fault>` (or any answer with a `Reason`, or `403`) is
//!   that key's refusal with the codec's reason.
//! - A write answered `2xx` with no element whose `status` is not `OK` and no `<Fault>` is
//!   applied; otherwise the key is refused with the codec's `Reason` and `XPath`. Each key is
//!   its own document, so one refusal leaves the others applied.
//! - TC firmware (older than every published schema) supports no key: nothing is sent.
//! - A transport failure, a refused login or an answer that is not the XML API ends the whole
//!   call with that failure (keys written before it stay written; a read tells which).

use super::xml::{self, Node};
use super::{CiscoHttpDriver, Exchange, Firmware, Session};
use crate::driver::{Device, DriverFailure, SettingOutcome, SettingOutcomes, all_unsupported};
use crate::drivers::cisco_config::{self, Generation};
use quick_xml::escape::escape;
use roomlink_domain::template::{SettingKey, TemplateSettings};
use roomlink_listener_protocol::failure::FailureKind;

const TC_UNSUPPORTED: &str =
    "TC firmware predates Cisco's published xAPI schemas: no template setting is mapped for it";

/// The `putxml` document writing `value` at `path`.
pub(super) fn configuration_body(path: &[&str], value: &str) -> String {
    let open: String = path.iter().map(|w| format!("<{w}>")).collect();
    let close: String = path.iter().rev().map(|w| format!("</{w}>")).collect();
    format!(
        "<Configuration>{open}{}{close}</Configuration>",
        escape(value)
    )
}

/// Why an answer is not a success: a `<Fault>`, or an element whose `status` is not `OK`,
/// with its `Reason` and `XPath` when given.
pub(super) fn refusal_in(root: &Node) -> Option<String> {
    fn failed(node: &Node) -> Option<&Node> {
        if node
            .attr("status")
            .is_some_and(|s| !s.eq_ignore_ascii_case("OK"))
        {
            return Some(node);
        }
        node.children.iter().find_map(failed)
    }
    let error = if root.name.eq_ignore_ascii_case("Fault") {
        root.children.first().unwrap_or(root)
    } else {
        failed(root)?
    };
    let text = |name: &str| {
        error
            .child_named(name)
            .map(|n| n.text.trim().to_owned())
            .filter(|t| !t.is_empty())
    };
    let reason = text("Reason")
        .or_else(|| error.attr("status").map(|s| format!("status {s}")))
        .unwrap_or_else(|| format!("<{}> answer", root.name));
    Some(match text("XPath") {
        Some(path) => format!("{reason} ({path})"),
        None => reason,
    })
}

fn location(key: SettingKey) -> String {
    format!("/Configuration/{}", cisco_config::path(key).join("/"))
}

impl CiscoHttpDriver {
    /// The generation's answer for TC firmware, else `None` (CE and later: every key mapped).
    async fn tc_unsupported(
        &self,
        device: &Device,
        session: &mut Session,
        keys: &[SettingKey],
    ) -> Result<Option<SettingOutcomes>, DriverFailure> {
        let tc = self.firmware(device, session).await? == Firmware::Tc;
        let generation = if tc {
            Generation::Tc
        } else {
            Generation::RoomOs26
        };
        Ok(keys
            .iter()
            .any(|k| !generation.supports(*k))
            .then(|| all_unsupported(keys.iter().copied(), TC_UNSUPPORTED)))
    }

    pub(super) async fn read_settings(
        &self,
        device: &Device,
        keys: &[SettingKey],
    ) -> Result<SettingOutcomes, DriverFailure> {
        let session = self.session_of(device);
        let mut session = session.lock().await;
        if let Some(unsupported) = self.tc_unsupported(device, &mut session, keys).await? {
            return Ok(unsupported);
        }
        let mut outcomes = SettingOutcomes::new();
        for &key in keys {
            let exchange = Exchange::getxml(&location(key));
            let outcome = match self.call(device, &mut session, &exchange).await {
                Err(f)
                    if f.kind == FailureKind::Misprovisioned
                        && f.causes.iter().any(|c| c.starts_with("HTTP 403")) =>
                {
                    SettingOutcome::Refused("HTTP 403 Forbidden".into())
                }
                Err(f) => return Err(f),
                Ok(reply) => {
                    let root = xml::parse(&reply.body)
                        .map_err(|_| super::failures::not_the_api(device, reply))?;
                    let value = root
                        .name
                        .eq_ignore_ascii_case("Configuration")
                        .then(|| root.text_at(&cisco_config::path(key)))
                        .flatten();
                    match (value, refusal_in(&root)) {
                        (Some(value), None) => {
                            SettingOutcome::Value(cisco_config::neutral_value(key, value))
                        }
                        (_, Some(reason)) => SettingOutcome::Refused(reason),
                        (None, None) => {
                            SettingOutcome::Refused(format!("no {} in the answer", location(key)))
                        }
                    }
                }
            };
            outcomes.insert(key, outcome);
        }
        Ok(outcomes)
    }

    pub(super) async fn write_settings(
        &self,
        device: &Device,
        settings: &TemplateSettings,
    ) -> Result<SettingOutcomes, DriverFailure> {
        let session = self.session_of(device);
        let mut session = session.lock().await;
        let keys: Vec<SettingKey> = settings.iter().map(|(k, _)| k).collect();
        if let Some(unsupported) = self.tc_unsupported(device, &mut session, &keys).await? {
            return Ok(unsupported);
        }
        let (writes, _) = cisco_config::writes(Generation::RoomOs26, settings);
        let mut outcomes = SettingOutcomes::new();
        for write in writes {
            let body = configuration_body(&write.path, &write.value);
            let reply = self
                .call(device, &mut session, &Exchange::putxml(body))
                .await
                .map_err(|f| f.written_before(&outcomes))?;
            let root = match xml::parse(&reply.body) {
                Ok(root) => root,
                Err(_) => {
                    let failure = super::failures::not_the_api(device, reply);
                    return Err(failure.written_before(&outcomes));
                }
            };
            let outcome = cisco_config::write_outcome(&device.address, &write, refusal_in(&root));
            outcomes.insert(write.key, outcome);
        }
        Ok(outcomes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_escape_and_refusals_are_found() {
        assert_eq!(
            configuration_body(&["SIP", "DisplayName"], "A & B <4>"),
            "<Configuration><SIP><DisplayName>A &amp; B &lt;4&gt;</DisplayName></SIP></Configuration>"
        );
        let ok = xml::parse("<?xml version=\"1.0\"?>\n<Configuration/>").unwrap();
        assert_eq!(refusal_in(&ok), None);
        let success = xml::parse("<Success/>").unwrap();
        assert_eq!(refusal_in(&success), None);
        let refused = xml::parse(
            "<Command><Configuration status=\"Error\"><Reason>Permission denied</Reason>\
             <XPath>Configuration/SystemUnit/Name</XPath></Configuration></Command>",
        )
        .unwrap();
        assert_eq!(
            refusal_in(&refused).as_deref(),
            Some("Permission denied (Configuration/SystemUnit/Name)")
        );
        let fault = xml::parse(
            "<Fault><XPathError><Reason>No match on address expression.</Reason>\
             <XPath>/Configuration/Audio/Foo</XPath></XPathError></Fault>",
        )
        .unwrap();
        assert_eq!(
            refusal_in(&fault).as_deref(),
            Some("No match on address expression. (/Configuration/Audio/Foo)")
        );
        let bare = xml::parse("<Result status=\"ParameterError\"/>").unwrap();
        assert_eq!(refusal_in(&bare).as_deref(), Some("status ParameterError"));
    }
}

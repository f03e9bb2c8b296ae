//! Template settings over SSH (issue #36): `xConfiguration Time Zone` to read,
//! `xConfiguration Time Zone: "Europe/Oslo"` to write, one line per key on the device's shell.
//!
//! - A read's answer `{"Configuration": {"Time": {"Zone": {"Value": "…"}}}}` gives the value
//!   (`cisco_config::neutral_value`).
//! - A write that succeeds answers with nothing but its `ResultId` (cisco-ce/jsxapi's recorded
//!   `xSet`), which `answers::outcome` would read as a failure: a write is applied unless the
//!   answer holds an error, so [`refusal`] looks for one instead of for an `OK`.
//! - An error comes under `CommandResponse` keyed by the path's root (`Configuration`, as
//!   jsxapi recorded for a refused read) or by any other name, or at the top level: it is that
//!   key's refusal, with the codec's `Reason` and `XPath`.
//! - Texts and time zone names are written JSON-quoted, numbers and `On`/`Off` bare.
//! - TC firmware (its banner) supports no key; a transport failure or a broken session ends the
//!   whole call with that failure.

use super::{CiscoSshDriver, quoted};
use crate::driver::{Device, DriverFailure, SettingOutcome, SettingOutcomes, all_unsupported};
use crate::drivers::cisco_config::{self, Generation};
use roomlink_domain::template::{SettingKey, SettingValue, TemplateSettings};
use serde_json::Value;

const TC_UNSUPPORTED: &str =
    "TC firmware predates Cisco's published xAPI schemas: no template setting is mapped for it";

/// Why an answer refuses, if it does: an object whose `status` is not `OK` under
/// `CommandResponse`, or one whose `status` is `Error` at the top level; its `Reason` (else
/// its status) and `XPath`.
pub fn refusal(answer: &Value) -> Option<String> {
    let status = |v: &Value| v.get("status").and_then(Value::as_str).map(str::to_owned);
    let error = answer
        .get("CommandResponse")
        .and_then(Value::as_object)
        .and_then(|o| {
            o.values()
                .find(|v| status(v).is_some_and(|s| !s.eq_ignore_ascii_case("OK")))
        })
        .or_else(|| {
            answer
                .as_object()?
                .values()
                .find(|v| status(v).is_some_and(|s| s.eq_ignore_ascii_case("Error")))
        })?;
    let text = |name: &str| {
        error
            .get(name)
            .and_then(|r| r.get("Value"))
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
    };
    let reason = text("Reason")
        .or_else(|| status(error).map(|s| format!("status {s}")))
        .unwrap_or_else(|| "refused".into());
    Some(match text("XPath") {
        Some(path) => format!("{reason} ({path})"),
        None => reason,
    })
}

/// The `Value` at `path` under `Configuration`.
pub fn configuration_value<'a>(answer: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut node = answer.get("Configuration")?;
    for word in path {
        node = node.get(word)?;
    }
    node.get("Value").and_then(Value::as_str)
}

/// The `xConfiguration` line writing `value` for `key`.
pub fn write_line(key: SettingKey, setting: &SettingValue, value: &str) -> String {
    let value = match setting {
        SettingValue::Text(_) | SettingValue::TimeZone(_) => quoted(value),
        _ => value.to_owned(),
    };
    format!(
        "xConfiguration {}: {value}",
        cisco_config::path(key).join(" ")
    )
}

impl CiscoSshDriver {
    /// Whether the device runs TC firmware (its banner says), opening a session if needed.
    async fn runs_tc(&self, device: &Device) -> Result<bool, DriverFailure> {
        if let Some(tc) = self.firmware_is_tc(device).await {
            return Ok(tc);
        }
        self.run(device, "xStatus SystemUnit State NumberOfActiveCalls")
            .await?;
        Ok(self.firmware_is_tc(device).await.unwrap_or(false))
    }

    pub(super) async fn read_settings(
        &self,
        device: &Device,
        keys: &[SettingKey],
    ) -> Result<SettingOutcomes, DriverFailure> {
        let generation = if self.runs_tc(device).await? {
            Generation::Tc
        } else {
            Generation::RoomOs26
        };
        let mut outcomes = SettingOutcomes::new();
        for &key in keys {
            if !generation.supports(key) {
                outcomes.insert(key, SettingOutcome::Unsupported(TC_UNSUPPORTED.into()));
                continue;
            }
            let path = cisco_config::path(key);
            let answer = self
                .run(device, &format!("xConfiguration {}", path.join(" ")))
                .await?;
            let outcome = match (configuration_value(&answer, &path), refusal(&answer)) {
                (Some(value), None) => {
                    SettingOutcome::Value(cisco_config::neutral_value(key, value))
                }
                (_, Some(reason)) => SettingOutcome::Refused(reason),
                (None, None) => SettingOutcome::Refused(format!(
                    "no Configuration {} in the answer",
                    path.join(" ")
                )),
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
        if self.runs_tc(device).await? {
            return Ok(all_unsupported(
                settings.iter().map(|(k, _)| k),
                TC_UNSUPPORTED,
            ));
        }
        let (writes, _) = cisco_config::writes(Generation::RoomOs26, settings);
        let mut outcomes = SettingOutcomes::new();
        for write in writes {
            let Some(setting) = settings.get(write.key) else {
                continue;
            };
            let line = write_line(write.key, setting, &write.value);
            let answer = self
                .run(device, &line)
                .await
                .map_err(|f| f.written_before(&outcomes))?;
            let outcome = cisco_config::write_outcome(&device.address, &write, refusal(&answer));
            outcomes.insert(write.key, outcome);
        }
        Ok(outcomes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lines_quote_texts_only_and_refusals_are_found() {
        let zone = SettingValue::TimeZone("Europe/Oslo");
        assert_eq!(
            write_line(SettingKey::TimeZone, &zone, "Europe/Oslo"),
            "xConfiguration Time Zone: \"Europe/Oslo\""
        );
        let on = SettingValue::Literal("on");
        assert_eq!(
            write_line(SettingKey::AutoAnswerMode, &on, "On"),
            "xConfiguration Conference AutoAnswer Mode: On"
        );
        assert_eq!(refusal(&json!({"ResultId": "1"})), None);
        let refused = json!({"CommandResponse": {"Configuration": {"status": "Error",
            "Reason": {"Value": "Permission denied"}, "XPath": {"Value": "Configuration/SIP/DisplayName"}}}});
        assert_eq!(
            refusal(&refused).as_deref(),
            Some("Permission denied (Configuration/SIP/DisplayName)")
        );
        let top = json!({"Status": {"status": "Error"}});
        assert_eq!(refusal(&top).as_deref(), Some("status Error"));
        let value = json!({"Configuration": {"Audio": {"DefaultVolume": {"Value": "70"}}}});
        assert_eq!(
            configuration_value(&value, &["Audio", "DefaultVolume"]),
            Some("70")
        );
        assert_eq!(refusal(&value), None);
    }
}

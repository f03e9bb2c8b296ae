//! Template settings on Poly codecs (issue #36): each vendor-neutral key of
//! `roomlink_domain::template` as the Telnet API command that reads and writes it, and the
//! conversion of its values both ways. Pure functions; `poly_telnet::configuration` sends what
//! they give (docs/drivers.md, "the Poly mapping", names the manual pages).
//!
//! | key | read | write | answer |
//! |---|---|---|---|
//! | `auto_answer.mode` | `autoanswer get` | `autoanswer yes\|no` | `autoanswer yes` |
//! | `auto_answer.mute` | `muteautoanswer get` | `muteautoanswer yes\|no` | `muteautoanswercalls yes` (HDX), `muteautoanswer yes` also read |
//! | `standby.delay_minutes` | `sleeptime get` | `sleeptime 30` | `sleeptime 30` |
//! | `system.name` | `systemname get` | `systemname set "Room"` [I] | `systemname "Room"` [I] |
//!
//! - `yes`/`no` are the template's `on`/`off`. A codec answering `autoanswer donotdisturb`
//!   reads as the neutral value `"donotdisturb"`: neither `on` nor `off`, so a comparison with
//!   any template shows the room differs, and the value says why.
//! - A `sleeptime` of `0` (never sleeps; the Group Series table spells it `off`) reads as 0,
//!   outside the template's space, for the same reason.
//! - The other keys are unsupported, each for the reason [`unsupported`] gives.

use roomlink_domain::template::{SettingKey, SettingValue};
use serde_json::Value;

/// What the Telnet API answers when it has no such command, or not on this model.
const NO_COMMAND: [&str; 2] = ["command not found", "not supported on this model"];
/// The start of the answer a provisioned setting gives instead of being written (HDX manual
/// p. 4–3, Group Series manual, "Availability of Commands").
const PROVISIONED: &str = "this setting is controlled by a provisioning service";

/// The command word that reads and writes `key`, or why the key has none.
pub fn command(key: SettingKey) -> Result<&'static str, &'static str> {
    match key {
        SettingKey::AutoAnswerMode => Ok("autoanswer"),
        SettingKey::AutoAnswerMute => Ok("muteautoanswer"),
        SettingKey::StandbyDelayMinutes => Ok("sleeptime"),
        SettingKey::SystemName => Ok("systemname"),
        other => Err(unsupported(other)),
    }
}

/// Why the Telnet API cannot hold `key` (empty for the keys it maps).
pub fn unsupported(key: SettingKey) -> &'static str {
    match key {
        SettingKey::TimeZone => {
            "the Poly Telnet API documents no command taking an IANA time zone name"
        }
        SettingKey::AudioDefaultVolume => {
            "the Poly Telnet API documents only the current volume (`volume set`, 0 to 50), \
             not the volume a codec starts with"
        }
        SettingKey::SipDisplayName => {
            "the Poly Telnet API documents no command for the SIP display name"
        }
        SettingKey::ProximityMode => {
            "Proximity is a Cisco feature; Poly codecs have no such setting"
        }
        SettingKey::WelcomeMessage => {
            "the Poly Telnet API documents no text greeting people who enter (`sleeptext` is shown \
             as the codec goes to sleep)"
        }
        SettingKey::AutoAnswerMode
        | SettingKey::AutoAnswerMute
        | SettingKey::StandbyDelayMinutes
        | SettingKey::SystemName => "",
        SettingKey::Cisco(_) => "a raw Cisco configuration path; Poly codecs have no such setting",
    }
}

/// The line reading `key`: `autoanswer get`.
pub fn read_line(key: SettingKey) -> Option<String> {
    command(key).ok().map(|c| format!("{c} get"))
}

/// The line writing `value` to `key`, or why it cannot be sent (a text with `"` or a control
/// character, which the domain refuses already: the API documents no escape).
pub fn write_line(key: SettingKey, value: &SettingValue) -> Result<String, String> {
    let command = command(key).map_err(str::to_owned)?;
    let text = match value {
        SettingValue::Literal("on") => "yes".to_owned(),
        SettingValue::Literal("off") => "no".to_owned(),
        SettingValue::Text(text) if key == SettingKey::SystemName => {
            if text.chars().any(|c| c == '"' || c.is_control()) {
                return Err(format!(
                    "{text:?} cannot be sent over the Poly Telnet API (quotes or control characters)"
                ));
            }
            return Ok(format!("{command} set \"{text}\""));
        }
        other => other.text(),
    };
    Ok(format!("{command} {text}"))
}

/// What one answer line says about `key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The value the codec holds, as a neutral JSON value.
    Value(Value),
    /// The codec has no such command: why.
    Unsupported(String),
    /// The codec refused, with its own text.
    Refused(String),
}

/// What `line` (an answer line, echo and prompt removed) says about `key`; `None` when it is
/// not this command's answer (a notification, say).
pub fn answer(key: SettingKey, line: &str) -> Option<Answer> {
    let line = line.trim();
    let lower = line.to_ascii_lowercase();
    let command = command(key).ok()?;
    if lower.starts_with("error") {
        if NO_COMMAND.iter().any(|n| lower.contains(n)) {
            return Some(Answer::Unsupported(format!(
                "this firmware has no {command} command ({line})"
            )));
        }
        return Some(Answer::Refused(line.to_owned()));
    }
    if lower.starts_with(PROVISIONED) {
        return Some(Answer::Refused(line.to_owned()));
    }
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let word = word.to_ascii_lowercase();
    let ours = match key {
        SettingKey::AutoAnswerMute => word == "muteautoanswercalls" || word == "muteautoanswer",
        _ => word == command,
    };
    ours.then(|| Answer::Value(neutral_value(key, rest)))
}

/// A value as the codec answers it, as a neutral JSON value: `yes`/`no` as `on`/`off`, other
/// words as they are (`donotdisturb`), minutes as numbers (`off` as 0), a name without its
/// quotes (`<empty>` as the empty name).
pub fn neutral_value(key: SettingKey, reported: &str) -> Value {
    let reported = reported.trim();
    match key {
        SettingKey::AutoAnswerMode | SettingKey::AutoAnswerMute => {
            match reported.to_ascii_lowercase().as_str() {
                "yes" => Value::from("on"),
                "no" => Value::from("off"),
                other => Value::from(other),
            }
        }
        SettingKey::StandbyDelayMinutes => match reported.parse::<i64>() {
            Ok(minutes) => Value::from(minutes),
            Err(_) if reported.eq_ignore_ascii_case("off") => Value::from(0),
            Err(_) => Value::from(reported),
        },
        _ => {
            let unquoted = reported
                .strip_prefix('"')
                .and_then(|r| r.strip_suffix('"'))
                .unwrap_or(reported);
            Value::from(if unquoted == "<empty>" { "" } else { unquoted })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn four_keys_map_onto_commands_and_the_rest_say_why_not() {
        let mapped: Vec<SettingKey> = SettingKey::ALL
            .iter()
            .copied()
            .filter(|k| command(*k).is_ok())
            .collect();
        assert_eq!(
            mapped,
            [
                SettingKey::SystemName,
                SettingKey::StandbyDelayMinutes,
                SettingKey::AutoAnswerMode,
                SettingKey::AutoAnswerMute
            ]
        );
        for &key in SettingKey::ALL {
            assert_eq!(command(key).is_err(), !unsupported(key).is_empty(), "{key}");
            assert_eq!(read_line(key).is_some(), command(key).is_ok(), "{key}");
        }
        assert_eq!(
            read_line(SettingKey::AutoAnswerMute).as_deref(),
            Some("muteautoanswer get")
        );
    }

    #[test]
    fn values_are_written_as_the_manuals_spell_them() {
        let line = |key, value| write_line(key, &value).unwrap();
        assert_eq!(
            line(SettingKey::AutoAnswerMode, SettingValue::Literal("on")),
            "autoanswer yes"
        );
        assert_eq!(
            line(SettingKey::AutoAnswerMute, SettingValue::Literal("off")),
            "muteautoanswer no"
        );
        assert_eq!(
            line(SettingKey::StandbyDelayMinutes, SettingValue::Integer(240)),
            "sleeptime 240"
        );
        assert_eq!(
            line(
                SettingKey::SystemName,
                SettingValue::Text("Oslo 4.12".into())
            ),
            "systemname set \"Oslo 4.12\""
        );
        assert!(write_line(SettingKey::SystemName, &SettingValue::Text("a\"b".into())).is_err());
        assert!(write_line(SettingKey::TimeZone, &SettingValue::TimeZone("Etc/UTC")).is_err());
    }

    #[test]
    fn answers_read_back_as_neutral_values() {
        let value = |key, line| answer(key, line).unwrap();
        let v = |j: Value| Answer::Value(j);
        assert_eq!(
            value(SettingKey::AutoAnswerMode, "autoanswer yes"),
            v(json!("on"))
        );
        assert_eq!(
            value(SettingKey::AutoAnswerMode, "autoanswer donotdisturb"),
            v(json!("donotdisturb"))
        );
        assert_eq!(
            value(SettingKey::AutoAnswerMute, "muteautoanswercalls no"),
            v(json!("off"))
        );
        assert_eq!(
            value(SettingKey::AutoAnswerMute, "muteautoanswer yes"),
            v(json!("on"))
        );
        assert_eq!(
            value(SettingKey::StandbyDelayMinutes, "sleeptime 30"),
            v(json!(30))
        );
        assert_eq!(
            value(SettingKey::StandbyDelayMinutes, "sleeptime 0"),
            v(json!(0))
        );
        assert_eq!(
            value(SettingKey::StandbyDelayMinutes, "sleeptime off"),
            v(json!(0))
        );
        assert_eq!(
            value(SettingKey::SystemName, "systemname \"Oslo 4.12\""),
            v(json!("Oslo 4.12"))
        );
        assert_eq!(
            value(SettingKey::SystemName, "systemname Oslo"),
            v(json!("Oslo"))
        );
        assert_eq!(
            value(SettingKey::SystemName, "systemname <empty>"),
            v(json!(""))
        );
        // Not this command's answer: a notification, another command's.
        assert_eq!(
            answer(SettingKey::AutoAnswerMode, "cs: call[1] state[RINGING]"),
            None
        );
        assert_eq!(
            answer(SettingKey::AutoAnswerMode, "autoanswerp2p online"),
            None
        );
        assert_eq!(answer(SettingKey::TimeZone, "error: x"), None);
    }

    #[test]
    fn errors_are_refusals_and_missing_commands_unsupported() {
        assert_eq!(
            answer(
                SettingKey::StandbyDelayMinutes,
                "error: command has illegal parameters"
            ),
            Some(Answer::Refused(
                "error: command has illegal parameters".into()
            ))
        );
        assert_eq!(
            answer(SettingKey::SystemName, "error: command not found"),
            Some(Answer::Unsupported(
                "this firmware has no systemname command (error: command not found)".into()
            ))
        );
        assert!(matches!(
            answer(
                SettingKey::AutoAnswerMode,
                "error: this command is not supported on this model"
            ),
            Some(Answer::Unsupported(_))
        ));
        let provisioned =
            "this setting is controlled by a provisioning service and cannot be changed.";
        assert_eq!(
            answer(SettingKey::AutoAnswerMute, provisioned),
            Some(Answer::Refused(provisioned.into()))
        );
    }
}

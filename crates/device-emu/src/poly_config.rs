//! The emulated Poly codec's settings (issue #36): the four Telnet API commands the listener's
//! template mapping (`poly_config` there) reads and writes, answered in the HDX / Group Series
//! integrator manuals' words.
//!
//! | command | values | answer | default |
//! |---|---|---|---|
//! | `autoanswer <get\|yes\|no\|donotdisturb>` | yes, no, donotdisturb | `autoanswer yes` | `yes` (the manuals' default) |
//! | `muteautoanswer <get\|yes\|no>` | yes, no | `muteautoanswercalls no` (HDX's spelling) | `no` [I] |
//! | `sleeptime <get\|0\|1\|3\|15\|30\|60\|120\|240\|480>` | those minutes | `sleeptime 3` | `3` (the manuals' default) |
//! | `systemname get`, `systemname set "<name>"` [I] | any text | `systemname "<name>"` [I] | `Poly-` and the address's octets, as `whoami` says |
//!
//! - A value outside the list is [`Refusal::Illegal`], no value [`Refusal::MoreParameters`]
//!   (`crate::poly_telnet` answers them with its `error:` lines).
//! - [`Fault::Provisioned`]: every write is answered with the first sentence of the answer the
//!   manuals give for a setting a provisioning service controls, and nothing is stored; reads
//!   still answer.
//! - The values live in `Device::poly_configuration` (command → value as answered); the control
//!   surface shows them as `polyConfiguration`.

use crate::device::{Device, Fault};
use std::collections::BTreeMap;

/// The commands this module answers.
pub const COMMANDS: [&str; 4] = ["autoanswer", "muteautoanswer", "sleeptime", "systemname"];
/// What a provisioned codec answers a write (HDX manual p. 4–3; Group Series manual,
/// "Availability of Commands"): the first sentence.
pub const PROVISIONED: &str =
    "this setting is controlled by a provisioning service and cannot be changed.";

const SLEEPTIMES: [&str; 9] = ["0", "1", "3", "15", "30", "60", "120", "240", "480"];

/// Why a settings command was not carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// A word is missing.
    MoreParameters,
    /// A word the command does not take.
    Illegal,
    /// [`Fault::Provisioned`]: answered with [`PROVISIONED`].
    Provisioned,
}

/// The value the device holds for `command` (one of [`COMMANDS`]).
pub fn value(device: &Device, command: &str) -> String {
    if let Some(value) = device.poly_configuration.get(command) {
        return value.clone();
    }
    match command {
        "autoanswer" => "yes".into(),
        "muteautoanswer" => "no".into(),
        "sleeptime" => "3".into(),
        _ => format!("Poly-{}", device.address.replace(['.', ':'], "-")),
    }
}

/// The codec's system name (`whoami` says it too).
pub fn system_name(device: &Device) -> String {
    value(device, "systemname")
}

/// Every setting the device holds, for the control surface's view.
pub fn view(device: &Device) -> BTreeMap<String, String> {
    COMMANDS
        .iter()
        .map(|c| ((*c).to_owned(), value(device, c)))
        .collect()
}

/// The answer line to a command line whose first word is one of [`COMMANDS`] (`None`
/// otherwise).
pub fn answer(device: &mut Device, words: &[&str]) -> Option<Result<String, Refusal>> {
    let (&command, rest) = words.split_first()?;
    let allowed: &[&str] = match command {
        "autoanswer" => &["yes", "no", "donotdisturb"],
        "muteautoanswer" => &["yes", "no"],
        "sleeptime" => &SLEEPTIMES,
        "systemname" => &[],
        _ => return None,
    };
    let new_value = match (command, rest) {
        (_, []) | ("systemname", ["set"]) => return Some(Err(Refusal::MoreParameters)),
        (_, ["get"]) => None,
        ("systemname", ["set", name]) => Some((*name).to_owned()),
        (_, [word]) if command != "systemname" && allowed.contains(word) => {
            Some((*word).to_owned())
        }
        _ => return Some(Err(Refusal::Illegal)),
    };
    if let Some(new_value) = new_value {
        if device.has(Fault::Provisioned) {
            return Some(Err(Refusal::Provisioned));
        }
        device.commands += 1;
        device
            .poly_configuration
            .insert(command.to_owned(), new_value);
    }
    Some(Ok(answer_line(device, command)))
}

/// The answer line showing what the device holds for `command`.
fn answer_line(device: &Device, command: &str) -> String {
    let value = value(device, command);
    match command {
        "muteautoanswer" => format!("muteautoanswercalls {value}"),
        "systemname" => format!("systemname \"{value}\""),
        _ => format!("{command} {value}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn device() -> Device {
        let mut d = Device::new("admin", "pw", Duration::ZERO);
        d.address = "127.0.0.9".into();
        d
    }

    /// The answer to a line of words split at spaces (`_` stands for a space inside a word).
    fn ask(d: &mut Device, line: &str) -> Result<String, Refusal> {
        let words: Vec<String> = line.split(' ').map(|w| w.replace('_', " ")).collect();
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        answer(d, &words).expect("a settings command")
    }

    fn said(line: &str) -> Result<String, Refusal> {
        Ok(line.to_owned())
    }

    #[test]
    fn defaults_are_the_manuals() {
        let mut d = device();
        assert_eq!(ask(&mut d, "autoanswer get"), said("autoanswer yes"));
        assert_eq!(
            ask(&mut d, "muteautoanswer get"),
            said("muteautoanswercalls no")
        );
        assert_eq!(ask(&mut d, "sleeptime get"), said("sleeptime 3"));
        assert_eq!(
            ask(&mut d, "systemname get"),
            said("systemname \"Poly-127-0-0-9\"")
        );
        assert_eq!(d.commands, 0);
    }

    #[test]
    fn writes_answer_the_value_held() {
        let mut d = device();
        assert_eq!(
            ask(&mut d, "autoanswer donotdisturb"),
            said("autoanswer donotdisturb")
        );
        assert_eq!(
            ask(&mut d, "muteautoanswer yes"),
            said("muteautoanswercalls yes")
        );
        assert_eq!(ask(&mut d, "sleeptime 0"), said("sleeptime 0"));
        assert_eq!(
            ask(&mut d, "systemname set Oslo_4.12"),
            said("systemname \"Oslo 4.12\"")
        );
        assert_eq!(system_name(&d), "Oslo 4.12");
        assert_eq!(view(&d)["sleeptime"], "0");
        assert_eq!(d.commands, 4);
    }

    #[test]
    fn values_outside_the_lists_are_refused_and_not_stored() {
        let mut d = device();
        assert_eq!(ask(&mut d, "sleeptime 45"), Err(Refusal::Illegal));
        assert_eq!(ask(&mut d, "sleeptime"), Err(Refusal::MoreParameters));
        assert_eq!(
            ask(&mut d, "muteautoanswer donotdisturb"),
            Err(Refusal::Illegal)
        );
        assert_eq!(ask(&mut d, "autoanswer on"), Err(Refusal::Illegal));
        assert_eq!(ask(&mut d, "systemname set"), Err(Refusal::MoreParameters));
        assert_eq!(ask(&mut d, "systemname Oslo"), Err(Refusal::Illegal));
        assert!(d.poly_configuration.is_empty());
        assert!(answer(&mut d, &["volume", "get"]).is_none());
    }

    #[test]
    fn a_provisioned_codec_refuses_writes_and_answers_reads() {
        let mut d = device();
        d.faults.insert(Fault::Provisioned);
        assert_eq!(ask(&mut d, "sleeptime 30"), Err(Refusal::Provisioned));
        assert_eq!(ask(&mut d, "sleeptime get"), said("sleeptime 3"));
        assert_eq!(d.commands, 0);
    }
}

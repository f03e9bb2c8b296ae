//! Cisco's published xAPI schemas as the referee of every message the emulated codec receives.
//!
//! `xapi/xapi-subset.json` is derived (by `xapi/derive.py`, which names the source repository
//! and commit in it) from the JSON schemas Cisco publishes per software release: for CE 9.15,
//! RoomOS 11.27 and RoomOS 26.4, the commands the drivers and the emulator use (roles,
//! parameters, value spaces), the status paths under the subtrees they read, and the
//! configurations the listener's Cisco mapping of template settings writes (roles, value spaces,
//! products). A command, a status read or a configuration value is checked against every
//! generation: what one of them refuses, the emulated codec refuses, so a driver cannot pass its
//! tests with a message a real codec of a generation it claims would refuse.
//!
//! Decisions where the schemas are silent (docs/drivers.md):
//! - Names (path words, parameters) and `Literal` values compare without regard to case, as
//!   the codecs' xAPI does.
//! - A command whose variants differ by product (`Dial`'s `CallRate` bound) accepts what any
//!   variant accepts.
//! - A status read of a subtree (`/Status/Call`) is known when some status path lies under
//!   it; which parts a role may read is left to the emulator (the schemas grant an Integrator
//!   `Call[n] ReceiveCallRate` but not `Call[n] Status`; the emulator refuses the subtree).
//! - `[n]` instance suffixes and a numeric path word (`/Status/Call/3`) are instance selectors.
//! - A configuration whose variants differ by product accepts, in [`check_configuration`], what
//!   any variant accepts (the emulated codec is no particular product);
//!   [`check_configuration_on_every_product`] asks every variant instead, for tests that a value
//!   holds on every product that has the path.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// One generation's subset of the xAPI.
#[derive(Debug, Deserialize)]
pub struct Generation {
    pub name: String,
    commands: BTreeMap<String, Vec<CommandDef>>,
    /// Every status path as its words, `[n]` dropped and lowercased once at load.
    #[serde(deserialize_with = "status_paths")]
    statuses: Vec<Vec<String>>,
    /// Every product (Cisco's code names) the generation's schema names.
    #[serde(default)]
    products: Vec<String>,
    /// The configurations kept, by path, with one variant per distinct definition.
    #[serde(default)]
    configurations: BTreeMap<String, Vec<ConfigDef>>,
}

#[derive(Debug, Deserialize)]
struct ConfigDef {
    access: Option<String>,
    /// The roles that may write it.
    roles: Vec<String>,
    products: Vec<String>,
    space: ValueSpace,
}

#[derive(Debug, Deserialize)]
struct CommandDef {
    access: Option<String>,
    roles: Vec<String>,
    multiline: bool,
    params: BTreeMap<String, ParamDef>,
}

#[derive(Debug, Deserialize)]
struct ParamDef {
    required: bool,
    space: ValueSpace,
}

/// The status paths' words; their roles and value spaces stay in the file for the docs
/// (reads are not role-checked, above).
fn status_paths<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Vec<String>>, D::Error> {
    let paths = BTreeMap::<String, serde::de::IgnoredAny>::deserialize(d)?;
    Ok(paths
        .keys()
        .map(|path| path_words(path.split(' ')))
        .collect())
}

/// Path words as compared: instance numbers and `[n]` suffixes dropped, lowercased.
fn path_words<'a>(words: impl Iterator<Item = &'a str>) -> Vec<String> {
    words
        .filter(|w| !w.chars().all(|c| c.is_ascii_digit()))
        .map(|w| w.split('[').next().unwrap_or(w).to_ascii_lowercase())
        .collect()
}

/// A parameter's value space, as the schemas write it (numbers as strings).
#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum ValueSpace {
    Integer {
        #[serde(rename = "Min")]
        min: Option<String>,
        #[serde(rename = "Max")]
        max: Option<String>,
    },
    IntegerArray {
        #[serde(rename = "Min")]
        min: Option<String>,
        #[serde(rename = "Max")]
        max: Option<String>,
    },
    String {
        #[serde(rename = "MinLength")]
        min_length: Option<String>,
        #[serde(rename = "MaxLength")]
        max_length: Option<String>,
    },
    Literal {
        #[serde(rename = "Values")]
        values: Vec<String>,
    },
}

/// Why a generation refuses a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// No such command or status path in this generation.
    UnknownPath,
    /// The command is not part of the public API.
    NotPublic,
    UnknownParameter(String),
    MissingParameter(String),
    /// A value outside its parameter's value space: parameter, value, the space.
    OutsideValueSpace(String, String, String),
    /// The command is not for this role.
    RoleMayNot(String),
}

/// A generation's refusal of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub generation: String,
    pub violation: Violation,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let g = &self.generation;
        match &self.violation {
            Violation::UnknownPath => write!(f, "{g}: no such path"),
            Violation::NotPublic => write!(f, "{g}: not a public command"),
            Violation::UnknownParameter(p) => write!(f, "{g}: no parameter {p}"),
            Violation::MissingParameter(p) => write!(f, "{g}: {p} is required"),
            Violation::OutsideValueSpace(p, v, s) => write!(f, "{g}: {p}={v:?} is outside {s}"),
            Violation::RoleMayNot(r) => write!(f, "{g}: the {r} role may not use it"),
        }
    }
}

#[derive(Deserialize)]
struct Subset {
    generations: Vec<Generation>,
}

static GENERATIONS: LazyLock<Vec<Generation>> = LazyLock::new(|| {
    let subset: Subset = serde_json::from_str(include_str!("../xapi/xapi-subset.json"))
        .expect("xapi/xapi-subset.json is the derive script's output");
    subset.generations
});

/// The generations every message is checked against, oldest first.
pub fn generations() -> &'static [Generation] {
    &GENERATIONS
}

/// Checks a command against every generation: the first refusal, if any.
pub fn check_command(
    path: &[String],
    params: &[(String, String)],
    role: &str,
) -> Result<(), Refusal> {
    generations()
        .iter()
        .try_for_each(|g| g.check_command(path, params, role))
}

/// Checks a status read (`/Status/...` path words after `Status`) against every generation.
pub fn check_status(path: &[String]) -> Result<(), Refusal> {
    generations().iter().try_for_each(|g| g.check_status(path))
}

/// Checks writing `value` to a configuration (`xConfiguration` path words) as `role` against
/// every generation: the first refusal, if any. A product variant accepting it is enough.
pub fn check_configuration(path: &[String], value: &str, role: &str) -> Result<(), Refusal> {
    generations()
        .iter()
        .try_for_each(|g| g.check_configuration(path, value, role))
}

/// Like [`check_configuration`], but every product variant of every generation must accept it.
pub fn check_configuration_on_every_product(
    path: &[String],
    value: &str,
    role: &str,
) -> Result<(), Refusal> {
    generations()
        .iter()
        .try_for_each(|g| g.check_configuration_on_every_product(path, value, role))
}

impl Generation {
    fn refuse(&self, violation: Violation) -> Refusal {
        Refusal {
            generation: self.name.clone(),
            violation,
        }
    }

    pub fn check_command(
        &self,
        path: &[String],
        params: &[(String, String)],
        role: &str,
    ) -> Result<(), Refusal> {
        let name = path.join(" ");
        let variants = self
            .commands
            .iter()
            .find(|(known, _)| known.eq_ignore_ascii_case(&name))
            .map(|(_, variants)| variants)
            .ok_or_else(|| self.refuse(Violation::UnknownPath))?;
        // The first variant's refusal when none accepts (they differ only in bounds).
        let mut first = None;
        for variant in variants {
            match variant.check(params, role) {
                Ok(()) => return Ok(()),
                Err(violation) => {
                    first.get_or_insert(violation);
                }
            }
        }
        Err(self.refuse(first.unwrap_or(Violation::UnknownPath)))
    }

    fn configuration(&self, path: &[String]) -> Result<&[ConfigDef], Refusal> {
        let name = path.join(" ");
        self.configurations
            .iter()
            .find(|(known, _)| known.eq_ignore_ascii_case(&name))
            .map(|(_, variants)| variants.as_slice())
            .ok_or_else(|| self.refuse(Violation::UnknownPath))
    }

    pub fn check_configuration(
        &self,
        path: &[String],
        value: &str,
        role: &str,
    ) -> Result<(), Refusal> {
        let variants = self.configuration(path)?;
        let mut first = None;
        for variant in variants {
            match variant.check(value, role) {
                Ok(()) => return Ok(()),
                Err(violation) => {
                    first.get_or_insert(violation);
                }
            }
        }
        Err(self.refuse(first.unwrap_or(Violation::UnknownPath)))
    }

    pub fn check_configuration_on_every_product(
        &self,
        path: &[String],
        value: &str,
        role: &str,
    ) -> Result<(), Refusal> {
        self.configuration(path)?
            .iter()
            .try_for_each(|variant| variant.check(value, role))
            .map_err(|violation| self.refuse(violation))
    }

    /// The products (code names) of this generation without the configuration `path`: on
    /// them, a value written to it is refused whatever it is.
    pub fn products_without_configuration(&self, path: &[String]) -> Vec<&str> {
        let variants = self.configuration(path).unwrap_or_default();
        self.products
            .iter()
            .filter(|p| !variants.iter().any(|v| v.products.contains(p)))
            .map(String::as_str)
            .collect()
    }

    pub fn check_status(&self, path: &[String]) -> Result<(), Refusal> {
        let words = path_words(path.iter().map(String::as_str));
        if self.statuses.iter().any(|leaf| leaf.starts_with(&words)) {
            Ok(())
        } else {
            Err(self.refuse(Violation::UnknownPath))
        }
    }
}

impl CommandDef {
    fn check(&self, params: &[(String, String)], role: &str) -> Result<(), Violation> {
        if self.access.as_deref() != Some("public-api") {
            return Err(Violation::NotPublic);
        }
        if !self.roles.iter().any(|r| r.eq_ignore_ascii_case(role)) {
            return Err(Violation::RoleMayNot(role.to_owned()));
        }
        for (name, value) in params {
            if self.multiline && name.eq_ignore_ascii_case("body") {
                continue; // the multiline payload (HttpApi: a `<body>` element)
            }
            let Some(def) = self
                .params
                .iter()
                .find(|(known, _)| known.eq_ignore_ascii_case(name))
                .map(|(_, def)| def)
            else {
                return Err(Violation::UnknownParameter(name.clone()));
            };
            if let Err(space) = def.space.admits(value) {
                return Err(Violation::OutsideValueSpace(
                    name.clone(),
                    value.clone(),
                    space,
                ));
            }
        }
        for (name, def) in &self.params {
            let given = params.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
            if def.required && !given {
                return Err(Violation::MissingParameter(name.clone()));
            }
        }
        Ok(())
    }
}

impl ConfigDef {
    fn check(&self, value: &str, role: &str) -> Result<(), Violation> {
        if self.access.as_deref() != Some("public-api") {
            return Err(Violation::NotPublic);
        }
        if !self.roles.iter().any(|r| r.eq_ignore_ascii_case(role)) {
            return Err(Violation::RoleMayNot(role.to_owned()));
        }
        self.space
            .admits(value)
            .map_err(|space| Violation::OutsideValueSpace("value".into(), value.to_owned(), space))
    }
}

impl ValueSpace {
    /// `Err` with the space written out when `value` lies outside it.
    fn admits(&self, value: &str) -> Result<(), String> {
        let bound = |b: &Option<String>| b.as_deref().and_then(|b| b.parse::<i64>().ok());
        let integer = |min: &Option<String>, max: &Option<String>, value: &str| {
            let n = value.trim().parse::<i64>().ok();
            let inside = n.is_some_and(|n| {
                bound(min).is_none_or(|m| n >= m) && bound(max).is_none_or(|m| n <= m)
            });
            let (lo, hi) = (bound(min), bound(max));
            inside.then_some(()).ok_or_else(|| {
                format!(
                    "Integer {}..{}",
                    lo.map_or("".into(), |v| v.to_string()),
                    hi.map_or("".into(), |v| v.to_string())
                )
            })
        };
        match self {
            ValueSpace::Integer { min, max } => integer(min, max, value),
            ValueSpace::IntegerArray { min, max } => value
                .split([',', ' '])
                .filter(|v| !v.is_empty())
                .try_for_each(|v| integer(min, max, v)),
            ValueSpace::String {
                min_length,
                max_length,
            } => {
                let length = i64::try_from(value.chars().count()).unwrap_or(i64::MAX);
                let inside = bound(min_length).is_none_or(|m| length >= m)
                    && bound(max_length).is_none_or(|m| length <= m);
                inside.then_some(()).ok_or_else(|| {
                    format!(
                        "String of {}..{} characters",
                        bound(min_length).unwrap_or(0),
                        bound(max_length).map_or("".into(), |v| v.to_string())
                    )
                })
            }
            ValueSpace::Literal { values } => values
                .iter()
                .any(|v| v.eq_ignore_ascii_case(value.trim()))
                .then_some(())
                .ok_or_else(|| match values.len() {
                    // A time zone's 596 names would drown the log line.
                    n if n > 12 => format!("Literal of {n} values"),
                    _ => format!("Literal {}", values.join("/")),
                }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(path: &str) -> Vec<String> {
        path.split(' ').map(str::to_owned).collect()
    }

    fn params(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn three_generations_with_every_command_the_emulator_has() {
        let names: Vec<&str> = generations().iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["CE 9.15", "RoomOS 11.27", "RoomOS 26.4"]);
        for g in generations() {
            for command in crate::cisco_firmware::Firmware::Ce.commands() {
                let name = command.join(" ");
                assert!(g.commands.contains_key(&name), "{}: {name}", g.name);
            }
        }
    }

    #[test]
    fn what_the_drivers_send_passes_every_generation() {
        let dial = params(&[("Number", "4242@meet.example.com"), ("Protocol", "Sip")]);
        assert_eq!(check_command(&words("Dial"), &dial, "User"), Ok(()));
        let h323 = params(&[("Number", "10.0.0.1"), ("Protocol", "h323")]);
        assert_eq!(check_command(&words("Dial"), &h323, "Admin"), Ok(()));
        let tones = params(&[("DTMFString", "1234#*")]);
        assert_eq!(
            check_command(&words("Call DTMFSend"), &tones, "User"),
            Ok(())
        );
        for path in [
            "Call Disconnect",
            "Audio Microphones Mute",
            "Audio Microphones Unmute",
        ] {
            assert_eq!(
                check_command(&words(path), &[], "Integrator"),
                Ok(()),
                "{path}"
            );
        }
        let payload = params(&[("body", "{\"Bookings\":[]}")]);
        assert_eq!(
            check_command(&words("Bookings Put"), &payload, "Admin"),
            Ok(())
        );
        for path in [
            "Call",
            "Call 3 Status",
            "SystemUnit State NumberOfActiveCalls",
            "SystemUnit Software Version",
            "Audio Microphones Mute",
            "Network",
            "Peripherals",
            "Cameras",
        ] {
            assert_eq!(check_status(&words(path)), Ok(()), "{path}");
        }
    }

    /// The check can fail: each of these is a message a codec of some generation refuses.
    #[test]
    fn what_a_codec_refuses_is_refused_with_its_generation_and_reason() {
        let refused = |path: &str, list: &[(&str, &str)], role: &str| {
            check_command(&words(path), &params(list), role).unwrap_err()
        };
        let long = "1".repeat(33);
        let cases = [
            (
                refused("Call DTMFSend", &[("DTMFString", &long)], "User"),
                "CE 9.15: DTMFString=\"111111111111111111111111111111111\" is outside String \
                 of 0..32 characters",
            ),
            (
                refused("Dial", &[("Number", "1"), ("Protocol", "H320")], "User"),
                "RoomOS 11.27: Protocol=\"H320\" is outside Literal H323/Sip/Spark",
            ),
            (
                refused("Dial", &[("Number", "1"), ("CallRate", "20001")], "User"),
                "CE 9.15: CallRate=\"20001\" is outside Integer 64..6000",
            ),
            (
                refused("Dial", &[("Protocol", "Sip")], "User"),
                "CE 9.15: Number is required",
            ),
            (
                refused("Dial", &[("Number", "1"), ("Speed", "fast")], "User"),
                "CE 9.15: no parameter Speed",
            ),
            (
                refused("Call DTMFSend", &[("DTMFString", "1")], "Integrator"),
                "CE 9.15: the Integrator role may not use it",
            ),
            (
                refused("Bookings Put", &[("body", "{}")], "User"),
                "CE 9.15: the User role may not use it",
            ),
            (refused("DTMFSend", &[], "Admin"), "CE 9.15: no such path"),
        ];
        for (refusal, expected) in cases {
            assert_eq!(refusal.to_string(), expected);
        }
        assert_eq!(
            check_status(&words("Call Foo")).unwrap_err().to_string(),
            "CE 9.15: no such path"
        );
    }

    #[test]
    fn configurations_are_checked_for_path_role_and_value_space() {
        let ok =
            |path: &str, value: &str, role: &str| check_configuration(&words(path), value, role);
        assert_eq!(ok("Time Zone", "Europe/Oslo", "User"), Ok(()));
        assert_eq!(ok("audio defaultvolume", "100", "Integrator"), Ok(()));
        assert_eq!(ok("Conference AutoAnswer Mode", "on", "Admin"), Ok(()));
        assert_eq!(ok("UserInterface OSD HalfwakeMessage", "", "Admin"), Ok(()));
        let refused = |path: &str, value: &str, role: &str| {
            check_configuration(&words(path), value, role)
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            refused("Audio DefaultVolume", "101", "Admin"),
            "CE 9.15: value=\"101\" is outside Integer 0..100"
        );
        assert_eq!(
            refused("Standby Delay", "0", "Admin"),
            "CE 9.15: value=\"0\" is outside Integer 1..480"
        );
        assert_eq!(
            refused("Time Zone", "America/Coyhaique", "Admin"),
            "CE 9.15: value=\"America/Coyhaique\" is outside Literal of 596 values"
        );
        assert_eq!(
            refused("Conference AutoAnswer Mode", "On", "User"),
            "CE 9.15: the User role may not use it"
        );
        assert_eq!(
            refused(
                "UserInterface OSD HalfwakeMessage",
                &"x".repeat(129),
                "Admin"
            ),
            format!(
                "CE 9.15: value={:?} is outside String of 0..128 characters",
                "x".repeat(129)
            )
        );
        assert_eq!(
            refused("Audio Volume", "50", "Admin"),
            "CE 9.15: no such path"
        );
        // RoomOS 26.4 lists one more time zone than the older generations.
        let newest = generations().last().unwrap();
        assert_eq!(
            newest.check_configuration(&words("Time Zone"), "America/Coyhaique", "Admin"),
            Ok(())
        );
    }

    #[test]
    fn product_variants_and_products_without_a_configuration() {
        let g = &generations()[0];
        let halfwake = words("UserInterface OSD HalfwakeMessage");
        assert_eq!(
            g.products_without_configuration(&halfwake),
            [
                "darling_10_55",
                "darling_10_70",
                "darling_15_55",
                "darling_15_70",
                "darling_15_85",
                "vecchio"
            ]
        );
        assert!(
            g.products_without_configuration(&words("SystemUnit Name"))
                .is_empty()
        );
        assert_eq!(
            check_configuration_on_every_product(&words("Standby Delay"), "480", "Admin"),
            Ok(())
        );
    }
}

//! Listener versions and the commands each one has (docs/listener-protocol.md, "Versions").

use std::fmt;
use std::str::FromStr;

/// A listener software version, `X.Y.Z`. Ordered as semantic versions without pre-releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub patch: u32,
}

impl Version {
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Version {
            major,
            minor,
            patch,
        }
    }
}

/// The version a simulator reports unless told otherwise.
pub const DEFAULT_VERSION: Version = Version::new(2, 25, 0);

impl FromStr for Version {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let parts: Vec<&str> = text.trim().split('.').collect();
        let number = |part: &str| {
            if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
                part.parse::<u32>().ok()
            } else {
                None
            }
        };
        match parts.as_slice() {
            [major, minor, patch] => match (number(major), number(minor), number(patch)) {
                (Some(major), Some(minor), Some(patch)) => Ok(Version::new(major, minor, patch)),
                _ => Err(format!("'{text}' is not a version X.Y.Z")),
            },
            _ => Err(format!("'{text}' is not a version X.Y.Z")),
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Every command of protocol 1 with the listener version it appeared in.
pub const COMMANDS: &[(&str, Version)] = &[
    ("join", Version::new(1, 0, 0)),
    ("hangup", Version::new(1, 0, 0)),
    ("senddtmf", Version::new(2, 0, 0)),
    ("mutemicrophone", Version::new(2, 2, 0)),
    ("unmutemicrophone", Version::new(2, 2, 0)),
    ("status", Version::new(2, 15, 0)),
    ("pushcalendar", Version::new(3, 1, 0)),
    ("readcalendar", Version::new(3, 2, 0)),
    ("readinventory", Version::new(3, 3, 0)),
    ("readconfiguration", Version::new(3, 4, 0)),
    ("writeconfiguration", Version::new(3, 4, 0)),
];

/// The commands a listener of `version` has, in protocol order.
pub fn commands_of(version: Version) -> Vec<&'static str> {
    COMMANDS
        .iter()
        .filter(|(_, since)| *since <= version)
        .map(|(name, _)| *name)
        .collect()
}

/// The capabilities advertised for a set of commands (`/v1/info` `capabilities`).
pub fn capabilities_of(commands: &[String]) -> Vec<&'static str> {
    let has = |name: &str| commands.iter().any(|c| c == name);
    [
        ("join", "JOIN"),
        ("hangup", "HANGUP"),
        ("status", "STATUS"),
        ("mutemicrophone", "MUTE_MICROPHONE"),
        ("pushcalendar", "CALENDAR_PUSH"),
    ]
    .into_iter()
    .filter(|(command, _)| has(command))
    .map(|(_, capability)| capability)
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_x_y_z() {
        let v: Version = "2.15.0".parse().unwrap();
        assert_eq!(v, Version::new(2, 15, 0));
        assert_eq!(v.to_string(), "2.15.0");
        for bad in [
            "",
            "2",
            "2.1",
            "2.1.x",
            "2.1.0.4",
            "-1.0.0",
            "1..0",
            "v1.0.0",
            "1.0.0-beta",
        ] {
            assert!(bad.parse::<Version>().is_err(), "{bad}");
        }
    }

    #[test]
    fn versions_order_numerically_not_textually() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        assert!(v("2.10.0") > v("2.9.9"));
        assert!(v("10.0.0") > v("9.99.99"));
    }

    #[test]
    fn a_listener_has_only_the_commands_of_its_version() {
        let v = |s: &str| s.parse::<Version>().unwrap();
        assert_eq!(commands_of(v("1.3.0")), ["join", "hangup"]);
        assert_eq!(commands_of(v("2.0.0")), ["join", "hangup", "senddtmf"]);
        assert_eq!(
            commands_of(v("2.2.0")),
            [
                "join",
                "hangup",
                "senddtmf",
                "mutemicrophone",
                "unmutemicrophone"
            ]
        );
        assert!(!commands_of(v("2.14.9")).contains(&"status"));
        // The simulator's default predates calendar push, calendar reading, inventory and
        // configuration.
        assert_eq!(commands_of(DEFAULT_VERSION).len(), COMMANDS.len() - 5);
        assert_eq!(commands_of(v("3.1.0")).len(), COMMANDS.len() - 4);
        assert!(!commands_of(v("3.1.0")).contains(&"readcalendar"));
        assert!(!commands_of(v("3.2.0")).contains(&"readinventory"));
        assert_eq!(commands_of(v("3.3.0")).len(), COMMANDS.len() - 2);
        assert!(!commands_of(v("3.3.0")).contains(&"writeconfiguration"));
        assert_eq!(commands_of(v("3.4.0")).len(), COMMANDS.len());
        assert!(commands_of(v("0.9.0")).is_empty());
    }

    #[test]
    fn capabilities_follow_the_commands() {
        let names = |v: &str| -> Vec<String> {
            commands_of(v.parse().unwrap())
                .into_iter()
                .map(str::to_owned)
                .collect()
        };
        assert_eq!(capabilities_of(&names("1.3.0")), ["JOIN", "HANGUP"]);
        assert_eq!(
            capabilities_of(&names("2.25.0")),
            ["JOIN", "HANGUP", "STATUS", "MUTE_MICROPHONE"]
        );
        assert_eq!(
            capabilities_of(&names("3.2.0")),
            [
                "JOIN",
                "HANGUP",
                "STATUS",
                "MUTE_MICROPHONE",
                "CALENDAR_PUSH"
            ]
        );
    }
}

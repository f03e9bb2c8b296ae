//! The catalog: every vendor-neutral key a template may set, with its value space, and the
//! raw vendor paths of [`super::cisco_paths`].

use super::cisco_paths::{self, CiscoPath};
use super::space::ValueSpace;

const OFF_ON: &[&str] = &["off", "on"];

/// The standby delays (minutes) both vendors take: Poly's `sleeptime` values other than 0
/// ("never"), all inside Cisco's `Standby Delay` range of 1 to 480.
pub const STANDBY_DELAYS: &[i64] = &[1, 3, 15, 30, 60, 120, 240, 480];

macro_rules! keys {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $space:expr; )+) => {
        /// A template setting's key: vendor-neutral, or a raw vendor path (after every
        /// neutral key in order).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum SettingKey {
            $( $(#[$doc])* $variant, )+
            /// A raw Cisco configuration path (`cisco:Audio Ultrasound MaxVolume`), the escape
            /// hatch for what no neutral key covers.
            Cisco(&'static CiscoPath),
        }

        impl SettingKey {
            /// Every vendor-neutral key, in catalog order.
            pub const ALL: &'static [SettingKey] = &[$(SettingKey::$variant),+];

            /// The key as templates write it.
            pub const fn name(self) -> &'static str {
                match self {
                    $(SettingKey::$variant => $name,)+
                    SettingKey::Cisco(path) => path.key,
                }
            }

            /// The values the key takes.
            pub const fn space(self) -> ValueSpace {
                match self {
                    $(SettingKey::$variant => $space,)+
                    SettingKey::Cisco(path) => path.space,
                }
            }
        }
    };
}

keys! {
    /// The time zone the room shows and books in.
    TimeZone = "time_zone", ValueSpace::TimeZone;
    /// The room system's own name (Cisco `SystemUnit Name`, Poly `systemname`).
    SystemName = "system.name", ValueSpace::Text { min_chars: 1, max_chars: 50 };
    /// Minutes without use before the room system goes to standby (sleep).
    StandbyDelayMinutes = "standby.delay_minutes", ValueSpace::IntegerSet(STANDBY_DELAYS);
    /// The loudspeaker volume the room system starts with, in percent of its range.
    AudioDefaultVolume = "audio.default_volume", ValueSpace::IntegerRange { min: 0, max: 100 };
    /// The name the far end sees in a SIP call.
    SipDisplayName = "sip.display_name", ValueSpace::Text { min_chars: 0, max_chars: 50 };
    /// Whether companion apps may find the room by ultrasound (Cisco Proximity).
    ProximityMode = "proximity.mode", ValueSpace::Literal(OFF_ON);
    /// Whether an incoming call is answered without anyone touching the room system.
    AutoAnswerMode = "auto_answer.mode", ValueSpace::Literal(OFF_ON);
    /// Whether the microphones start muted in an automatically answered call.
    AutoAnswerMute = "auto_answer.mute", ValueSpace::Literal(OFF_ON);
    /// The text on the screen that greets people entering the room (Cisco's halfwake screen).
    WelcomeMessage = "welcome.message", ValueSpace::Text { min_chars: 0, max_chars: 128 };
}

impl SettingKey {
    /// The key named `name`: a neutral key exactly (keys are lower case), or a raw Cisco path.
    pub fn parse(name: &str) -> Option<SettingKey> {
        SettingKey::lookup(name).ok()
    }

    /// As [`SettingKey::parse`], or why `name` is no key, for a refusal (`'name' is ...`).
    pub fn lookup(name: &str) -> Result<SettingKey, String> {
        if let Some(key) = SettingKey::ALL.iter().copied().find(|k| k.name() == name) {
            return Ok(key);
        }
        let shown = crate::enums::shorten(name);
        if name.starts_with(cisco_paths::PREFIX) {
            return cisco_paths::lookup(name)
                .map(SettingKey::Cisco)
                .map_err(|why| format!("'{shown}': {why}"));
        }
        if let Some((vendor, _)) = name.split_once(':') {
            return Err(format!(
                "'{shown}': raw paths are taken for Cisco only ('{}Path Words'), the vendor \
                 that publishes a configuration schema to check them against; '{}' is not one",
                cisco_paths::PREFIX,
                crate::enums::shorten(vendor)
            ));
        }
        Err(format!(
            "'{shown}' is not a template setting (known: {}; or a raw Cisco path such as \
             'cisco:Audio Ultrasound MaxVolume')",
            SettingKey::names()
        ))
    }

    /// The raw Cisco path, when this key is one.
    pub fn cisco_path(self) -> Option<&'static CiscoPath> {
        match self {
            SettingKey::Cisco(path) => Some(path),
            _ => None,
        }
    }

    /// Every key's name, comma-separated, for messages.
    pub fn names() -> String {
        let names: Vec<&str> = SettingKey::ALL.iter().map(|k| k.name()).collect();
        names.join(", ")
    }
}

impl std::fmt::Display for SettingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_parses_back_from_its_name() {
        for &key in SettingKey::ALL {
            assert_eq!(SettingKey::parse(key.name()), Some(key));
        }
        assert_eq!(SettingKey::ALL.len(), 9);
        assert_eq!(SettingKey::parse("Time_Zone"), None);
        assert_eq!(SettingKey::parse("timezone"), None);
    }

    #[test]
    fn raw_cisco_paths_are_keys_after_every_neutral_one() {
        let raw = SettingKey::parse("cisco:audio ultrasound maxvolume").unwrap();
        assert_eq!(raw.name(), "cisco:Audio Ultrasound MaxVolume");
        assert_eq!(raw.space(), ValueSpace::IntegerRange { min: 0, max: 90 });
        assert_eq!(SettingKey::parse(raw.name()), Some(raw));
        assert!(raw.cisco_path().is_some());
        assert!(SettingKey::ALL.iter().all(|k| *k < raw));
        assert!(!SettingKey::ALL.contains(&raw));
        let why = SettingKey::lookup("poly:sleeptime").unwrap_err();
        assert!(
            why.starts_with("'poly:sleeptime': raw paths are taken for Cisco only"),
            "{why}"
        );
        let why = SettingKey::lookup("cisco:Audio DefaultVolume").unwrap_err();
        assert!(why.contains("'audio.default_volume'"), "{why}");
    }

    #[test]
    fn the_issue_s_keys_are_in_the_catalog() {
        for name in [
            "time_zone",
            "standby.delay_minutes",
            "audio.default_volume",
            "sip.display_name",
            "proximity.mode",
            "auto_answer.mode",
            "welcome.message",
        ] {
            assert!(SettingKey::parse(name).is_some(), "{name}");
        }
    }

    #[test]
    fn standby_delays_are_sorted_and_inside_1_to_480() {
        assert!(STANDBY_DELAYS.windows(2).all(|w| w[0] < w[1]));
        assert!(STANDBY_DELAYS.iter().all(|d| (1..=480).contains(d)));
    }
}

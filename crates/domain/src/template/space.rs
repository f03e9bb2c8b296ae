//! Value spaces of template settings and the values they admit.

use super::time_zones;
use crate::enums::shorten;
use crate::error::Error;
use serde_json::Value;

/// The largest whole number an undo writes back (every numeric setting is a count of minutes
/// or a level, far below it).
pub const RESTORED_MAX: i64 = 1_000_000;
/// The longest text an undo writes back (Cisco's longest, `SIP DisplayName`, is 550).
pub const RESTORED_MAX_CHARS: usize = 1024;

/// What values a setting takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueSpace {
    /// A whole number from `min` to `max`, both included.
    IntegerRange { min: i64, max: i64 },
    /// One of these whole numbers.
    IntegerSet(&'static [i64]),
    /// One of these words (given in any case, kept in this spelling).
    Literal(&'static [&'static str]),
    /// A text of `min_chars` to `max_chars` characters (Unicode scalar values), without control
    /// characters and without `"` (see the module documentation of [`super`]).
    Text { min_chars: usize, max_chars: usize },
    /// A time zone name of [`time_zones`] (given in any case, kept in its spelling).
    TimeZone,
}

/// A value inside its setting's space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingValue {
    Integer(i64),
    /// A literal in its space's spelling.
    Literal(&'static str),
    Text(String),
    /// A time zone name in the list's spelling.
    TimeZone(&'static str),
}

impl SettingValue {
    /// The value as JSON, as a template shows it.
    pub fn to_json(&self) -> Value {
        match self {
            SettingValue::Integer(n) => Value::from(*n),
            SettingValue::Literal(s) | SettingValue::TimeZone(s) => Value::from(*s),
            SettingValue::Text(s) => Value::from(s.as_str()),
        }
    }

    /// The value as text (a number in decimal).
    pub fn text(&self) -> String {
        match self {
            SettingValue::Integer(n) => n.to_string(),
            SettingValue::Literal(s) | SettingValue::TimeZone(s) => (*s).to_owned(),
            SettingValue::Text(s) => s.clone(),
        }
    }
}

impl std::fmt::Display for ValueSpace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ValueSpace::IntegerRange { min, max } => {
                write!(f, "a whole number from {min} to {max}")
            }
            ValueSpace::IntegerSet(values) => {
                let list: Vec<String> = values.iter().map(i64::to_string).collect();
                write!(f, "one of {}", list.join(", "))
            }
            ValueSpace::Literal(values) => write!(f, "one of {}", values.join(", ")),
            ValueSpace::Text {
                min_chars,
                max_chars,
            } => write!(
                f,
                "a text of {min_chars} to {max_chars} characters without control characters or '\"'"
            ),
            ValueSpace::TimeZone => write!(
                f,
                "a time zone name of the IANA database that every Cisco generation knows, such as \
                 Europe/Oslo or Etc/UTC"
            ),
        }
    }
}

impl ValueSpace {
    /// The value of `key` when `value` lies inside this space; else `Invalid` naming the key,
    /// the value and the space.
    pub fn parse(&self, key: &str, value: &Value) -> Result<SettingValue, Error> {
        let refuse = || {
            let shown = match value {
                Value::String(s) => format!("'{}'", shorten(s)),
                other => shorten(&other.to_string()),
            };
            Error::invalid(format!("settings.{key}: {shown} is not {self}"))
        };
        // A number with no fraction (`70.0`) is the whole number JSON Schema's `integer` admits.
        let whole = |n: &serde_json::Number| {
            n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
                    .map(|f| f as i64)
            })
        };
        match (self, value) {
            (ValueSpace::IntegerRange { min, max }, Value::Number(n)) => whole(n)
                .filter(|n| (*min..=*max).contains(n))
                .map(SettingValue::Integer)
                .ok_or_else(refuse),
            (ValueSpace::IntegerSet(values), Value::Number(n)) => whole(n)
                .filter(|n| values.contains(n))
                .map(SettingValue::Integer)
                .ok_or_else(refuse),
            (ValueSpace::Literal(values), Value::String(s)) => values
                .iter()
                .find(|v| v.eq_ignore_ascii_case(s))
                .map(|v| SettingValue::Literal(v))
                .ok_or_else(refuse),
            (
                ValueSpace::Text {
                    min_chars,
                    max_chars,
                },
                Value::String(s),
            ) => {
                let length = s.chars().count();
                let clean = !s.chars().any(|c| c.is_control() || c == '"');
                (clean && (*min_chars..=*max_chars).contains(&length))
                    .then(|| SettingValue::Text(s.clone()))
                    .ok_or_else(refuse)
            }
            (ValueSpace::TimeZone, Value::String(s)) => time_zones::canonical(s)
                .map(SettingValue::TimeZone)
                .ok_or_else(refuse),
            _ => Err(refuse()),
        }
    }

    /// A value a room system held, to be written back to it (an undo): the same type as this
    /// space's, but any whole number from 0 to [`RESTORED_MAX`] and any clean text up to
    /// [`RESTORED_MAX_CHARS`] characters, since the room took it before and its vendor's space
    /// may be wider than roomlink's (a Cisco standby delay of 10 minutes). Literals and time
    /// zones stay in their lists: drivers map only those. Texts still refuse control characters
    /// and `"`, which the command lines of Cisco SSH and Poly Telnet cannot carry.
    pub fn parse_restore(&self, key: &str, value: &Value) -> Result<SettingValue, Error> {
        let loose = match self {
            ValueSpace::IntegerRange { .. } | ValueSpace::IntegerSet(_) => {
                ValueSpace::IntegerRange {
                    min: 0,
                    max: RESTORED_MAX,
                }
            }
            ValueSpace::Text { .. } => ValueSpace::Text {
                min_chars: 0,
                max_chars: RESTORED_MAX_CHARS,
            },
            ValueSpace::Literal(_) | ValueSpace::TimeZone => *self,
        };
        loose.parse(key, value)
    }

    /// Every value of a finite space (`None` for texts): what the listener's tests hand to each
    /// vendor's schema.
    pub fn values(&self) -> Option<Vec<SettingValue>> {
        match self {
            ValueSpace::IntegerRange { min, max } => {
                Some((*min..=*max).map(SettingValue::Integer).collect())
            }
            ValueSpace::IntegerSet(values) => {
                Some(values.iter().copied().map(SettingValue::Integer).collect())
            }
            ValueSpace::Literal(values) => {
                Some(values.iter().copied().map(SettingValue::Literal).collect())
            }
            ValueSpace::TimeZone => Some(time_zones::all().map(SettingValue::TimeZone).collect()),
            ValueSpace::Text { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use serde_json::json;

    const VOLUME: ValueSpace = ValueSpace::IntegerRange { min: 0, max: 100 };
    const TEXT: ValueSpace = ValueSpace::Text {
        min_chars: 1,
        max_chars: 5,
    };

    fn message(space: ValueSpace, value: Value) -> String {
        let e = space.parse("k", &value).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid);
        e.message().to_owned()
    }

    #[test]
    fn integer_ranges_take_whole_numbers_inside_them() {
        assert_eq!(
            VOLUME.parse("k", &json!(0)).unwrap(),
            SettingValue::Integer(0)
        );
        assert_eq!(
            VOLUME.parse("k", &json!(100)).unwrap(),
            SettingValue::Integer(100)
        );
        assert_eq!(
            message(VOLUME, json!(101)),
            "settings.k: 101 is not a whole number from 0 to 100"
        );
        assert!(VOLUME.parse("k", &json!(-1)).is_err());
        assert!(VOLUME.parse("k", &json!(5.5)).is_err());
        // JSON Schema's `integer` admits 5.0: so does the space.
        assert_eq!(
            VOLUME.parse("k", &json!(5.0)).unwrap(),
            SettingValue::Integer(5)
        );
        assert!(VOLUME.parse("k", &json!(1e300)).is_err());
        assert_eq!(
            message(VOLUME, json!("50")),
            "settings.k: '50' is not a whole number from 0 to 100"
        );
        assert_eq!(VOLUME.values().unwrap().len(), 101);
    }

    #[test]
    fn integer_sets_take_their_members_only() {
        let set = ValueSpace::IntegerSet(&[1, 3, 15]);
        assert_eq!(set.parse("k", &json!(3)).unwrap(), SettingValue::Integer(3));
        assert_eq!(
            message(set, json!(2)),
            "settings.k: 2 is not one of 1, 3, 15"
        );
        assert_eq!(set.values().unwrap().len(), 3);
    }

    #[test]
    fn literals_match_in_any_case_and_keep_their_spelling() {
        let onoff = ValueSpace::Literal(&["off", "on"]);
        assert_eq!(
            onoff.parse("k", &json!("ON")).unwrap(),
            SettingValue::Literal("on")
        );
        assert_eq!(
            message(onoff, json!("auto")),
            "settings.k: 'auto' is not one of off, on"
        );
        assert_eq!(
            message(onoff, json!(true)),
            "settings.k: true is not one of off, on"
        );
        assert_eq!(
            message(onoff, json!(null)),
            "settings.k: null is not one of off, on"
        );
    }

    #[test]
    fn texts_have_bounded_lengths_in_characters_and_no_control_characters() {
        assert_eq!(
            TEXT.parse("k", &json!("Ørsta")).unwrap(),
            SettingValue::Text("Ørsta".into())
        );
        assert!(TEXT.parse("k", &json!("")).is_err());
        assert!(TEXT.parse("k", &json!("abcdef")).is_err());
        assert!(TEXT.parse("k", &json!("a\nb")).is_err());
        assert!(TEXT.parse("k", &json!("a\u{7f}")).is_err());
        assert_eq!(
            message(TEXT, json!("a\"b")),
            "settings.k: 'a\"b' is not a text of 1 to 5 characters without control characters \
             or '\"'"
        );
        assert!(TEXT.parse("k", &json!(["a"])).is_err());
        assert_eq!(TEXT.values(), None);
    }

    #[test]
    fn time_zones_are_names_of_the_list_in_its_spelling() {
        let tz = ValueSpace::TimeZone;
        assert_eq!(
            tz.parse("k", &json!("america/new_york")).unwrap(),
            SettingValue::TimeZone("America/New_York")
        );
        assert!(message(tz, json!("CEST")).starts_with("settings.k: 'CEST' is not a time zone"));
        assert!(tz.parse("k", &json!(1)).is_err());
    }

    #[test]
    fn a_long_refused_value_is_shortened() {
        let long = "x".repeat(300);
        let m = message(TEXT, json!(long));
        assert!(m.len() < 200, "{m}");
    }

    #[test]
    fn values_render_as_json_and_text() {
        assert_eq!(SettingValue::Integer(7).to_json(), json!(7));
        assert_eq!(SettingValue::Literal("on").text(), "on");
        assert_eq!(
            SettingValue::TimeZone("Etc/UTC").to_json(),
            json!("Etc/UTC")
        );
        assert_eq!(SettingValue::Text("hi".into()).text(), "hi");
    }
}

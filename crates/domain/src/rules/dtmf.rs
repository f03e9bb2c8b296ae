//! DTMF strings: digits, `#` and `*` only, 1 to 64 tones.

use crate::enums::shorten;
use crate::error::{Error, ErrorKind};

pub const MAX_TONES: usize = 64;

/// A validated DTMF string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dtmf(String);

impl Dtmf {
    pub fn parse(text: Option<&str>) -> Result<Self, Error> {
        let text = text.unwrap_or("");
        let bad_tone = text
            .chars()
            .find(|c| !(c.is_ascii_digit() || *c == '#' || *c == '*'));
        let problem = if text.is_empty() {
            Some("dtmfString: is required".to_owned())
        } else if text.len() > MAX_TONES {
            Some(format!("dtmfString: at most {MAX_TONES} tones are allowed"))
        } else {
            bad_tone.map(|c| {
                format!(
                    "dtmfString: '{c}' in '{}' is not a digit, '#' or '*'",
                    shorten(text)
                )
            })
        };
        match problem {
            None => Ok(Dtmf(text.to_owned())),
            Some(message) => Err(Error::new(ErrorKind::InvalidDtmf, message.clone())
                .with("message", message.clone())
                .with("causeMessage", message)),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_digits_hash_and_star() {
        assert_eq!(
            Dtmf::parse(Some("0123456789#*")).unwrap().as_str(),
            "0123456789#*"
        );
        assert!(Dtmf::parse(Some(&"1".repeat(MAX_TONES))).is_ok());
    }

    #[test]
    fn refuses_anything_else_as_invalid_dtmf() {
        for bad in [
            None,
            Some(""),
            Some("12a"),
            Some("1 2"),
            Some("１"),
            Some(","),
        ] {
            let e = Dtmf::parse(bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidDtmf, "{bad:?}");
            assert!(e.details().contains_key("causeMessage"));
        }
        assert!(Dtmf::parse(Some(&"1".repeat(MAX_TONES + 1))).is_err());
    }
}

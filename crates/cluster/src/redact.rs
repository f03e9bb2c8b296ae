//! What a log may say about a JSON error: serde_json's messages can quote
//! the payload's values (`invalid type: string "…"`), and a payload may hold a password.

use std::fmt;

/// A JSON error's category and position, never its message.
pub(crate) struct JsonError<'a>(pub(crate) &'a serde_json::Error);

impl fmt::Display for JsonError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.0;
        write!(
            f,
            "{:?} error at line {} column {}",
            e.classify(),
            e.line(),
            e.column()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_value_of_the_payload_is_shown() {
        let e = serde_json::from_str::<u8>(r#""hunter2""#).unwrap_err();
        assert!(
            e.to_string().contains("hunter2"),
            "serde_json quotes values"
        );
        let shown = JsonError(&e).to_string();
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(shown.starts_with("Data error"), "{shown}");
    }
}

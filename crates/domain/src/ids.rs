//! Identifiers. Every id is an opaque string of 1 to 64 `[A-Za-z0-9_-]`; those roomlink
//! generates are 24 lower-case hex digits (96 random bits), the shape of the predecessor's ids.

use crate::error::Error;

/// The longest id: 64 characters.
pub const MAX_CHARS: usize = 64;

/// The shape of every id (and of every field that refers to one): 1 to [`MAX_CHARS`] of
/// `[A-Za-z0-9_-]`.
pub fn is_well_formed(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= MAX_CHARS
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A new id: 24 lower-case hex digits (96 bits) from the operating system's CSPRNG.
pub fn random_entity_id() -> String {
    let mut bytes = [0u8; 12];
    // The OS random source failing is unrecoverable: no safe id can be made without it.
    #[allow(clippy::expect_used)]
    getrandom::fill(&mut bytes).expect("the operating system's random source failed");
    // Written digit by digit: a CSV upload of thousands of rows asks for thousands of ids.
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut id = String::with_capacity(24);
    for b in bytes {
        id.push(char::from(HEX[usize::from(b >> 4)]));
        id.push(char::from(HEX[usize::from(b & 15)]));
    }
    id
}

macro_rules! id_type {
    ($($(#[$meta:meta])* $name:ident = $class:literal;)*) => {$(
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// The entity class named in `NotFound` and `Unmodifiable` details.
            pub const ENTITY_CLASS: &'static str = $class;

            /// Parses an id from a path or body. A malformed id is `NotFound`, exactly as if it
            /// did not exist: a client learns nothing from the difference.
            pub fn parse(text: &str) -> Result<Self, Error> {
                if is_well_formed(text) {
                    Ok($name(text.to_owned()))
                } else {
                    Err(Error::not_found($class, &crate::enums::shorten(text)))
                }
            }

            /// Wraps an id that came from the id generator or from storage.
            pub fn from_trusted(text: String) -> Self {
                $name(text)
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            pub fn into_string(self) -> String {
                self.0
            }

            /// `NotFound` for this id.
            pub fn not_found(&self) -> Error {
                Error::not_found($class, &self.0)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        /// Read back from roomlink's own messages (the cluster bus); a malformed id is refused.
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                if is_well_formed(&text) {
                    Ok($name(text))
                } else {
                    Err(serde::de::Error::custom("not an id"))
                }
            }
        }
    )*};
}

id_type! {
    EnterpriseId = "Enterprise";
    EndpointId = "Endpoint";
    ListenerServiceId = "ListenerService";
    UserId = "User";
    /// The public id of an access token: lets an administrator list and revoke tokens without
    /// ever seeing their values.
    TokenId = "AccessToken";
    PairingCodeId = "PairingCode";
    FailureId = "Failure";
    /// A webhook subscription.
    WebhookId = "Webhook";
    /// A configuration template.
    TemplateId = "Template";
    /// A job applying a configuration template, or undoing one.
    JobId = "Job";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn malformed_ids_are_not_found() {
        let e = EndpointId::parse("../../etc/passwd").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotFound);
        assert_eq!(e.details()["entityClass"], "Endpoint");
        assert!(EndpointId::parse("550c9289e4b0c0c6485f4cfa").is_ok());
    }
}

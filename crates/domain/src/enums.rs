//! The closed value lists of the interface. Where the predecessor's list was open, the
//! completion is ours and is recorded in `docs/enumerations.md`.
//!
//! Input is matched case-insensitively (CSV files are often typed by hand); output is always
//! the canonical upper-case spelling. An unknown value is `Invalid`, naming the field and the
//! allowed values.

use crate::error::Error;

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident, $field:literal { $($variant:ident = $wire:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($variant),+ }

        impl $name {
            /// Every value, in documentation order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// Every value's wire spelling, in the order of [`Self::ALL`].
            pub const NAMES: &'static [&'static str] = &[$($wire),+];
            /// The field name used in error messages.
            pub const FIELD: &'static str = $field;

            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $wire),+ }
            }

            /// Parses a value; an unknown one is `Invalid` naming the field and the allowed values.
            pub fn parse(value: &str) -> Result<Self, Error> {
                $(if value.eq_ignore_ascii_case($wire) { return Ok($name::$variant); })+
                Err(Error::invalid(format!(
                    "{}: '{}' is not one of {}",
                    $field,
                    crate::enums::shorten(value),
                    [$($wire),+].join(", ")
                )))
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}

/// Echoes at most 64 characters of a rejected value back to the client.
pub fn shorten(value: &str) -> String {
    const MAX: usize = 64;
    match value.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &value[..i]),
        None => value.to_owned(),
    }
}

string_enum!(
    /// How the listener talks to the room system.
    ControlProtocol, "controlProtocol" {
        TandbergSsh = "TANDBERG_SSH",
        TandbergHttp = "TANDBERG_HTTP",
        CiscoIxSshSoap = "CISCO_IX_SSH_SOAP",
        PolycomTelnet = "POLYCOM_TELNET",
        PolycomHttpHdx = "POLYCOM_HTTP_HDX",
        PolycomHttpRealPresence = "POLYCOM_HTTP_REALPRESENCE",
        LifesizeSsh = "LIFESIZE_SSH",
        LifesizeHttpIcon = "LIFESIZE_HTTP_ICON",
        StarleafHttp = "STARLEAF_HTTP",
        TelyHttp = "TELY_HTTP",
        Mesh = "MESH",
    }
);

string_enum!(
    SignalingProtocol, "signalingProtocol" { H323 = "H323", Sip = "SIP" }
);

string_enum!(
    /// How the dial string is built from a meeting id and passcode.
    DialStyle, "dialStyle" {
        AnnexO = "ANNEX_O",
        IpHash = "IP_HASH",
        SipUri = "SIP_URI",
        E164 = "E164",
    }
);

string_enum!(
    AddressStyle, "addressStyle" { Hostname = "HOSTNAME", IpAddress = "IP_ADDRESS" }
);

string_enum!(
    /// Which calendar system a room's calendar lives in, which decides how it is read:
    /// GOOGLE (Google Calendar, a resource calendar's events), EXCHANGE (an on-premises Exchange,
    /// read through the listener), OFFICE_365 (Microsoft Graph, a room mailbox's calendar view),
    /// CALDAV (any standard CalDAV server).
    CalendarType, "calendarType" {
        Google = "GOOGLE",
        Exchange = "EXCHANGE",
        Office365 = "OFFICE_365",
        CalDav = "CALDAV",
    }
);

string_enum!(
    /// The predecessor's ENABLED-or-null switches (autoJoinMode, calendarPushMode, ...).
    /// null means disabled; DISABLED is accepted for clients that prefer to say so.
    Toggle, "toggle" { Enabled = "ENABLED", Disabled = "DISABLED" }
);

string_enum!(
    RegisterToSipProxy, "registerToSipProxy" { Auto = "AUTO", Always = "ALWAYS", Never = "NEVER" }
);

string_enum!(
    MeetingPrivacyMode, "meetingPrivacyMode" { Redacted = "REDACTED", Visible = "VISIBLE" }
);

string_enum!(
    /// STATIC: the pairing code never changes. ROTATING: it is replaced on the configured schedule.
    ZeroTouchType, "zeroTouchType" { Static = "STATIC", Rotating = "ROTATING" }
);

string_enum!(
    Cluster, "cluster" { Prod = "PROD", Stage = "STAGE", Qa = "QA" }
);

string_enum!(
    /// The spec names MEETME and the two broadcast roles, plus three other vendors' meeting kinds.
    MeetingType, "meetingtype" {
        MeetMe = "MEETME",
        BroadcastAttendee = "BROADCAST_ATTENDEE",
        BroadcastPanelist = "BROADCAST_PANELIST",
        Teams = "TEAMS",
        Zoom = "ZOOM",
        Webex = "WEBEX",
    }
);

string_enum!(
    EndpointCapability, "endpointCapabilities" {
        Join = "JOIN",
        Hangup = "HANGUP",
        Status = "STATUS",
        MuteMicrophone = "MUTE_MICROPHONE",
        CalendarPush = "CALENDAR_PUSH",
    }
);

string_enum!(
    /// Both iOS spellings occur in the predecessor (NATIVE_IOS on tokens, IOS_NATIVE on paired
    /// statuses); both are accepted and kept as sent.
    ClientDeviceType, "clientDeviceType" {
        IosNative = "IOS_NATIVE",
        NativeIos = "NATIVE_IOS",
        Ios = "IOS",
        Android = "ANDROID",
        Mobile = "MOBILE",
        Tablet = "TABLET",
        Normal = "NORMAL",
        Unknown = "UNKNOWN",
    }
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    #[test]
    fn parse_is_case_insensitive_and_canonical_on_output() {
        assert_eq!(DialStyle::parse("annex_o").unwrap(), DialStyle::AnnexO);
        assert_eq!(DialStyle::AnnexO.to_string(), "ANNEX_O");
        for p in ControlProtocol::ALL {
            assert_eq!(ControlProtocol::parse(p.as_str()).unwrap(), *p);
        }
    }

    #[test]
    fn unknown_value_is_invalid_naming_field_and_allowed_values() {
        let e = CalendarType::parse("LOTUS_NOTES").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Invalid);
        assert!(e.message().contains("calendarType"), "{}", e.message());
        assert!(e.message().contains("LOTUS_NOTES"));
        assert!(e.message().contains("GOOGLE, EXCHANGE, OFFICE_365, CALDAV"));
    }

    #[test]
    fn long_rejected_values_are_shortened() {
        let e = Cluster::parse(&"x".repeat(10_000)).unwrap_err();
        assert!(e.message().len() < 200);
    }

    #[test]
    fn serializes_as_wire_string() {
        assert_eq!(
            serde_json::to_string(&MeetingType::BroadcastPanelist).unwrap(),
            "\"BROADCAST_PANELIST\""
        );
    }
}

//! Calendar accounts: per enterprise and calendar type, where its rooms' calendars are read and
//! as whom. The password is sealed with the service key (roomlink must present it), never
//! returned and never logged; responses say only whether one is set.

use crate::endpoint::ShortText;
use crate::endpoint::value::{FieldValue, HttpUrl};
use crate::enums::CalendarType;
use crate::error::Error;
use crate::ids::EnterpriseId;
use crate::secret::{SealedSecret, Secret};
use serde::Serialize;
use serde_json::{Map, Value};

/// The calendar types roomlink reads itself with an account; EXCHANGE is read by each room's
/// listener and takes no account (refused when one is set, rather than stored and unused).
pub const READABLE: [CalendarType; 3] = [
    CalendarType::CalDav,
    CalendarType::Office365,
    CalendarType::Google,
];

/// Passwords and tokens: at most this many characters.
pub const SECRET_MAX_CHARS: usize = 4096;

/// An enterprise's account at one calendar system, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct CalendarAccountRecord {
    pub enterprise_id: EnterpriseId,
    pub calendar_type: CalendarType,
    /// CalDAV: the URL under which each room's calendar is the collection `{calendarId}/`.
    pub base_url: String,
    pub username: Option<String>,
    pub password: Option<SealedSecret>,
    pub updated_at_ms: i64,
    /// Microsoft Graph and Google: where access tokens are asked for.
    pub token_url: Option<String>,
}

/// What the API shows of an account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CalendarAccountView {
    pub calendar_type: CalendarType,
    pub base_url: String,
    pub username: Option<String>,
    pub token_url: Option<String>,
    /// Whether a password is set (it is never shown).
    pub has_password: bool,
    /// Milliseconds since the epoch.
    pub updated: i64,
}

impl CalendarAccountRecord {
    /// Its id as a holder of a sealed value (`SealedKind::CalendarPassword`).
    pub fn holder_id(&self) -> String {
        format!("{}/{}", self.enterprise_id, self.calendar_type.as_str())
    }

    pub fn view(&self) -> CalendarAccountView {
        CalendarAccountView {
            calendar_type: self.calendar_type,
            base_url: self.base_url.clone(),
            username: self.username.clone(),
            token_url: self.token_url.clone(),
            has_password: self.password.is_some(),
            updated: self.updated_at_ms,
        }
    }
}

/// A PUT body, decoded: `{"baseUrl", "username"?, "tokenUrl"?, "password"?}`. An omitted or
/// null password keeps the stored one (so an account can be edited without re-entering it);
/// `""` clears it.
#[derive(Debug)]
pub struct CalendarAccountInput {
    pub base_url: String,
    pub username: Option<String>,
    pub token_url: Option<String>,
    pub password: PasswordChange,
}

#[derive(Debug)]
pub enum PasswordChange {
    Keep,
    Clear,
    Set(Secret),
}

/// `calendarType` from the path, refused unless roomlink reads that type itself.
pub fn readable_type(text: &str) -> Result<CalendarType, Error> {
    let calendar_type = CalendarType::parse(text)?;
    if calendar_type == CalendarType::Exchange {
        return Err(Error::invalid(
            "calendarType: EXCHANGE calendars take no account here: each room's listener reads \
             them with the Exchange account of its own configuration ([calendar.exchange])",
        ));
    }
    if READABLE.contains(&calendar_type) {
        Ok(calendar_type)
    } else {
        Err(Error::invalid(format!(
            "calendarType: roomlink reads {} calendars so far, not {}",
            READABLE.map(CalendarType::as_str).join(", "),
            calendar_type.as_str()
        )))
    }
}

pub fn decode_account(body: &Map<String, Value>) -> Result<CalendarAccountInput, Error> {
    const KNOWN: [&str; 7] = [
        "baseUrl",
        "username",
        "tokenUrl",
        "password",
        // Read-only properties of the view, accepted back and ignored.
        "calendarType",
        "hasPassword",
        "updated",
    ];
    if let Some(unknown) = body.keys().find(|k| !KNOWN.contains(&k.as_str())) {
        return Err(Error::json_mapping(
            unknown,
            "unknown property of CalendarAccount",
        ));
    }
    let base_url =
        url_property(body, "baseUrl")?.ok_or_else(|| Error::invalid("baseUrl: is required"))?;
    let token_url = url_property(body, "tokenUrl")?;
    let username = match body.get("username") {
        None | Some(Value::Null) => None,
        Some(v) => ShortText::from_json("username", v)?.map(|u| u.to_stored()),
    };
    let password = match body.get("password") {
        None | Some(Value::Null) => PasswordChange::Keep,
        Some(Value::String(p)) if p.is_empty() => PasswordChange::Clear,
        Some(Value::String(p)) => {
            if p.chars().count() > SECRET_MAX_CHARS || p.chars().any(char::is_control) {
                return Err(Error::invalid(format!(
                    "password: must be at most {SECRET_MAX_CHARS} printable characters"
                )));
            }
            PasswordChange::Set(Secret::new(p.clone()))
        }
        Some(_) => return Err(Error::json_mapping("password", "expected a string")),
    };
    Ok(CalendarAccountInput {
        base_url,
        username,
        token_url,
        password,
    })
}

/// An http(s) URL property without userinfo (credentials go in username and password).
fn url_property(body: &Map<String, Value>, name: &str) -> Result<Option<String>, Error> {
    let url = match body.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(v) => HttpUrl::from_json(name, v)?,
    };
    match url {
        Some(url) if has_userinfo(url.as_str()) => Err(Error::invalid(format!(
            "{name}: must not carry credentials; set username and password instead"
        ))),
        url => Ok(url.map(|u| u.as_str().to_owned())),
    }
}

/// Whether accounts of `calendar_type` ask a token endpoint for access (`tokenUrl` required).
pub fn uses_token_url(calendar_type: CalendarType) -> bool {
    matches!(
        calendar_type,
        CalendarType::Office365 | CalendarType::Google
    )
}

/// The hosts calendar accounts may name (`calendar.allowed_hosts`); empty: any. Host names
/// compare case-insensitively and exactly (no subdomains), IP addresses as written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedHosts(Vec<String>);

impl AllowedHosts {
    /// From a comma-separated list; blanks are ignored.
    pub fn from_list(list: &str) -> Self {
        AllowedHosts(
            list.split(',')
                .map(|h| h.trim().trim_start_matches('[').trim_end_matches(']'))
                .filter(|h| !h.is_empty())
                .map(str::to_ascii_lowercase)
                .collect(),
        )
    }

    /// Whether the URL's host is allowed (any is, when the list is empty). Also the rule of
    /// `webhooks.allowed_hosts`.
    pub fn allows(&self, url: &str) -> bool {
        self.0.is_empty() || self.0.contains(&host_of(url))
    }

    /// `Invalid` naming `field` when the URL's host is not allowed.
    pub fn check(&self, field: &str, url: &str) -> Result<(), Error> {
        if self.allows(url) {
            return Ok(());
        }
        let host = host_of(url);
        Err(Error::invalid(format!(
            "{field}: the host '{}' is not among the calendar hosts this service may reach \
             (calendar.allowed_hosts)",
            crate::enums::shorten(&host)
        )))
    }
}

/// The authority of a URL: what stands between `://` and the path, query or fragment.
fn authority(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split(['/', '?', '#']).next().unwrap_or_default()
}

/// The host of an http(s) URL, lower-case, without port, userinfo or IPv6 brackets.
fn host_of(url: &str) -> String {
    let host_port = authority(url).rsplit('@').next().unwrap_or_default();
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host_port.split(':').next().unwrap_or_default(),
    };
    host.to_ascii_lowercase()
}

/// Whether the URL's authority has a `user@` part.
fn has_userinfo(url: &str) -> bool {
    authority(url).contains('@')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use serde_json::json;

    fn decode(body: Value) -> Result<CalendarAccountInput, Error> {
        match body {
            Value::Object(map) => decode_account(&map),
            _ => unreachable!("tests pass objects"),
        }
    }

    #[test]
    fn a_full_body_and_the_password_changes() {
        let input = decode(json!({"baseUrl": "https://dav.corp.example/rooms/",
            "username": "svc", "password": "pw"}))
        .unwrap();
        assert_eq!(input.base_url, "https://dav.corp.example/rooms/");
        assert_eq!(input.username.as_deref(), Some("svc"));
        assert!(matches!(input.password, PasswordChange::Set(ref p) if p.expose() == "pw"));
        let kept = decode(json!({"baseUrl": "http://127.0.0.1:5232/"})).unwrap();
        assert!(matches!(kept.password, PasswordChange::Keep));
        let cleared = decode(json!({"baseUrl": "http://127.0.0.1:5232/", "password": "",
            "calendarType": "CALDAV", "hasPassword": true, "updated": 1}))
        .unwrap();
        assert!(matches!(cleared.password, PasswordChange::Clear));
    }

    #[test]
    fn bad_bodies_are_catalog_errors_that_quote_no_password() {
        let cases = [
            (json!({}), ErrorKind::Invalid, "baseUrl: is required"),
            (
                json!({"baseUrl": "ftp://x/"}),
                ErrorKind::Invalid,
                "baseUrl",
            ),
            (
                json!({"baseUrl": "https://svc:hunter22@dav.example/"}),
                ErrorKind::Invalid,
                "must not carry credentials",
            ),
            (json!({"baseUrl": 5}), ErrorKind::JsonMappingException, ""),
            (
                json!({"baseUrl": "https://d/", "password": 7}),
                ErrorKind::JsonMappingException,
                "",
            ),
            (
                json!({"baseUrl": "https://d/", "secret": "x"}),
                ErrorKind::JsonMappingException,
                "",
            ),
        ];
        for (body, kind, text) in cases {
            let e = decode(body.clone()).unwrap_err();
            assert_eq!(e.kind(), kind, "{body}");
            assert!(e.message().contains(text), "{body}: {}", e.message());
            assert!(!e.message().contains("hunter22"), "{}", e.message());
        }
    }

    #[test]
    fn allowed_hosts() {
        let any = AllowedHosts::from_list(" , ");
        assert!(any.check("baseUrl", "http://169.254.169.254/").is_ok());
        let some = AllowedHosts::from_list("dav.corp.example, 127.0.0.1,[::1]");
        for ok in [
            "https://DAV.corp.example/rooms/",
            "http://127.0.0.1:5232/",
            "http://[::1]:8080/x",
        ] {
            assert!(some.check("baseUrl", ok).is_ok(), "{ok}");
        }
        for refused in [
            "https://evil.dav.corp.example/",
            "http://127.0.0.2/",
            "http://169.254.169.254/latest",
            "http://dav.corp.example.evil/",
        ] {
            let e = some.check("baseUrl", refused).unwrap_err();
            assert!(e.message().contains("calendar.allowed_hosts"), "{refused}");
        }
    }

    #[test]
    fn only_readable_types_take_accounts() {
        assert_eq!(readable_type("CALDAV").unwrap(), CalendarType::CalDav);
        assert_eq!(readable_type("GOOGLE").unwrap(), CalendarType::Google);
        assert_eq!(
            readable_type("OFFICE_365").unwrap(),
            CalendarType::Office365
        );
        let e = readable_type("EXCHANGE").unwrap_err();
        assert!(
            e.message().contains("each room's listener reads them"),
            "{}",
            e.message()
        );
        assert_eq!(
            readable_type("NOPE").unwrap_err().kind(),
            ErrorKind::Invalid
        );
    }
}

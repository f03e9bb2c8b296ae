//! Google Calendar (calendarType GOOGLE): a room's calendar is `{base_url}/calendars/{calendarId}`
//! (a resource calendar's id, `...@resource.calendar.google.com`), read with `events.list`.
//!
//! Decisions:
//! - A service account's token by the JWT bearer grant (RFC 7523): the account's username is
//!   the service account's email (`iss`), its secret the key file's `private_key` (PKCS#8 PEM;
//!   pasted with literal `\n`s it is read too), its token URL `aud` (Google's is
//!   `https://oauth2.googleapis.com/token`). The assertion is RS256, scope
//!   `calendar.readonly`, issued now by the service's [`Clock`] and valid [`ASSERTION_LIFETIME_S`].
//!   The rooms' calendars must be shared with the service account (no domain-wide delegation).
//! - `singleEvents=true&orderBy=startTime`: Google expands recurring events into occurrences;
//!   their times are RFC 3339 with an offset and converted to UTC here.
//! - [`PAGE_SIZE`] events a page, `nextPageToken` followed at most [`MAX_PAGES`] pages: a
//!   calendar with more in one window fails rather than showing part of it.
//! - The uid is the event's `iCalUID` (shared by a recurring event's occurrences, like the
//!   CalDAV UID), else its Google `id`.
//! - All-day events (`start.date` without `start.dateTime`) are left out: they are not meetings
//!   a room joins, and their midnight belongs to no zone.
//! - Join links: `hangoutLink`, then `conferenceData.entryPoints` of type video or sip.
//! - `status: "cancelled"` events are kept and marked; a cancelled occurrence Google answers
//!   without its times is left out.
//! - Tokens, throttling, 401 and 5xx as [`crate::oauth`] and [`crate::http`] say.
//! - Change marks (`events_since`): `google-updated:{from_ms}:{to_ms}:{server ms}`, Google's
//!   `Date` when the window was last read. The check lists the window with `updatedMin` (that
//!   time less [`UPDATED_MARGIN_MS`]) and `maxResults=1`: nothing listed is unchanged; anything
//!   (cancelled and deleted events included), 410 Gone or no usable mark: read in full.
//!   `syncToken` is not used: it cannot be combined with `timeMin`/`timeMax`.

use crate::civil;
use crate::http::{self, Failures};
use crate::oauth::{Grant, OAuthAccount, OAuthClient, Required, TokenKey};
use crate::pace::Pace;
use crate::readers::{Since, in_window};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use roomlink_domain::calendar::CalendarEvent;
use roomlink_domain::error::Result;
use roomlink_domain::ports::{CalendarAccount, CalendarRead, Clock};
use serde::Deserialize;
use std::sync::Arc;

/// The scope asked for: reading calendars, nothing else.
pub(crate) const SCOPE: &str = "https://www.googleapis.com/auth/calendar.readonly";
/// How long a signed assertion is valid (Google's maximum).
pub(crate) const ASSERTION_LIFETIME_S: i64 = 3600;
/// Events asked for per page.
pub(crate) const PAGE_SIZE: u32 = 250;
/// The most pages read for one window.
pub(crate) const MAX_PAGES: usize = 50;
/// The prefix of Google's change marks.
const UPDATED_MARK: &str = "google-updated:";
/// How far before the kept server time changes are asked for: the `Date` header's whole
/// seconds, the time between Google's listing and its answer, and clocks of Google's front
/// ends that differ a little. A change within it is read once more, never missed.
const UPDATED_MARGIN_MS: i64 = 60_000;
const GRANT_TYPE: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Reads room calendars from Google Calendar with a service account.
pub struct GoogleReader {
    api: OAuthClient,
    clock: Arc<dyn Clock>,
}

impl GoogleReader {
    /// A reader that asks as fast as it is asked; `clock` dates its signed token requests.
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self::paced(clock, Arc::new(Pace::unlimited()))
    }

    /// A reader whose requests keep `pace`.
    pub fn paced(clock: Arc<dyn Clock>, pace: Arc<Pace>) -> Self {
        GoogleReader {
            api: OAuthClient::new(pace),
            clock,
        }
    }
}

crate::oauth::calendar_reader!(GoogleReader);

impl GoogleReader {
    /// The read behind both of the `CalendarReader` methods; for `events_since`:
    /// One `events.list` of the window with `updatedMin` (the server time kept in `since`, less
    /// a minute) and `maxResults=1`: nothing, `Unchanged`; otherwise (a change, no
    /// usable mark, 410 Gone) the window is read in full, its mark the server's `Date` of the
    /// first answer of this call.
    async fn run(
        &self,
        account: &CalendarAccount,
        calendar_id: &str,
        from_ms: i64,
        to_ms: i64,
        since: Since,
    ) -> Result<CalendarRead> {
        let failures = Failures {
            service: "Google Calendar",
            calendar_id,
        };
        let OAuthAccount {
            base,
            token_url,
            token_url_text: audience,
            client: issuer,
            secret: key,
        } = OAuthAccount::of(
            account,
            &failures,
            &Required {
                token_url_hint: "https://oauth2.googleapis.com/token",
                client: "service account email",
                secret: "private key",
            },
        )?;
        let form = || -> std::result::Result<String, String> {
            let now_s = self.clock.now_ms().div_euclid(1000);
            let assertion = assertion(key.expose(), issuer, audience, now_s)?;
            Ok(form_urlencoded::Serializer::new(String::new())
                .append_pair("grant_type", GRANT_TYPE)
                .append_pair("assertion", &assertion)
                .finish())
        };
        let grant = Grant {
            key: TokenKey::new(&token_url, issuer, key),
            token_url,
            form: &form,
        };
        let host = http::host(&base);
        let first = events_url(&base, calendar_id, from_ms, to_ms)
            .map_err(|what| failures.account(what))?;
        let window = Window { from_ms, to_ms };

        let since = match since {
            Since::NoMarks => None,
            Since::Mark(since) => Some(since),
        };
        let marks = since.is_some();
        // The server's time before the full read, when there is one to keep.
        let mut server_ms = None;
        if let Some(kept_ms) = since
            .flatten()
            .and_then(|mark| kept_server_time(&mark, window))
        {
            let check = changes_url(&first, kept_ms);
            match self
                .api
                .fetch(&failures, &grant, &check, &[], &[410])
                .await?
            {
                Ok(answer) => {
                    let changes: Changes = serde_json::from_str(&answer.body).map_err(|_| {
                        failures.api(&host, "answered a list of changes that cannot be read")
                    })?;
                    if changes.items.is_empty() {
                        return Ok(CalendarRead::Unchanged);
                    }
                    server_ms = answer.date.as_deref().and_then(civil::parse_http_date);
                }
                Err(status) => {
                    tracing::debug!(%status, "Google Calendar's updatedMin is too long ago");
                }
            }
        }

        let mut url = first.clone();
        let mut events = Vec::new();
        for _ in 0..MAX_PAGES {
            let answer = match self.api.fetch(&failures, &grant, &url, &[], &[]).await? {
                Ok(answer) => answer,
                Err(status) => return Err(failures.api(&host, format!("answered {status}"))),
            };
            if server_ms.is_none() && url == first {
                server_ms = answer.date.as_deref().and_then(civil::parse_http_date);
            }
            let page: Page = serde_json::from_str(&answer.body).map_err(|e| {
                tracing::debug!(
                    line = e.line(),
                    column = e.column(),
                    "a Google Calendar page that does not parse"
                );
                failures.api(&host, "answered a page of events that cannot be read")
            })?;
            for event in page.items {
                events.extend(
                    event
                        .into_event()
                        .map_err(|what| failures.api(&host, what))?,
                );
            }
            let Some(token) = page.next_page_token.filter(|t| !t.is_empty()) else {
                return Ok(CalendarRead::Events {
                    events: in_window(events, from_ms, to_ms),
                    mark: server_ms.filter(|_| marks).map(|ms| window.mark(ms)),
                });
            };
            url = first.clone();
            url.query_pairs_mut().append_pair("pageToken", &token);
        }
        Err(failures.api(
            &host,
            format!("answered more than {MAX_PAGES} pages of events for one window"),
        ))
    }
}

/// The window a read covers, as asked (milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Window {
    from_ms: i64,
    to_ms: i64,
}

impl Window {
    /// The change mark of a read of this window that began at the server's `server_ms`:
    /// `google-updated:{from}:{to}:{server_ms}`.
    fn mark(self, server_ms: i64) -> String {
        format!("{UPDATED_MARK}{}:{}:{server_ms}", self.from_ms, self.to_ms)
    }
}

/// The server time a mark holds, when it is a Google mark of this very window; anything else
/// (another system's mark, another window, garbage) is `None`: read in full.
fn kept_server_time(mark: &str, window: Window) -> Option<i64> {
    let mut parts = mark.strip_prefix(UPDATED_MARK)?.split(':');
    let from_ms: i64 = parts.next()?.parse().ok()?;
    let to_ms: i64 = parts.next()?.parse().ok()?;
    let server_ms: i64 = parts.next()?.parse().ok()?;
    ((Window { from_ms, to_ms }) == window && parts.next().is_none()).then_some(server_ms)
}

/// The window's list (`first`, the read's first page) asking only whether any event in it
/// was changed, added or deleted since `server_ms` (less [`UPDATED_MARGIN_MS`]): `updatedMin`,
/// `showDeleted`, one result, its id only.
fn changes_url(first: &reqwest::Url, server_ms: i64) -> reqwest::Url {
    let mut url = first.clone();
    let kept: Vec<(String, String)> = first
        .query_pairs()
        .filter(|(name, _)| matches!(name.as_ref(), "timeMin" | "timeMax" | "singleEvents"))
        .map(|(name, value)| (name.into_owned(), value.into_owned()))
        .collect();
    url.set_query(None);
    url.query_pairs_mut()
        .extend_pairs(kept)
        .append_pair(
            "updatedMin",
            &civil::format_rfc3339(server_ms.saturating_sub(UPDATED_MARGIN_MS)),
        )
        .append_pair("showDeleted", "true")
        .append_pair("maxResults", "1")
        .append_pair("fields", "items(id)");
    url
}

/// `{base}/calendars/{calendarId}/events?...`, the calendarId as one percent-encoded segment
/// and the window widened to whole seconds.
fn events_url(
    base: &reqwest::Url,
    calendar_id: &str,
    from_ms: i64,
    to_ms: i64,
) -> std::result::Result<reqwest::Url, String> {
    let mut url = base.clone();
    url.path_segments_mut()
        .map_err(|()| "the account's base URL cannot have a path".to_owned())?
        .pop_if_empty()
        .extend(["calendars", calendar_id, "events"]);
    url.set_query(None);
    url.set_fragment(None);
    url.query_pairs_mut()
        .append_pair("timeMin", &civil::format_rfc3339(from_ms))
        .append_pair("timeMax", &civil::format_rfc3339(to_ms.saturating_add(999)))
        .append_pair("singleEvents", "true")
        .append_pair("orderBy", "startTime")
        .append_pair("maxResults", &PAGE_SIZE.to_string());
    Ok(url)
}

/// A signed RS256 JWT asserting the service account `issuer` for the token endpoint
/// `audience`, issued at `now_s`. `Err` says what is wrong with the key (never quoting it).
fn assertion(
    private_key_pem: &str,
    issuer: &str,
    audience: &str,
    now_s: i64,
) -> std::result::Result<String, String> {
    use rsa::pkcs8::DecodePrivateKey as _;
    use rsa::signature::{SignatureEncoding as _, Signer as _};

    // Copied out of a key file's JSON, the PEM may carry `\n` escapes instead of line breaks.
    let pem = private_key_pem.trim();
    let unescaped;
    let pem = if !pem.contains('\n') && pem.contains("\\n") {
        unescaped = pem.replace("\\n", "\n");
        unescaped.as_str()
    } else {
        pem
    };
    let key = rsa::RsaPrivateKey::from_pkcs8_pem(pem).map_err(|_| {
        "the account's private key is not an RSA private key in PKCS#8 PEM".to_owned()
    })?;
    let signer = rsa::pkcs1v15::SigningKey::<rsa::sha2::Sha256>::new(key);
    let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"RS256","typ":"JWT"}"#);
    let claims = serde_json::json!({
        "iss": issuer,
        "scope": SCOPE,
        "aud": audience,
        "iat": now_s,
        "exp": now_s + ASSERTION_LIFETIME_S,
    });
    let signing_input = format!("{header}.{}", URL_SAFE_NO_PAD.encode(claims.to_string()));
    let signature = signer
        .try_sign(signing_input.as_bytes())
        .map_err(|_| "the account's private key cannot sign".to_owned())?;
    Ok(format!(
        "{signing_input}.{}",
        URL_SAFE_NO_PAD.encode(signature.to_bytes())
    ))
}

/// The answer to [`changes_url`]: only whether it lists anything.
#[derive(Deserialize)]
struct Changes {
    #[serde(default)]
    items: Vec<serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Page {
    #[serde(default)]
    pub(crate) items: Vec<GoogleEvent>,
    pub(crate) next_page_token: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GoogleEvent {
    id: Option<String>,
    #[serde(rename = "iCalUID")]
    ical_uid: Option<String>,
    status: Option<String>,
    summary: Option<String>,
    description: Option<String>,
    location: Option<String>,
    start: Option<EventTime>,
    end: Option<EventTime>,
    hangout_link: Option<String>,
    conference_data: Option<ConferenceData>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EventTime {
    date: Option<String>,
    date_time: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConferenceData {
    #[serde(default)]
    entry_points: Vec<EntryPoint>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct EntryPoint {
    entry_point_type: Option<String>,
    uri: Option<String>,
}

fn non_empty(text: Option<String>) -> Option<String> {
    text.filter(|t| !t.trim().is_empty())
}

impl GoogleEvent {
    /// The event, or `None` for an all-day one or a cancelled one without times. `Err` says
    /// what cannot be read (no value quoted).
    pub(crate) fn into_event(self) -> std::result::Result<Option<CalendarEvent>, String> {
        let cancelled = self.status.as_deref() == Some("cancelled");
        let (start, end) = match (self.start, self.end) {
            (Some(start), Some(end)) => (start, end),
            (None, None) if cancelled => return Ok(None),
            _ => return Err("answered an event without a start or end".to_owned()),
        };
        let (start, end) = match (start.date_time, end.date_time) {
            (Some(start), Some(end)) => (start, end),
            (None, _) if start.date.is_some() => return Ok(None),
            _ => return Err("answered an event without a start or end time".to_owned()),
        };
        let time = |text: &str| {
            civil::parse_rfc3339(text)
                .ok_or_else(|| "answered an event time that cannot be read".to_owned())
        };
        let uid = non_empty(self.ical_uid)
            .or(non_empty(self.id))
            .ok_or("answered an event without an id")?;
        let mut conference_uris: Vec<String> = non_empty(self.hangout_link).into_iter().collect();
        let entry_points = self
            .conference_data
            .map(|c| c.entry_points)
            .unwrap_or_default();
        for entry in entry_points {
            let joinable = matches!(entry.entry_point_type.as_deref(), Some("video" | "sip"));
            if let Some(uri) = non_empty(entry.uri).filter(|_| joinable)
                && !conference_uris.contains(&uri)
            {
                conference_uris.push(uri);
            }
        }
        Ok(Some(CalendarEvent {
            uid,
            title: non_empty(self.summary),
            start_ms: time(&start)?,
            end_ms: time(&end)?,
            location: non_empty(self.location),
            description: non_empty(self.description),
            conference_uris,
            cancelled,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::pkcs8::DecodePublicKey as _;
    use rsa::signature::Verifier as _;

    const KEY: &str = include_str!("../tests/fixtures/service-account-key.pem");
    const PUBLIC_KEY: &str = include_str!("../tests/fixtures/service-account-key.pub.pem");

    fn verify(jwt: &str) -> serde_json::Value {
        let (signing_input, signature) = jwt.rsplit_once('.').unwrap();
        let public =
            rsa::pkcs1v15::VerifyingKey::<rsa::sha2::Sha256>::from_public_key_pem(PUBLIC_KEY)
                .unwrap();
        let signature = rsa::pkcs1v15::Signature::try_from(
            URL_SAFE_NO_PAD.decode(signature).unwrap().as_slice(),
        )
        .unwrap();
        public.verify(signing_input.as_bytes(), &signature).unwrap();
        let (_, claims) = signing_input.split_once('.').unwrap();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).unwrap()).unwrap()
    }

    #[test]
    fn assertions_are_signed_rs256_with_the_claims() {
        let jwt = assertion(
            KEY,
            "rooms@p.iam.gserviceaccount.com",
            "https://t.example/token",
            1_795_564_800,
        )
        .unwrap();
        let claims = verify(&jwt);
        assert_eq!(claims["iss"], "rooms@p.iam.gserviceaccount.com");
        assert_eq!(claims["aud"], "https://t.example/token");
        assert_eq!(claims["scope"], SCOPE);
        assert_eq!(claims["iat"], 1_795_564_800);
        assert_eq!(claims["exp"], 1_795_564_800 + 3600);

        // The same key pasted from JSON with `\n` escapes.
        let escaped = KEY.trim().replace('\n', "\\n");
        verify(&assertion(&escaped, "a", "b", 0).unwrap());
    }

    #[test]
    fn a_bad_key_is_named_not_quoted() {
        let bad =
            "-----BEGIN PRIVATE KEY-----\nc2VrcmV0LWtleS1ieXRlcw==\n-----END PRIVATE KEY-----\n";
        let e = assertion(bad, "a", "b", 0).unwrap_err();
        assert!(e.contains("PKCS#8"), "{e}");
        assert!(!e.contains("c2VrcmV0"), "{e}");
        assert!(assertion("not a key", "a", "b", 0).is_err());
    }

    #[test]
    fn change_marks_and_the_check() {
        let day = 1_795_564_800_000;
        let window = Window {
            from_ms: day,
            to_ms: day + 86_400_000,
        };
        let mark = window.mark(day + 3_600_000);
        assert_eq!(
            mark,
            "google-updated:1795564800000:1795651200000:1795568400000"
        );
        assert_eq!(kept_server_time(&mark, window), Some(day + 3_600_000));
        let other = Window {
            to_ms: day + 1,
            ..window
        };
        assert_eq!(kept_server_time(&mark, other), None);
        for garbage in [
            "",
            "sync:1",
            "google-updated:",
            "google-updated:1:2",
            "google-updated:1795564800000:1795651200000:x",
            "google-updated:1795564800000:1795651200000:1:2",
        ] {
            assert_eq!(kept_server_time(garbage, window), None, "{garbage}");
        }

        let base = reqwest::Url::parse("https://www.googleapis.com/calendar/v3").unwrap();
        let first = events_url(
            &base,
            "c_1@resource.calendar.google.com",
            day,
            day + 86_400_000,
        )
        .unwrap();
        assert_eq!(
            changes_url(&first, day + 3_600_000).as_str(),
            "https://www.googleapis.com/calendar/v3/calendars/c_1@resource.calendar.google.com\
             /events?timeMin=2026-11-25T00%3A00%3A00Z&timeMax=2026-11-26T00%3A00%3A00Z\
             &singleEvents=true&updatedMin=2026-11-25T00%3A59%3A00Z&showDeleted=true\
             &maxResults=1&fields=items%28id%29"
        );
    }

    #[test]
    fn events_all_day_and_cancelled() {
        let parse = |json: &str| {
            serde_json::from_str::<GoogleEvent>(json)
                .unwrap()
                .into_event()
        };
        let event = parse(
            r#"{"id":"abc_20261125T090000Z","iCalUID":"abc@google.com","status":"confirmed",
                "summary":"Review",
                "start":{"dateTime":"2026-11-25T10:00:00+01:00","timeZone":"Europe/Berlin"},
                "end":{"dateTime":"2026-11-25T10:30:00+01:00"},
                "hangoutLink":"https://meet.google.com/abc-defg-hij",
                "conferenceData":{"entryPoints":[
                  {"entryPointType":"video","uri":"https://meet.google.com/abc-defg-hij"},
                  {"entryPointType":"phone","uri":"tel:+1-555-0100"},
                  {"entryPointType":"sip","uri":"sip:123@meet.example"},
                  {"entryPointType":"more","uri":"https://tel.meet/abc"}]}}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(event.uid, "abc@google.com");
        // 10:00 at +01:00 is 09:00 UTC.
        assert_eq!(event.start_ms, 1_795_597_200_000);
        assert_eq!(event.end_ms - event.start_ms, 1_800_000);
        assert_eq!(
            event.conference_uris,
            vec![
                "https://meet.google.com/abc-defg-hij",
                "sip:123@meet.example"
            ]
        );
        assert!(!event.cancelled);

        let all_day = parse(
            r#"{"id":"x","start":{"date":"2026-11-25"},"end":{"date":"2026-11-26"},
                "hangoutLink":"https://meet.google.com/abc-defg-hij"}"#,
        );
        assert_eq!(all_day.unwrap(), None);

        let cancelled_without_times = parse(r#"{"id":"x_20261125","status":"cancelled"}"#);
        assert_eq!(cancelled_without_times.unwrap(), None);
        assert!(parse(r#"{"id":"x"}"#).is_err());
        let local_times = r#"{"id":"x","start":{"dateTime":"2026-11-25T10:00:00"},
            "end":{"dateTime":"2026-11-25T10:30:00"}}"#;
        assert!(parse(local_times).unwrap_err().contains("cannot be read"));
    }
}

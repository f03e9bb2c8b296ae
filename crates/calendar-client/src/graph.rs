//! Microsoft Graph (calendarType OFFICE_365): a room's calendar is the mailbox
//! `{base_url}/users/{calendarId}`, read with `calendarView` per time window.
//!
//! Decisions:
//! - An application token by client credentials (the account's username is the application's
//!   client id, its secret the client secret, its token URL the tenant's
//!   `https://login.microsoftonline.com/{tenant}/oauth2/v2.0/token`), scope
//!   `https://graph.microsoft.com/.default`; the application needs `Calendars.Read`.
//! - `calendarView` expands recurring events into occurrences; `Prefer:
//!   outlook.timezone="UTC"` asks for every time in UTC, and an event answered in another zone
//!   is a failure rather than a guess.
//! - [`PAGE_SIZE`] events a page; `@odata.nextLink` is followed only to the base URL's scheme,
//!   host and port (the token goes nowhere else), at most [`MAX_PAGES`] pages: a calendar with
//!   more in one window fails rather than showing part of it.
//! - The uid is the event's `iCalUId` (one per occurrence), else its Graph `id`.
//! - All-day events (`isAllDay`) are left out: they are not meetings a room joins, and their
//!   midnight is the organizer's, not UTC's.
//! - `onlineMeeting.joinUrl` is the structured join link; the HTML body is the description.
//! - Tokens, throttling, 401 and 5xx as [`crate::oauth`] and [`crate::http`] say.
//! - Change marks (`events_since`): `graph-delta:{from_ms}:{to_ms}:{delta link}`, the
//!   `@odata.deltaLink` of a `calendarView/delta` round of the same window. A round from it with
//!   no entry is unchanged (its new delta link kept instead, [`CalendarRead::Confirmed`]); any
//!   entry, an expired link (410, or 400) or no usable mark: a round for a new link, then the
//!   window read in full with `calendarView`. The entries are only counted, never applied.
//!   Delta links are followed only on the base URL's server, like next pages.

use crate::civil;
use crate::http::{self, Failures};
use crate::oauth::{Grant, OAuthAccount, OAuthClient, Required, TokenKey};
use crate::pace::Pace;
use crate::readers::{Since, in_window};
use roomlink_domain::calendar::CalendarEvent;
use roomlink_domain::error::Result;
use roomlink_domain::ports::{CalendarAccount, CalendarRead};
use serde::Deserialize;
use std::sync::Arc;

/// The scope of an application token for Microsoft Graph.
pub(crate) const SCOPE: &str = "https://graph.microsoft.com/.default";
/// Events asked for per page.
pub(crate) const PAGE_SIZE: u32 = 100;
/// The most pages read for one window.
pub(crate) const MAX_PAGES: usize = 50;
const PREFER_UTC: &str = r#"outlook.timezone="UTC""#;
/// Asked of delta rounds: changes are only counted, so pages as large as Graph allows.
const PREFER_DELTA_PAGE: &str = "odata.maxpagesize=100";
/// The prefix of Graph's change marks.
const DELTA_MARK: &str = "graph-delta:";
/// The event fields read (and the only ones asked for).
const SELECT: &str =
    "id,iCalUId,subject,start,end,isAllDay,location,body,onlineMeeting,isCancelled";

/// Reads room calendars from Microsoft Graph.
pub struct GraphReader {
    api: OAuthClient,
}

impl GraphReader {
    /// A reader that asks as fast as it is asked.
    pub fn new() -> Self {
        Self::paced(Arc::new(Pace::unlimited()))
    }

    /// A reader whose requests keep `pace`.
    pub fn paced(pace: Arc<Pace>) -> Self {
        GraphReader {
            api: OAuthClient::new(pace),
        }
    }
}

impl Default for GraphReader {
    fn default() -> Self {
        Self::new()
    }
}

crate::oauth::calendar_reader!(GraphReader);

/// How a delta round went.
enum Round {
    /// Every page read: whether any held a change, and the round's `@odata.deltaLink` (`None`
    /// when the last page had none).
    Done {
        changed: bool,
        delta_link: Option<reqwest::Url>,
    },
    /// The link's state is gone (410, or 400 for a token Graph cannot read): a new round.
    Expired(reqwest::StatusCode),
}

impl GraphReader {
    /// The read behind both of the `CalendarReader` methods; for `events_since`:
    /// A delta round of the window's `calendarView/delta` from the delta link kept in `since`:
    /// no change in it, `Unchanged`; otherwise (changes, no usable mark, an expired link) the
    /// window is read in full with `calendarView`, its mark the delta link of the round run
    /// before the read.
    async fn run(
        &self,
        account: &CalendarAccount,
        calendar_id: &str,
        from_ms: i64,
        to_ms: i64,
        since: Since,
    ) -> Result<CalendarRead> {
        let failures = Failures {
            service: "Microsoft Graph",
            calendar_id,
        };
        let OAuthAccount {
            base,
            token_url,
            client: client_id,
            secret,
            ..
        } = OAuthAccount::of(
            account,
            &failures,
            &Required {
                token_url_hint: "the tenant's OAuth 2.0 token endpoint",
                client: "application (client) id",
                secret: "client secret",
            },
        )?;
        let form = || -> std::result::Result<String, String> {
            Ok(form_urlencoded::Serializer::new(String::new())
                .append_pair("grant_type", "client_credentials")
                .append_pair("client_id", client_id)
                .append_pair("client_secret", secret.expose())
                .append_pair("scope", SCOPE)
                .finish())
        };
        let grant = Grant {
            key: TokenKey::new(&token_url, client_id, secret),
            token_url,
            form: &form,
        };
        let window = Window { from_ms, to_ms };

        let Since::Mark(since) = since else {
            let events = self
                .read_view(&failures, &grant, &base, calendar_id, window)
                .await?;
            return Ok(CalendarRead::Events { events, mark: None });
        };
        let mut delta_link = None;
        if let Some(kept) = since
            .as_deref()
            .and_then(|mark| kept_delta_link(mark, &base, window))
        {
            match self.delta_round(&failures, &grant, &base, kept).await? {
                // The new link stands for the same state; Graph's newest is kept.
                Round::Done {
                    changed: false,
                    delta_link,
                } => {
                    return Ok(match delta_link {
                        Some(link) => CalendarRead::Confirmed {
                            mark: window.mark(&link),
                        },
                        None => CalendarRead::Unchanged,
                    });
                }
                Round::Done {
                    changed: true,
                    delta_link: link,
                } => delta_link = Some(link),
                Round::Expired(status) => {
                    tracing::debug!(%status, "a Graph delta link expired; a new round");
                }
            }
        }
        let delta_link = match delta_link {
            Some(link) => link,
            None => {
                let first =
                    delta_url(&base, calendar_id, window).map_err(|what| failures.account(what))?;
                match self.delta_round(&failures, &grant, &base, first).await? {
                    Round::Done { delta_link, .. } => delta_link,
                    Round::Expired(status) => {
                        return Err(failures.api(
                            &http::host(&base),
                            format!("answered {status} to a new delta query"),
                        ));
                    }
                }
            }
        };
        let events = self
            .read_view(&failures, &grant, &base, calendar_id, window)
            .await?;
        Ok(CalendarRead::Events {
            events,
            mark: delta_link.map(|link| window.mark(&link)),
        })
    }

    /// The window's events, read with `calendarView` page by page.
    async fn read_view(
        &self,
        failures: &Failures<'_>,
        grant: &Grant<'_>,
        base: &reqwest::Url,
        calendar_id: &str,
        window: Window,
    ) -> Result<Vec<CalendarEvent>> {
        let host = http::host(base);
        let mut url = calendar_view_url(base, calendar_id, window.from_ms, window.to_ms)
            .map_err(|what| failures.account(what))?;
        let mut events = Vec::new();
        for _ in 0..MAX_PAGES {
            let body = self
                .api
                .get(failures, grant, &url, &[("Prefer", PREFER_UTC)])
                .await?;
            let page: Page = serde_json::from_str(&body).map_err(|e| {
                tracing::debug!(
                    line = e.line(),
                    column = e.column(),
                    "a Graph page that does not parse"
                );
                failures.api(&host, "answered a page of events that cannot be read")
            })?;
            for event in page.value {
                events.extend(
                    event
                        .into_event()
                        .map_err(|what| failures.api(&host, what))?,
                );
            }
            let Some(next) = page.next_link else {
                return Ok(in_window(events, window.from_ms, window.to_ms));
            };
            url = same_server(&next, base).ok_or_else(|| {
                failures.api(
                    &host,
                    "answered a next page on another server; not followed",
                )
            })?;
        }
        Err(failures.api(
            &host,
            format!("answered more than {MAX_PAGES} pages of events for one window"),
        ))
    }

    /// One delta round from `url`: its pages followed to the end, their changes only counted.
    async fn delta_round(
        &self,
        failures: &Failures<'_>,
        grant: &Grant<'_>,
        base: &reqwest::Url,
        mut url: reqwest::Url,
    ) -> Result<Round> {
        let host = http::host(base);
        let mut changed = false;
        let foreign = || {
            failures.api(
                &host,
                "answered a delta link on another server; not followed",
            )
        };
        for _ in 0..MAX_PAGES {
            let answer = match self
                .api
                .fetch(
                    failures,
                    grant,
                    &url,
                    &[("Prefer", PREFER_DELTA_PAGE)],
                    &[400, 410],
                )
                .await?
            {
                Ok(answer) => answer,
                Err(status) => return Ok(Round::Expired(status)),
            };
            let page: DeltaPage = serde_json::from_str(&answer.body)
                .map_err(|_| failures.api(&host, "answered a delta page that cannot be read"))?;
            changed |= !page.value.is_empty();
            match (page.next_link, page.delta_link) {
                (Some(next), _) => url = same_server(&next, base).ok_or_else(foreign)?,
                (None, Some(delta)) => {
                    return Ok(Round::Done {
                        changed,
                        delta_link: Some(same_server(&delta, base).ok_or_else(foreign)?),
                    });
                }
                (None, None) => {
                    return Ok(Round::Done {
                        changed,
                        delta_link: None,
                    });
                }
            }
        }
        Err(failures.api(
            &host,
            format!("answered more than {MAX_PAGES} pages of changes for one window"),
        ))
    }
}

/// A link an answer gave, if it may be followed with the token (see [`http::on_same_server`]).
pub(crate) fn same_server(link: &str, base: &reqwest::Url) -> Option<reqwest::Url> {
    reqwest::Url::parse(link)
        .ok()
        .filter(|link| http::on_same_server(link, base))
}

/// The window a read covers, as asked (milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Window {
    from_ms: i64,
    to_ms: i64,
}

impl Window {
    /// The change mark for a delta link of this window: `graph-delta:{from}:{to}:{link}`.
    fn mark(self, delta_link: &reqwest::Url) -> String {
        format!("{DELTA_MARK}{}:{}:{delta_link}", self.from_ms, self.to_ms)
    }
}

/// The delta link a mark holds, when it is a Graph mark of this very window whose link may be
/// followed with the token; anything else (another system's mark, another window, garbage, a
/// link to another server) is `None`: read in full.
fn kept_delta_link(mark: &str, base: &reqwest::Url, window: Window) -> Option<reqwest::Url> {
    let mut parts = mark.strip_prefix(DELTA_MARK)?.splitn(3, ':');
    let from_ms: i64 = parts.next()?.parse().ok()?;
    let to_ms: i64 = parts.next()?.parse().ok()?;
    if (Window { from_ms, to_ms }) != window {
        return None;
    }
    same_server(parts.next()?, base)
}

/// `{base}/users/{calendarId}/calendarView/delta?startDateTime=&endDateTime=`, the window as
/// `calendarView`'s (Graph keeps it in the links of the round).
fn delta_url(
    base: &reqwest::Url,
    calendar_id: &str,
    window: Window,
) -> std::result::Result<reqwest::Url, String> {
    let mut url = base.clone();
    url.path_segments_mut()
        .map_err(|()| "the account's base URL cannot have a path".to_owned())?
        .pop_if_empty()
        .extend(["users", calendar_id, "calendarView", "delta"]);
    url.set_query(Some(&format!(
        "startDateTime={}&endDateTime={}",
        civil::format_rfc3339(window.from_ms),
        civil::format_rfc3339(window.to_ms.saturating_add(999)),
    )));
    url.set_fragment(None);
    Ok(url)
}

/// `{base}/users/{calendarId}/calendarView?...`, the calendarId as one percent-encoded segment
/// and the window widened to whole seconds.
fn calendar_view_url(
    base: &reqwest::Url,
    calendar_id: &str,
    from_ms: i64,
    to_ms: i64,
) -> std::result::Result<reqwest::Url, String> {
    let mut url = base.clone();
    url.path_segments_mut()
        .map_err(|()| "the account's base URL cannot have a path".to_owned())?
        .pop_if_empty()
        .extend(["users", calendar_id, "calendarView"]);
    // `$` stays as it is (OData's system query options); the times need no encoding.
    url.set_query(Some(&format!(
        "startDateTime={}&endDateTime={}&$top={PAGE_SIZE}&$select={SELECT}",
        civil::format_rfc3339(from_ms),
        civil::format_rfc3339(to_ms.saturating_add(999)),
    )));
    url.set_fragment(None);
    Ok(url)
}

/// A page of a delta round: its changes are only counted.
#[derive(Deserialize)]
struct DeltaPage {
    #[serde(default)]
    value: Vec<serde::de::IgnoredAny>,
    #[serde(rename = "@odata.nextLink")]
    next_link: Option<String>,
    #[serde(rename = "@odata.deltaLink")]
    delta_link: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct Page {
    #[serde(default)]
    pub(crate) value: Vec<GraphEvent>,
    #[serde(rename = "@odata.nextLink")]
    pub(crate) next_link: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GraphEvent {
    id: Option<String>,
    #[serde(rename = "iCalUId")]
    ical_uid: Option<String>,
    subject: Option<String>,
    start: Option<DateTimeTimeZone>,
    end: Option<DateTimeTimeZone>,
    is_all_day: Option<bool>,
    location: Option<Location>,
    body: Option<ItemBody>,
    online_meeting: Option<OnlineMeeting>,
    is_cancelled: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DateTimeTimeZone {
    date_time: Option<String>,
    time_zone: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    display_name: Option<String>,
}

#[derive(Deserialize)]
struct ItemBody {
    content: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OnlineMeeting {
    join_url: Option<String>,
}

fn non_empty(text: Option<String>) -> Option<String> {
    text.filter(|t| !t.trim().is_empty())
}

impl GraphEvent {
    /// The event, or `None` for an all-day one. `Err` says what cannot be read (no value quoted).
    pub(crate) fn into_event(self) -> std::result::Result<Option<CalendarEvent>, String> {
        if self.is_all_day == Some(true) {
            return Ok(None);
        }
        let uid = non_empty(self.ical_uid)
            .or(non_empty(self.id))
            .ok_or("answered an event without an id")?;
        let start_ms = utc_time(self.start.as_ref())?;
        let end_ms = utc_time(self.end.as_ref())?;
        Ok(Some(CalendarEvent {
            uid,
            title: non_empty(self.subject),
            start_ms,
            end_ms,
            location: non_empty(self.location.and_then(|l| l.display_name)),
            description: non_empty(self.body.and_then(|b| b.content)),
            conference_uris: non_empty(self.online_meeting.and_then(|m| m.join_url))
                .into_iter()
                .collect(),
            cancelled: self.is_cancelled == Some(true),
        }))
    }
}

/// A `dateTimeTimeZone` that must be in UTC (what `Prefer: outlook.timezone="UTC"` asks).
fn utc_time(time: Option<&DateTimeTimeZone>) -> std::result::Result<i64, String> {
    let time = time.ok_or("answered an event without a start or end")?;
    match time.time_zone.as_deref() {
        Some(zone) if zone.eq_ignore_ascii_case("UTC") => {}
        _ => {
            return Err(
                "answered an event time not in UTC (Prefer: outlook.timezone ignored)".to_owned(),
            );
        }
    }
    time.date_time
        .as_deref()
        .and_then(|t| civil::parse_rfc3339_as_utc(t).or_else(|| civil::parse_rfc3339(t)))
        .ok_or_else(|| "answered an event time that cannot be read".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calendar_view_url() {
        let base = reqwest::Url::parse("https://graph.microsoft.com/v1.0/").unwrap();
        // 2026-11-25T00:00:00Z to 2026-11-26T00:00:00.5Z: the end widened to the next second.
        let day = 1_795_564_800_000;
        let url = calendar_view_url(&base, "room 4/b@corp.example", day, day + 86_400_500).unwrap();
        assert_eq!(
            url.as_str(),
            "https://graph.microsoft.com/v1.0/users/room%204%2Fb@corp.example/calendarView\
             ?startDateTime=2026-11-25T00:00:00Z&endDateTime=2026-11-26T00:00:01Z\
             &$top=100\
             &$select=id,iCalUId,subject,start,end,isAllDay,location,body,onlineMeeting,isCancelled"
        );
    }

    #[test]
    fn delta_urls_and_marks() {
        let base = reqwest::Url::parse("https://graph.microsoft.com/v1.0").unwrap();
        let day = 1_795_564_800_000;
        let window = Window {
            from_ms: day,
            to_ms: day + 86_400_500,
        };
        assert_eq!(
            delta_url(&base, "room@corp.example", window)
                .unwrap()
                .as_str(),
            "https://graph.microsoft.com/v1.0/users/room@corp.example/calendarView/delta\
             ?startDateTime=2026-11-25T00:00:00Z&endDateTime=2026-11-26T00:00:01Z"
        );
        let link = reqwest::Url::parse(
            "https://graph.microsoft.com/v1.0/users/room@corp.example/calendarView/delta?$deltatoken=a:b",
        )
        .unwrap();
        let mark = window.mark(&link);
        assert!(mark.starts_with("graph-delta:1795564800000:1795651200500:https://"));
        assert_eq!(kept_delta_link(&mark, &base, window), Some(link.clone()));
        let other = Window {
            from_ms: day - 1,
            ..window
        };
        assert_eq!(kept_delta_link(&mark, &base, other), None);
        let elsewhere = reqwest::Url::parse("https://graph.example/v1.0").unwrap();
        assert_eq!(kept_delta_link(&mark, &elsewhere, window), None);
        for garbage in [
            "",
            "ctag:1",
            "graph-delta:",
            "graph-delta:1:2",
            "graph-delta:a:b:c",
        ] {
            assert_eq!(kept_delta_link(garbage, &base, window), None, "{garbage}");
        }
    }

    #[test]
    fn events_and_their_uids() {
        let event: GraphEvent = serde_json::from_str(
            r#"{"id":"AAMkAG","iCalUId":"040000008200E001","subject":"Review",
                "start":{"dateTime":"2026-11-25T09:00:00.0000000","timeZone":"UTC"},
                "end":{"dateTime":"2026-11-25T09:30:00.0000000","timeZone":"UTC"},
                "isAllDay":false,"isCancelled":true,"location":{"displayName":""},
                "body":{"contentType":"html","content":"<p>hi</p>"},"onlineMeeting":null}"#,
        )
        .unwrap();
        let event = event.into_event().unwrap().unwrap();
        assert_eq!(event.uid, "040000008200E001");
        assert_eq!(event.end_ms - event.start_ms, 1_800_000);
        assert_eq!(event.location, None);
        assert_eq!(event.description.as_deref(), Some("<p>hi</p>"));
        assert!(event.conference_uris.is_empty());
        assert!(event.cancelled);

        let no_ical: GraphEvent = serde_json::from_str(
            r#"{"id":"AAMkAG","start":{"dateTime":"2026-11-25T09:00:00","timeZone":"UTC"},
                "end":{"dateTime":"2026-11-25T09:30:00","timeZone":"UTC"}}"#,
        )
        .unwrap();
        assert_eq!(no_ical.into_event().unwrap().unwrap().uid, "AAMkAG");

        let berlin: GraphEvent = serde_json::from_str(
            r#"{"id":"x","start":{"dateTime":"2026-11-25T09:00:00","timeZone":"W. Europe Standard Time"},
                "end":{"dateTime":"2026-11-25T09:30:00","timeZone":"W. Europe Standard Time"}}"#,
        )
        .unwrap();
        assert!(berlin.into_event().unwrap_err().contains("not in UTC"));

        let all_day: GraphEvent = serde_json::from_str(
            r#"{"id":"x","isAllDay":true,"start":{"dateTime":"2026-11-25T00:00:00","timeZone":"UTC"},
                "end":{"dateTime":"2026-11-26T00:00:00","timeZone":"UTC"}}"#,
        )
        .unwrap();
        assert_eq!(all_day.into_event().unwrap(), None);
    }
}

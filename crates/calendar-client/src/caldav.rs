//! CalDAV (RFC 4791): a room's calendar is the collection `{base_url}/{calendarId}/`, read with
//! one `calendar-query` REPORT per time window.
//!
//! Decisions:
//! - The server is asked to expand recurring events into UTC occurrences (`<C:expand>`,
//!   §9.6.5), and one that does (Radicale) is read as it answers. One that answers a recurring
//!   master instead (Xandikos) has it expanded by the reader, in the time zone the object
//!   defines (`ical`, `recurrence`, `zone`); what that expansion does not support is a
//!   CalendarServerException saying what, never meetings at a guessed hour.
//! - HTTP Basic with the account's username and password, sent only over the account's URL
//!   (redirects are not followed, so credentials never go elsewhere).
//! - At most [`MAX_BODY`] of answer per request, and [`TIMEOUT`](crate::http::TIMEOUT) per request.

use crate::http::{MAX_BODY, describe_transport, read_limited};
use crate::ical;
use crate::pace::Pace;
use async_trait::async_trait;
use roomlink_domain::calendar::CalendarEvent;
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ports::{CalendarAccount, CalendarRead, CalendarReader};
use std::sync::Arc;

/// Reads room calendars from CalDAV servers.
#[derive(Clone)]
pub struct CalDavReader {
    http: reqwest::Client,
    pace: Arc<Pace>,
}

impl CalDavReader {
    /// A reader that asks as fast as it is asked.
    pub fn new() -> Self {
        Self::paced(Arc::new(Pace::unlimited()))
    }

    /// A reader whose requests keep `pace`.
    pub fn paced(pace: Arc<Pace>) -> Self {
        CalDavReader {
            http: crate::http::client(),
            pace,
        }
    }
}

impl Default for CalDavReader {
    fn default() -> Self {
        Self::new()
    }
}

/// How one request to a room's collection went wrong, as its failure message says.
struct Collection<'a> {
    url: reqwest::Url,
    server: String,
    calendar_id: &'a str,
}

impl<'a> Collection<'a> {
    fn of(account: &CalendarAccount, calendar_id: &'a str) -> Result<Self> {
        let url = collection_url(&account.base_url, calendar_id)
            .map_err(|what| Error::calendar_server(calendar_id, what))?;
        let server = url.host_str().unwrap_or("?").to_owned();
        Ok(Collection {
            url,
            server,
            calendar_id,
        })
    }

    fn fail(&self, what: impl std::fmt::Display) -> Error {
        Error::calendar_server(
            self.calendar_id,
            format!("CalDAV server {}: {what}", self.server),
        )
    }

    /// Sends `method` with `body` (Depth `depth`) as the account, and reads the multistatus.
    async fn ask(
        &self,
        reader: &CalDavReader,
        account: &CalendarAccount,
        method: &str,
        depth: &str,
        body: String,
    ) -> Result<String> {
        let method = reqwest::Method::from_bytes(method.as_bytes()).map_err(|e| self.fail(e))?;
        reader
            .pace
            .turn(&self.server)
            .await
            .map_err(|what| self.fail(what))?;
        let mut request = reader
            .http
            .request(method.clone(), self.url.clone())
            .header("Depth", depth)
            .header("Content-Type", "application/xml; charset=utf-8")
            .body(body);
        if let Some(user) = &account.username {
            request = request.basic_auth(user, account.secret.as_ref().map(|s| s.expose()));
        }
        let response = request
            .send()
            .await
            .map_err(|e| self.fail(describe_transport(&e)))?;
        let status = response.status();
        if status.as_u16() != 207 {
            return Err(self.fail(match status.as_u16() {
                401 | 403 => format!("refused the account ({status})"),
                404 => format!("has no calendar {} ({status})", self.calendar_id),
                _ => format!("answered {status} to a {method}"),
            }));
        }
        read_limited(response, MAX_BODY)
            .await
            .map_err(|what| self.fail(what))
    }
}

#[async_trait]
impl CalendarReader for CalDavReader {
    async fn events(
        &self,
        account: &CalendarAccount,
        calendar_id: &str,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<CalendarEvent>> {
        let collection = Collection::of(account, calendar_id)?;
        let body = collection
            .ask(self, account, "REPORT", "1", calendar_query(from_ms, to_ms))
            .await?;
        let mut events = Vec::new();
        for object in calendar_data(&body).map_err(|what| collection.fail(what))? {
            events.extend(
                ical::events_in(&object, from_ms, to_ms).map_err(|e| collection.fail(e.0))?,
            );
        }
        Ok(crate::readers::in_window(events, from_ms, to_ms))
    }

    /// The collection's `DAV:sync-token` (RFC 6578), else its `CS:getctag`, read first with
    /// one Depth 0 PROPFIND: the same as `since`, nothing more is asked; otherwise the window
    /// is read in full. A server with neither is read in full every time.
    async fn events_since(
        &self,
        account: &CalendarAccount,
        calendar_id: &str,
        from_ms: i64,
        to_ms: i64,
        since: Option<String>,
    ) -> Result<CalendarRead> {
        let collection = Collection::of(account, calendar_id)?;
        let answer = collection
            .ask(self, account, "PROPFIND", "0", CHANGE_MARK_QUERY.to_owned())
            .await?;
        let mark = change_mark(&answer).map_err(|what| collection.fail(what))?;
        if mark.is_some() && mark == since {
            return Ok(CalendarRead::Unchanged);
        }
        let events = self.events(account, calendar_id, from_ms, to_ms).await?;
        Ok(CalendarRead::Events { events, mark })
    }
}

/// Asks for the collection's change marks: the sync token (RFC 6578, §4) and the older
/// `getctag` of Apple's CalendarServer extension, which many servers still give.
const CHANGE_MARK_QUERY: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<D:propfind xmlns:D="DAV:" xmlns:CS="http://calendarserver.org/ns/">
  <D:prop><D:sync-token/><CS:getctag/></D:prop>
</D:propfind>"#;

/// The collection's change mark in a PROPFIND answer: `sync:` and its sync token, else
/// `ctag:` and its ctag, else `None`.
fn change_mark(body: &str) -> std::result::Result<Option<String>, String> {
    let texts = element_texts(body, &["sync-token", "getctag"])?;
    let pick = |name: &str| {
        texts
            .iter()
            .find(|(element, text)| element == name && !text.trim().is_empty())
            .map(|(_, text)| text.trim().to_owned())
    };
    Ok(pick("sync-token")
        .map(|t| format!("sync:{t}"))
        .or_else(|| pick("getctag").map(|t| format!("ctag:{t}"))))
}

/// `{base_url}/{calendarId}/`, the calendarId as one path segment (percent-encoded).
fn collection_url(base_url: &str, calendar_id: &str) -> std::result::Result<reqwest::Url, String> {
    let mut url = reqwest::Url::parse(base_url)
        .map_err(|e| format!("the account's CalDAV URL is not a URL ({e})"))?;
    if !matches!(url.scheme(), "http" | "https") || !url.username().is_empty() {
        return Err(
            "the account's CalDAV URL must be http(s) without credentials in it".to_owned(),
        );
    }
    url.path_segments_mut()
        .map_err(|()| "the account's CalDAV URL cannot have a path".to_owned())?
        .pop_if_empty()
        .push(calendar_id)
        .push("");
    url.set_query(None);
    url.set_fragment(None);
    Ok(url)
}

fn calendar_query(from_ms: i64, to_ms: i64) -> String {
    let (start, end) = (
        crate::civil::format_utc(from_ms),
        crate::civil::format_utc(to_ms),
    );
    format!(
        r#"<?xml version="1.0" encoding="utf-8"?>
<C:calendar-query xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
  <D:prop><C:calendar-data><C:expand start="{start}" end="{end}"/></C:calendar-data></D:prop>
  <C:filter><C:comp-filter name="VCALENDAR"><C:comp-filter name="VEVENT">
    <C:time-range start="{start}" end="{end}"/>
  </C:comp-filter></C:comp-filter></C:filter>
</C:calendar-query>"#
    )
}

/// The text of every `calendar-data` element of a multistatus answer.
fn calendar_data(body: &str) -> std::result::Result<Vec<String>, String> {
    Ok(element_texts(body, &["calendar-data"])?
        .into_iter()
        .map(|(_, text)| text)
        .collect())
}

/// The text of every element of an XML answer whose local name is one of `names`, with that
/// name, in document order.
fn element_texts(body: &str, names: &[&str]) -> std::result::Result<Vec<(String, String)>, String> {
    use quick_xml::events::Event;
    let unreadable = |what: &str| format!("answered XML {what}");
    let mut reader = quick_xml::Reader::from_str(body);
    let mut found = Vec::new();
    let mut current: Option<(String, String)> = None;
    loop {
        let event = reader.read_event().map_err(|e| {
            tracing::debug!(error = %e, "a CalDAV multistatus that does not parse");
            unreadable("that does not parse")
        })?;
        let text = match event {
            Event::Start(e) => {
                let name = e.local_name().into_inner().to_owned();
                if names.contains(&name.as_str()) {
                    current = Some((name, String::new()));
                }
                continue;
            }
            Event::End(e) => {
                if current
                    .as_ref()
                    .is_some_and(|(name, _)| name == e.local_name().into_inner())
                {
                    found.extend(current.take());
                }
                continue;
            }
            Event::Text(t) => t.xml10_content().into_owned(),
            Event::CData(c) => c.xml10_content().into_owned(),
            Event::GeneralRef(r) => match r.resolve_char_ref() {
                Ok(Some(c)) => c.to_string(),
                Ok(None) => quick_xml::escape::resolve_predefined_entity(&r)
                    .ok_or_else(|| unreadable("with an unknown entity"))?
                    .to_owned(),
                Err(_) => return Err(unreadable("with a bad character reference")),
            },
            Event::Eof => break,
            _ => continue,
        };
        if let Some((_, object)) = current.as_mut() {
            object.push_str(&text);
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_calendar_id_is_one_encoded_segment() {
        let url = collection_url("http://127.0.0.1:5232/rooms", "room 1@corp.example").unwrap();
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:5232/rooms/room%201@corp.example/"
        );
        let url = collection_url("http://127.0.0.1:5232/rooms/", "a/b?c").unwrap();
        assert_eq!(url.as_str(), "http://127.0.0.1:5232/rooms/a%2Fb%3Fc/");
        assert!(collection_url("http://u:p@127.0.0.1/", "x").is_err());
        assert!(collection_url("file:///etc/", "x").is_err());
    }

    #[test]
    fn calendar_data_with_entities_and_cdata() {
        let body = r#"<?xml version="1.0"?><D:multistatus xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">
<D:response><D:href>/rooms/r/1.ics</D:href><D:propstat><D:prop>
<C:calendar-data>BEGIN:VCALENDAR&#13;
SUMMARY:a &amp; b&#13;
END:VCALENDAR</C:calendar-data></D:prop></D:propstat></D:response>
<D:response><D:propstat><D:prop><C:calendar-data><![CDATA[BEGIN:VCALENDAR
END:VCALENDAR]]></C:calendar-data></D:prop></D:propstat></D:response></D:multistatus>"#;
        let objects = calendar_data(body).unwrap();
        assert_eq!(objects.len(), 2);
        assert!(objects[0].contains("SUMMARY:a & b\r\n"), "{:?}", objects[0]);
        assert!(objects[1].starts_with("BEGIN:VCALENDAR\nEND"));
        assert!(calendar_data("<a><b></a>").is_err());
    }

    #[test]
    fn the_change_mark_prefers_the_sync_token() {
        let answer = |props: &str| {
            format!(
                r#"<?xml version="1.0"?><D:multistatus xmlns:D="DAV:" xmlns:CS="http://calendarserver.org/ns/"><D:response><D:href>/rooms/r/</D:href><D:propstat><D:prop>{props}</D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response></D:multistatus>"#
            )
        };
        let both = answer(
            "<D:sync-token>http://radicale.org/ns/sync/abc</D:sync-token><CS:getctag>\"c1\"</CS:getctag>",
        );
        assert_eq!(
            change_mark(&both).unwrap().as_deref(),
            Some("sync:http://radicale.org/ns/sync/abc")
        );
        let ctag_only = answer("<D:sync-token/><CS:getctag>\"c1\"</CS:getctag>");
        assert_eq!(
            change_mark(&ctag_only).unwrap().as_deref(),
            Some("ctag:\"c1\"")
        );
        assert_eq!(change_mark(&answer("")).unwrap(), None);
        assert!(change_mark("<a><b></a>").is_err());
    }
}

//! CalDAV (RFC 4791): a room's calendar is the collection `{base_url}/{calendarId}/`, read with
//! one `calendar-query` REPORT per time window.
//!
//! Decisions:
//! - The server expands recurring events into UTC occurrences (`<C:expand>`, §9.6.5): roomlink
//!   then needs no time-zone database and no recurrence engine, and agrees with the server on
//!   both. A server that ignores the request shows as a CalendarServerException, not as
//!   meetings at the wrong hour.
//! - HTTP Basic with the account's username and password, sent only over the account's URL
//!   (redirects are not followed, so credentials never go elsewhere).
//! - At most [`MAX_BODY`] of answer per request, and [`TIMEOUT`](crate::http::TIMEOUT) per request.

use crate::http::{MAX_BODY, describe_transport, read_limited};
use crate::ical;
use async_trait::async_trait;
use roomlink_domain::calendar::CalendarEvent;
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ports::{CalendarAccount, CalendarReader};

/// Reads room calendars from CalDAV servers.
#[derive(Clone)]
pub struct CalDavReader {
    http: reqwest::Client,
}

impl CalDavReader {
    pub fn new() -> Self {
        CalDavReader {
            http: crate::http::client(),
        }
    }
}

impl Default for CalDavReader {
    fn default() -> Self {
        Self::new()
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
        let fail = |what: String| Error::calendar_server(calendar_id, what);
        let url = collection_url(&account.base_url, calendar_id).map_err(fail)?;
        let server = url.host_str().unwrap_or("?").to_owned();
        let fail = |what: String| {
            Error::calendar_server(calendar_id, format!("CalDAV server {server}: {what}"))
        };
        let report = reqwest::Method::from_bytes(b"REPORT").map_err(|e| fail(e.to_string()))?;
        let mut request = self
            .http
            .request(report, url)
            .header("Depth", "1")
            .header("Content-Type", "application/xml; charset=utf-8")
            .body(calendar_query(from_ms, to_ms));
        if let Some(user) = &account.username {
            request = request.basic_auth(user, account.secret.as_ref().map(|s| s.expose()));
        }
        let response = request
            .send()
            .await
            .map_err(|e| fail(describe_transport(&e)))?;
        let status = response.status();
        if status.as_u16() != 207 {
            return Err(fail(match status.as_u16() {
                401 | 403 => format!("refused the account ({status})"),
                404 => format!("has no calendar {calendar_id} ({status})"),
                _ => format!("answered {status} to a calendar-query"),
            }));
        }
        let body = read_limited(response, MAX_BODY).await.map_err(&fail)?;
        let mut events = Vec::new();
        for object in calendar_data(&body).map_err(&fail)? {
            events.extend(ical::events(&object).map_err(|e| fail(e.0))?);
        }
        Ok(crate::readers::in_window(events, from_ms, to_ms))
    }
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
    use quick_xml::events::Event;
    const ELEMENT: &str = "calendar-data";
    let unreadable = |what: &str| format!("answered XML {what}");
    let mut reader = quick_xml::Reader::from_str(body);
    let mut objects = Vec::new();
    let mut current: Option<String> = None;
    loop {
        let event = reader.read_event().map_err(|e| {
            tracing::debug!(error = %e, "a CalDAV multistatus that does not parse");
            unreadable("that does not parse")
        })?;
        let text = match event {
            Event::Start(e) if e.local_name().as_ref() == ELEMENT => {
                current = Some(String::new());
                continue;
            }
            Event::End(e) if e.local_name().as_ref() == ELEMENT => {
                objects.extend(current.take());
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
        if let Some(object) = current.as_mut() {
            object.push_str(&text);
        }
    }
    Ok(objects)
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
}

//! Adapters of the domain's `CalendarReader` port: the calendar systems rooms live in.
//!
//! - [`CalendarReaders`] is the one reader the service needs: it hands each account to the
//!   reader of its `calendarType` (EXCHANGE is read through each room's listener instead).
//! - [`CalDavReader`] reads any standard CalDAV server (RFC 4791): one `calendar-query` REPORT
//!   per room and time window, with the server expanding recurrences into UTC occurrences (or
//!   the reader itself, in the object's own time zones, for a server that does not).
//! - [`GraphReader`] reads Microsoft 365 mailboxes through Microsoft Graph's `calendarView`,
//!   with an application token (OAuth 2.0 client credentials).
//! - [`GoogleReader`] reads Google calendars through the Calendar API's `events.list`, with a
//!   service account's token (a JWT signed RS256 with its key).
//!
//! The two OAuth readers share the token caching and the request loop (`oauth`, `http`): tokens
//! kept until a minute before they expire, one new token after a 401, `Retry-After` honoured
//! when short, one retry after a 5xx, pages followed only on the API's own server.
//!
//! Each reader has change marks (`events_since`), so an unchanged calendar costs one small
//! request: CalDAV's sync token or ctag, Graph's delta link, Google's `updatedMin` since its
//! own clock's `Date`. A changed calendar is read again in full.
//!
//! Every request keeps the [`Pace`] of its host: a bounded rate per calendar system, and a
//! host that throttles is left alone for as long as it asked.
//!
//! Every failure is the catalog's `CalendarServerException` naming the room's calendarId; its
//! message names the server's host and what went wrong, never a credential, a token, a URL's
//! userinfo or a response body.

mod caldav;
mod civil;
mod google;
mod graph;
mod http;
mod ical;
mod oauth;
mod pace;
mod readers;
mod recurrence;
#[cfg(feature = "testing")]
pub mod testing;
mod zone;

pub use caldav::CalDavReader;
pub use google::GoogleReader;
pub use graph::GraphReader;
pub use pace::Pace;
pub use readers::CalendarReaders;

/// The readers' parsers on their own, for the fuzz targets `ical` and `calendar_json` (in
/// `fuzz/`); not an API.
#[doc(hidden)]
pub mod fuzzing {
    use roomlink_domain::calendar::CalendarEvent;

    /// What a reader makes of one page of events.
    #[derive(Debug)]
    pub struct Page {
        /// The events it keeps of the window `[from_ms, to_ms)`, or why it refuses the page.
        pub events: Result<Vec<CalendarEvent>, String>,
        /// Where the next page is (Graph: a link; Google: a page token).
        pub next: Option<String>,
    }

    /// The VEVENTs of one iCalendar object (CalDAV's `calendar-data`), as the CalDAV reader
    /// reads them before keeping the window's ([`in_window`]).
    pub fn ical(text: &str) -> Result<Vec<CalendarEvent>, String> {
        crate::ical::events(text).map_err(|e| e.0)
    }

    /// A Microsoft Graph `calendarView` page; `None` when it does not parse as one.
    pub fn graph_page(body: &str, from_ms: i64, to_ms: i64) -> Option<Page> {
        let page: crate::graph::Page = serde_json::from_str(body).ok()?;
        let events = page.value.into_iter().map(|e| e.into_event()).collect();
        Some(Page {
            events: kept(events, from_ms, to_ms),
            next: page.next_link,
        })
    }

    /// A Google Calendar `events.list` page; `None` when it does not parse as one.
    pub fn google_page(body: &str, from_ms: i64, to_ms: i64) -> Option<Page> {
        let page: crate::google::Page = serde_json::from_str(body).ok()?;
        let events = page.items.into_iter().map(|e| e.into_event()).collect();
        Some(Page {
            events: kept(events, from_ms, to_ms),
            next: page.next_page_token.filter(|t| !t.is_empty()),
        })
    }

    fn kept(
        events: Result<Vec<Option<CalendarEvent>>, String>,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<CalendarEvent>, String> {
        events.map(|events| in_window(events.into_iter().flatten().collect(), from_ms, to_ms))
    }

    /// What every reader answers of the events it read.
    pub fn in_window(events: Vec<CalendarEvent>, from_ms: i64, to_ms: i64) -> Vec<CalendarEvent> {
        crate::readers::in_window(events, from_ms, to_ms)
    }

    /// The Graph reader's next-page link, when it follows it from a page read at `base`.
    pub fn graph_next_page(link: &str, base: &str) -> Option<String> {
        let base = reqwest::Url::parse(base).ok()?;
        crate::graph::same_server(link, &base).map(String::from)
    }
}

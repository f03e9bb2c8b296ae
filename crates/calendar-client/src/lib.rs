//! Adapters of the domain's `CalendarReader` port: the calendar systems rooms live in.
//!
//! - [`CalendarReaders`] is the one reader the service needs: it hands each account to the
//!   reader of its `calendarType` (EXCHANGE is read through each room's listener instead).
//! - [`CalDavReader`] reads any standard CalDAV server (RFC 4791): one `calendar-query` REPORT
//!   per room and time window, with the server expanding recurrences into UTC occurrences.
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
#[cfg(feature = "testing")]
pub mod testing;

pub use caldav::CalDavReader;
pub use google::GoogleReader;
pub use graph::GraphReader;
pub use pace::Pace;
pub use readers::CalendarReaders;

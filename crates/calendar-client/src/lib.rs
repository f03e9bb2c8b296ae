//! Adapters of the domain's `CalendarReader` port: the calendar systems rooms live in.
//!
//! - [`CalDavReader`] reads any standard CalDAV server (RFC 4791): one `calendar-query` REPORT
//!   per room and time window, with the server expanding recurrences into UTC occurrences.
//!
//! Every failure is the catalog's `CalendarServerException` naming the room's calendarId; its
//! message names the server's host and what went wrong, never a credential, a URL's userinfo or
//! a response body.

mod caldav;
mod civil;
mod ical;
#[cfg(feature = "testing")]
pub mod testing;

pub use caldav::CalDavReader;

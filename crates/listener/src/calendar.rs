//! `readcalendar` (listener 3.2.0): room calendars that only this listener can reach, read
//! for roomlink. So far on-premises Exchange through EWS ([`ews`]); the account's password
//! stays in the listener's configuration and never travels to roomlink.

pub mod ews;
pub mod soap;
pub mod utc;

use ews::ExchangeClient;
use roomlink_listener_protocol::wire::{CalendarQuery, Failure, WireCalendarEvents};

/// The calendar readers this listener has.
#[derive(Debug, Default)]
pub struct Calendars {
    pub exchange: Option<ExchangeClient>,
}

impl Calendars {
    /// The events of the query's calendar; `calendar_not_configured` when this listener
    /// reads no calendars of its type, `calendar_unreadable` when the calendar system fails.
    pub async fn read(&self, query: &CalendarQuery) -> Result<WireCalendarEvents, Failure> {
        let exchange = match (query.calendar_type.as_str(), &self.exchange) {
            ("EXCHANGE", Some(exchange)) => exchange,
            ("EXCHANGE", None) => {
                return Err(Failure::calendar_not_configured(
                    "this listener has no Exchange server configured (calendar.exchange.soap_uri)",
                ));
            }
            (other, _) => {
                return Err(Failure::calendar_not_configured(format!(
                    "this listener reads EXCHANGE calendars only, not {}",
                    other.chars().take(40).collect::<String>()
                )));
            }
        };
        let events = exchange
            .events(&query.calendar_id, query.from, query.to)
            .await
            .map_err(Failure::calendar_unreadable)?;
        Ok(WireCalendarEvents {
            calendar_id: query.calendar_id.clone(),
            from: query.from,
            to: query.to,
            events,
        })
    }
}

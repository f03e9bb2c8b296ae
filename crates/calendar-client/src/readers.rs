//! [`CalendarReaders`]: the one `CalendarReader` the service holds, handing each account to the
//! reader of its calendar type.

use crate::{CalDavReader, GoogleReader, GraphReader, Pace};
use async_trait::async_trait;
use roomlink_domain::calendar::CalendarEvent;
use roomlink_domain::calendar::upcoming::MeetingWindow;
use roomlink_domain::enums::CalendarType;
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ports::{CalendarAccount, CalendarRead, CalendarReader, Clock};
use std::sync::Arc;

/// Reads any account's calendars: CALDAV with [`CalDavReader`], OFFICE_365 with
/// [`GraphReader`], GOOGLE with [`GoogleReader`]. EXCHANGE (on-premises) is read through each
/// room's listener (`CalendarService` asks the listener transport, never this reader): a
/// CalendarServerException saying so.
pub struct CalendarReaders {
    caldav: CalDavReader,
    graph: GraphReader,
    google: GoogleReader,
}

impl CalendarReaders {
    /// Readers that ask as fast as they are asked; `clock` dates Google's signed token requests.
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self::paced(clock, Pace::unlimited())
    }

    /// Readers that share `pace`: each calendar system's host is asked at that pace, whichever
    /// reader asks.
    pub fn paced(clock: Arc<dyn Clock>, pace: Pace) -> Self {
        let pace = Arc::new(pace);
        CalendarReaders {
            caldav: CalDavReader::paced(pace.clone()),
            graph: GraphReader::paced(pace.clone()),
            google: GoogleReader::paced(clock, pace),
        }
    }
}

impl CalendarReaders {
    /// The reader of `account`'s calendar type.
    fn reader(&self, account: &CalendarAccount, calendar_id: &str) -> Result<&dyn CalendarReader> {
        Ok(match account.calendar_type {
            CalendarType::CalDav => &self.caldav,
            CalendarType::Office365 => &self.graph,
            CalendarType::Google => &self.google,
            CalendarType::Exchange => {
                return Err(Error::calendar_server(
                    calendar_id,
                    format!(
                        "EXCHANGE calendars are read through the listener of each room \
                         (readcalendar), not by roomlink (calendar {calendar_id})"
                    ),
                ));
            }
        })
    }
}

#[async_trait]
impl CalendarReader for CalendarReaders {
    async fn events(
        &self,
        account: &CalendarAccount,
        calendar_id: &str,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<CalendarEvent>> {
        self.reader(account, calendar_id)?
            .events(account, calendar_id, from_ms, to_ms)
            .await
    }

    async fn events_since(
        &self,
        account: &CalendarAccount,
        calendar_id: &str,
        from_ms: i64,
        to_ms: i64,
        since: Option<String>,
    ) -> Result<CalendarRead> {
        self.reader(account, calendar_id)?
            .events_since(account, calendar_id, from_ms, to_ms, since)
            .await
    }
}

/// What a reader with change marks is asked for (Graph, Google).
pub(crate) enum Since {
    /// The events only.
    NoMarks,
    /// The events and a change mark, or unchanged since this one.
    Mark(Option<String>),
}

/// What every reader answers: the events overlapping `[from_ms, to_ms)` (an event without
/// duration counts as lasting a millisecond), by start time then uid. An event the server says
/// ends before it starts ends when it starts (as `readcalendar`'s events do).
pub(crate) fn in_window(
    mut events: Vec<CalendarEvent>,
    from_ms: i64,
    to_ms: i64,
) -> Vec<CalendarEvent> {
    let window = MeetingWindow { from_ms, to_ms };
    events.retain(|e| e.overlaps(&window));
    for event in &mut events {
        event.end_ms = event.end_ms.max(event.start_ms);
    }
    events.sort_by(|a, b| (a.start_ms, &a.uid).cmp(&(b.start_ms, &b.uid)));
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use roomlink_domain::error::ErrorKind;
    use roomlink_domain::system::ManualClock;

    #[tokio::test]
    async fn exchange_is_not_read_here() {
        let readers = CalendarReaders::new(Arc::new(ManualClock::at(0)));
        let account = CalendarAccount {
            calendar_type: CalendarType::Exchange,
            base_url: "https://mail.corp.example/EWS/Exchange.asmx".to_owned(),
            username: Some("svc".to_owned()),
            token_url: None,
            secret: None,
        };
        let e = readers
            .events(&account, "board@corp.example", 0, 1)
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::CalendarServerException);
        assert!(
            e.message().contains("through the listener"),
            "{}",
            e.message()
        );
        assert!(
            e.message().contains("board@corp.example"),
            "{}",
            e.message()
        );
    }

    #[test]
    fn the_window_keeps_overlapping_events_in_order() {
        let event = |uid: &str, start_ms: i64, end_ms: i64| CalendarEvent {
            uid: uid.to_owned(),
            title: None,
            start_ms,
            end_ms,
            location: None,
            description: None,
            conference_uris: Vec::new(),
            cancelled: false,
        };
        let events = vec![
            event("late", 50, 60),
            event("ends-at-start", 0, 10),
            event("b", 20, 30),
            event("a", 20, 25),
            event("instant", 10, 10),
            event("starts-at-end", 100, 110),
            event("spans", 0, 200),
        ];
        let uids: Vec<String> = in_window(events, 10, 100)
            .into_iter()
            .map(|e| e.uid)
            .collect();
        assert_eq!(uids, ["spans", "instant", "a", "b", "late"]);
        // An end before the start (a DTEND before DTSTART, a negative DURATION, a server's
        // mistake) ends the event when it starts; fuzz targets ical and calendar_json check
        // that no event leaves a reader ending before it starts.
        let backwards = in_window(vec![event("backwards", 20, 5)], 10, 100);
        assert_eq!((backwards[0].start_ms, backwards[0].end_ms), (20, 20));
    }
}

//! Calendar events as the domain sees them, and what a room system does with them.
//!
//! Rooms join meetings from their own calendars (Google, Exchange, Office 365). The adapters
//! turn each calendar system's shapes into [`CalendarEvent`]s so that the rules here are written
//! once, without I/O: [`meeting`] decides which meeting, if any, an event asks the room to dial.

pub mod account;
pub mod auto_join;
pub mod meeting;
pub mod push;
pub mod upcoming;

/// One event of a room's calendar, as any calendar system gives it (times in ms since the epoch, UTC).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalendarEvent {
    pub uid: String,
    pub title: Option<String>,
    pub start_ms: i64,
    pub end_ms: i64,
    pub location: Option<String>,
    /// Plain text or HTML (Microsoft Graph gives HTML bodies).
    pub description: Option<String>,
    /// Join links given in structured form: iCalendar CONFERENCE/URL properties, Graph's onlineMeeting.joinUrl, Google's conferenceData entry points (video and sip).
    pub conference_uris: Vec<String>,
    pub cancelled: bool,
}

impl CalendarEvent {
    /// Whether the event overlaps `window` (one without duration counts as lasting 1 ms).
    pub fn overlaps(&self, window: &upcoming::MeetingWindow) -> bool {
        self.start_ms < window.to_ms && self.end_ms.max(self.start_ms + 1) > window.from_ms
    }
}

//! A reader of server-sent events (`text/event-stream`) over real HTTP, as a browser's
//! `EventSource` reads them.

#![allow(clippy::unwrap_used)] // test helpers: a panic is the failure report

use reqwest::{Response, StatusCode};
use serde_json::Value;
use std::time::Duration;

/// One server-sent event: its `id:` (if any), `event:` and `data:`.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub id: Option<String>,
    pub name: String,
    pub data: Value,
}

/// Reads a `text/event-stream` body event by event, skipping comments and `retry:`.
pub struct Events {
    response: Response,
    buffer: String,
}

impl Events {
    pub fn new(response: Response) -> Events {
        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        assert_eq!(response.headers()["cache-control"], "no-store");
        Events {
            response,
            buffer: String::new(),
        }
    }

    /// The next event; `None` when the server ended the stream.
    pub async fn next(&mut self) -> Option<Event> {
        self.next_within(Duration::from_secs(10))
            .await
            .expect("an event within 10 s")
    }

    /// The next event if one comes within `wait` (`Err` if none did), `Ok(None)` when the
    /// server ended the stream. What arrived in part is kept for the next call.
    pub async fn next_within(&mut self, wait: Duration) -> Result<Option<Event>, ()> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let frame: String = self.buffer.drain(..end + 2).collect();
                let (mut id, mut name, mut data) = (None, None, None);
                for line in frame.lines() {
                    match line.split_once(": ") {
                        Some(("id", v)) => id = Some(v.to_owned()),
                        Some(("event", v)) => name = Some(v.to_owned()),
                        Some(("data", v)) => data = Some(serde_json::from_str(v).unwrap()),
                        _ => {}
                    }
                }
                if let Some(name) = name {
                    return Ok(Some(Event {
                        id,
                        name,
                        data: data.unwrap_or(Value::Null),
                    }));
                }
                continue;
            }
            let Ok(chunk) = tokio::time::timeout_at(deadline, self.response.chunk()).await else {
                return Err(());
            };
            let Some(chunk) = chunk.unwrap() else {
                return Ok(None);
            };
            self.buffer.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }

    /// The next event, which must be `name`.
    pub async fn expect(&mut self, name: &str) -> Event {
        let event = self.next().await.expect("the stream goes on");
        assert_eq!(event.name, name, "{event:?}");
        event
    }
}

//! [`Pace`]: how fast roomlink asks each calendar system (by host), shared by every reader.
//!
//! - At most `per_second` requests start per second per host, evenly spaced: 10,000 rooms
//!   polled at once never burst into a calendar system (Graph and Google throttle bursts per
//!   application, CalDAV servers are often one small machine).
//! - When a host throttles (429 or 503), every later request to it waits until the
//!   `Retry-After` it gave has passed (at most [`MAX_HOLD`]), not just the one that was told.
//! - A request whose turn is further off than [`MAX_QUEUE`] fails at once, saying so: a room's
//!   read should not wait minutes behind the rest of a round; the next round tries again.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;
use tokio::time::Instant;

/// The longest a host's `Retry-After` holds every request to it.
pub(crate) const MAX_HOLD: Duration = Duration::from_secs(300);
/// The longest a request waits for its turn.
pub(crate) const MAX_QUEUE: Duration = Duration::from_secs(30);

/// The pace of requests per calendar host.
pub struct Pace {
    /// Time between two requests' starts to one host (zero: no limit).
    spacing: Duration,
    hosts: Mutex<HashMap<String, HostTurns>>,
}

#[derive(Clone, Copy)]
struct HostTurns {
    /// When the next request may start.
    next: Instant,
}

impl Pace {
    /// At most `per_second` requests a second to each host; 0: no limit (throttling answers
    /// still hold the host).
    pub fn per_host(per_second: u32) -> Self {
        Pace {
            spacing: if per_second == 0 {
                Duration::ZERO
            } else {
                Duration::from_secs(1) / per_second
            },
            hosts: Mutex::new(HashMap::new()),
        }
    }

    /// No limit.
    pub fn unlimited() -> Self {
        Self::per_host(0)
    }

    /// Waits for a turn to send a request to `host`; `Err` says why none came soon enough.
    pub(crate) async fn turn(&self, host: &str) -> Result<(), String> {
        let now = Instant::now();
        let start = {
            let mut hosts = self.hosts.lock().unwrap_or_else(PoisonError::into_inner);
            // Hosts whose turns are all past hold nothing worth keeping.
            if hosts.len() > 1024 {
                hosts.retain(|_, turns| turns.next > now);
            }
            let turns = hosts
                .entry(host.to_owned())
                .or_insert(HostTurns { next: now });
            let start = turns.next.max(now);
            if start - now > MAX_QUEUE {
                return Err(format!(
                    "not asked: requests to this server are held for {} s more (throttled, or \
                     the pace of calendar.requests_per_second)",
                    (start - now).as_secs()
                ));
            }
            turns.next = start + self.spacing;
            start
        };
        tokio::time::sleep_until(start).await;
        Ok(())
    }

    /// `host` throttled: no request to it starts within `wait` (at most [`MAX_HOLD`]).
    pub(crate) fn hold(&self, host: &str, wait: Duration) {
        let until = Instant::now() + wait.min(MAX_HOLD);
        let mut hosts = self.hosts.lock().unwrap_or_else(PoisonError::into_inner);
        let turns = hosts
            .entry(host.to_owned())
            .or_insert(HostTurns { next: until });
        turns.next = turns.next.max(until);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Waits are checked from below only: a sleep is never shorter than asked.

    #[tokio::test]
    async fn turns_are_spaced_per_host() {
        let pace = Pace::per_host(100);
        let start = Instant::now();
        for _ in 0..5 {
            pace.turn("a.example").await.unwrap();
        }
        assert!(Instant::now() - start >= Duration::from_millis(40));
        // Another host has its own turns: its first is now.
        let turns = pace.hosts.lock().unwrap().get("b.example").copied();
        assert!(turns.is_none());
        pace.turn("b.example").await.unwrap();
        let next = pace.hosts.lock().unwrap()["b.example"].next;
        assert!(next <= Instant::now() + Duration::from_millis(10));
    }

    #[tokio::test]
    async fn a_throttling_host_holds_every_request_and_a_far_turn_fails() {
        let pace = Pace::unlimited();
        pace.hold("a.example", Duration::from_millis(50));
        let start = Instant::now();
        pace.turn("a.example").await.unwrap();
        assert!(Instant::now() - start >= Duration::from_millis(50));
        pace.hold("a.example", Duration::from_secs(3600));
        let e = pace.turn("a.example").await.unwrap_err();
        assert!(e.contains("held for 29"), "at most MAX_HOLD: {e}");
        pace.turn("b.example").await.unwrap();
    }
}

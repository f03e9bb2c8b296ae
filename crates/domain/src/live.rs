//! Live updates to browsers: what changed (a [`LiveTopic`] per enterprise), and the short-lived
//! tickets that let a browser's `EventSource` (which cannot send headers) open the stream
//! without putting an access token in a URL.
//!
//! A ticket names the access token it was issued for, never the token itself: opening a
//! stream with it needs that token to be live still, and revoking the token closes the
//! streams opened with it. Its signature comes from the [`TicketSigner`] port, keyed by the
//! service key every instance shares, so any instance can check a ticket another issued.
//!
//! [`TicketSigner`]: crate::ports::TicketSigner

use crate::error::{Error, Result};
use crate::ids::{EnterpriseId, TokenId, is_well_formed};
use serde::{Deserialize, Serialize};

/// What changed for an enterprise; the console reads that part again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LiveTopic {
    /// A room's status (call, dialling, mute) or the endpoint records.
    Statuses,
    /// A room's health changed state (ok, degraded, offline).
    Health,
    /// A room's inventory was read and differs from before.
    Inventory,
    /// A listener went offline or came back.
    Listeners,
    /// A template job started, finished a room, or ended.
    Jobs,
    /// A drift check of a room assigned a template was recorded.
    Drift,
}

impl LiveTopic {
    /// The event name on the stream (`event:` line).
    pub const fn name(self) -> &'static str {
        match self {
            LiveTopic::Statuses => "statuses",
            LiveTopic::Health => "health",
            LiveTopic::Inventory => "inventory",
            LiveTopic::Listeners => "listeners",
            LiveTopic::Jobs => "jobs",
            LiveTopic::Drift => "drift",
        }
    }
}

/// How long a ticket may be used to open a stream: long enough for a page to open it, and for
/// a browser's own reconnects after a brief drop; after that the page asks for a new one.
pub const TICKET_LIFETIME_MS: i64 = 60_000;

/// How long a browser waits before reconnecting (the stream's `retry:` line).
pub const RECONNECT_DELAY_MS: u64 = 3_000;

/// How often a quiet stream sends a comment line, so proxies do not close it as idle (most
/// close after 30 to 60 s).
pub const KEEP_ALIVE_MS: u64 = 20_000;

/// A stream-opening ticket: for one access token of one enterprise, until `expires_ms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveTicket {
    pub enterprise: EnterpriseId,
    pub token: TokenId,
    pub expires_ms: i64,
}

impl LiveTicket {
    /// A ticket for `token` from `now_ms`.
    pub fn issue(enterprise: EnterpriseId, token: TokenId, now_ms: i64) -> LiveTicket {
        LiveTicket {
            enterprise,
            token,
            expires_ms: now_ms.saturating_add(TICKET_LIFETIME_MS),
        }
    }

    /// What is signed: every field, and a purpose, so no other signed text can pass for one.
    pub fn signed_text(&self) -> String {
        format!(
            "roomlink-live-ticket.{}.{}.{}",
            self.enterprise.as_str(),
            self.token.as_str(),
            self.expires_ms
        )
    }

    /// The ticket as a query parameter carries it: `enterprise.token.expiry.signature`, all
    /// URL-safe (ids are `[A-Za-z0-9_-]`; a signature must be too).
    pub fn encode(&self, signature: &str) -> String {
        format!(
            "{}.{}.{}.{signature}",
            self.enterprise.as_str(),
            self.token.as_str(),
            self.expires_ms
        )
    }

    /// The ticket and its signature from [`LiveTicket::encode`]'s form. Anything else is
    /// `BadCredentialsException`, as a wrong signature or an expired ticket will be: a caller
    /// learns nothing from which.
    pub fn decode(text: &str) -> Result<(LiveTicket, &str)> {
        let mut parts = text.splitn(4, '.');
        let (Some(enterprise), Some(token), Some(expires), Some(signature)) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(Error::bad_credentials());
        };
        let expires_ms = expires
            .parse::<i64>()
            .map_err(|_| Error::bad_credentials())?;
        if !is_well_formed(enterprise) || !is_well_formed(token) || signature.is_empty() {
            return Err(Error::bad_credentials());
        }
        Ok((
            LiveTicket {
                enterprise: EnterpriseId::from_trusted(enterprise.to_owned()),
                token: TokenId::from_trusted(token.to_owned()),
                expires_ms,
            },
            signature,
        ))
    }

    /// Whether it may still open a stream at `now_ms`.
    pub fn is_live(&self, now_ms: i64) -> bool {
        now_ms < self.expires_ms
    }
}

/// Where a reconnecting stream resumes: the `id:` of the last event it saw, which is this
/// process's `epoch` and the event's sequence number. Another process (a restart, or another
/// instance behind the load balancer) has another epoch: the browser then reads everything
/// again (a `resync` event).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventPosition {
    pub epoch: u64,
    pub seq: u64,
}

impl EventPosition {
    /// `epoch.seq` in hex and decimal (the `id:` line).
    pub fn render(self) -> String {
        format!("{:x}.{}", self.epoch, self.seq)
    }

    /// `None` for anything [`EventPosition::render`] did not write.
    pub fn parse(text: &str) -> Option<EventPosition> {
        let (epoch, seq) = text.trim().split_once('.')?;
        Some(EventPosition {
            epoch: u64::from_str_radix(epoch, 16).ok()?,
            seq: seq.parse().ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn ticket() -> LiveTicket {
        LiveTicket::issue(
            EnterpriseId::from_trusted("e1".into()),
            TokenId::from_trusted("t_1-a".into()),
            1_000,
        )
    }

    #[test]
    fn a_ticket_reads_back_and_expires_after_its_lifetime() {
        let t = ticket();
        let text = t.encode("svc-1a2b~AbC_-9");
        assert_eq!(text, "e1.t_1-a.61000.svc-1a2b~AbC_-9");
        let (back, signature) = LiveTicket::decode(&text).unwrap();
        assert_eq!((back.clone(), signature), (t, "svc-1a2b~AbC_-9"));
        assert!(back.is_live(60_999));
        assert!(!back.is_live(61_000));
        assert_eq!(
            back.signed_text(),
            "roomlink-live-ticket.e1.t_1-a.61000",
            "every field is signed"
        );
    }

    #[test]
    fn malformed_tickets_are_bad_credentials() {
        for text in [
            "",
            "e1.t1.61000",
            "e1.t1.soon.sig",
            "e 1.t1.61000.sig",
            "e1..61000.sig",
            "e1.t1.61000.",
        ] {
            let e = LiveTicket::decode(text).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::BadCredentialsException, "{text:?}");
        }
    }

    #[test]
    fn positions_read_back_and_nothing_else_parses() {
        let p = EventPosition {
            epoch: 0xabc,
            seq: 42,
        };
        assert_eq!(p.render(), "abc.42");
        assert_eq!(EventPosition::parse("abc.42"), Some(p));
        for text in ["", "42", "abc.", ".1", "xyz.1", "abc.-1"] {
            assert_eq!(EventPosition::parse(text), None, "{text:?}");
        }
        let names = [
            LiveTopic::Statuses,
            LiveTopic::Health,
            LiveTopic::Inventory,
            LiveTopic::Listeners,
        ]
        .map(LiveTopic::name);
        assert_eq!(names, ["statuses", "health", "inventory", "listeners"]);
    }
}

//! The events a subscription can ask for, and which observed facts make each one. Every
//! body is Standard Webhooks' shape: `{"type", "timestamp", "data"}`; `data` names ids and
//! states, never a secret, a meeting's title or a dial string.

use crate::audit::AuditEntry;
use crate::civil::UtcParts;
use crate::health::{HealthReason, HealthState};
use crate::inventory::ReadFailure;
use crate::listener::ListenerHealth;
use serde::Serialize;
use serde_json::{Value, json};

macro_rules! event_types {
    ($($variant:ident => $name:literal,)*) => {
        /// An event's type, as subscriptions name it.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum EventType { $($variant),* }

        impl EventType {
            pub const ALL: &'static [EventType] = &[$(EventType::$variant),*];

            pub const fn as_str(self) -> &'static str {
                match self { $(EventType::$variant => $name),* }
            }
        }
    };
}

event_types! {
    RoomOffline => "room.offline",
    RoomDegraded => "room.degraded",
    RoomOnline => "room.online",
    ListenerOffline => "listener.offline",
    ListenerOnline => "listener.online",
    CallStarted => "call.started",
    CallEnded => "call.ended",
    CommandFailed => "command.failed",
    InventoryChanged => "inventory.changed",
    CalendarUnreadable => "calendar.unreadable",
    CalendarReadable => "calendar.readable",
    TemplateDrifted => "template.drifted",
    WebhookTest => "webhook.test",
}

impl EventType {
    /// What a subscription may name: every type but the test delivery, which goes to one
    /// subscription on request whatever it asks for.
    pub const SUBSCRIBABLE: &'static [EventType] = &[
        EventType::RoomOffline,
        EventType::RoomDegraded,
        EventType::RoomOnline,
        EventType::ListenerOffline,
        EventType::ListenerOnline,
        EventType::CallStarted,
        EventType::CallEnded,
        EventType::CommandFailed,
        EventType::InventoryChanged,
        EventType::CalendarUnreadable,
        EventType::CalendarReadable,
        EventType::TemplateDrifted,
    ];

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|t| t.as_str() == text)
    }

    /// Parses a subscribable type; the test event is not one.
    pub fn parse_subscribable(text: &str) -> Option<Self> {
        Self::parse(text).filter(|t| Self::SUBSCRIBABLE.contains(t))
    }
}

impl Serialize for EventType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// One event, before it is fanned out to the subscriptions that want it.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// `msg_` and 24 hex digits: the `webhook-id` of every delivery of this event.
    pub id: String,
    pub event_type: EventType,
    pub at: i64,
    pub data: Value,
}

impl Event {
    pub fn new(event_type: EventType, at: i64, data: Value) -> Event {
        Event {
            id: format!("msg_{}", crate::ids::random_entity_id()),
            event_type,
            at,
            data,
        }
    }

    /// The body every subscription receives, signed as it is.
    pub fn body(&self) -> String {
        json!({
            "type": self.event_type.as_str(),
            "timestamp": UtcParts::of(self.at).rfc3339(),
            "data": self.data,
        })
        .to_string()
    }

    /// A room's health changed from `previous` (`None`: first recorded) to `state`. Nothing
    /// when it did not change, or when a room is first recorded as ok (a new room working is
    /// not news).
    pub fn room_health(
        room: &RoomRef<'_>,
        previous: Option<HealthState>,
        state: HealthState,
        since: Option<i64>,
        reasons: &[HealthReason],
        now: i64,
    ) -> Option<Event> {
        if previous == Some(state) || (previous.is_none() && state == HealthState::Ok) {
            return None;
        }
        let event_type = match state {
            HealthState::Ok => EventType::RoomOnline,
            HealthState::Degraded => EventType::RoomDegraded,
            HealthState::Offline => EventType::RoomOffline,
        };
        Some(Event::new(
            event_type,
            now,
            json!({
                "endpointId": room.endpoint_id,
                "name": room.name,
                "listenerServiceId": room.listener_service_id,
                "state": state.as_str(),
                "previousState": previous.map(HealthState::as_str),
                "since": since.map(|t| UtcParts::of(t).rfc3339()),
                "reasons": reasons,
            }),
        ))
    }

    /// A listener went offline or came back. An unknown state (never checked) is no news,
    /// nor is a first observation of online.
    pub fn listener_health(
        listener_id: &str,
        name: &str,
        previous: Option<ListenerHealth>,
        health: ListenerHealth,
        last_contact: Option<i64>,
        now: i64,
    ) -> Option<Event> {
        let event_type = match health {
            ListenerHealth::Unknown => return None,
            _ if previous == Some(health) => return None,
            ListenerHealth::Online if previous.is_none_or(|p| p == ListenerHealth::Unknown) => {
                return None;
            }
            ListenerHealth::Online => EventType::ListenerOnline,
            ListenerHealth::Offline => EventType::ListenerOffline,
        };
        Some(Event::new(
            event_type,
            now,
            json!({
                "listenerServiceId": listener_id,
                "name": name,
                "state": if health == ListenerHealth::Online { "online" } else { "offline" },
                "lastContact": last_contact.map(|t| UtcParts::of(t).rfc3339()),
            }),
        ))
    }

    /// A room's calendar could not be read by an auto-join round (`reason`: why), or could
    /// again after it could not. Nothing when nothing changed, nor for a first read that
    /// worked.
    pub fn calendar_read(
        room: &RoomRef<'_>,
        calendar: &CalendarRef<'_>,
        previously_readable: Option<bool>,
        reason: Option<&ReadFailure>,
        now: i64,
    ) -> Option<Event> {
        let readable = reason.is_none();
        let event_type = match (previously_readable, readable) {
            (Some(before), now_readable) if before == now_readable => return None,
            (None, true) => return None,
            (_, true) => EventType::CalendarReadable,
            (_, false) => EventType::CalendarUnreadable,
        };
        Some(Event::new(
            event_type,
            now,
            json!({
                "endpointId": room.endpoint_id,
                "name": room.name,
                "listenerServiceId": room.listener_service_id,
                "calendarType": calendar.calendar_type,
                "calendarId": calendar.calendar_id,
                "errorName": reason.map(|r| r.error_name.as_str()),
                "errorMessage": reason.map(|r| r.error_message.as_str()),
            }),
        ))
    }

    /// A call session opened (`roomlink_domain::usage`): the room was first seen in a call.
    pub fn call_started(endpoint_id: &str, started: i64, source: &str) -> Event {
        Event::new(
            EventType::CallStarted,
            started,
            json!({
                "endpointId": endpoint_id,
                "startedAt": UtcParts::of(started).rfc3339(),
                "joinedBy": source,
            }),
        )
    }

    /// A call session closed at `ended`.
    pub fn call_ended(endpoint_id: &str, started: i64, ended: i64, source: &str) -> Event {
        Event::new(
            EventType::CallEnded,
            ended,
            json!({
                "endpointId": endpoint_id,
                "startedAt": UtcParts::of(started).rfc3339(),
                "endedAt": UtcParts::of(ended).rfc3339(),
                "durationSeconds": (ended - started).max(0) / 1000,
                "joinedBy": source,
            }),
        )
    }

    /// A caller's command to a room (join, hang up, tones, mute) that the room, its listener
    /// or roomlink failed (a 5xx error): its audit entry says which and why. Nothing for any
    /// other entry, nor for the caller's own mistakes (4xx: a bad tone, an unknown room).
    pub fn command_failed(entry: &AuditEntry) -> Option<Event> {
        const COMMANDS: [&str; 5] = [
            "endpoints.join",
            "endpoints.hangUp",
            "endpoints.sendDtmf",
            "endpoints.muteMicrophone",
            "endpoints.unmuteMicrophone",
        ];
        let server_side = crate::error::ErrorKind::ALL
            .iter()
            .any(|k| k.name() == entry.outcome && k.status() >= 500);
        if !server_side || !COMMANDS.contains(&entry.operation.as_str()) {
            return None;
        }
        Some(Event::new(
            EventType::CommandFailed,
            entry.at,
            json!({
                "endpointId": entry.target_id,
                "operation": entry.operation,
                "errorName": entry.outcome,
                "actor": entry.actor,
            }),
        ))
    }

    /// A room's inventory read shows another software version (or model) than the last one.
    /// Nothing for a first read or when neither changed.
    pub fn inventory_changed(
        endpoint_id: &str,
        before: Option<(Option<&str>, Option<&str>)>,
        after: (Option<&str>, Option<&str>),
        read_at: i64,
    ) -> Option<Event> {
        let (old_version, old_model) = before?;
        let (new_version, new_model) = after;
        let mut changes = serde_json::Map::new();
        if old_version != new_version {
            changes.insert(
                "softwareVersion".into(),
                json!({"from": old_version, "to": new_version}),
            );
        }
        if old_model != new_model {
            changes.insert("model".into(), json!({"from": old_model, "to": new_model}));
        }
        if changes.is_empty() {
            return None;
        }
        Some(Event::new(
            EventType::InventoryChanged,
            read_at,
            json!({
                "endpointId": endpoint_id,
                "readAt": UtcParts::of(read_at).rfc3339(),
                "changes": changes,
            }),
        ))
    }

    /// A check found a room drifted from its template (news as
    /// [`crate::template::drift::DriftRecord::after`] decides): the keys, never their values
    /// (a display name or a welcome text is the customer's, not an event's).
    pub fn template_drifted(
        endpoint_id: &str,
        template_id: &str,
        keys: &[crate::template::SettingKey],
        read_at: i64,
    ) -> Event {
        let keys: Vec<&str> = keys.iter().map(|k| k.name()).collect();
        Event::new(
            EventType::TemplateDrifted,
            read_at,
            json!({
                "endpointId": endpoint_id,
                "templateId": template_id,
                "readAt": UtcParts::of(read_at).rfc3339(),
                "keys": keys,
            }),
        )
    }

    /// What `POST /api/webhooks/{id}/test` sends.
    pub fn test(subscription_id: &str, now: i64) -> Event {
        Event::new(
            EventType::WebhookTest,
            now,
            json!({"webhookId": subscription_id, "message": "a test delivery from roomlink"}),
        )
    }
}

/// The room an event is about.
#[derive(Debug, Clone, Copy)]
pub struct RoomRef<'a> {
    pub endpoint_id: &'a str,
    pub name: &'a str,
    pub listener_service_id: Option<&'a str>,
}

/// The calendar a `calendar.*` event is about.
#[derive(Debug, Clone, Copy)]
pub struct CalendarRef<'a> {
    pub calendar_type: &'a str,
    pub calendar_id: &'a str,
}

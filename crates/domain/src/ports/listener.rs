//! Listener services: the commands a room system is sent and the transport that carries them.

use crate::calendar::CalendarEvent;
use crate::calendar::push::CalendarPush;
use crate::endpoint::Endpoint;
use crate::enums::{CalendarType, EndpointCapability};
use crate::error::Result;
use crate::ids::{EndpointId, ListenerServiceId};
use crate::inventory::Inventory;
use crate::listener::ListenerRoute;
use crate::rules::dtmf::Dtmf;
use crate::rules::join::JoinRequest;
use crate::secret::{SealedSecret, Secret};
use crate::template::{SettingKey, SettingOutcomes, TemplateSettings, WriteMode};
use async_trait::async_trait;
#[cfg(feature = "mock")]
use mockall::automock;

/// A command for a room system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Join(JoinRequest),
    HangUp,
    SendDtmf(Dtmf),
    MuteMicrophone,
    UnmuteMicrophone,
    /// The room's meetings, for it to show (calendar push; sent by the scheduler only).
    PushCalendar(CalendarPush),
}

impl Command {
    /// The command's name in errors (`commandName`) and in the listener protocol.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Join(_) => "join",
            Command::HangUp => "hangup",
            Command::SendDtmf(_) => "senddtmf",
            Command::MuteMicrophone => "mutemicrophone",
            Command::UnmuteMicrophone => "unmutemicrophone",
            Command::PushCalendar(_) => "pushcalendar",
        }
    }
}

/// How the listener gets the endpoint's password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointCredential {
    None,
    /// Opened by roomlink (sealed with the service key), sent over the authenticated channel.
    Plain(Secret),
    /// Sealed to the enterprise's public key; only the listener can open it.
    SealedForListener(SealedSecret),
}

/// Where a command goes: the listener (with its opened secret) and the endpoint.
#[derive(Debug, Clone)]
pub struct CommandTarget {
    pub listener_id: ListenerServiceId,
    pub route: ListenerRoute,
    pub listener_secret: Secret,
    pub endpoint: Endpoint,
    pub credential: EndpointCredential,
}

/// A listener to ask something of its own, not of a room (its `/v1/info`).
pub struct ListenerAddress {
    pub listener_id: ListenerServiceId,
    pub route: ListenerRoute,
    pub listener_secret: Secret,
}

/// What a listener observed of a room system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObservedState {
    pub call_active: bool,
    pub reserved: bool,
    pub dialing: bool,
    pub microphone_muted: bool,
    pub last_dial_timestamp_millis: Option<i64>,
}

/// Sends commands to listener services. Failures are the catalog's listener and remote-system
/// errors (see `docs/listener-protocol.md`).
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait ListenerTransport: Send + Sync {
    /// Sends one command; returns the room system's state after it.
    async fn send(&self, target: &CommandTarget, command: &Command) -> Result<ObservedState>;
    /// The capabilities the listener reports (its `/v1/info`) for the endpoints it serves.
    async fn capabilities(&self, target: &CommandTarget) -> Result<Vec<EndpointCapability>>;
    /// Asks one listener for the state of many of its endpoints in one request.
    async fn poll(
        &self,
        targets: &[CommandTarget],
    ) -> Result<Vec<(EndpointId, Result<ObservedState>)>>;
    /// Asks a listener what it is (`GET /v1/info`, never answered from a cache): its version.
    async fn check(&self, listener: &ListenerAddress) -> Result<String>;
    /// The events of a room calendar that the target's listener reads itself (`readcalendar`,
    /// listener 3.2.0; EXCHANGE), overlapping `[from_ms, to_ms)`, in start order.
    /// `CalendarServerException` (with this calendarId) when the listener cannot read it;
    /// the listener errors of the other commands otherwise (`ForwardsCompatibility` for an
    /// older listener). The target's credential is not used.
    async fn read_calendar(
        &self,
        target: &CommandTarget,
        calendar_type: CalendarType,
        calendar_id: &str,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<CalendarEvent>> {
        let _ = (target, calendar_type, from_ms, to_ms);
        Err(crate::error::Error::calendar_server(
            calendar_id,
            "this listener transport reads no calendars",
        ))
    }
    /// What the target's room system says about itself (`readinventory`, listener 3.3.0).
    /// The listener errors of the other commands (`ForwardsCompatibility` for an older
    /// listener, the remote-system errors when the room cannot be read).
    async fn read_inventory(&self, target: &CommandTarget) -> Result<Inventory> {
        let _ = target;
        Err(crate::error::Error::invalid(
            "this listener transport reads no inventories",
        ))
    }
    /// The target's room system's values of template settings (`readconfiguration`,
    /// listener 3.4.0): one outcome per key of `keys`. The listener errors of the other
    /// commands (`ForwardsCompatibility` for an older listener, the remote-system errors when
    /// the room cannot be asked at all).
    async fn read_configuration(
        &self,
        target: &CommandTarget,
        keys: &[SettingKey],
    ) -> Result<SettingOutcomes> {
        let _ = (target, keys);
        Err(crate::error::Error::invalid(
            "this listener transport reads no configuration",
        ))
    }
    /// Writes template settings on the target's room system (`writeconfiguration`, listener
    /// 3.4.0), each on its own: one outcome per setting (applied: the value the device took).
    /// `mode` says which values the listener must accept ([`WriteMode::Restore`]: an undo's).
    /// Errors as [`ListenerTransport::read_configuration`]; a failure part-way leaves the
    /// settings written before it written (its message names them).
    async fn write_configuration(
        &self,
        target: &CommandTarget,
        settings: &TemplateSettings,
        mode: WriteMode,
    ) -> Result<SettingOutcomes> {
        let _ = (target, settings, mode);
        Err(crate::error::Error::invalid(
            "this listener transport writes no configuration",
        ))
    }
}

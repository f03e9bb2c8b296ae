//! The simulated room systems: in-memory state keyed by address, never a real connection.

use crate::configuration::Configuration;
use crate::fault::Fault;
use crate::inventory::{self, Changes, Software, Vendor};
use crate::wire::{WireCalendar, WireInventory, WireParams, WireState};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A command as the simulated room system executes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoomCommand {
    Join {
        meeting_id: Option<String>,
        passcode: Option<String>,
        cluster: Option<String>,
        meeting_type: Option<String>,
    },
    HangUp,
    SendDtmf(String),
    Mute,
    Unmute,
    /// The room's meetings, replacing those pushed before.
    PushCalendar(WireCalendar),
}

impl RoomCommand {
    /// The command `name` with its parameters; `Err` names what is wrong with them.
    pub fn parse(name: &str, params: WireParams) -> Result<Self, String> {
        match name {
            "join" => Ok(RoomCommand::Join {
                meeting_id: params.meeting_id.filter(|m| !m.is_empty()),
                passcode: params.passcode.filter(|p| !p.is_empty()),
                cluster: params.cluster,
                meeting_type: params.meeting_type,
            }),
            "hangup" => Ok(RoomCommand::HangUp),
            "senddtmf" => match params.dtmf {
                Some(d)
                    if !d.is_empty()
                        && d.chars()
                            .all(|c| c.is_ascii_digit() || c == '#' || c == '*') =>
                {
                    Ok(RoomCommand::SendDtmf(d))
                }
                _ => Err("params.dtmf: 1 or more of 0-9, # and * is required".to_owned()),
            },
            "mutemicrophone" => Ok(RoomCommand::Mute),
            "unmutemicrophone" => Ok(RoomCommand::Unmute),
            "pushcalendar" => {
                let calendar = params
                    .calendar
                    .ok_or_else(|| "params.calendar: is required".to_owned())?;
                calendar.check()?;
                Ok(RoomCommand::PushCalendar(calendar))
            }
            other => Err(format!("{other} is not a command")),
        }
    }
}

/// How the endpoint's password arrived with the last request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CredentialSeen {
    #[default]
    None,
    Plain,
    SealedOpened,
    SealedUnopened,
}

impl CredentialSeen {
    pub const fn as_str(self) -> &'static str {
        match self {
            CredentialSeen::None => "none",
            CredentialSeen::Plain => "plain",
            CredentialSeen::SealedOpened => "sealed-opened",
            CredentialSeen::SealedUnopened => "sealed-unopened",
        }
    }
}

/// One simulated room system. It starts idle: no call, not dialing, microphone unmuted.
#[derive(Debug, Clone, Default)]
pub struct Room {
    call_active: bool,
    dialing: bool,
    microphone_muted: bool,
    last_meeting_id: Option<String>,
    last_passcode: Option<String>,
    last_cluster: Option<String>,
    last_meeting_type: Option<String>,
    last_dial_ms: Option<i64>,
    dtmf_received: String,
    commands: u64,
    /// The same count per command name (`join`, `readinventory`, ...).
    commands_by_name: std::collections::BTreeMap<String, u64>,
    /// The meetings last pushed (`pushcalendar`), and when.
    calendar: Option<WireCalendar>,
    calendar_pushes: u64,
    last_push_ms: Option<i64>,
    last_credential: CredentialSeen,
    fault: Option<Fault>,
    /// What the control surface changed about its inventory.
    inventory: Changes,
    /// Template settings written to it (`writeconfiguration`).
    pub configuration: Configuration,
}

impl Room {
    pub fn fault(&self) -> Option<Fault> {
        self.fault
    }

    pub fn set_fault(&mut self, fault: Option<Fault>) {
        self.fault = fault;
    }

    /// The room's inventory as a listener of `vendor` reads it (`readinventory`).
    pub fn inventory(&self, address: &str, vendor: Vendor) -> WireInventory {
        inventory::inventory(address, vendor, &self.inventory)
    }

    /// Loses (`true`) or restores a peripheral.
    pub fn set_disconnected(&mut self, id: &str, disconnected: bool) {
        if disconnected {
            self.inventory.disconnected.insert(id.to_owned());
        } else {
            self.inventory.disconnected.remove(id);
        }
    }

    /// The software version it reports; `None`: its own.
    pub fn set_software(&mut self, software: Option<Software>) {
        self.inventory.software = software;
    }

    pub fn saw_credential(&mut self, credential: CredentialSeen) {
        self.last_credential = credential;
    }

    /// Counts a command addressed to this room system, whether or not it is carried out.
    pub fn count_command(&mut self, name: &str) {
        self.commands += 1;
        *self.commands_by_name.entry(name.to_owned()).or_default() += 1;
    }

    /// Carries out a command. A join connects at once (the simulation has no ringing phase).
    pub fn apply(&mut self, command: RoomCommand, now_ms: i64) {
        match command {
            RoomCommand::Join {
                meeting_id,
                passcode,
                cluster,
                meeting_type,
            } => {
                self.call_active = true;
                self.dialing = true;
                self.last_meeting_id = meeting_id;
                self.last_passcode = passcode;
                self.last_cluster = cluster;
                self.last_meeting_type = meeting_type;
                self.last_dial_ms = Some(now_ms);
            }
            RoomCommand::HangUp => {
                self.call_active = false;
                self.dialing = false;
            }
            RoomCommand::SendDtmf(digits) => self.dtmf_received.push_str(&digits),
            RoomCommand::Mute => self.microphone_muted = true,
            RoomCommand::Unmute => self.microphone_muted = false,
            RoomCommand::PushCalendar(calendar) => {
                self.calendar = Some(calendar);
                self.calendar_pushes += 1;
                self.last_push_ms = Some(now_ms);
            }
        }
    }

    /// The protocol's `state` object.
    pub fn state(&self) -> Value {
        json!(WireState {
            call_active: self.call_active,
            dialing: self.dialing,
            microphone_muted: self.microphone_muted,
            reserved: false,
            last_dial_timestamp_millis: self.last_dial_ms,
        })
    }

    /// The control surface's view (`GET /sim/endpoints/{ipAddress}`). The password is never
    /// kept, so it cannot be shown: only how it arrived.
    pub fn sim_view(&self, address: &str) -> Value {
        json!({
            "ipAddress": address,
            "callActive": self.call_active,
            "dialing": self.dialing,
            "microphoneMuted": self.microphone_muted,
            "lastMeetingId": self.last_meeting_id,
            "lastPasscode": self.last_passcode,
            "lastCluster": self.last_cluster,
            "lastMeetingType": self.last_meeting_type,
            "lastDialTimestampMillis": self.last_dial_ms,
            "dtmfReceived": self.dtmf_received,
            "commands": self.commands,
            "commandsByName": self.commands_by_name,
            "calendar": self.calendar,
            "calendarPushes": self.calendar_pushes,
            "lastCalendarPushMillis": self.last_push_ms,
            "lastCredential": self.last_credential.as_str(),
            "fault": self.fault.map(Fault::name),
            "software": self.inventory.software,
            "disconnectedPeripherals": self.inventory.disconnected,
        })
    }
}

/// Every room system the simulator has been told about, created on first mention.
#[derive(Debug, Default)]
pub struct Rooms(Mutex<HashMap<String, Room>>);

impl Rooms {
    /// Runs `f` on the room system at `address` (never held across an await).
    pub fn with<R>(&self, address: &str, f: impl FnOnce(&mut Room) -> R) -> R {
        let mut rooms = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        f(rooms.entry(address.to_owned()).or_default())
    }

    /// Holds the lock for a batch of addresses (one `POST /v1/status`).
    pub fn lock(&self) -> RoomsGuard<'_> {
        RoomsGuard(self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The room systems, locked.
pub struct RoomsGuard<'a>(MutexGuard<'a, HashMap<String, Room>>);

impl RoomsGuard<'_> {
    pub fn get(&mut self, address: &str) -> &mut Room {
        self.0.entry(address.to_owned()).or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_change_the_room_as_documented() {
        let mut room = Room::default();
        assert_eq!(room.state()["callActive"], false);
        room.apply(
            RoomCommand::parse(
                "join",
                WireParams {
                    meeting_id: Some("123".into()),
                    passcode: Some("42".into()),
                    ..WireParams::default()
                },
            )
            .unwrap(),
            7,
        );
        let view = room.sim_view("127.77.0.1");
        assert_eq!(view["callActive"], true);
        assert_eq!(view["dialing"], true);
        assert_eq!(view["lastMeetingId"], "123");
        assert_eq!(view["lastDialTimestampMillis"], 7);
        room.apply(RoomCommand::SendDtmf("12#".into()), 8);
        room.apply(RoomCommand::SendDtmf("*".into()), 9);
        room.apply(RoomCommand::Mute, 10);
        assert_eq!(room.sim_view("x")["dtmfReceived"], "12#*");
        assert_eq!(room.state()["microphoneMuted"], true);
        room.apply(RoomCommand::HangUp, 11);
        assert_eq!(room.state()["callActive"], false);
        assert_eq!(room.state()["dialing"], false);
    }

    #[test]
    fn a_push_replaces_the_rooms_meetings() {
        let mut room = Room::default();
        assert!(room.sim_view("x")["calendar"].is_null());
        let params = |body: serde_json::Value| -> WireParams {
            serde_json::from_value(json!({ "calendar": body })).unwrap()
        };
        let push = RoomCommand::parse(
            "pushcalendar",
            params(json!({"from": 0, "to": 100, "meetings": [
                {"uid": "a", "title": "Review", "start": 10, "end": 20,
                 "dial": {"meetingId": "123", "cluster": "PROD"}}]})),
        )
        .unwrap();
        room.apply(push, 5);
        let view = room.sim_view("x");
        assert_eq!(view["calendar"]["meetings"][0]["title"], "Review");
        assert_eq!(view["calendar"]["meetings"][0]["dial"]["meetingId"], "123");
        assert_eq!(view["calendarPushes"], 1);
        room.apply(
            RoomCommand::parse("pushcalendar", params(json!({"from": 0, "to": 100}))).unwrap(),
            6,
        );
        assert_eq!(room.sim_view("x")["calendar"]["meetings"], json!([]));
        assert_eq!(room.state()["callActive"], false, "a push dials nothing");
        assert!(RoomCommand::parse("pushcalendar", WireParams::default()).is_err());
        let backwards = params(json!({"from": 0, "to": 100, "meetings": [
            {"uid": "a", "start": 20, "end": 10}]}));
        assert!(RoomCommand::parse("pushcalendar", backwards).is_err());
    }

    #[test]
    fn a_join_without_meeting_id_dials_the_ivr() {
        let join = RoomCommand::parse("join", WireParams::default()).unwrap();
        let RoomCommand::Join { meeting_id, .. } = &join else {
            panic!("join parses as Join")
        };
        assert!(meeting_id.is_none());
    }

    #[test]
    fn bad_parameters_are_refused() {
        for dtmf in [None, Some(""), Some("12a")] {
            let params = WireParams {
                dtmf: dtmf.map(str::to_owned),
                ..WireParams::default()
            };
            assert!(RoomCommand::parse("senddtmf", params).is_err(), "{dtmf:?}");
        }
        assert!(RoomCommand::parse("status", WireParams::default()).is_err());
    }
}

//! One emulated room system: its call state machine, microphone, DTMF log, login and faults.
//! Every protocol front end (Cisco HTTP and SSH, Poly Telnet, Mesh) drives the same state, so a
//! test can dial over one protocol and read the result over the control surface.
//!
//! The call state machine: idle → dialling (on a dial) → connected (after `connect_after`, read
//! lazily from the clock, no timers) → idle (on a hang-up). A dial during a call replaces it.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Faults a test can give a device (control surface: `PUT /emu/devices/{address}/faults/{name}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fault {
    /// Every login is refused, whatever the credentials.
    BadCredentials,
    /// The user has only the Integrator role: no DTMF, no `Call` status (Cisco).
    IntegratorRole,
    /// Every request is refused as over the rate limit (Cisco HTTP: 503).
    RateLimit,
    /// Every answer comes after [`Device::slow_ms`].
    Slow,
    /// TC-era firmware: no `/xmlapi/session` (302 to the login page), top-level `DTMFSend`.
    TcFirmware,
    /// The connection is closed in the middle of a command, with no answer.
    DropConnection,
    /// The codec runs Microsoft Teams (Cisco): its call counts in `NumberOfActiveCalls` but is
    /// not listed under `/Status/Call`, as AVI-SPL's recorded Room Bar shows.
    TeamsMode,
    /// A provisioning service controls the settings (Poly): every setting write is refused
    /// (`crate::poly_config`).
    Provisioned,
}

impl Fault {
    pub const ALL: &'static [Fault] = &[
        Fault::BadCredentials,
        Fault::IntegratorRole,
        Fault::RateLimit,
        Fault::Slow,
        Fault::TcFirmware,
        Fault::DropConnection,
        Fault::TeamsMode,
        Fault::Provisioned,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Fault::BadCredentials => "bad_credentials",
            Fault::IntegratorRole => "integrator_role",
            Fault::RateLimit => "rate_limit",
            Fault::Slow => "slow",
            Fault::TcFirmware => "tc_firmware",
            Fault::DropConnection => "drop_connection",
            Fault::TeamsMode => "teams_mode",
            Fault::Provisioned => "provisioned",
        }
    }

    pub fn parse(name: &str) -> Option<Fault> {
        Fault::ALL.iter().copied().find(|f| f.name() == name)
    }
}

/// Where the device's call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Idle,
    Dialling,
    Connected,
}

#[derive(Debug, Clone)]
enum Call {
    Idle,
    /// Dialled at this instant; connected once `connect_after` has passed.
    Placed {
        at: Instant,
    },
}

/// One emulated room system.
#[derive(Debug, Clone)]
pub struct Device {
    call: Call,
    /// The Cisco call id of the current or last call (increments per dial, as codecs do).
    pub call_id: u32,
    pub microphone_muted: bool,
    /// Every DTMF tone received since start, in order.
    pub dtmf: String,
    pub last_dialed: Option<String>,
    /// The protocol the last dial asked for (`H323`, `Sip`, `h323`, `sip`), as sent.
    pub last_dial_protocol: Option<String>,
    /// What the last dial carried besides the number (Mesh: `meetingId`, `passcode`,
    /// `bridgeAddress`); cleared by every dial.
    pub last_dial_extras: BTreeMap<String, String>,
    pub dial_count: u64,
    /// The stored bookings (`Bookings Put` replaces them), and how many Puts there were.
    pub bookings: Vec<Booking>,
    pub bookings_puts: u64,
    /// Commands that reached the state (after login and faults).
    pub commands: u64,
    pub username: String,
    pub password: String,
    pub faults: BTreeSet<Fault>,
    /// How long [`Fault::Slow`] delays each answer.
    pub slow_ms: u64,
    connect_after: Duration,
    /// The address the device answers on (set when [`Devices`] creates it; its serial number,
    /// MAC address and peripherals are derived from it, see [`crate::inventory`]).
    pub address: String,
    /// When the device started: its uptime is read from it.
    started: Instant,
    /// The software the control surface set in place of the firmware's own version.
    pub software: Option<Software>,
    /// Ids of the peripherals the control surface disconnected.
    pub disconnected_peripherals: BTreeSet<String>,
    /// Configuration values written (Cisco path in the schema's spelling → value); paths not
    /// here hold their defaults (`cisco_config`, which the control surface's view shows).
    pub configuration: BTreeMap<String, String>,
    /// Poly settings written (Telnet API command → value as answered); the others hold their
    /// defaults (`crate::poly_config`, shown as `polyConfiguration`).
    pub poly_configuration: BTreeMap<String, String>,
}

/// A software version set through the control surface (`PUT /emu/devices/{address}/software`).
/// Only what the device reports changes, not how it behaves (TC vs CE stays a fault).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Software {
    pub version: String,
    /// `YYYY-MM-DD`; the firmware's own date when not given.
    #[serde(default)]
    pub release_date: Option<String>,
}

impl Device {
    pub fn new(username: &str, password: &str, connect_after: Duration) -> Self {
        Device {
            call: Call::Idle,
            call_id: 0,
            microphone_muted: false,
            dtmf: String::new(),
            last_dialed: None,
            last_dial_protocol: None,
            last_dial_extras: BTreeMap::new(),
            dial_count: 0,
            bookings: Vec::new(),
            bookings_puts: 0,
            commands: 0,
            username: username.to_owned(),
            password: password.to_owned(),
            faults: BTreeSet::new(),
            slow_ms: 5_000,
            connect_after,
            address: String::new(),
            started: Instant::now(),
            software: None,
            disconnected_peripherals: BTreeSet::new(),
            configuration: BTreeMap::new(),
            poly_configuration: BTreeMap::new(),
        }
    }

    /// Whole seconds since the device started.
    pub fn uptime_secs(&self) -> u64 {
        self.started.elapsed().as_secs()
    }

    /// Whether the peripheral `id` is connected (the control surface can disconnect it).
    pub fn peripheral_connected(&self, id: &str) -> bool {
        !self.disconnected_peripherals.contains(id)
    }

    pub fn phase(&self) -> Phase {
        match self.call {
            Call::Idle => Phase::Idle,
            Call::Placed { at } if at.elapsed() >= self.connect_after => Phase::Connected,
            Call::Placed { .. } => Phase::Dialling,
        }
    }

    /// Calls in any phase but idle (Cisco `NumberOfActiveCalls`).
    pub fn active_calls(&self) -> u32 {
        u32::from(self.phase() != Phase::Idle)
    }

    pub fn has(&self, fault: Fault) -> bool {
        self.faults.contains(&fault)
    }

    /// Whether `username`/`password` log in (never with [`Fault::BadCredentials`]).
    pub fn accepts(&self, username: &str, password: &str) -> bool {
        !self.has(Fault::BadCredentials) && username == self.username && password == self.password
    }

    pub fn dial(&mut self, number: &str, protocol: Option<&str>) {
        self.commands += 1;
        self.call = Call::Placed { at: Instant::now() };
        self.call_id += 1;
        self.dial_count += 1;
        self.last_dialed = Some(number.to_owned());
        self.last_dial_protocol = protocol.map(str::to_owned);
        self.last_dial_extras.clear();
    }

    /// Ends the call; `false` when there was none.
    pub fn hang_up(&mut self) -> bool {
        self.commands += 1;
        let had_call = !matches!(self.call, Call::Idle);
        self.call = Call::Idle;
        had_call
    }

    /// Records tones; `false` (nothing recorded) when no call is connected.
    pub fn send_dtmf(&mut self, tones: &str) -> bool {
        self.commands += 1;
        if self.phase() != Phase::Connected {
            return false;
        }
        self.dtmf.push_str(tones);
        true
    }

    pub fn set_muted(&mut self, muted: bool) {
        self.commands += 1;
        self.microphone_muted = muted;
    }

    /// Replaces the stored bookings (`Bookings Put`, `Bookings Clear`).
    pub fn put_bookings(&mut self, bookings: Vec<Booking>) {
        self.bookings = bookings;
        self.bookings_puts += 1;
    }

    /// The control surface's view. The password is never shown.
    pub fn view(&self, address: &str) -> serde_json::Value {
        serde_json::json!({
            "address": address,
            "phase": self.phase(),
            "callActive": self.phase() != Phase::Idle,
            "callId": self.call_id,
            "microphoneMuted": self.microphone_muted,
            "dtmf": self.dtmf,
            "lastDialed": self.last_dialed,
            "lastDialProtocol": self.last_dial_protocol,
            "lastDialExtras": self.last_dial_extras,
            "dialCount": self.dial_count,
            "bookings": self.bookings,
            "bookingsPuts": self.bookings_puts,
            "commands": self.commands,
            "username": self.username,
            "faults": self.faults,
            "slowMs": self.slow_ms,
            "uptimeSeconds": self.uptime_secs(),
            "software": self.software,
            "disconnectedPeripherals": self.disconnected_peripherals,
            "inventory": crate::inventory::view(&self.address, |id| self.peripheral_connected(id)),
        })
    }
}

/// One stored booking, as `Bookings Put` gave it (times normalized to `…Z` seconds).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Booking {
    pub id: String,
    pub meeting_id: Option<String>,
    pub title: String,
    pub agenda: String,
    pub privacy: String,
    pub organizer: String,
    pub number: String,
    pub protocol: String,
    pub start_time: String,
    pub end_time: String,
    pub start_buffer_secs: u64,
    pub end_buffer_secs: u64,
}

/// What every new device starts with.
#[derive(Debug, Clone)]
pub struct DeviceDefaults {
    pub username: String,
    pub password: String,
    pub connect_after: Duration,
}

impl Default for DeviceDefaults {
    fn default() -> Self {
        DeviceDefaults {
            username: "admin".into(),
            password: "emulated-room".into(),
            connect_after: Duration::from_millis(300),
        }
    }
}

/// Every emulated device, by address (the local address a connection arrived on, or the Mesh
/// path's `{ip}`). A device exists as soon as anything asks for it.
#[derive(Clone, Default)]
pub struct Devices {
    inner: Arc<Mutex<HashMap<String, Device>>>,
    defaults: Arc<DeviceDefaults>,
}

impl Devices {
    pub fn new(defaults: DeviceDefaults) -> Self {
        Devices {
            inner: Arc::default(),
            defaults: Arc::new(defaults),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Device>> {
        // A panic while holding the lock leaves plain data behind; keep serving it.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` on the device at `address`, creating it first if needed. Never hold it across
    /// an await: protocol front ends copy what they need and answer after.
    pub fn with<R>(&self, address: &str, f: impl FnOnce(&mut Device) -> R) -> R {
        let mut devices = self.lock();
        let device = devices.entry(address.to_owned()).or_insert_with(|| {
            let mut device = Device::new(
                &self.defaults.username,
                &self.defaults.password,
                self.defaults.connect_after,
            );
            device.address = address.to_owned();
            device
        });
        f(device)
    }

    /// A copy of the device's state.
    pub fn get(&self, address: &str) -> Device {
        self.with(address, |d| d.clone())
    }

    /// Every address seen so far.
    pub fn addresses(&self) -> Vec<String> {
        let mut all: Vec<String> = self.lock().keys().cloned().collect();
        all.sort();
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(connect_after_ms: u64) -> Device {
        Device::new("admin", "pw", Duration::from_millis(connect_after_ms))
    }

    #[test]
    fn a_call_goes_idle_dialling_connected_idle() {
        let mut d = device(30);
        assert_eq!(d.phase(), Phase::Idle);
        d.dial("123.4@bridge.example", Some("Sip"));
        assert_eq!(d.phase(), Phase::Dialling);
        assert_eq!(d.active_calls(), 1);
        assert!(!d.send_dtmf("1"), "no tones before the call connects");
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(d.phase(), Phase::Connected);
        assert!(d.send_dtmf("42#"));
        assert!(d.hang_up());
        assert_eq!(d.phase(), Phase::Idle);
        assert!(!d.hang_up());
        assert_eq!(d.dtmf, "42#");
        assert_eq!(d.last_dialed.as_deref(), Some("123.4@bridge.example"));
        assert_eq!((d.call_id, d.dial_count), (1, 1));
    }

    #[test]
    fn logins_check_credentials_and_the_fault() {
        let mut d = device(0);
        assert!(d.accepts("admin", "pw"));
        assert!(!d.accepts("admin", "other"));
        d.faults.insert(Fault::BadCredentials);
        assert!(!d.accepts("admin", "pw"));
    }

    #[test]
    fn fault_names_round_trip_and_the_view_hides_the_password() {
        for f in Fault::ALL {
            assert_eq!(Fault::parse(f.name()), Some(*f));
        }
        assert_eq!(Fault::parse("nope"), None);
        let devices = Devices::new(DeviceDefaults::default());
        devices.with("127.77.0.1", |d| d.set_muted(true));
        let view = devices.get("127.77.0.1").view("127.77.0.1");
        assert_eq!(view["microphoneMuted"], true);
        assert!(!view.to_string().contains("emulated-room"));
        assert_eq!(devices.addresses(), ["127.77.0.1"]);
    }
}

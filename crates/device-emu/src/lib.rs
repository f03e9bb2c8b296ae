//! `roomlink-device-emu`: emulated room systems, written from the vendors' documented wire
//! formats (../shared/reference/device-drivers.md), for tests and demos. Not hardware: what is
//! verified only against these emulators is listed in docs/drivers.md.
//!
//! - [`device`]: the state every front end drives (call state machine, mute, DTMF, faults).
//! - [`net`]: one port, many device addresses; [`http`]: HTTP/1.1 serving (hyper, rustls).
//! - [`cisco_http`]: Cisco's HTTP(S) XML API, on [`cisco_xapi`] (commands, status) and
//!   [`xml`]; [`tls`]: the self-signed certificate.
//! - [`control`]: the control surface (devices, faults, credentials, peripherals, software).
//! - [`inventory`]: what a device says about itself (serial, MAC, peripherals);
//!   [`cisco_inventory`]: its Cisco `<Status>` parts.
//! - [`EmuConfig`] / [`start`]: every configured front end at once.
//! - [`poly_telnet`]: the Poly HDX / Group Series Telnet API.
//! - [`mesh`]: a Relay Mesh driver server (one address, the device is the path's `{ip}`).
//! - [`ews`]: an Exchange server's EWS endpoint (FindItem calendar views, GetItem bodies), for
//!   the listener's `readcalendar`.

pub mod cisco_bookings;
pub mod cisco_config;
pub mod cisco_firmware;
pub mod cisco_http;
pub mod cisco_inventory;
pub mod cisco_schema;
pub mod cisco_ssh;
pub mod cisco_tsh;
pub mod cisco_xapi;
pub mod control;
pub mod device;
pub mod ews;
pub mod http;
pub mod inventory;
pub mod mesh;
pub mod net;
pub mod poly_config;
pub mod poly_inventory;
pub mod poly_telnet;
pub mod tls;
pub mod xml;

mod emulator;
pub use emulator::{EmuConfig, Emulator, Ports, start};

/// One protocol front end serving every device address on one port.
pub struct Frontend {
    /// The port it listens on, on every device address.
    pub port: u16,
    /// Its accept loops (and servers); aborted on [`Frontend::stop`] or drop.
    pub tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Frontend {
    pub fn stop(&self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Drop for Frontend {
    fn drop(&mut self) {
        self.stop();
    }
}

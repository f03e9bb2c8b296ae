//! The generations of Cisco codec software the emulator runs, and what each has: shared by the
//! xAPI ([`crate::cisco_xapi`]) and what the codec says about itself ([`crate::cisco_inventory`]).

use crate::device::{Device, Fault};

/// Which generation of codec software the device runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Firmware {
    /// CE 9.15: `Call DTMFSend`, XML API sessions.
    Ce,
    /// TC 7.3: top-level `DTMFSend`, no sessions.
    Tc,
}

impl Firmware {
    pub fn version(self) -> &'static str {
        match self {
            Firmware::Ce => "ce9.15.17.4.4c8b7f1a3e2",
            Firmware::Tc => "TC7.3.21.d4d8b4c",
        }
    }

    /// The firmware a device runs: TC with [`Fault::TcFirmware`], else CE.
    pub fn of(device: &Device) -> Firmware {
        if device.has(Fault::TcFirmware) {
            Firmware::Tc
        } else {
            Firmware::Ce
        }
    }

    /// The software name in the SSH banner and `SystemUnit Software DisplayName`.
    pub fn display_name(self) -> &'static str {
        match self {
            Firmware::Ce => "ce 9.15.17.4 4c8b7f1a3e2 2024-02-29",
            Firmware::Tc => "TC7.3.21.d4d8b4c",
        }
    }

    pub(crate) fn product(self) -> (&'static str, &'static str) {
        match self {
            Firmware::Ce => ("Cisco Webex Room Kit", "Room Kit"),
            Firmware::Tc => ("Cisco TelePresence SX20", "SX20"),
        }
    }

    pub(crate) fn commands(self) -> &'static [&'static [&'static str]] {
        match self {
            Firmware::Ce => &[
                &["Dial"],
                &["Call", "Disconnect"],
                &["Call", "DTMFSend"],
                &["Audio", "Microphones", "Mute"],
                &["Audio", "Microphones", "Unmute"],
                &["Audio", "Microphones", "ToggleMute"],
                &["Bookings", "Put"],
                &["Bookings", "List"],
                &["Bookings", "Clear"],
            ],
            Firmware::Tc => &[
                &["Dial"],
                &["Call", "Disconnect"],
                &["DTMFSend"],
                &["Audio", "Microphones", "Mute"],
                &["Audio", "Microphones", "Unmute"],
                &["Audio", "Microphones", "ToggleMute"],
                &["Bookings", "List"],
                &["Bookings", "Clear"],
            ],
        }
    }
}

//! `roomlink-device-emu`: emulated room systems, written from the vendors' documented wire
//! formats (../shared/reference/device-drivers.md), for tests and demos. Not hardware: what is
//! verified only against these emulators is listed in docs/drivers.md.
//!
//! - [`device`]: the state every front end drives (call state machine, mute, DTMF, faults).
//! - [`net`]: one port, many device addresses.

pub mod device;
pub mod net;

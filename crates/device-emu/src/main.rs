//! `roomlink-device-emu`: see the crate documentation.

fn main() {}

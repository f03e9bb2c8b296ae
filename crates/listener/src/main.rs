//! `roomlink-listener`: see the crate documentation.

fn main() {}

//! What several test targets share: the real `roomlink` binary run as an operator would.

#![allow(dead_code)] // each target uses part of it

pub mod service;

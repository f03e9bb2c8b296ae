//! The drivers, one per `controlProtocol`, and the registry the listener picks them from;
//! [`cisco_config`] and [`poly_config`]: template settings as Cisco configuration and Poly
//! Telnet API commands (issue #36, not on the listener's wire yet).

mod cisco;
pub mod cisco_config;
pub mod cisco_http;
pub mod cisco_inventory;
pub mod cisco_ssh;
pub mod inventory;
pub mod mesh;
pub mod poly_config;
pub mod poly_telnet;

use crate::driver::{Capability, Driver};
use std::sync::Arc;

/// The drivers this listener has, in the order `/v1/info` lists their protocols.
#[derive(Clone, Default)]
pub struct Drivers {
    all: Vec<Arc<dyn Driver>>,
}

impl Drivers {
    pub fn new(all: Vec<Arc<dyn Driver>>) -> Self {
        Drivers { all }
    }

    /// The driver of `protocol` (a `controlProtocol` such as `TANDBERG_SSH`).
    pub fn get(&self, protocol: &str) -> Option<Arc<dyn Driver>> {
        self.all.iter().find(|d| d.protocol() == protocol).cloned()
    }

    pub fn protocols(&self) -> Vec<String> {
        self.all.iter().map(|d| d.protocol().to_owned()).collect()
    }

    /// The protocols whose driver takes `pushcalendar`.
    pub fn push_protocols(&self) -> Vec<String> {
        self.all
            .iter()
            .filter(|d| d.capabilities().contains(&Capability::CalendarPush))
            .map(|d| d.protocol().to_owned())
            .collect()
    }

    /// Lets every driver close what it holds open.
    pub async fn shutdown(&self) {
        for driver in &self.all {
            driver.shutdown().await;
        }
    }
}

//! A `nats-server` of a test's own (Debian package `nats-server`), for the cluster tests.

#![allow(clippy::unwrap_used)] // test helpers: a panic is the failure report

use super::service::sigkill;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A free loopback port (bound and released: another process could take it meanwhile, which
/// the tests accept).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `nats-server` of the test's own on a loopback port, stopped when dropped.
pub struct Nats {
    pub port: u16,
    child: Option<Child>,
}

impl Nats {
    pub fn binary() -> PathBuf {
        ["/usr/sbin/nats-server", "/usr/bin/nats-server"]
            .iter()
            .map(PathBuf::from)
            .find(|p| p.exists())
            .unwrap_or_else(|| PathBuf::from("nats-server"))
    }

    pub fn start(port: u16) -> Nats {
        let child = Command::new(Self::binary())
            .args(["-a", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server (Debian package nats-server) runs");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Nats {
            port,
            child: Some(child),
        }
    }

    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    pub fn stop(&mut self) {
        if let Some(child) = self.child.take() {
            sigkill(child);
        }
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.stop();
    }
}

//! Listening sockets. An emulator serves many devices on one port: one socket per device
//! address (127.77.0.1, 127.77.0.2, ... all reach this host through loopback), and a
//! connection's local address says which device it is for.

use std::net::{IpAddr, SocketAddr};
use tokio::net::TcpListener;

/// Binds `port` on every host (0: the first bind picks a free port and the others reuse it).
/// Returns the port and the listeners, in the order of `hosts`.
pub async fn bind_all(hosts: &[IpAddr], port: u16) -> std::io::Result<(u16, Vec<TcpListener>)> {
    let mut listeners = Vec::with_capacity(hosts.len());
    let mut port = port;
    for host in hosts {
        let listener = TcpListener::bind(SocketAddr::new(*host, port))
            .await
            .map_err(|e| {
                std::io::Error::new(e.kind(), format!("cannot listen on {host}:{port}: {e}"))
            })?;
        port = listener.local_addr()?.port();
        listeners.push(listener);
    }
    Ok((port, listeners))
}

/// The device address a connection is for: the local IP it arrived on.
pub fn device_address(local: SocketAddr) -> String {
    local.ip().to_string()
}

/// `count` consecutive IPv4 addresses from `first` (127.77.0.255 is followed by 127.77.1.0).
pub fn consecutive(first: std::net::Ipv4Addr, count: u32) -> Vec<IpAddr> {
    let start = u32::from(first);
    (0..count)
        .map(|i| IpAddr::V4(std::net::Ipv4Addr::from(start.wrapping_add(i))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_addresses_carry_over() {
        let all = consecutive("127.77.0.254".parse().unwrap(), 3);
        let text: Vec<String> = all.iter().map(ToString::to_string).collect();
        assert_eq!(text, ["127.77.0.254", "127.77.0.255", "127.77.1.0"]);
    }

    #[tokio::test]
    async fn every_host_gets_the_same_port() {
        let hosts = consecutive("127.77.9.1".parse().unwrap(), 3);
        let (port, listeners) = bind_all(&hosts, 0).await.unwrap();
        assert_ne!(port, 0);
        for (l, h) in listeners.iter().zip(&hosts) {
            assert_eq!(l.local_addr().unwrap(), SocketAddr::new(*h, port));
        }
    }
}

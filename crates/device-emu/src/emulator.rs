//! Every configured front end at once, over one set of devices: what the binary and in-process
//! tests start. A front end is one `if let Some(port)` line in [`start`].

use crate::device::{DeviceDefaults, Devices};
use crate::tls::TlsIdentity;
use crate::{Frontend, cisco_http, cisco_ssh, control, mesh, net, poly_telnet};
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// What to emulate. Port options: `None` = that front end off, `Some(0)` = a free port.
#[derive(Debug, Clone)]
pub struct EmuConfig {
    /// The first device address; devices are `count` consecutive addresses from it.
    pub first_host: Ipv4Addr,
    pub count: u32,
    /// What every device starts with (credentials, time to connect a call).
    pub defaults: DeviceDefaults,
    /// Cisco XML API over plain HTTP.
    pub cisco_http: Option<u16>,
    /// Cisco XML API over HTTPS, with a self-signed certificate made at start.
    pub cisco_https: Option<u16>,
    /// Enforce RoomOS's Basic-auth rate limit (1/s per device, queue 30) on Cisco HTTP(S).
    pub cisco_basic_rate_limit: bool,
    /// Cisco xAPI over SSH.
    pub cisco_ssh: Option<u16>,
    /// Poly Telnet API.
    pub poly_telnet: Option<u16>,
    /// Mesh driver server.
    pub mesh: Option<u16>,
    /// The control surface, on the first address only.
    pub control: Option<u16>,
}

impl Default for EmuConfig {
    fn default() -> Self {
        EmuConfig {
            first_host: Ipv4Addr::new(127, 77, 0, 1),
            count: 1,
            defaults: DeviceDefaults::default(),
            cisco_http: None,
            cisco_https: None,
            cisco_basic_rate_limit: true,
            cisco_ssh: None,
            poly_telnet: None,
            mesh: None,
            control: None,
        }
    }
}

/// The port each running front end listens on (on every device address; control on the
/// first only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ports {
    pub cisco_http: Option<u16>,
    pub cisco_https: Option<u16>,
    pub cisco_ssh: Option<u16>,
    pub poly_telnet: Option<u16>,
    pub mesh: Option<u16>,
    pub control: Option<u16>,
}

/// A running emulator. Dropping it (or [`Emulator::stop`]) stops every front end.
pub struct Emulator {
    pub devices: Devices,
    /// The device addresses, in order.
    pub hosts: Vec<IpAddr>,
    pub ports: Ports,
    /// Where the control surface listens, when on.
    pub control_addr: Option<SocketAddr>,
    /// The HTTPS certificate's SHA-256 fingerprint (`AB:CD:…`), when HTTPS is on.
    pub tls_fingerprint: Option<String>,
    /// The SSH host key's fingerprint (`SHA256:…`), when SSH is on.
    pub ssh_fingerprint: Option<String>,
    /// Every front end by name (`cisco-http`, ...), in start order.
    pub frontends: Vec<(&'static str, Frontend)>,
}

impl Emulator {
    pub fn stop(&self) {
        for (_, frontend) in &self.frontends {
            frontend.stop();
        }
    }

    /// One line per listening front end: `NAME listening on FIRST_HOST:PORT` (plus
    /// `sha256=FINGERPRINT` for HTTPS), for scripts that start the binary.
    pub fn listening_lines(&self) -> Vec<String> {
        self.frontends
            .iter()
            .map(|(name, frontend)| {
                let host = match (*name, self.control_addr) {
                    ("control", Some(addr)) => addr.ip(),
                    _ => self.hosts[0],
                };
                let mut line = format!("{name} listening on {host}:{}", frontend.port);
                if *name == "cisco-https"
                    && let Some(fp) = &self.tls_fingerprint
                {
                    line.push_str(&format!(" sha256={fp}"));
                }
                if *name == "cisco-ssh"
                    && let Some(fp) = &self.ssh_fingerprint
                {
                    line.push_str(&format!(" hostkey={fp}"));
                }
                line
            })
            .collect()
    }
}

fn add(
    frontends: &mut Vec<(&'static str, Frontend)>,
    port: &mut Option<u16>,
    name: &'static str,
    frontend: Frontend,
) {
    *port = Some(frontend.port);
    frontends.push((name, frontend));
}

/// Starts every front end `config` asks for.
pub async fn start(config: EmuConfig) -> io::Result<Emulator> {
    if config.count == 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "count must be at least 1",
        ));
    }
    let hosts = net::consecutive(config.first_host, config.count);
    let devices = Devices::new(config.defaults.clone());
    let mut ports = Ports::default();
    let mut frontends: Vec<(&'static str, Frontend)> = Vec::new();
    let http_options = cisco_http::Options {
        basic_rate_limit: config.cisco_basic_rate_limit,
    };

    if let Some(port) = config.cisco_http {
        let f = cisco_http::start_with(&hosts, port, devices.clone(), None, http_options).await?;
        add(&mut frontends, &mut ports.cisco_http, "cisco-http", f);
    }
    let mut tls_fingerprint = None;
    if let Some(port) = config.cisco_https {
        let identity = TlsIdentity::self_signed(&hosts)?;
        tls_fingerprint = Some(identity.fingerprint_sha256());
        let tls = Some(&identity);
        let f = cisco_http::start_with(&hosts, port, devices.clone(), tls, http_options).await?;
        add(&mut frontends, &mut ports.cisco_https, "cisco-https", f);
    }
    let mut ssh_fingerprint = None;
    if let Some(port) = config.cisco_ssh {
        let key = cisco_ssh::generate_host_key()?;
        ssh_fingerprint = Some(cisco_ssh::fingerprint(&key));
        let f = cisco_ssh::start(&hosts, port, devices.clone(), key).await?;
        add(&mut frontends, &mut ports.cisco_ssh, "cisco-ssh", f);
    }
    if let Some(port) = config.poly_telnet {
        let f = poly_telnet::start(&hosts, port, devices.clone()).await?;
        add(&mut frontends, &mut ports.poly_telnet, "poly-telnet", f);
    }
    // One Mesh driver server for every device, on the first address (the device is in the path).
    if let Some(port) = config.mesh {
        let f = mesh::start(hosts[0], port, devices.clone()).await?;
        add(&mut frontends, &mut ports.mesh, "mesh", f);
    }

    let mut control_addr = None;
    if let Some(port) = config.control {
        let (addr, f) = control::start(hosts[0], port, devices.clone(), hosts.clone()).await?;
        control_addr = Some(addr);
        add(&mut frontends, &mut ports.control, "control", f);
    }
    Ok(Emulator {
        devices,
        hosts,
        ports,
        control_addr,
        tls_fingerprint,
        ssh_fingerprint,
        frontends,
    })
}

//! What the person running the demo gets: the service's configuration file, and the
//! addresses, credentials and commands to try once everything runs.

use super::processes::Roomlink;
use super::setup::{self, DemoData};
use super::{ENTERPRISE, USERNAME};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// `server.shutdown_timeout_secs` of the demo service: in-flight requests are short here.
const SHUTDOWN_GRACE_SECS: u64 = 5;

/// Everything the guide shows.
pub(super) struct Demo<'a> {
    /// `host:port` of roomlink and of the simulator.
    pub(super) api: String,
    pub(super) sim: String,
    pub(super) password: String,
    pub(super) data: DemoData,
    /// Whether the API reference is served.
    pub(super) docs: bool,
    /// `host:port` of the alert receiver (`roomlinkctl webhooks listen`).
    pub(super) alerts: String,
    pub(super) roomlink: &'a Roomlink,
}

#[allow(clippy::print_stdout)] // the demo's one output for the person running it
pub(super) fn print_next_steps(d: &Demo) -> std::fmt::Result {
    let mut out = String::new();
    let (api, sim, token) = (&d.api, &d.sim, &d.data.token);
    let auth = format!("-H 'X-Access-Token: {token}'");
    let dir = d.roomlink.dir.display();
    writeln!(out)?;
    writeln!(out, "roomlink demo is set up")?;
    writeln!(out)?;
    writeln!(
        out,
        "  roomlink          http://{api}   (log {dir}/roomlink.log)"
    )?;
    writeln!(
        out,
        "  listener sim      http://{sim}   (log {dir}/listener-sim.log)"
    )?;
    writeln!(out, "  enterprise        {ENTERPRISE}")?;
    writeln!(
        out,
        "  service user      {USERNAME} / {} (ROLE_READWRITE)",
        d.password
    )?;
    writeln!(out, "  access token      {token}")?;
    writeln!(
        out,
        "  alert receiver    http://{}   (roomlinkctl webhooks listen; log {dir}/alerts.log)",
        d.alerts
    )?;
    writeln!(out, "  listener service  {}", d.data.listener_id)?;
    for (i, room) in d.data.rooms.iter().enumerate() {
        let label = if i == 0 { "endpoints" } else { "" };
        writeln!(
            out,
            "  {label:<17} {:<14} {:<12} {}",
            room.name, room.address, room.id
        )?;
    }
    let room = &d.data.rooms[0];
    let endpoint = format!("http://{api}/api/endpoints/{}", room.id);
    writeln!(out)?;
    writeln!(out, "Try, in another terminal:")?;
    writeln!(out)?;
    writeln!(out, "# the endpoints")?;
    writeln!(out, "curl -s {auth} http://{api}/api/endpoints")?;
    writeln!(
        out,
        "# {} joins a meeting (204), then its status",
        room.name
    )?;
    writeln!(
        out,
        "curl -s -X POST {auth} '{endpoint}/join?meetingid=123456789&passcode=4321' -w '%{{http_code}}\\n'"
    )?;
    writeln!(out, "curl -s {auth} {endpoint}/status")?;
    writeln!(out, "# what the simulated room system saw")?;
    writeln!(out, "curl -s http://{sim}/sim/endpoints/{}", room.address)?;
    writeln!(out, "# mute, hang up, every endpoint's status")?;
    writeln!(
        out,
        "curl -s -X POST {auth} {endpoint}/mutemicrophone -w '%{{http_code}}\\n'"
    )?;
    writeln!(
        out,
        "curl -s -X POST {auth} {endpoint}/hangup -w '%{{http_code}}\\n'"
    )?;
    writeln!(out, "curl -s {auth} http://{api}/api/endpoints/status")?;
    writeln!(
        out,
        "# a fault: the room rejects the credentials, so the next join answers AuthenticationFailed"
    )?;
    writeln!(
        out,
        "curl -s -X PUT -H 'Content-Type: application/json' -d '{{\"fault\": \"bad_credentials\"}}' http://{sim}/sim/endpoints/{}/fault",
        room.address
    )?;
    writeln!(out, "curl -s -X POST {auth} {endpoint}/join")?;
    writeln!(
        out,
        "curl -s -X DELETE http://{sim}/sim/endpoints/{}/fault",
        room.address
    )?;
    let last = &d.data.rooms[d.data.rooms.len() - 1];
    writeln!(
        out,
        "# alerts: {} was set up without its touch panel (degraded; see the console's Health page);",
        last.name
    )?;
    writeln!(
        out,
        "# roomlink delivered room.degraded, signed, to the local receiver, which checked it"
    )?;
    writeln!(out, "cat {dir}/alerts.log")?;
    writeln!(
        out,
        "# plug it back in: room.online follows at the next inventory read (every minute here)"
    )?;
    writeln!(
        out,
        "curl -s -X DELETE http://{sim}/sim/endpoints/{}/peripherals/{}/disconnected",
        last.address,
        setup::panel_of(last.address)
    )?;
    writeln!(out, "curl -s {auth} http://{api}/api/webhooks")?;
    writeln!(out, "# a new token (valid two weeks)")?;
    writeln!(
        out,
        "curl -s -X POST -u {USERNAME}:{} http://{api}/api/auth/accesstokens",
        d.password
    )?;
    if d.docs {
        writeln!(out, "# the API reference: open http://{api}/api/docs/")?;
    } else {
        writeln!(
            out,
            "# (no API reference at http://{api}/api/docs/ in this build yet)"
        )?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "Data (SQLite database, sealing key, config, logs): {dir}"
    )?;
    writeln!(
        out,
        "Serve it again later: {} --config {} serve",
        d.roomlink.bin.display(),
        d.roomlink.config.display()
    )?;
    print!("{out}");
    let _ = std::io::stdout().flush();
    Ok(())
}

/// The demo service's own configuration (the environment's `ROOMLINK__*` are removed).
pub(super) fn config_file(dir: &Path, port: u16) -> String {
    format!(
        "# Written by `cargo xtask demo`; every key is in docs/operations.md.\n\
         [server]\n\
         bind = \"127.0.0.1:{port}\"\n\
         workers = 2\n\
         shutdown_timeout_secs = {SHUTDOWN_GRACE_SECS}\n\
         \n\
         [database]\n\
         url = \"sqlite://{db}\"\n\
         \n\
         [security]\n\
         service_key_file = \"{key}\"\n\
         \n\
         [listener]\n\
         command_timeout_ms = 5000\n\
         status_poll_interval_ms = 5000\n\
         \n\
         # Rooms say what they are every minute, so a peripheral plugged back in shows soon.\n\
         [inventory]\n\
         refresh_minutes = 1\n\
         \n\
         # Webhook receivers on this machine only: loopback allowed, no other host named.\n\
         [webhooks]\n\
         allow_networks = \"loopback\"\n\
         allowed_hosts = \"127.0.0.1\"\n\
         \n\
         [log]\n\
         format = \"human\"\n\
         level = \"info\"\n",
        db = dir.join("roomlink.db").display(),
        key = dir.join("roomlink.key").display(),
    )
}

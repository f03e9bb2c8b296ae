//! The demo's data: the enterprise and service user through `roomlink admin` (before the service
//! starts: the API cannot create them), then a token, the listener service and the room
//! systems through the API, as a client would.

use super::processes::Roomlink;
use super::{ENTERPRISE, USERNAME};
use crate::http;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read, Write};
use std::process::Stdio;
use std::time::Duration;

/// The demo's room systems: name and address (the simulator never connects to them).
const ROOMS: [(&str, &str); 3] = [
    ("Board room", "127.77.0.10"),
    ("Huddle room", "127.77.0.11"),
    ("Training room", "127.77.0.12"),
];
const HTTP_TIMEOUT: Duration = Duration::from_secs(30);

pub(super) struct Room {
    pub(super) name: &'static str,
    pub(super) address: &'static str,
    pub(super) id: String,
}

/// What the API created.
pub(super) struct DemoData {
    pub(super) token: String,
    pub(super) listener_id: String,
    pub(super) rooms: Vec<Room>,
}

/// Enterprise [`ENTERPRISE`] and its read-write service user [`USERNAME`] with `password`.
pub(super) fn enterprise_and_user(roomlink: &Roomlink, password: &str) -> Result<(), String> {
    admin(
        roomlink,
        &[
            "admin",
            "enterprise",
            "create",
            ENTERPRISE,
            "--create-database",
        ],
        "",
    )?;
    admin(
        roomlink,
        &[
            "admin",
            "user",
            "create",
            "--enterprise",
            ENTERPRISE,
            "--username",
            USERNAME,
            "--role",
            "ROLE_READWRITE",
            "--password-stdin",
        ],
        &format!("{password}\n"),
    )
}

/// Runs `roomlink ARGS` with `stdin`, showing what it prints.
pub(super) fn admin(roomlink: &Roomlink, args: &[&str], stdin: &str) -> Result<(), String> {
    let mut child = roomlink
        .command()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", roomlink.bin.display()))?;
    if let Some(mut input) = child.stdin.take() {
        input
            .write_all(stdin.as_bytes())
            .map_err(|e| format!("cannot write to roomlink: {e}"))?;
    }
    let output = child
        .wait_with_output()
        .map_err(|e| format!("roomlink {}: {e}", args.join(" ")))?;
    if !output.status.success() {
        return Err(format!(
            "`roomlink {}` failed: {}",
            args[..3.min(args.len())].join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    eprintln!("  {}", String::from_utf8_lossy(&output.stdout).trim());
    Ok(())
}

/// A token for the service user, the simulator at `sim` as listener service, and [`ROOMS`]
/// behind it; `before_rooms` runs with the token before the rooms exist (the demo subscribes
/// its alert receiver there, so the rooms' first events reach it).
pub(super) fn demo_data(
    api: &str,
    sim: &str,
    listener_secret: &str,
    password: &str,
    before_rooms: impl FnOnce(&str) -> Result<(), String>,
) -> Result<DemoData, String> {
    let basic = http::basic(USERNAME, password);
    let token = post(
        api,
        "/api/auth/accesstokens",
        ("Authorization", &basic),
        "",
        "accessToken",
    )?;
    let auth = ("X-Access-Token", token.as_str());
    let listener = format!(
        "{{\"name\": \"Demo listener\", \"baseUrl\": \"http://{sim}\", \"secret\": \"{listener_secret}\"}}"
    );
    let listener_id = post(api, "/api/listenerservices", auth, &listener, "id")?;
    before_rooms(&token)?;
    // A degraded room to find: the last room's touch panel is unplugged before the rooms are
    // read (the simulator names a Cisco room's peripherals by MAC addresses 02:01:<IPv4>).
    let (_, last) = ROOMS[ROOMS.len() - 1];
    let panel = format!(
        "/sim/endpoints/{last}/peripherals/{}/disconnected",
        panel_of(last)
    );
    http::request(sim, "PUT", &panel, &[], b"", HTTP_TIMEOUT)?.ok(&format!("PUT {panel}"))?;
    let mut rooms = Vec::new();
    for (name, address) in ROOMS {
        let endpoint = format!(
            "{{\"name\": \"{name}\", \"ipAddress\": \"{address}\", \"controlProtocol\": \"TANDBERG_SSH\", \
             \"listenerServiceId\": \"{listener_id}\", \"username\": \"admin\", \"password\": \"room-secret\"}}"
        );
        rooms.push(Room {
            name,
            address,
            id: post(api, "/api/endpoints", auth, &endpoint, "id")?,
        });
    }
    Ok(DemoData {
        token,
        listener_id,
        rooms,
    })
}

/// The id the simulator gives the touch panel of the Cisco room at `address`: the MAC address
/// 02:01:<its IPv4 octets>.
pub(super) fn panel_of(address: &str) -> String {
    let octets: Vec<String> = address
        .split('.')
        .map(|o| format!("{:02X}", o.parse::<u8>().unwrap_or(0)))
        .collect();
    format!("02:01:{}", octets.join(":"))
}

/// Subscribes `url` to the room, listener and call events: the subscription's signing secret.
pub(super) fn subscribe_alerts(api: &str, token: &str, url: &str) -> Result<String, String> {
    let body = format!(
        "{{\"url\": \"{url}\", \"description\": \"demo: roomlinkctl webhooks listen\", \
         \"eventTypes\": [\"room.offline\", \"room.degraded\", \"room.online\", \
         \"listener.offline\", \"listener.online\", \"call.started\", \"call.ended\", \
         \"command.failed\", \"inventory.changed\", \"template.drifted\"]}}"
    );
    post(
        api,
        "/api/webhooks",
        ("X-Access-Token", token),
        &body,
        "secret",
    )
}

/// POSTs the JSON `body` (none when empty) with one credential header; the string member
/// `field` of the answer.
fn post(
    api: &str,
    path: &str,
    credential: (&str, &str),
    body: &str,
    field: &str,
) -> Result<String, String> {
    let mut headers = vec![credential];
    if !body.is_empty() {
        headers.push(("Content-Type", "application/json"));
    }
    let answer = http::request(api, "POST", path, &headers, body.as_bytes(), HTTP_TIMEOUT)?
        .ok(&format!("POST {path}"))?;
    answer.json_string(field)
}

/// Whether this build serves the API reference.
pub(super) fn serves_docs(api: &str) -> bool {
    http::request(api, "GET", "/api/docs/", &[], b"", HTTP_TIMEOUT).is_ok_and(|r| r.status == 200)
}

/// Hex of `bytes` random bytes from the system's generator.
pub(super) fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    let read = File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut buffer));
    if read.is_err() {
        // No /dev/urandom: std's randomly seeded hasher is enough for a local demo.
        use std::hash::{BuildHasher, Hasher};
        let state = std::collections::hash_map::RandomState::new();
        for (i, b) in buffer.iter_mut().enumerate() {
            let mut hasher = state.build_hasher();
            hasher.write_usize(i);
            *b = hasher.finish().to_le_bytes()[0];
        }
    }
    buffer.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

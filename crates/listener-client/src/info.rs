//! What a listener is (`GET /v1/info`), its cache, and the version gate of each command.

use roomlink_domain::template::{SettingKey, SettingOutcomes, all_unsupported};
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A listener version `X.Y.Z`. A pre-release or build suffix is ignored (`2.3.0-rc1` counts
/// as 2.3.0): listeners are released, not pre-released, to customers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(u32, u32, u32);

impl Version {
    pub fn parse(text: &str) -> Option<Version> {
        let core = text.trim().split(['-', '+']).next()?;
        let mut parts = core.split('.').map(|p| {
            if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) {
                p.parse::<u32>().ok()
            } else {
                None
            }
        });
        let version = Version(parts.next()??, parts.next()??, parts.next()??);
        parts.next().is_none().then_some(version)
    }
}

/// The listener version each command appeared in (docs/listener-protocol.md, "Versions").
pub fn minimum_version(command: &str) -> Option<(Version, &'static str)> {
    Some(match command {
        "join" | "hangup" => (Version(1, 0, 0), "1.0.0"),
        "senddtmf" => (Version(2, 0, 0), "2.0.0"),
        "mutemicrophone" | "unmutemicrophone" => (Version(2, 2, 0), "2.2.0"),
        "status" => (Version(2, 15, 0), "2.15.0"),
        "pushcalendar" => (Version(3, 1, 0), "3.1.0"),
        "readcalendar" => (Version(3, 2, 0), "3.2.0"),
        "readinventory" => (Version(3, 3, 0), "3.3.0"),
        "readconfiguration" | "writeconfiguration" => (Version(3, 4, 0), "3.4.0"),
        _ => return None,
    })
}

/// The listener version that reads and writes raw Cisco paths (`cisco:…` keys) in
/// `readconfiguration` and `writeconfiguration`; an older one refuses the whole command.
pub const RAW_PATHS_SINCE: (Version, &str) = (Version(3, 5, 0), "3.5.0");

/// The `/v1/info` body. Unknown fields are ignored: later listeners may add some.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InfoBody {
    pub version: String,
    pub commands: Vec<String>,
    #[serde(default)]
    pub control_protocols: Vec<String>,
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// Per control protocol, the capabilities for rooms of that protocol (listeners from
    /// 3.1.0); absent: `capabilities` holds for every room.
    #[serde(default)]
    pub protocol_capabilities: HashMap<String, Vec<String>>,
}

/// A listener's info, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Info {
    /// As the listener wrote it, for `listenerServiceVersion`.
    pub version_text: String,
    pub version: Version,
    pub commands: Vec<String>,
    pub control_protocols: Vec<String>,
    /// As reported; names roomlink does not know are kept out by the caller.
    pub capabilities: Vec<String>,
    pub protocol_capabilities: HashMap<String, Vec<String>>,
}

impl Info {
    /// `Err` describes why the body is not the protocol.
    pub fn from_body(body: InfoBody) -> Result<Info, String> {
        let version = Version::parse(&body.version)
            .ok_or_else(|| format!("info.version '{}' is not X.Y.Z", body.version))?;
        Ok(Info {
            version_text: body.version,
            version,
            commands: body.commands,
            control_protocols: body.control_protocols,
            capabilities: body.capabilities,
            protocol_capabilities: body.protocol_capabilities,
        })
    }

    /// What the listener reports for rooms of `control_protocol`: its list for that protocol
    /// when it gives one, else its overall list. `CALENDAR_PUSH` counts only when the listener
    /// also has the `pushcalendar` command.
    pub fn capabilities_for(&self, control_protocol: Option<&str>) -> Vec<&str> {
        let listed = control_protocol
            .and_then(|p| self.protocol_capabilities.get(p))
            .unwrap_or(&self.capabilities);
        let pushes = self.has_command("pushcalendar");
        listed
            .iter()
            .map(String::as_str)
            .filter(|c| pushes || *c != "CALENDAR_PUSH")
            .collect()
    }

    pub fn has_command(&self, command: &str) -> bool {
        self.commands.iter().any(|c| c == command)
    }

    pub fn supports(&self, control_protocol: &str) -> bool {
        self.control_protocols.iter().any(|p| p == control_protocol)
    }
}

/// Why a listener cannot take a command, before anything is sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Older than the command (`ForwardsCompatibility`).
    TooOld { minimum: &'static str },
    /// Does not list the command (`NoSuchHandler`).
    NoCommand,
}

/// The version and command-list gate of `command` on a listener described by `info`.
pub fn gate(info: &Info, command: &str) -> Result<(), Refusal> {
    match minimum_version(command) {
        Some((minimum, text)) if info.version < minimum => Err(Refusal::TooOld { minimum: text }),
        _ if !info.has_command(command) => Err(Refusal::NoCommand),
        _ => Ok(()),
    }
}

/// The raw Cisco paths `raw` as unsupported outcomes when `info`'s listener has `command` but
/// predates [`RAW_PATHS_SINCE`]; else none (a listener without the command at all is refused
/// by the command's own gate).
pub fn raw_paths_too_new(info: &Info, command: &str, raw: Vec<SettingKey>) -> SettingOutcomes {
    let (since, since_text) = RAW_PATHS_SINCE;
    if info.version >= since || gate(info, command).is_err() {
        return SettingOutcomes::new();
    }
    let why = format!(
        "listener {} predates raw Cisco paths (from {since_text}): upgrade it",
        info.version_text
    );
    all_unsupported(raw, &why)
}

/// `/v1/info` answers per base URL, kept for a while (listeners change only on upgrade).
#[derive(Debug)]
pub struct InfoCache {
    ttl: Duration,
    entries: Mutex<HashMap<String, (Instant, Arc<Info>)>>,
}

impl InfoCache {
    pub fn new(ttl: Duration) -> Self {
        InfoCache {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    pub fn get(&self, base_url: &str) -> Option<Arc<Info>> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries
            .get(base_url)
            .filter(|(at, _)| at.elapsed() < self.ttl)
            .map(|(_, info)| Arc::clone(info))
    }

    pub fn put(&self, base_url: &str, info: Arc<Info>) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        // Drop stale entries so listeners that went away do not accumulate.
        entries.retain(|_, (at, _)| at.elapsed() < self.ttl);
        entries.insert(base_url.to_owned(), (Instant::now(), info));
    }

    /// Forgets a listener whose answers contradict its info (it was probably upgraded or
    /// replaced), so the next command asks again.
    pub fn forget(&self, base_url: &str) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.remove(base_url);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(version: &str, commands: &[&str]) -> Info {
        Info::from_body(InfoBody {
            version: version.into(),
            commands: commands.iter().map(|c| (*c).to_owned()).collect(),
            control_protocols: vec!["TANDBERG_SSH".into()],
            capabilities: vec![],
            protocol_capabilities: HashMap::new(),
        })
        .unwrap()
    }

    #[test]
    fn versions_parse_leniently_and_compare_numerically() {
        assert_eq!(Version::parse("2.25.0"), Some(Version(2, 25, 0)));
        assert_eq!(Version::parse(" 2.3.0-rc1 "), Some(Version(2, 3, 0)));
        assert_eq!(Version::parse("2.3.0+build7"), Some(Version(2, 3, 0)));
        for bad in ["", "2", "2.3", "2.3.x", "2.3.0.1", "v2.3.0", "-"] {
            assert_eq!(Version::parse(bad), None, "{bad}");
        }
        assert!(Version::parse("2.10.0") > Version::parse("2.9.0"));
    }

    #[test]
    fn the_gate_checks_version_before_the_command_list() {
        let old = info("1.3.0", &["join", "hangup", "senddtmf"]);
        assert_eq!(gate(&old, "join"), Ok(()));
        assert_eq!(
            gate(&old, "senddtmf"),
            Err(Refusal::TooOld { minimum: "2.0.0" })
        );
        assert_eq!(
            gate(&old, "status"),
            Err(Refusal::TooOld { minimum: "2.15.0" })
        );
        let new = info("2.25.0", &["join", "hangup"]);
        assert_eq!(gate(&new, "mutemicrophone"), Err(Refusal::NoCommand));
        assert_eq!(gate(&new, "reboot"), Err(Refusal::NoCommand));
        assert!(
            Info::from_body(InfoBody {
                version: "latest".into(),
                commands: vec![],
                control_protocols: vec![],
                capabilities: vec![],
                protocol_capabilities: HashMap::new(),
            })
            .is_err()
        );
    }

    #[test]
    fn capabilities_per_protocol_and_push_only_with_its_command() {
        let body = |commands: &[&str]| InfoBody {
            version: "3.1.0".into(),
            commands: commands.iter().map(|c| (*c).to_owned()).collect(),
            control_protocols: vec!["TANDBERG_HTTP".into(), "POLYCOM_HTTP_HDX".into()],
            capabilities: vec!["JOIN".into(), "CALENDAR_PUSH".into()],
            protocol_capabilities: HashMap::from([
                (
                    "TANDBERG_HTTP".to_owned(),
                    vec!["JOIN".to_owned(), "CALENDAR_PUSH".to_owned()],
                ),
                ("POLYCOM_HTTP_HDX".to_owned(), vec!["JOIN".to_owned()]),
            ]),
        };
        let pushing = Info::from_body(body(&["join", "pushcalendar"])).unwrap();
        assert_eq!(
            pushing.capabilities_for(Some("TANDBERG_HTTP")),
            ["JOIN", "CALENDAR_PUSH"]
        );
        assert_eq!(pushing.capabilities_for(Some("POLYCOM_HTTP_HDX")), ["JOIN"]);
        assert_eq!(
            pushing.capabilities_for(Some("MESH")),
            ["JOIN", "CALENDAR_PUSH"]
        );
        assert_eq!(pushing.capabilities_for(None), ["JOIN", "CALENDAR_PUSH"]);
        let without = Info::from_body(body(&["join"])).unwrap();
        assert_eq!(without.capabilities_for(Some("TANDBERG_HTTP")), ["JOIN"]);
        assert_eq!(
            gate(&info("3.0.0", &["pushcalendar"]), "pushcalendar"),
            Err(Refusal::TooOld { minimum: "3.1.0" })
        );
    }

    #[test]
    fn the_cache_expires_and_forgets() {
        let cache = InfoCache::new(Duration::from_millis(50));
        cache.put("http://a", Arc::new(info("2.25.0", &["join"])));
        assert!(cache.get("http://a").is_some());
        assert!(cache.get("http://b").is_none());
        cache.forget("http://a");
        assert!(cache.get("http://a").is_none());
        cache.put("http://a", Arc::new(info("2.25.0", &["join"])));
        std::thread::sleep(Duration::from_millis(60));
        assert!(cache.get("http://a").is_none());
    }
}

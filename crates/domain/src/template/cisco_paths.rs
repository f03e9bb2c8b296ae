//! Raw Cisco configuration paths, the escape hatch of issue #36: a template may set an
//! `xConfiguration` that no vendor-neutral key covers, written `cisco:` and the path's words
//! (`cisco:Audio Ultrasound MaxVolume`), validated as the neutral keys are: against a value
//! space, before anything is sent, every refusal naming the key, the value and the space.
//!
//! The paths and their spaces come from Cisco's published xAPI schemas (`cisco_paths.json`,
//! derived by crates/device-emu/xapi/derive.py from cisco-ce/roomos.cisco.com at commit
//! 813482138cac1d425ebd6bee383a5416ade6ab65; CE 9.15, RoomOS 11.27, RoomOS 26.4). Decisions
//! (docs/drivers.md, "Raw Cisco paths"):
//! - Kept: configurations an Admin may write in some generation. Left out: paths with instances
//!   (`Video Output Connector[n] Resolution`), not supported yet, and passwords (`SIP
//!   Authentication Password`), since templates, plans and jobs show their values.
//! - A path's space is the union over generations and products (`Audio Ultrasound MaxVolume`
//!   is 0 to 70 on some products and 0 to 90 on others: 0 to 90). A value some product takes
//!   passes here; a room whose product refuses it says so, recorded per room as `refused`.
//! - Words compare without regard to case and runs of spaces, as the codecs read them; the key
//!   keeps the schemas' spelling.
//! - A path a neutral key writes (`Audio DefaultVolume`) is refused in favour of the key: one
//!   setting must not be set twice in one template.

use super::space::ValueSpace;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::LazyLock;

/// What starts a raw Cisco key.
pub const PREFIX: &str = "cisco:";

/// A raw Cisco configuration path a template may set.
#[derive(Debug)]
pub struct CiscoPath {
    /// The template key: `cisco:Audio Ultrasound MaxVolume`.
    pub key: &'static str,
    /// The path's words as the schemas spell them: `Audio Ultrasound MaxVolume`.
    pub path: &'static str,
    pub space: ValueSpace,
    /// The published schemas (generations) that have the path: `CE 9.15`, `RoomOS 11.27`,
    /// `RoomOS 26.4`.
    pub schemas: &'static [&'static str],
}

impl CiscoPath {
    /// The path's words: `["Audio", "Ultrasound", "MaxVolume"]`.
    pub fn words(&self) -> impl Iterator<Item = &'static str> {
        self.path.split(' ')
    }
}

// One path is one key: compared, ordered and hashed by it.
impl PartialEq for CiscoPath {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for CiscoPath {}
impl PartialOrd for CiscoPath {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for CiscoPath {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(other.key)
    }
}
impl std::hash::Hash for CiscoPath {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key.hash(state);
    }
}

#[derive(Deserialize)]
struct File {
    paths: Vec<FileEntry>,
}

#[derive(Deserialize)]
struct FileEntry {
    path: String,
    /// Set when a neutral key writes the path.
    setting: Option<String>,
    space: Option<FileSpace>,
    #[serde(default)]
    schemas: Vec<String>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
enum FileSpace {
    Integer {
        min: i64,
        max: i64,
    },
    Literal {
        values: Vec<String>,
    },
    #[serde(rename_all = "camelCase")]
    Text {
        min_chars: usize,
        max_chars: usize,
    },
}

struct Catalog {
    paths: Vec<CiscoPath>,
    /// Lower-case path → index in `paths`.
    by_path: HashMap<String, usize>,
    /// Lower-case path → the neutral key that writes it.
    mapped: HashMap<String, String>,
}

/// Loaded on first use and kept for the process's life, so its texts live as long: leaked
/// once (about 80 kB), never per request.
static CATALOG: LazyLock<Catalog> = LazyLock::new(|| {
    let file: File = match serde_json::from_str(include_str!("cisco_paths.json")) {
        Ok(file) => file,
        // The file is part of the source; the test below reads it.
        Err(e) => panic!("cisco_paths.json is not the catalog derive.py writes: {e}"),
    };
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    let mut catalog = Catalog {
        paths: Vec::new(),
        by_path: HashMap::new(),
        mapped: HashMap::new(),
    };
    for entry in file.paths {
        let lower = entry.path.to_ascii_lowercase();
        if let Some(setting) = entry.setting {
            catalog.mapped.insert(lower, setting);
            continue;
        }
        let Some(space) = entry.space else { continue };
        let space = match space {
            FileSpace::Integer { min, max } => ValueSpace::IntegerRange { min, max },
            FileSpace::Literal { values } => {
                let values: Vec<&'static str> = values.into_iter().map(leak).collect();
                ValueSpace::Literal(Vec::leak(values))
            }
            FileSpace::Text {
                min_chars,
                max_chars,
            } => ValueSpace::Text {
                min_chars,
                max_chars,
            },
        };
        let schemas: Vec<&'static str> = entry.schemas.into_iter().map(leak).collect();
        catalog.by_path.insert(lower, catalog.paths.len());
        catalog.paths.push(CiscoPath {
            key: leak(format!("{PREFIX}{}", entry.path)),
            path: leak(entry.path),
            space,
            schemas: Vec::leak(schemas),
        });
    }
    catalog
});

/// The raw path `key` names (`cisco:` and the path's words); else why not, for a refusal.
pub fn lookup(key: &str) -> Result<&'static CiscoPath, String> {
    let Some(path) = key.strip_prefix(PREFIX) else {
        return Err(format!("a raw Cisco path starts with '{PREFIX}'"));
    };
    let words: Vec<&str> = path.split_whitespace().collect();
    if words.is_empty() {
        return Err(format!(
            "'{PREFIX}' must be followed by a configuration path, such as \
             '{PREFIX}Audio Ultrasound MaxVolume'"
        ));
    }
    let lower = words.join(" ").to_ascii_lowercase();
    let catalog = &*CATALOG;
    if let Some(&index) = catalog.by_path.get(&lower) {
        return Ok(&catalog.paths[index]);
    }
    if let Some(setting) = catalog.mapped.get(&lower) {
        return Err(format!(
            "the template setting '{setting}' writes this path on Cisco rooms: set that instead"
        ));
    }
    if path.contains('[') {
        return Err("paths with instances ('[n]') are not supported as raw paths yet".to_owned());
    }
    Err(
        "not a configuration an Admin may write in Cisco's published schemas (CE 9.15, \
         RoomOS 11.27, RoomOS 26.4); passwords are left out"
            .to_owned(),
    )
}

/// Every raw path, in the schemas' order (sorted by path): what the tests check the catalog by.
#[cfg(test)]
fn all() -> &'static [CiscoPath] {
    &CATALOG.paths
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_loads_with_hundreds_of_paths_and_no_password() {
        assert!(all().len() > 500, "{}", all().len());
        assert!(all().windows(2).all(|w| w[0].path < w[1].path));
        // Password policies stay; passwords (the last word) do not.
        let last = |p: &CiscoPath| p.words().last().unwrap_or_default();
        assert!(all().iter().all(|p| !last(p).contains("Password")));
        assert!(lookup("cisco:UserManagement PasswordPolicy MaxLifetime").is_ok());
        assert!(all().iter().all(|p| !p.path.contains('[')));
        assert!(all().iter().all(|p| !p.schemas.is_empty()));
    }

    #[test]
    fn finds_a_path_in_any_case_and_spacing_and_keeps_the_schemas_spelling() {
        let path = lookup("cisco:audio  ultrasound MAXVOLUME").unwrap();
        assert_eq!(path.key, "cisco:Audio Ultrasound MaxVolume");
        assert_eq!(path.path, "Audio Ultrasound MaxVolume");
        // 0 to 70 on some products, 0 to 90 on others.
        assert_eq!(path.space, ValueSpace::IntegerRange { min: 0, max: 90 });
        assert_eq!(path.schemas, ["CE 9.15", "RoomOS 11.27", "RoomOS 26.4"]);
        assert_eq!(
            path.words().collect::<Vec<_>>(),
            ["Audio", "Ultrasound", "MaxVolume"]
        );
        let language = lookup("cisco:UserInterface Language").unwrap();
        let ValueSpace::Literal(values) = language.space else {
            panic!("not a literal");
        };
        assert!(values.contains(&"Norwegian"));
    }

    #[test]
    fn refuses_mapped_paths_instances_passwords_and_unknown_paths_saying_why() {
        assert_eq!(
            lookup("cisco:Audio DefaultVolume").unwrap_err(),
            "the template setting 'audio.default_volume' writes this path on Cisco rooms: set \
             that instead"
        );
        assert!(
            lookup("cisco:Video Output Connector[1] Resolution")
                .unwrap_err()
                .contains("instances")
        );
        for missing in ["cisco:SIP Authentication Password", "cisco:Audio Nothing"] {
            assert!(
                lookup(missing)
                    .unwrap_err()
                    .starts_with("not a configuration"),
                "{missing}"
            );
        }
        assert!(lookup("cisco:  ").unwrap_err().contains("must be followed"));
    }
}

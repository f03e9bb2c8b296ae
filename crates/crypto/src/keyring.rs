//! The service key ring: the current sealing key and the previous ones still needed to open
//! values sealed before a rotation (`roomlink admin rotate-key`).
//!
//! The key file holds one key per line, base64 of 32 bytes: the first line is the current
//! key, the lines after it are previous keys, newest first. Blank lines and lines starting
//! with `#` are skipped. A file of one line (every file written before rotation existed) is a
//! ring without previous keys.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use sha2::{Digest, Sha256};
use std::fs;
use std::io::Write;
use std::path::Path;
use zeroize::Zeroizing;

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("the service key must be 32 bytes encoded as base64")]
    Malformed,
    #[error("cannot read or create the service key file {path}: {source}")]
    File {
        path: String,
        source: std::io::Error,
    },
}

/// A key's id: the prefix and the first 8 hex digits of SHA-256 of the key.
pub(crate) fn key_digest(prefix: &str, key: &[u8]) -> String {
    let digest = Sha256::digest(key);
    let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}-{hex}")
}

/// The service's own 256-bit sealing key.
pub struct ServiceKey {
    key: Zeroizing<[u8; 32]>,
    id: String,
}

impl ServiceKey {
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        let id = key_digest("svc", &bytes);
        ServiceKey {
            key: Zeroizing::new(bytes),
            id,
        }
    }

    pub fn from_base64(text: &str) -> std::result::Result<Self, KeyError> {
        let bytes = Zeroizing::new(
            BASE64
                .decode(text.trim())
                .map_err(|_| KeyError::Malformed)?,
        );
        let key = <[u8; 32]>::try_from(bytes.as_slice()).map_err(|_| KeyError::Malformed)?;
        Ok(Self::from_bytes(key))
    }

    pub fn generate() -> Self {
        let mut bytes = [0u8; 32];
        #[allow(clippy::expect_used)] // no safe key can be made without the OS random source
        getrandom::fill(&mut bytes).expect("the operating system's random source failed");
        Self::from_bytes(bytes)
    }

    /// The key as a key file line holds it.
    pub fn to_base64(&self) -> Zeroizing<String> {
        Zeroizing::new(BASE64.encode(*self.key))
    }

    pub(crate) fn bytes(&self) -> &[u8; 32] {
        &self.key
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    /// A key for another purpose, derived from this one (HMAC-SHA-256 of `purpose`): the same
    /// on every instance sharing the service key, and telling nothing of it.
    pub fn derive(&self, purpose: &str) -> Zeroizing<[u8; 32]> {
        use hmac::{Hmac, KeyInit, Mac};
        #[allow(clippy::expect_used)] // HMAC takes keys of any length
        let mut mac =
            Hmac::<Sha256>::new_from_slice(self.key.as_slice()).expect("HMAC takes any key");
        mac.update(purpose.as_bytes());
        Zeroizing::new(mac.finalize().into_bytes().into())
    }
}

/// The current key and the previous ones, each at most once.
pub struct KeyRing {
    current: ServiceKey,
    previous: Vec<ServiceKey>,
}

impl KeyRing {
    pub fn new(current: ServiceKey, previous: Vec<ServiceKey>) -> KeyRing {
        let mut ring = KeyRing {
            current,
            previous: Vec::new(),
        };
        for key in previous {
            if ring.key(key.id()).is_none() {
                ring.previous.push(key);
            }
        }
        ring
    }

    /// The text of a key file (see the module documentation).
    pub fn parse(text: &str) -> Result<KeyRing, KeyError> {
        let mut keys = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(ServiceKey::from_base64);
        let current = keys.next().ok_or(KeyError::Malformed)??;
        let previous = keys.collect::<Result<Vec<_>, _>>()?;
        Ok(KeyRing::new(current, previous))
    }

    /// Reads the key file, or creates it (owner read/write only) with a fresh key.
    pub fn load_or_create(path: &Path) -> Result<KeyRing, KeyError> {
        match fs::read_to_string(path) {
            Ok(text) => KeyRing::parse(&text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let ring = KeyRing::new(ServiceKey::generate(), Vec::new());
                ring.create(path)?;
                Ok(ring)
            }
            Err(e) => Err(file_error(path, e)),
        }
    }

    /// Reads an existing key file.
    pub fn load(path: &Path) -> Result<KeyRing, KeyError> {
        let text = Zeroizing::new(fs::read_to_string(path).map_err(|e| file_error(path, e))?);
        KeyRing::parse(&text)
    }

    /// A new current key; the old current key becomes the newest previous one.
    pub fn rotated(self) -> KeyRing {
        let mut previous = vec![self.current];
        previous.extend(self.previous);
        KeyRing::new(ServiceKey::generate(), previous)
    }

    /// Without the previous keys (once no stored value needs them).
    pub fn without_previous(self) -> KeyRing {
        KeyRing::new(self.current, Vec::new())
    }

    pub fn current(&self) -> &ServiceKey {
        &self.current
    }

    pub fn previous_ids(&self) -> Vec<&str> {
        self.previous.iter().map(ServiceKey::id).collect()
    }

    /// The key with this id, current or previous.
    pub fn key(&self, id: &str) -> Option<&ServiceKey> {
        std::iter::once(&self.current)
            .chain(&self.previous)
            .find(|k| k.id() == id)
    }

    fn file_text(&self) -> Zeroizing<String> {
        let mut text = Zeroizing::new(String::new());
        for key in std::iter::once(&self.current).chain(&self.previous) {
            text.push_str(&key.to_base64());
            text.push('\n');
        }
        text
    }

    /// Writes a new key file; refuses to overwrite one.
    fn create(&self, path: &Path) -> Result<(), KeyError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            fs::create_dir_all(dir).map_err(|e| file_error(path, e))?;
        }
        write_private(path, &self.file_text(), true).map_err(|e| file_error(path, e))
    }

    /// Replaces the key file atomically: a reader sees the old ring or the new one, never a
    /// half-written file, and a crash leaves one of the two.
    pub fn replace(&self, path: &Path) -> Result<(), KeyError> {
        let mut temporary = path.as_os_str().to_owned();
        temporary.push(".new");
        let temporary = Path::new(&temporary);
        let _ = fs::remove_file(temporary);
        let written = write_private(temporary, &self.file_text(), true)
            .and_then(|()| fs::rename(temporary, path));
        if written.is_err() {
            let _ = fs::remove_file(temporary);
        }
        written.map_err(|e| file_error(path, e))?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            // The rename itself made durable.
            if let Ok(dir) = fs::File::open(dir) {
                let _ = dir.sync_all();
            }
        }
        Ok(())
    }
}

fn file_error(path: &Path, source: std::io::Error) -> KeyError {
    KeyError::File {
        path: path.display().to_string(),
        source,
    }
}

/// Creates `path` readable and writable by its owner only, and flushes it to disk.
fn write_private(path: &Path, text: &str, create_new: bool) -> std::io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true);
    if create_new {
        options.create_new(true);
    }
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_line_file_is_a_ring_without_previous_keys() {
        let key = ServiceKey::from_bytes([4; 32]);
        let ring = KeyRing::parse(&format!("{}\n", key.to_base64().as_str())).unwrap();
        assert_eq!(ring.current().id(), key.id());
        assert!(ring.previous_ids().is_empty());
    }

    #[test]
    fn rotation_keeps_the_old_key_readable_and_the_file_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("roomlink.key");
        let first = KeyRing::load_or_create(&path).unwrap();
        let old_id = first.current().id().to_owned();
        let rotated = first.rotated();
        assert_ne!(rotated.current().id(), old_id);
        assert_eq!(rotated.previous_ids(), vec![old_id.as_str()]);
        rotated.replace(&path).unwrap();
        let again = KeyRing::load(&path).unwrap();
        assert_eq!(again.current().id(), rotated.current().id());
        assert!(again.key(&old_id).is_some());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let forgotten = again.without_previous();
        assert!(forgotten.key(&old_id).is_none());
    }

    #[test]
    fn comments_and_blank_lines_are_skipped_and_bad_lines_refused() {
        let a = ServiceKey::from_bytes([1; 32]).to_base64().to_string();
        let b = ServiceKey::from_bytes([2; 32]).to_base64().to_string();
        let ring = KeyRing::parse(&format!("# current\n{a}\n\n# previous\n{b}\n{a}\n")).unwrap();
        assert_eq!(ring.previous_ids().len(), 1, "a repeated key counts once");
        assert!(matches!(
            KeyRing::parse(&format!("{a}\nshort\n")),
            Err(KeyError::Malformed)
        ));
        assert!(matches!(
            KeyRing::parse("# nothing\n"),
            Err(KeyError::Malformed)
        ));
    }

    #[test]
    fn derived_keys_are_per_purpose_and_stable() {
        let key = ServiceKey::from_bytes([9; 32]);
        let a = key.derive("one purpose");
        assert_eq!(*a, *ServiceKey::from_bytes([9; 32]).derive("one purpose"));
        assert_ne!(*a, *key.derive("another purpose"));
        assert_ne!(*a, *ServiceKey::from_bytes([8; 32]).derive("one purpose"));
        assert_ne!(*a, [9; 32]);
    }
}

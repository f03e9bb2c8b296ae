//! Host keys recorded on first use: one line per `address:port` with the key in OpenSSH form.
//! A later connection must present the same key.

use russh::keys::{HashAlg, PublicKey};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What the file says about a key.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The recorded key.
    Known,
    /// Nothing recorded for this address: now recorded.
    Learned,
    /// Another key is recorded: its fingerprint.
    Changed { recorded: String },
}

/// The known-hosts file; writes are serialized and atomic (a new file renamed over the old).
pub struct KnownHosts {
    path: PathBuf,
    write: Mutex<()>,
}

fn fingerprint_of(openssh: &str) -> String {
    PublicKey::from_openssh(openssh)
        .map(|k| k.fingerprint(HashAlg::Sha256).to_string())
        .unwrap_or_else(|_| "(unreadable key)".into())
}

impl KnownHosts {
    pub fn new(path: &Path) -> Self {
        KnownHosts {
            path: path.to_path_buf(),
            write: Mutex::new(()),
        }
    }

    /// Checks `key` for `host` (`address:port`), recording it when the host is new.
    pub fn check(&self, host: &str, key: &PublicKey) -> Result<Verdict, String> {
        let presented = key
            .to_openssh()
            .map_err(|e| format!("cannot encode the host key: {e}"))?;
        let _held = self.write.lock().unwrap_or_else(|p| p.into_inner());
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(format!("cannot read {}: {e}", self.path.display())),
        };
        for line in text.lines() {
            if let Some((name, recorded)) = line.split_once(' ')
                && name == host
            {
                return Ok(if recorded.trim() == presented {
                    Verdict::Known
                } else {
                    Verdict::Changed {
                        recorded: fingerprint_of(recorded.trim()),
                    }
                });
            }
        }
        let updated = format!("{text}{host} {presented}\n");
        let temporary = self.path.with_extension("tmp");
        std::fs::write(&temporary, updated)
            .and_then(|()| std::fs::rename(&temporary, &self.path))
            .map_err(|e| format!("cannot record the host key in {}: {e}", self.path.display()))?;
        Ok(Verdict::Learned)
    }
}

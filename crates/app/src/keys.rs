//! Re-sealing every stored endpoint password and listener secret under the current service
//! key, after `roomlink admin rotate-key` made a new one current.
//!
//! Online and resumable: values are read in pages by holder id and each is replaced only if it
//! is still the value that was read (a write through the API meanwhile wins, and is already
//! sealed under a key the ring holds). Running it again re-seals only what is still under
//! another key, so an interrupted run is finished by starting it again.

use roomlink_domain::error::{ErrorKind, Result};
use roomlink_domain::ports::{SealedKind, SealedSecretStore, SecretSealer};
use serde::Serialize;
use std::sync::Arc;

/// Values read per page.
pub const RESEAL_PAGE: usize = 200;

pub struct KeyRotation {
    pub secrets: Arc<dyn SealedSecretStore>,
    pub sealer: Arc<dyn SecretSealer>,
}

/// What one run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResealReport {
    /// The key every re-sealed value is under now.
    pub key_id: String,
    /// Values now under the current key.
    pub resealed: u64,
    /// Values changed through the API while this ran (already sealed afresh).
    pub changed_meanwhile: u64,
    /// Endpoint passwords sealed to an enterprise's public key: roomlink cannot open them and
    /// the service key does not protect them, so they stay as they are.
    pub enterprise_sealed: u64,
    /// Values under a key the ring no longer holds: their passwords must be entered again
    /// (commands to those endpoints answer `EncryptionUpdated` until then).
    pub unreadable: u64,
}

impl ResealReport {
    /// Whether a value may still be under a previous key (a run cut short, or an instance
    /// that had not reloaded the key file yet and sealed under the old key).
    pub fn complete(&self) -> bool {
        self.changed_meanwhile == 0
    }
}

impl KeyRotation {
    /// Re-seals every service-key value not under the current key.
    pub async fn reseal_all(&self) -> Result<ResealReport> {
        let mut report = ResealReport {
            key_id: self.sealer.current_key_id(None)?,
            ..ResealReport::default()
        };
        for kind in [
            SealedKind::EndpointPassword,
            SealedKind::ListenerSecret,
            SealedKind::CalendarPassword,
            SealedKind::WebhookSecret,
        ] {
            self.reseal_kind(kind, &mut report).await?;
        }
        Ok(report)
    }

    async fn reseal_kind(&self, kind: SealedKind, report: &mut ResealReport) -> Result<()> {
        let mut after: Option<String> = None;
        loop {
            let page = self
                .secrets
                .sealed_not_under(kind, &report.key_id, after.as_deref(), RESEAL_PAGE)
                .await?;
            let Some(last) = page.last() else {
                return Ok(());
            };
            after = Some(last.id.clone());
            for stored in &page {
                let plain = match self.sealer.open(&stored.sealed) {
                    Ok(Some(plain)) => plain,
                    Ok(None) => {
                        report.enterprise_sealed += 1;
                        continue;
                    }
                    Err(e) if e.kind() == ErrorKind::EncryptionUpdated => {
                        report.unreadable += 1;
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                let fresh = self.sealer.seal(&plain, None)?;
                if self
                    .secrets
                    .replace_sealed(kind, &stored.id, &stored.sealed, &fresh)
                    .await?
                {
                    report.resealed += 1;
                } else {
                    report.changed_meanwhile += 1;
                }
            }
            if page.len() < RESEAL_PAGE {
                return Ok(());
            }
        }
    }
}

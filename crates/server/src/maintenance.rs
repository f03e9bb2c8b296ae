//! `roomlink admin rotate-key`, `backup` and `restore`: the keys and data an operator manages
//! (docs/operations.md, "Rotating the service key" and "Backups").

use crate::settings::Settings;
use crate::{KeySource, key_source};
use roomlink_app::keys::ResealReport;
use roomlink_crypto::KeyRing;
use roomlink_domain::Error;
use std::path::Path;

/// `admin rotate-key [--resume] [--forget-previous]`.
///
/// Without `--resume`: a new key becomes the first line of the key file and the old one stays
/// after it, so every instance opens values under either. Then (also with `--resume`) every
/// value not under the current key is re-sealed under it. `--forget-previous` then drops the
/// previous keys from the file, once a pass found nothing left under them.
pub async fn rotate_key(
    settings: &Settings,
    resume: bool,
    forget_previous: bool,
) -> anyhow::Result<String> {
    let source = key_source(settings)?;
    let mut lines = Vec::new();
    if !resume {
        let KeySource::File(path) = &source else {
            return Err(Error::invalid(
                "the service key comes from security.service_key, which this command cannot \
                 change: set the new key there and the old one in \
                 security.previous_service_keys, restart every instance, then run \
                 `roomlink admin rotate-key --resume`",
            )
            .into());
        };
        let ring = existing_ring(path)?.rotated();
        ring.replace(path)?;
        lines.push(format!(
            "new service key {} is current in {} (previous: {})",
            ring.current().id(),
            path.display(),
            ring.previous_ids().join(", ")
        ));
        lines.push(
            "running instances: send SIGHUP (or restart) so that they seal under it; until \
             then values they write are under the old key, and `--resume` re-seals them"
                .to_owned(),
        );
    }
    // Wired after the key file changed: the sealer holds the new ring.
    let services = crate::admin_services(settings, false).await?;
    let report = services.key_rotation.reseal_all().await?;
    lines.push(describe(&report));
    if forget_previous {
        if !report.complete() {
            return Err(Error::invalid(format!(
                "{}; not forgetting the previous keys: values changed while re-sealing, run \
                 `roomlink admin rotate-key --resume --forget-previous` again",
                lines.join("\n")
            ))
            .into());
        }
        match &source {
            KeySource::File(path) => {
                let ring = existing_ring(path)?;
                let forgotten = ring.previous_ids().join(", ");
                ring.without_previous().replace(path)?;
                lines.push(format!(
                    "previous keys removed from {}: {}",
                    path.display(),
                    if forgotten.is_empty() {
                        "none"
                    } else {
                        &forgotten
                    }
                ));
            }
            KeySource::Settings => lines.push(
                "nothing is sealed under a previous key: security.previous_service_keys may be \
                 removed"
                    .to_owned(),
            ),
        }
    }
    Ok(lines.join("\n"))
}

fn existing_ring(path: &Path) -> anyhow::Result<KeyRing> {
    if !path.exists() {
        return Err(Error::invalid(format!(
            "no service key file at {}: nothing to rotate (point to the service's key with \
             --config FILE or ROOMLINK__SECURITY__SERVICE_KEY_FILE)",
            path.display()
        ))
        .into());
    }
    Ok(KeyRing::load(path)?)
}

fn describe(r: &ResealReport) -> String {
    let mut text = format!(
        "re-sealed {} value(s) under {}; {} changed meanwhile",
        r.resealed, r.key_id, r.changed_meanwhile
    );
    if r.changed_meanwhile > 0 {
        text.push_str(" (run with --resume again once every instance has reloaded)");
    }
    if r.enterprise_sealed > 0 {
        text.push_str(&format!(
            "; {} sealed to enterprise public keys (not the service key's: left as they are)",
            r.enterprise_sealed
        ));
    }
    if r.unreadable > 0 {
        text.push_str(&format!(
            "; {} under a key no longer held (those endpoints need their password entered again)",
            r.unreadable
        ));
    }
    text
}

/// `admin backup FILE`: an online, consistent copy of the embedded SQLite database.
pub async fn backup(settings: &Settings, file: &Path) -> anyhow::Result<String> {
    let db = sqlite_only(settings, "backup")?;
    let info = roomlink_store::backup_sqlite(db, file.to_path_buf()).await?;
    let key = match key_source(settings) {
        Ok(KeySource::File(path)) => format!("the service key file {}", path.display()),
        _ => "security.service_key".to_owned(),
    };
    Ok(format!(
        "backed up to {} ({} bytes); keep {key} with it: sealed endpoint passwords and \
         listener secrets cannot be opened without it",
        info.file.display(),
        info.bytes
    ))
}

/// `admin restore FILE --yes`: replaces the embedded database with a backup (every instance
/// stopped), keeping the replaced one, then migrates it to this version's schema.
pub async fn restore(settings: &Settings, file: &Path, yes: bool) -> anyhow::Result<String> {
    let db = sqlite_only(settings, "restore")?;
    if !yes {
        return Err(Error::invalid(format!(
            "restore replaces {} with {}: stop every roomlink serving it, then run again with --yes",
            db.display(),
            file.display()
        ))
        .into());
    }
    let info = roomlink_store::restore_sqlite(file.to_path_buf(), db.clone()).await?;
    let applied = crate::commands::migrate(settings).await?;
    let mut text = format!("restored {} from {}", db.display(), file.display());
    if let Some(kept) = info.kept {
        text.push_str(&format!(
            "; the database it replaced is kept as {}",
            kept.display()
        ));
    }
    if !applied.is_empty() {
        text.push_str(&format!("; migrated: {}", applied.join(", ")));
    }
    Ok(text)
}

fn sqlite_only(settings: &Settings, command: &str) -> anyhow::Result<std::path::PathBuf> {
    settings.sqlite_path().ok_or_else(|| {
        Error::invalid(format!(
            "{command} is for the embedded SQLite database; for PostgreSQL use pg_dump and \
             pg_restore (docs/operations.md, \"Backups\")"
        ))
        .into()
    })
}

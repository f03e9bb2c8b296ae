//! `roomlink admin`: enterprise list/show/set-limit/delete and user list/disable/enable/
//! set-password/delete (create: `crate::commands`), their output, and the exit codes of every
//! command. The rules live in `roomlink_app::admin`.

use anyhow::Context;
use roomlink_app::Services;
use roomlink_app::admin::{EnterpriseInfo, Revoked, UserInfo};
use roomlink_domain::ErrorKind;
use roomlink_domain::secret::Secret;
use roomlink_store::StoreError;

use crate::settings::Settings;

/// Exit code: done.
pub const EXIT_OK: u8 = 0;
/// Exit code: refused as asked (a configuration setting refused, not found, invalid or taken
/// value, `--yes` missing, no SQLite database where one was expected). Running it again
/// unchanged fails again.
pub const EXIT_REFUSED: u8 = 1;
/// Exit code: the command line itself is wrong (clap's own code).
pub const EXIT_USAGE: u8 = 2;
/// Exit code: could not run (database unreachable or failing, a migration failing).
/// Running it again later may work.
pub const EXIT_UNAVAILABLE: u8 = 3;

/// The exit code for a failed command, from the first error in its chain that says.
pub fn exit_code(error: &anyhow::Error) -> u8 {
    for cause in error.chain() {
        if let Some(e) = cause.downcast_ref::<roomlink_domain::Error>() {
            return match e.kind() {
                ErrorKind::StorageUnavailable | ErrorKind::InternalError => EXIT_UNAVAILABLE,
                _ => EXIT_REFUSED,
            };
        }
        if let Some(e) = cause.downcast_ref::<StoreError>() {
            return match e {
                StoreError::NoSqliteDatabase { .. } | StoreError::SqliteFile(_) => EXIT_REFUSED,
                _ => EXIT_UNAVAILABLE,
            };
        }
    }
    EXIT_UNAVAILABLE
}

/// Opens the existing database only: never creates an SQLite file.
async fn existing(settings: &Settings) -> anyhow::Result<Services> {
    crate::admin_services(settings, false).await
}

/// Runs a command that may revoke tokens on the existing database, then tells the running
/// instances (`crate::announce`).
async fn revoking<T, F, Fut>(settings: &Settings, command: F) -> anyhow::Result<T>
where
    F: FnOnce(Services) -> Fut,
    Fut: std::future::Future<Output = roomlink_domain::Result<T>>,
{
    let wiring = crate::admin_wiring(settings, false).await?;
    let done = command(wiring.services).await?;
    if let Some(outbox) = &wiring.outbox {
        crate::announce::announce(settings, outbox).await;
    }
    Ok(done)
}

fn json<T: serde::Serialize>(value: &T) -> anyhow::Result<String> {
    serde_json::to_string_pretty(value).context("cannot write JSON")
}

fn enterprise_line(i: &EnterpriseInfo) -> String {
    format!(
        "{}\tid {}\tendpoints {}/{}\tlisteners {}\tusers {}\ttokens {}",
        i.enterprise.name,
        i.enterprise.id,
        i.usage.endpoints,
        i.enterprise.endpoint_limit,
        i.usage.listeners,
        i.usage.users,
        i.usage.tokens
    )
}

fn user_line(u: &UserInfo) -> String {
    let state = if u.disabled { "disabled" } else { "enabled" };
    format!("{}\t{}\t{}\t{state}", u.enterprise, u.username, u.role)
}

fn revoked(r: Revoked) -> String {
    format!("{} token(s) revoked", r.tokens)
}

/// `admin enterprise list [--json]`: one line per enterprise, or a JSON array.
pub async fn list_enterprises(settings: &Settings, as_json: bool) -> anyhow::Result<String> {
    let all = existing(settings).await?.admin.list_enterprises().await?;
    if as_json {
        return json(&all);
    }
    Ok(all
        .iter()
        .map(enterprise_line)
        .collect::<Vec<_>>()
        .join("\n"))
}

/// `admin enterprise show NAME [--json]`.
pub async fn show_enterprise(
    settings: &Settings,
    name: &str,
    as_json: bool,
) -> anyhow::Result<String> {
    let info = existing(settings)
        .await?
        .admin
        .show_enterprise(name)
        .await?;
    if as_json {
        return json(&info);
    }
    Ok(enterprise_line(&info))
}

/// `admin enterprise set-limit NAME N`.
pub async fn set_limit(settings: &Settings, name: &str, limit: u32) -> anyhow::Result<String> {
    let e = existing(settings)
        .await?
        .admin
        .set_endpoint_limit(name, limit)
        .await?;
    Ok(format!(
        "enterprise {} now has endpoint limit {}",
        e.name, e.endpoint_limit
    ))
}

/// `admin enterprise delete NAME [--yes]`.
pub async fn delete_enterprise(
    settings: &Settings,
    name: &str,
    yes: bool,
) -> anyhow::Result<String> {
    let gone = revoking(settings, |s| async move {
        s.admin.delete_enterprise(name, yes).await
    })
    .await?;
    let u = gone.usage;
    Ok(format!(
        "deleted enterprise {} with {} endpoint(s), {} listener(s), {} user(s), {} token(s)",
        gone.enterprise.name, u.endpoints, u.listeners, u.users, u.tokens
    ))
}

/// `admin user list [--enterprise NAME] [--json]`.
pub async fn list_users(
    settings: &Settings,
    enterprise: Option<&str>,
    as_json: bool,
) -> anyhow::Result<String> {
    let users = existing(settings)
        .await?
        .admin
        .list_users(enterprise)
        .await?;
    if as_json {
        return json(&users);
    }
    Ok(users.iter().map(user_line).collect::<Vec<_>>().join("\n"))
}

/// `admin user disable|enable --enterprise NAME --username U`.
pub async fn set_disabled(
    settings: &Settings,
    enterprise: &str,
    username: &str,
    disabled: bool,
) -> anyhow::Result<String> {
    let r = revoking(settings, |s| async move {
        s.admin
            .set_user_disabled(enterprise, username, disabled)
            .await
    })
    .await?;
    Ok(if disabled {
        format!("disabled user {username} of {enterprise}; {}", revoked(r))
    } else {
        format!("enabled user {username} of {enterprise}")
    })
}

/// `admin user set-password --enterprise NAME --username U --password-stdin`.
pub async fn set_password(
    settings: &Settings,
    enterprise: &str,
    username: &str,
    password: Secret,
) -> anyhow::Result<String> {
    let r = revoking(settings, |s| async move {
        s.admin
            .set_user_password(enterprise, username, password)
            .await
    })
    .await?;
    Ok(format!(
        "new password for user {username} of {enterprise}; {}",
        revoked(r)
    ))
}

/// `admin user delete --enterprise NAME --username U`.
pub async fn delete_user(
    settings: &Settings,
    enterprise: &str,
    username: &str,
) -> anyhow::Result<String> {
    let r = revoking(settings, |s| async move {
        s.admin.delete_user(enterprise, username).await
    })
    .await?;
    Ok(format!(
        "deleted user {username} of {enterprise}; {}",
        revoked(r)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_by_cause() {
        let refused = anyhow::Error::from(roomlink_domain::Error::invalid("x"));
        assert_eq!(exit_code(&refused), EXIT_REFUSED);
        let unavailable = anyhow::Error::from(roomlink_domain::Error::storage_unavailable("down"));
        assert_eq!(exit_code(&unavailable), EXIT_UNAVAILABLE);
        let missing = anyhow::Error::from(StoreError::NoSqliteDatabase { path: "/x".into() })
            .context("opening");
        assert_eq!(exit_code(&missing), EXIT_REFUSED);
        assert_eq!(exit_code(&anyhow::anyhow!("config")), EXIT_UNAVAILABLE);
        assert_eq!(EXIT_OK, 0);
        assert_eq!(EXIT_USAGE, 2);
    }
}

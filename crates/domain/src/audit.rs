//! The audit trail: who changed which record and who drove which room, per enterprise.
//!
//! An entry names its actor by username or token id and roles, its target by id, and its
//! outcome by catalog name; `detail` is composed here from counts and field names only. So no
//! entry can carry a password, a token or a listener secret, whatever the request held.
//!
//! A successful write is recorded by the store in the write's own transaction (the entry is
//! an argument of every audited store method), so the trail and the data never disagree. A
//! refused request and a control command (which writes nothing of its own) are recorded
//! after the fact with [`crate::ports::AuditStore::record_audit`].

use crate::access::RoleSet;
use crate::endpoint::page::ListPosition;
use crate::error::{Error, Result};
use crate::ids::EnterpriseId;
use serde::Serialize;

/// Token creation is authentication, not an [`Operation`](crate::access::Operation) a caller
/// is authorized for.
pub const CREATE_ACCESS_TOKEN: &str = "auth.createAccessToken";

/// The longest `targetId` or `actor` filter accepted (ids are 24 characters; usernames and
/// platform e-mail addresses are longer).
const MAX_FILTER_LEN: usize = 256;

/// How the actor proved who they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ActorKind {
    /// Basic credentials of a service user.
    ServiceUser,
    /// Basic credentials or a token of the companion platform.
    PlatformUser,
    /// An access token issued by roomlink (its id, not its value).
    Token,
    /// roomlink itself, acting on a schedule (auto-join); the id names the job.
    Scheduler,
}

impl ActorKind {
    pub const fn as_str(self) -> &'static str {
        match self {
            ActorKind::ServiceUser => "serviceUser",
            ActorKind::PlatformUser => "platformUser",
            ActorKind::Token => "token",
            ActorKind::Scheduler => "scheduler",
        }
    }

    /// The stored name back; `None` for a name this version does not know.
    pub fn parse(text: &str) -> Option<ActorKind> {
        [
            ActorKind::ServiceUser,
            ActorKind::PlatformUser,
            ActorKind::Token,
            ActorKind::Scheduler,
        ]
        .into_iter()
        .find(|k| k.as_str() == text)
    }
}

/// Who acted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Actor {
    pub kind: ActorKind,
    /// The username (service or platform user) or the token's id.
    pub id: String,
    /// For a token: the user who created it, when known.
    pub username: Option<String>,
    pub roles: RoleSet,
}

/// One audited action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    #[serde(skip)]
    pub enterprise_id: EnterpriseId,
    /// Milliseconds since the epoch.
    pub at: i64,
    pub actor: Actor,
    /// An [`Operation`](crate::access::Operation) name, or [`CREATE_ACCESS_TOKEN`].
    pub operation: String,
    /// The endpoint, listener or token acted on; `None` for the enterprise or a CSV upload.
    pub target_id: Option<String>,
    /// `ok`, or the catalog name of the error the request was answered with.
    pub outcome: String,
    /// Counts or changed field names; never a value a caller sent.
    pub detail: Option<String>,
}

/// The outcome of a successful action.
pub const OK: &str = "ok";

impl AuditEntry {
    pub fn target(mut self, target_id: &str) -> Self {
        self.target_id = Some(target_id.to_owned());
        self
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// The same action, answered with `error` instead.
    pub fn failed(mut self, error: &Error) -> Self {
        self.outcome = error.kind().name().to_owned();
        self
    }

    pub fn succeeded(&self) -> bool {
        self.outcome == OK
    }
}

#[cfg(any(test, feature = "test-support"))]
impl AuditEntry {
    /// For tests of the storage ports: service user `tester` did `operation` at `at`.
    pub fn sample(enterprise: &EnterpriseId, operation: &str, at: i64) -> AuditEntry {
        AuditEntry {
            enterprise_id: enterprise.clone(),
            at,
            actor: Actor {
                kind: ActorKind::ServiceUser,
                id: "tester".to_owned(),
                username: None,
                roles: RoleSet::read_write(),
            },
            operation: operation.to_owned(),
            target_id: None,
            outcome: OK.to_owned(),
            detail: None,
        }
    }
}

/// What names an enterprise: for [`audit_for`].
#[cfg(any(test, feature = "test-support"))]
pub trait NamesEnterprise {
    fn enterprise(&self) -> &EnterpriseId;
}

#[cfg(any(test, feature = "test-support"))]
mod names_enterprise {
    use super::NamesEnterprise;
    use crate::endpoint::Endpoint;
    use crate::enterprise::Enterprise;
    use crate::ids::EnterpriseId;
    use crate::listener::ListenerService;
    use crate::pairing::PairingCode;
    use crate::token::AccessToken;

    impl NamesEnterprise for EnterpriseId {
        fn enterprise(&self) -> &EnterpriseId {
            self
        }
    }
    impl NamesEnterprise for Enterprise {
        fn enterprise(&self) -> &EnterpriseId {
            &self.id
        }
    }
    impl NamesEnterprise for Endpoint {
        fn enterprise(&self) -> &EnterpriseId {
            self.enterprise_id()
        }
    }
    impl NamesEnterprise for AccessToken {
        fn enterprise(&self) -> &EnterpriseId {
            self.enterprise_id()
        }
    }
    impl NamesEnterprise for ListenerService {
        fn enterprise(&self) -> &EnterpriseId {
            &self.enterprise_id
        }
    }
    impl NamesEnterprise for PairingCode {
        fn enterprise(&self) -> &EnterpriseId {
            &self.enterprise_id
        }
    }
    impl<T: NamesEnterprise + ?Sized> NamesEnterprise for &T {
        fn enterprise(&self) -> &EnterpriseId {
            (**self).enterprise()
        }
    }
}

/// For tests of the storage ports: a sample entry in the enterprise `of` names.
#[cfg(any(test, feature = "test-support"))]
pub fn audit_for(of: impl NamesEnterprise) -> AuditEntry {
    AuditEntry::sample(of.enterprise(), "test", 0)
}

/// An entry as stored: with its place in the enterprise's trail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    pub position: ListPosition,
    pub entry: AuditEntry,
}

/// What `GET /api/auditlog` narrows the trail to; every field optional.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    pub target_id: Option<String>,
    /// A username or token id (an entry matches on its actor's id or username).
    pub actor: Option<String>,
    /// Inclusive bounds on `at`, in milliseconds.
    pub from: Option<i64>,
    pub to: Option<i64>,
}

impl AuditFilter {
    /// `Invalid` for bounds that cannot match anything sensible or over-long filters.
    pub fn checked(self) -> Result<AuditFilter> {
        for (name, value) in [("targetId", &self.target_id), ("actor", &self.actor)] {
            if let Some(value) = value
                && (value.is_empty() || value.chars().count() > MAX_FILTER_LEN)
            {
                return Err(Error::invalid(format!(
                    "{name}: must be 1 to {MAX_FILTER_LEN} characters"
                )));
            }
        }
        if let (Some(from), Some(to)) = (self.from, self.to)
            && from > to
        {
            return Err(Error::invalid("from: must not be after to"));
        }
        Ok(self)
    }

    /// Whether `entry` passes the filter (for adapters that filter in memory).
    pub fn matches(&self, entry: &AuditEntry) -> bool {
        self.target_id
            .as_ref()
            .is_none_or(|t| entry.target_id.as_ref() == Some(t))
            && self
                .actor
                .as_ref()
                .is_none_or(|a| entry.actor.id == *a || entry.actor.username.as_ref() == Some(a))
            && self.from.is_none_or(|from| entry.at >= from)
            && self.to.is_none_or(|to| entry.at <= to)
    }
}

/// One page of the trail, newest first, and where the next (older) page starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditPage {
    pub entries: Vec<AuditRecord>,
    pub next: Option<ListPosition>,
}

/// The most entries one page may hold (also the default).
pub const MAX_AUDIT_PAGE: usize = crate::endpoint::page::MAX_PAGE_SIZE;

/// How long entries are kept by default: 400 days, a year of incidents and their follow-up.
pub const DEFAULT_RETENTION_DAYS: u32 = 400;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::Operation;
    use crate::error::ErrorKind;

    fn entry(operation: Operation, target: &str, at: i64) -> AuditEntry {
        AuditEntry {
            enterprise_id: EnterpriseId::from_trusted("e".repeat(24)),
            at,
            actor: Actor {
                kind: ActorKind::ServiceUser,
                id: "ops".into(),
                username: None,
                roles: RoleSet::read_write(),
            },
            operation: operation.name().to_owned(),
            target_id: Some(target.to_owned()),
            outcome: OK.to_owned(),
            detail: None,
        }
    }

    #[test]
    fn a_failure_is_named_by_its_catalog_error() {
        let entry = entry(Operation::DeleteEndpoint, "abc", 7);
        assert!(entry.succeeded());
        let failed = entry.failed(&Error::new(ErrorKind::Forbidden, "no"));
        assert_eq!(failed.outcome, "Forbidden");
        assert!(!failed.succeeded());
    }

    #[test]
    fn filters_match_actor_by_id_or_username_and_time_inclusively() {
        let entry = entry(Operation::Join, "room", 100);
        let filter = |f: AuditFilter| f.matches(&entry);
        assert!(filter(AuditFilter::default()));
        assert!(filter(AuditFilter {
            actor: Some("ops".into()),
            from: Some(100),
            to: Some(100),
            ..AuditFilter::default()
        }));
        assert!(!filter(AuditFilter {
            target_id: Some("other".into()),
            ..AuditFilter::default()
        }));
        assert!(!filter(AuditFilter {
            from: Some(101),
            ..AuditFilter::default()
        }));
    }

    #[test]
    fn inverted_or_empty_filters_are_refused() {
        let inverted = AuditFilter {
            from: Some(2),
            to: Some(1),
            ..AuditFilter::default()
        };
        assert!(inverted.checked().is_err());
        let empty = AuditFilter {
            actor: Some(String::new()),
            ..AuditFilter::default()
        };
        assert!(empty.checked().is_err());
    }
}

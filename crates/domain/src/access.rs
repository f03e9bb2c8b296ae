//! Roles, operations, and who may call what.
//!
//! - ROLE_READONLY reads provisioning data and controls endpoints.
//! - ROLE_READWRITE also creates, edits and deletes provisioning data. Full tokens carry both
//!   roles, as the predecessor's did.
//! - ROLE_PAIRINGCODE (Zero Touch) may call only [`ZERO_TOUCH_SEQUENCE`], and only on its own
//!   pairing code, its own endpoint and its own token.

use crate::error::{Error, ErrorKind};
use crate::ids::{EndpointId, PairingCodeId, TokenId};
use serde::ser::{Serialize, SerializeSeq, Serializer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    ReadOnly,
    ReadWrite,
    PairingCode,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::ReadOnly, Role::ReadWrite, Role::PairingCode];

    pub const fn as_str(self) -> &'static str {
        match self {
            Role::ReadOnly => "ROLE_READONLY",
            Role::ReadWrite => "ROLE_READWRITE",
            Role::PairingCode => "ROLE_PAIRINGCODE",
        }
    }

    pub fn parse(text: &str) -> Result<Role, Error> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "role: '{}' is not one of ROLE_READONLY, ROLE_READWRITE, ROLE_PAIRINGCODE",
                    crate::enums::shorten(text)
                ))
            })
    }
}

/// The roles of a token or a caller: a small set, serialized as an array of names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RoleSet(u8);

impl RoleSet {
    const fn bit(role: Role) -> u8 {
        match role {
            Role::ReadOnly => 1,
            Role::ReadWrite => 2,
            Role::PairingCode => 4,
        }
    }

    /// Full rights: ROLE_READONLY and ROLE_READWRITE.
    pub const fn read_write() -> RoleSet {
        RoleSet(1 | 2)
    }
    pub const fn read_only() -> RoleSet {
        RoleSet(1)
    }
    pub const fn pairing_code() -> RoleSet {
        RoleSet(4)
    }

    /// The roles granted to a holder of `role`: READWRITE implies READONLY.
    pub const fn granted_by(role: Role) -> RoleSet {
        match role {
            Role::ReadWrite => RoleSet::read_write(),
            Role::ReadOnly => RoleSet::read_only(),
            Role::PairingCode => RoleSet::pairing_code(),
        }
    }

    pub fn from_roles(roles: impl IntoIterator<Item = Role>) -> RoleSet {
        RoleSet(roles.into_iter().fold(0, |acc, r| acc | Self::bit(r)))
    }

    pub const fn contains(self, role: Role) -> bool {
        self.0 & Self::bit(role) != 0
    }

    pub fn iter(self) -> impl Iterator<Item = Role> {
        Role::ALL.into_iter().filter(move |r| self.contains(*r))
    }

    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(Role::as_str).collect()
    }

    pub fn is_zero_touch(self) -> bool {
        self.contains(Role::PairingCode)
    }
}

impl Serialize for RoleSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(None)?;
        for role in self.iter() {
            seq.serialize_element(role.as_str())?;
        }
        seq.end()
    }
}

macro_rules! operations {
    ($($variant:ident => $name:literal,)*) => {
        /// Every operation a caller can invoke, named as in the spec where it names them.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Operation { $($variant),* }

        impl Operation {
            pub const ALL: &'static [Operation] = &[$(Operation::$variant),*];

            pub const fn name(self) -> &'static str {
                match self { $(Operation::$variant => $name),* }
            }
        }
    };
}

operations! {
    ListAccessTokens => "auth.listAccessTokens",
    GetAccessToken => "auth.getAccessToken",
    DeleteAccessToken => "auth.deleteAccessToken",
    ListEndpoints => "endpoints.list",
    GetEndpoint => "endpoints.get",
    InsertEndpoint => "endpoints.insert",
    UpdateEndpoint => "endpoints.update",
    PatchEndpoint => "endpoints.patch",
    DeleteEndpoint => "endpoints.delete",
    BulkPutEndpoints => "endpoints.bulkPut",
    ExportEndpoints => "endpoints.exportCsv",
    ListStatuses => "endpoints.listStatuses",
    GetStatus => "endpoints.status",
    Join => "endpoints.join",
    SendDtmf => "endpoints.sendDtmf",
    HangUp => "endpoints.hangUp",
    MuteMicrophone => "endpoints.muteMicrophone",
    UnmuteMicrophone => "endpoints.unmuteMicrophone",
    PairingCode => "endpoints.pairingCode",
    CurrentPairingCode => "endpoints.currentPairingCode",
    Paired => "endpoints.paired",
    GetEnterprise => "enterprises.self",
    UpdateEnterprise => "enterprises.update",
    ListListenerServices => "listenerservices.list",
    GetListenerService => "listenerservices.get",
    CreateListenerService => "listenerservices.create",
    UpdateListenerService => "listenerservices.update",
    DeleteListenerService => "listenerservices.delete",
    ListFailures => "failures.list",
    ListAuditLog => "auditlog.list",
    ListCalendarAccounts => "calendaraccounts.list",
    PutCalendarAccount => "calendaraccounts.put",
    DeleteCalendarAccount => "calendaraccounts.delete",
    ListMeetings => "endpoints.meetings",
    ReadUsage => "analytics.usage",
    ListCallSessions => "analytics.sessions",
    GetInventory => "inventory.get",
    ListInventory => "inventory.list",
    ReadRoomHealth => "health.rooms",
    ReadRoomHealthHistory => "health.roomHistory",
    ListWebhooks => "webhooks.list",
    GetWebhook => "webhooks.get",
    CreateWebhook => "webhooks.create",
    UpdateWebhook => "webhooks.update",
    DeleteWebhook => "webhooks.delete",
    PauseWebhook => "webhooks.pause",
    ResumeWebhook => "webhooks.resume",
    TestWebhook => "webhooks.test",
    ListWebhookDeliveries => "webhooks.deliveries",
    ListTemplates => "templates.list",
    GetTemplate => "templates.get",
    CreateTemplate => "templates.create",
    UpdateTemplate => "templates.update",
    DeleteTemplate => "templates.delete",
    ListTemplateSettings => "templates.settings",
    PlanTemplate => "templates.plan",
    ApplyTemplate => "templates.apply",
    ListTemplateRooms => "templates.rooms",
    AssignTemplate => "templates.assign",
    UnassignTemplate => "templates.unassign",
    CheckTemplate => "templates.check",
    ReapplyTemplate => "templates.reapply",
    ListJobs => "jobs.list",
    GetJob => "jobs.get",
    UndoJob => "jobs.undo",
    CancelJob => "jobs.cancel",
    LiveTicket => "live.ticket",
    LiveEvents => "live.events",
}

/// What an operation needs of a full (non-Zero-Touch) caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reading provisioning data or controlling endpoints: ROLE_READONLY suffices.
    Read,
    /// Creating, editing or deleting provisioning data: ROLE_READWRITE.
    Write,
}

impl Operation {
    pub const fn access(self) -> Access {
        use Operation::*;
        match self {
            InsertEndpoint
            | UpdateEndpoint
            | PatchEndpoint
            | DeleteEndpoint
            | BulkPutEndpoints
            | UpdateEnterprise
            | CreateListenerService
            | UpdateListenerService
            | DeleteListenerService
            | PutCalendarAccount
            | DeleteCalendarAccount
            // The trail names the enterprise's users and what they did: for its administrators.
            | ListAuditLog
            // A subscription's URL may carry a receiver's token, and its deliveries say what
            // happened across the fleet: for administrators, reading included.
            | ListWebhooks
            | GetWebhook
            | CreateWebhook
            | UpdateWebhook
            | DeleteWebhook
            | PauseWebhook
            | ResumeWebhook
            | TestWebhook
            | ListWebhookDeliveries
            // Templates are provisioning data: read as endpoints are, written by ROLE_READWRITE.
            | CreateTemplate
            | UpdateTemplate
            | DeleteTemplate
            // Writing settings on room systems changes how they are set up, as provisioning does.
            | ApplyTemplate
            | AssignTemplate
            | UnassignTemplate
            // A check records what it found and may tell webhooks: a write of observations.
            | CheckTemplate
            | ReapplyTemplate
            | UndoJob
            | CancelJob => Access::Write,
            // Deleting one's own token needs no more than holding it; deleting another
            // caller's token is checked separately (see `authorize`).
            ListAccessTokens | GetAccessToken | DeleteAccessToken | ListEndpoints | GetEndpoint
            | ExportEndpoints | ListStatuses | GetStatus | Join | SendDtmf | HangUp
            | MuteMicrophone | UnmuteMicrophone | PairingCode | CurrentPairingCode | Paired
            | GetEnterprise | ListListenerServices | GetListenerService | ListFailures
            | ListCalendarAccounts | ListMeetings | ReadUsage | ListCallSessions | GetInventory
            | ListInventory | ReadRoomHealth | ReadRoomHealthHistory | ListTemplates | GetTemplate
            | ListTemplateSettings | PlanTemplate | ListTemplateRooms | ListJobs | GetJob | LiveTicket | LiveEvents => {
                Access::Read
            }
        }
    }
}

/// What a Zero Touch token may call, in the suggested order of a pairing session:
/// read the pairing code (and its endpoint and capabilities), read the room's status, join,
/// send tones and mute or unmute while in the meeting, hang up, inspect the token, and delete
/// it to unpair.
pub const ZERO_TOUCH_SEQUENCE: [Operation; 10] = [
    Operation::PairingCode,
    Operation::GetStatus,
    Operation::Join,
    Operation::SendDtmf,
    Operation::MuteMicrophone,
    Operation::UnmuteMicrophone,
    Operation::HangUp,
    Operation::GetAccessToken,
    Operation::DeleteAccessToken,
    Operation::Paired,
];

/// The entity an operation acts on, for the Zero Touch and own-token checks.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// The caller's enterprise as a whole (lists, inserts).
    Enterprise,
    Endpoint(&'a EndpointId),
    PairingCode(&'a PairingCodeId),
    /// An access token, with whether it is the caller's own.
    Token {
        own: bool,
    },
    ListenerService,
}

/// The Zero Touch grant a pairing-code token carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZeroTouchScope {
    pub pairing_code_id: PairingCodeId,
    pub endpoint_id: EndpointId,
    pub token_id: TokenId,
}

/// Decides whether a caller with `roles` (and, for Zero Touch, `scope`) may run `op` on `target`.
pub fn authorize(
    roles: RoleSet,
    scope: Option<&ZeroTouchScope>,
    op: Operation,
    target: Target<'_>,
) -> Result<(), Error> {
    if roles.is_zero_touch() {
        let in_scope = match (scope, target) {
            (Some(s), Target::Endpoint(id)) => *id == s.endpoint_id,
            (Some(s), Target::PairingCode(id)) => *id == s.pairing_code_id,
            (Some(_), Target::Token { own }) => own,
            _ => false,
        };
        if ZERO_TOUCH_SEQUENCE.contains(&op) && in_scope {
            return Ok(());
        }
        return Err(forbidden(roles, op));
    }
    let allowed = match (op.access(), target) {
        // Another caller's token is provisioning data of the enterprise.
        (_, Target::Token { own: false }) if op == Operation::DeleteAccessToken => {
            roles.contains(Role::ReadWrite)
        }
        (Access::Read, _) => roles.contains(Role::ReadOnly) || roles.contains(Role::ReadWrite),
        (Access::Write, _) => roles.contains(Role::ReadWrite),
    };
    if allowed {
        Ok(())
    } else {
        Err(forbidden(roles, op))
    }
}

fn forbidden(roles: RoleSet, op: Operation) -> Error {
    Error::new(
        ErrorKind::Forbidden,
        format!("The caller's roles do not allow {}.", op.name()),
    )
    .with("operation", op.name())
    .with("roles", roles.names())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_write_may_do_everything() {
        for op in Operation::ALL.iter().copied() {
            assert!(
                authorize(RoleSet::read_write(), None, op, Target::Enterprise).is_ok(),
                "{op:?}"
            );
        }
        assert!(
            authorize(
                RoleSet::read_write(),
                None,
                Operation::DeleteAccessToken,
                Target::Token { own: false }
            )
            .is_ok()
        );
    }

    #[test]
    fn read_only_reads_and_controls_but_never_writes() {
        for op in Operation::ALL.iter().copied() {
            let r = authorize(RoleSet::read_only(), None, op, Target::Enterprise);
            assert_eq!(r.is_ok(), op.access() == Access::Read, "{op:?}");
            if let Err(e) = r {
                assert_eq!(e.kind(), ErrorKind::Forbidden);
                assert_eq!(e.details()["operation"], op.name());
            }
        }
        for op in [
            Operation::Join,
            Operation::SendDtmf,
            Operation::HangUp,
            Operation::MuteMicrophone,
            Operation::UnmuteMicrophone,
        ] {
            assert_eq!(op.access(), Access::Read, "read-only tokens may control");
        }
        assert!(
            authorize(
                RoleSet::read_only(),
                None,
                Operation::DeleteAccessToken,
                Target::Token { own: true }
            )
            .is_ok()
        );
        assert!(
            authorize(
                RoleSet::read_only(),
                None,
                Operation::DeleteAccessToken,
                Target::Token { own: false }
            )
            .is_err()
        );
    }

    #[test]
    fn zero_touch_is_limited_to_its_sequence_and_its_own_targets() {
        let endpoint = EndpointId::from_trusted("ep1".into());
        let other = EndpointId::from_trusted("ep2".into());
        let code = PairingCodeId::from_trusted("pc1".into());
        let other_code = PairingCodeId::from_trusted("pc2".into());
        let scope = ZeroTouchScope {
            pairing_code_id: code.clone(),
            endpoint_id: endpoint.clone(),
            token_id: TokenId::from_trusted("t1".into()),
        };
        let zt = RoleSet::pairing_code();
        let s = Some(&scope);
        for op in ZERO_TOUCH_SEQUENCE {
            let target = match op {
                Operation::PairingCode => Target::PairingCode(&code),
                Operation::GetAccessToken | Operation::DeleteAccessToken => {
                    Target::Token { own: true }
                }
                _ => Target::Endpoint(&endpoint),
            };
            assert!(authorize(zt, s, op, target).is_ok(), "{op:?}");
        }
        assert!(authorize(zt, s, Operation::Join, Target::Endpoint(&other)).is_err());
        assert!(
            authorize(
                zt,
                s,
                Operation::PairingCode,
                Target::PairingCode(&other_code)
            )
            .is_err()
        );
        assert!(
            authorize(
                zt,
                s,
                Operation::DeleteAccessToken,
                Target::Token { own: false }
            )
            .is_err()
        );
        for op in Operation::ALL
            .iter()
            .copied()
            .filter(|op| !ZERO_TOUCH_SEQUENCE.contains(op))
        {
            for target in [
                Target::Enterprise,
                Target::Endpoint(&endpoint),
                Target::ListenerService,
            ] {
                let e = authorize(zt, s, op, target).unwrap_err();
                assert_eq!(e.kind(), ErrorKind::Forbidden, "{op:?}");
            }
        }
        assert!(
            authorize(zt, None, Operation::Join, Target::Endpoint(&endpoint)).is_err(),
            "no scope, no access"
        );
    }

    #[test]
    fn role_sets_serialize_as_names() {
        assert_eq!(
            serde_json::to_value(RoleSet::read_write()).unwrap(),
            serde_json::json!(["ROLE_READONLY", "ROLE_READWRITE"])
        );
        assert_eq!(Role::parse("role_readonly").unwrap(), Role::ReadOnly);
        assert!(Role::parse("ROLE_ADMIN").is_err());
    }
}

//! Who may call an operation, as the domain decides it. Each role is put on its own to the
//! domain's `access::authorize`, so the document states the rule itself, never a copy of it.

use roomlink_domain::access::{self, Role, RoleSet, Target, ZeroTouchScope, authorize};
use roomlink_domain::ids::{EndpointId, PairingCodeId, TokenId};

/// The roles that, each alone, let a caller run `op` on some target. For ROLE_PAIRINGCODE that
/// can only be the endpoint, pairing code or token of its own pairing, which is what the
/// sample scope below offers it.
pub(super) fn roles_allowed(op: access::Operation) -> Vec<Role> {
    let scope = ZeroTouchScope {
        pairing_code_id: PairingCodeId::from_trusted("own-pairing-code".to_owned()),
        endpoint_id: EndpointId::from_trusted("own-endpoint".to_owned()),
        token_id: TokenId::from_trusted("own-token".to_owned()),
    };
    let targets = [
        Target::Enterprise,
        Target::Endpoint(&scope.endpoint_id),
        Target::PairingCode(&scope.pairing_code_id),
        Target::Token { own: true },
        Target::ListenerService,
    ];
    Role::ALL
        .into_iter()
        .filter(|role| {
            let roles = RoleSet::from_roles([*role]);
            targets
                .iter()
                .any(|target| authorize(roles, Some(&scope), op, *target).is_ok())
        })
        .collect()
}

/// The sentence the operation's description ends with.
pub(super) fn roles_sentence(op: access::Operation, roles: &[Role]) -> String {
    let names: Vec<String> = roles
        .iter()
        .map(|role| match role {
            Role::PairingCode => format!(
                "{} (a Zero Touch token, for its own endpoint, pairing code and token only)",
                role.as_str()
            ),
            Role::ReadOnly | Role::ReadWrite => role.as_str().to_owned(),
        })
        .collect();
    let allowed = match names.as_slice() {
        [] => "none".to_owned(),
        [one] => one.clone(),
        [first @ .., last] => format!("{} or {last}", first.join(", ")),
    };
    format!(
        "**Roles:** {allowed}. Other callers get `Forbidden`, whose details name the \
         operation `{}`.",
        op.name()
    )
}

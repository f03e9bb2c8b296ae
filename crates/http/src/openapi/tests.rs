//! What the document takes from the route table and the domain.

use super::params::query;
use super::roles::roles_allowed;
use crate::routes::TABLE;
use crate::table::Param;
use roomlink_domain::access::{self, Access, Role, ZERO_TOUCH_SEQUENCE};

#[test]
fn every_query_parameter_of_the_table_is_described() {
    for description in TABLE.iter().filter_map(|op| op.description()) {
        for param in description.params {
            if let Param::Query(name) = param {
                assert!(query(name).is_some(), "{}: {name}", description.id);
            }
        }
    }
}

/// The roles put to `authorize` one by one come out as the domain's rules say: ROLE_READWRITE
/// everywhere, ROLE_READONLY where reading suffices, ROLE_PAIRINGCODE along the Zero Touch
/// sequence.
#[test]
fn roles_follow_the_domain_rules() {
    for op in access::Operation::ALL.iter().copied() {
        let mut expected = Vec::new();
        if op.access() == Access::Read {
            expected.push(Role::ReadOnly);
        }
        expected.push(Role::ReadWrite);
        if ZERO_TOUCH_SEQUENCE.contains(&op) {
            expected.push(Role::PairingCode);
        }
        assert_eq!(roles_allowed(op), expected, "{}", op.name());
    }
}

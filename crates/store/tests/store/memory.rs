//! The contract against the in-memory reference adapter: proves the checks themselves.

crate::contract::contract_tests!(crate::support::memory);

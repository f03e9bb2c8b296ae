//! Ports: what the domain needs from the outside world, as traits the adapters implement.
//!
//! Storage ports are scoped by enterprise: every method that reads or writes tenant data takes
//! the enterprise (or an entity that names it), and an implementation must never return or
//! change another enterprise's rows. The only lookups without an enterprise are those whose
//! key itself identifies one: a token hash, a username, a pairing code.
//!
//! Each method documents the catalog errors an implementation must return; anything else a
//! driver reports becomes `Error::internal` (or `Error::storage_unavailable` when the database
//! cannot be reached). All storage adapters pass one contract suite (`roomlink-store`'s tests).
//!
//! With the `mock` feature every port has a mockall mock (`MockEndpointStore`, ...).
//!
//! By family: `storage` (every store, and [`Store`], all of them at once), `process` (clock, ids,
//! password hashing, sealing), `platform`, `calendar`, `listener`, `webhook`, `template`. Each is
//! re-exported here, so a port is named `ports::EndpointStore` whichever file holds it.

mod calendar;
mod listener;
mod platform;
mod process;
mod storage;
mod template;
mod webhook;

pub use calendar::*;
pub use listener::*;
pub use platform::*;
pub use process::*;
pub use storage::*;
pub use template::*;
pub use webhook::*;

/// Every storage port at once: what a storage adapter provides.
pub trait Store:
    EnterpriseStore
    + UserStore
    + TokenStore
    + EndpointStore
    + ListenerStore
    + LinkStore
    + PollLease
    + PairingStore
    + StatusStore
    + FailureStore
    + AuthFailureLedger
    + AuditStore
    + UsageStore
    + InventoryStore
    + SealedSecretStore
    + CalendarAccountStore
    + AutoJoinStore
    + WebhookStore
    + TemplateStore
    + TemplateJobStore
    + TemplateAssignmentStore
    + StoreHealth
{
}

impl<T> Store for T where
    T: EnterpriseStore
        + UserStore
        + TokenStore
        + EndpointStore
        + ListenerStore
        + LinkStore
        + PollLease
        + PairingStore
        + StatusStore
        + FailureStore
        + AuthFailureLedger
        + AuditStore
        + UsageStore
        + InventoryStore
        + SealedSecretStore
        + CalendarAccountStore
        + AutoJoinStore
        + WebhookStore
        + TemplateStore
        + TemplateJobStore
        + TemplateAssignmentStore
        + StoreHealth
{
}

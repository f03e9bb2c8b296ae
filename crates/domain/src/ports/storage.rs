//! Storage ports: what a database adapter provides, scoped by enterprise ([`Store`] is all of them).

use crate::audit::{AuditEntry, AuditFilter, AuditPage};
use crate::endpoint::Endpoint;
use crate::endpoint::page::{EndpointPage, ListPosition};
use crate::enterprise::{Enterprise, EnterpriseUsage, ServiceUser};
use crate::error::Result;
use crate::ids::{EndpointId, EnterpriseId, ListenerServiceId, PairingCodeId, TokenId};
use crate::inventory::{EndpointInventory, InventoryFilter, InventoryPage, InventoryRead};
use crate::listener::{LinkPresence, ListenerCheck, ListenerService};
use crate::pairing::{PairedStatus, PairingCode};
use crate::rules::csv::{CsvContext, CsvReport, CsvWrite};
use crate::secret::SealedSecret;
use crate::status::{EndpointStatus, Failure};
use crate::throttle::{Allowance, FailureKey, Spend};
use crate::token::{AccessToken, TokenHash};
use crate::usage::{CallSession, UsageQuery, UsageTotals};
use async_trait::async_trait;
#[cfg(feature = "mock")]
use mockall::automock;

/// A change applied to a stored endpoint inside the store's transaction.
pub type EndpointChange = Box<dyn FnOnce(Endpoint) -> Result<Endpoint> + Send>;

/// Turns the CSV context read inside the upload's transaction into the rows to write
/// ([`crate::rules::csv::CsvUpload::apply`]).
pub type CsvApply = Box<dyn FnOnce(&CsvContext) -> Result<CsvWrite> + Send>;

#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait EnterpriseStore: Send + Sync {
    /// Creates an enterprise. `Invalid` if its name is taken.
    async fn create_enterprise(&self, enterprise: &Enterprise) -> Result<()>;
    async fn enterprise(&self, id: &EnterpriseId) -> Result<Option<Enterprise>>;
    async fn enterprise_by_name(&self, name: &str) -> Result<Option<Enterprise>>;
    /// The ids of every enterprise: for work that visits each tenant in turn (status polling).
    async fn enterprise_ids(&self) -> Result<Vec<EnterpriseId>>;
    /// Sets or removes the enterprise's public key, recording `audit` in the same transaction.
    /// `false` if the enterprise does not exist (and nothing is recorded).
    async fn set_public_key(
        &self,
        id: &EnterpriseId,
        public_key: Option<String>,
        audit: &AuditEntry,
    ) -> Result<bool>;
    /// Every enterprise, ordered by name (operator listings).
    async fn list_enterprises(&self) -> Result<Vec<Enterprise>>;
    /// How many endpoints, listeners, service users and stored tokens the enterprise has
    /// (zeros for an unknown enterprise).
    async fn enterprise_usage(&self, id: &EnterpriseId) -> Result<EnterpriseUsage>;
    /// Sets the endpoint limit. `false` if the enterprise does not exist.
    async fn set_endpoint_limit(&self, id: &EnterpriseId, limit: u32) -> Result<bool>;
    /// Deletes the enterprise and, in the same transaction, everything it owns: endpoints
    /// (with statuses, pairing codes), listeners, tokens, paired statuses, service users and
    /// failures. The deleted tokens' hashes (for revocation), or `None` if it does not exist.
    async fn delete_enterprise(&self, id: &EnterpriseId) -> Result<Option<Vec<TokenHash>>>;
}

#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait UserStore: Send + Sync {
    /// Creates a service user. `Invalid` if the username is taken in any enterprise.
    async fn create_user(&self, user: &ServiceUser) -> Result<()>;
    /// The user with this username, in whichever enterprise (Basic auth names none).
    async fn user_by_username(&self, username: &str) -> Result<Option<ServiceUser>>;
    /// The enterprise's service users, ordered by username.
    async fn list_users(&self, enterprise: &EnterpriseId) -> Result<Vec<ServiceUser>>;
    /// Disables or enables the enterprise's user. `false` if it has no such user.
    async fn set_user_disabled(
        &self,
        enterprise: &EnterpriseId,
        username: &str,
        disabled: bool,
    ) -> Result<bool>;
    /// Replaces the user's password hash. `false` if the enterprise has no such user.
    async fn set_user_password(
        &self,
        enterprise: &EnterpriseId,
        username: &str,
        password_hash: &str,
    ) -> Result<bool>;
    /// Deletes the enterprise's user (its tokens are not touched: see
    /// [`TokenStore::delete_user_tokens`]). `false` if it has no such user.
    async fn delete_user(&self, enterprise: &EnterpriseId, username: &str) -> Result<bool>;
}

#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait TokenStore: Send + Sync {
    /// Stores the token and records `audit` in the same transaction.
    async fn insert_token(&self, token: &AccessToken, audit: &AuditEntry) -> Result<()>;
    /// The token with this hash if it is live at `now` (the token names its enterprise).
    async fn token_by_hash(&self, hash: &TokenHash, now: i64) -> Result<Option<AccessToken>>;
    /// The enterprise's token with this id if it is live at `now`.
    async fn token_by_id(
        &self,
        enterprise: &EnterpriseId,
        id: &TokenId,
        now: i64,
    ) -> Result<Option<AccessToken>>;
    /// The enterprise's tokens live at `now`, oldest first.
    async fn list_tokens(&self, enterprise: &EnterpriseId, now: i64) -> Result<Vec<AccessToken>>;
    /// Deletes the token and, in the same transaction, its paired statuses, recording
    /// `audit`. `false` if none (and nothing is recorded).
    async fn delete_token(
        &self,
        enterprise: &EnterpriseId,
        id: &TokenId,
        audit: &AuditEntry,
    ) -> Result<bool>;
    /// Deletes every token expired at `now`; returns how many.
    async fn purge_expired_tokens(&self, now: i64) -> Result<u64>;
    /// Deletes the enterprise's tokens a service user created (creator `username`, no
    /// platform id: tokens of platform users are never touched), and in the same transaction
    /// their paired statuses; returns the deleted tokens' hashes (for revocation).
    async fn delete_user_tokens(
        &self,
        enterprise: &EnterpriseId,
        username: &str,
    ) -> Result<Vec<TokenHash>>;
}

/// An endpoint with what commanding it needs ([`EndpointStore::command_context`]).
#[derive(Debug, Clone)]
pub struct CommandContext {
    pub endpoint: Endpoint,
    pub listener: Option<ListenerService>,
    pub enterprise_public_key: Option<String>,
}

#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait EndpointStore: Send + Sync {
    /// A number that changes in the same transaction as every write to the enterprise's
    /// endpoints (insert, update, delete, CSV upload) and at no other time; `None` if there
    /// is no such enterprise. One primary-key read: it tells a cache whether the list it holds
    /// is still the stored one (docs/adr/0003-endpoint-list-cache.md).
    async fn endpoint_list_version(&self, enterprise: &EnterpriseId) -> Result<Option<u64>>;
    /// What a control command needs, in one read: the endpoint, the listener service its
    /// `listenerServiceId` names (`None` if unset or not one of the enterprise's), and the
    /// enterprise's public key. `None` if the enterprise has no such endpoint.
    async fn command_context(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
    ) -> Result<Option<CommandContext>>;
    /// The enterprise's endpoints in creation order.
    async fn list_endpoints(&self, enterprise: &EnterpriseId) -> Result<Vec<Endpoint>>;
    /// At most `limit` endpoints after `after` (from the start when `None`), in creation
    /// order. Keyset paging: an endpoint deleted between two pages makes none skipped.
    async fn endpoint_page(
        &self,
        enterprise: &EnterpriseId,
        after: Option<ListPosition>,
        limit: usize,
    ) -> Result<EndpointPage>;
    async fn endpoint(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
    ) -> Result<Option<Endpoint>>;
    /// Inserts into the endpoint's enterprise, atomically with the limit check:
    /// `LimitReached` at the enterprise's endpoint limit
    /// ([`crate::rules::limit::EndpointLimit::admit`], also under concurrent inserts),
    /// `DuplicateCalendarId` if another endpoint of the enterprise has its calendarId.
    /// Records `audit` in the same transaction.
    async fn insert_endpoint(&self, endpoint: &Endpoint, audit: &AuditEntry) -> Result<()>;
    /// Reads the endpoint, applies `change` and writes the result, in one transaction.
    /// `NotFound` if the enterprise has no such endpoint; `DuplicateCalendarId`; any error
    /// from `change` is returned and nothing is written. Records `audit` with the write.
    async fn update_endpoint(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
        change: EndpointChange,
        audit: &AuditEntry,
    ) -> Result<Endpoint>;
    /// Deletes the endpoint with its status, pairing code and paired statuses, recording
    /// `audit`. `false` if none (and nothing is recorded).
    async fn delete_endpoint(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
        audit: &AuditEntry,
    ) -> Result<bool>;
    /// One CSV upload, in one transaction: locks the enterprise, reads the [`CsvContext`] for
    /// the named `ids` (existing endpoints, locked against other writers until commit;
    /// calendarIds in use; listener ids; remaining capacity, `EndpointLimit::room` of the
    /// stored count), calls `apply` and writes its inserts and updates in batched statements.
    /// `apply` decides everything (unknown ids, the limit, calendarIds); the store holds its
    /// write to the context ([`CsvWrite::check_within`]: `NotFound`, then `LimitReached`) and
    /// writes it, keeping calendarIds unique by constraint (`DuplicateCalendarId`).
    /// If `apply` or any write fails, nothing is written. Records `audit`, with the report's
    /// counts as its detail, in the same transaction, and answers the report once committed.
    async fn bulk_put(
        &self,
        enterprise: &EnterpriseId,
        ids: Vec<EndpointId>,
        apply: CsvApply,
        audit: &AuditEntry,
    ) -> Result<CsvReport>;
}

#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait ListenerStore: Send + Sync {
    /// Stores the listener and records `audit` in the same transaction.
    async fn insert_listener(&self, listener: &ListenerService, audit: &AuditEntry) -> Result<()>;
    async fn list_listeners(&self, enterprise: &EnterpriseId) -> Result<Vec<ListenerService>>;
    async fn listener(
        &self,
        enterprise: &EnterpriseId,
        id: &ListenerServiceId,
    ) -> Result<Option<ListenerService>>;
    /// A listener by id alone: only for a listener authenticating itself (its secret is
    /// checked next), never for a caller of the API.
    async fn listener_by_id(&self, id: &ListenerServiceId) -> Result<Option<ListenerService>>;
    /// Replaces the listener of `listener.enterprise_id`, recording `audit`. `false` if it
    /// does not exist (and nothing is recorded).
    async fn update_listener(&self, listener: &ListenerService, audit: &AuditEntry)
    -> Result<bool>;
    /// `Invalid` while endpoints still name it; `false` if it does not exist. Records `audit`
    /// with the deletion.
    async fn delete_listener(
        &self,
        enterprise: &EnterpriseId,
        id: &ListenerServiceId,
        audit: &AuditEntry,
    ) -> Result<bool>;
    /// Records a check of an inbound listener (one row per listener). A failed check keeps
    /// the last answer's time and version; a listener deleted meanwhile records nothing.
    async fn record_check(&self, check: &ListenerCheck) -> Result<()>;
    /// The last checks of the enterprise's listeners.
    async fn checks(&self, enterprise: &EnterpriseId) -> Result<Vec<ListenerCheck>>;
}

/// Where outbound listeners' connections are held, for every instance to see.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait LinkStore: Send + Sync {
    /// Records a connection (replacing the listener's previous one, wherever it was held).
    async fn link_up(&self, presence: &LinkPresence) -> Result<()>;
    /// Forgets a connection, unless a newer one (another instance or start) replaced it.
    async fn link_down(
        &self,
        listener: &ListenerServiceId,
        instance: &str,
        since_ms: i64,
    ) -> Result<()>;
    /// The holder's heartbeat: every connection `instance` holds was seen at `now_ms`.
    async fn links_seen(&self, instance: &str, now_ms: i64) -> Result<()>;
    /// The recorded connections of the enterprise's listeners (live or not).
    async fn links(&self, enterprise: &EnterpriseId) -> Result<Vec<LinkPresence>>;
}

/// Which instance polls the inbound listeners' statuses.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait PollLease: Send + Sync {
    /// Whether this instance holds (or now takes) the lease. It stays held while the process
    /// lives; a crashed holder's lease frees itself (a PostgreSQL session advisory lock).
    async fn hold_poll_lease(&self) -> Result<bool>;
}

#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait PairingStore: Send + Sync {
    /// The endpoint's current pairing code.
    async fn current_pairing_code(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
    ) -> Result<Option<PairingCode>>;
    async fn pairing_code(
        &self,
        enterprise: &EnterpriseId,
        id: &PairingCodeId,
    ) -> Result<Option<PairingCode>>;
    /// The current pairing code with this code (codes are unique across enterprises).
    async fn pairing_code_by_code(&self, code: &str) -> Result<Option<PairingCode>>;
    /// Makes `code` its endpoint's current pairing code, replacing any earlier one, and
    /// records `audit` in the same transaction.
    async fn save_pairing_code(&self, code: &PairingCode, audit: &AuditEntry) -> Result<()>;
    /// Applies one use of a Zero Touch token at `now`, atomically: creates the token's
    /// PairedStatus, or moves its heartbeat (see `PairedStatus::on_use`).
    async fn touch_paired(&self, token: &AccessToken, now: i64) -> Result<Option<PairedStatus>>;
    /// The endpoint's PairedStatus records live at `now`.
    async fn paired(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
        now: i64,
    ) -> Result<Vec<PairedStatus>>;
    /// Deletes PairedStatus records expired at `now`; returns how many.
    async fn purge_expired_paired(&self, now: i64) -> Result<u64>;
}

#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait StatusStore: Send + Sync {
    /// Upserts the last observed status of each endpoint (of `enterprise` only), and opens or
    /// closes their call sessions ([`UsageStore`]) in the same transaction.
    async fn save_statuses(
        &self,
        enterprise: &EnterpriseId,
        statuses: &[EndpointStatus],
    ) -> Result<()>;
    /// What one control command observed, with the command's audit entry, in one transaction
    /// that need not wait for the disk flush (a status is re-observed at the next poll; see
    /// docs/decisions.md). `NotFound` if the endpoint is gone, and nothing is written. A join
    /// ([`crate::usage::JoinSource::of_command`]) is remembered with the status, for the call
    /// session it starts; the session follows the status as in `save_statuses`.
    async fn save_command_status(
        &self,
        enterprise: &EnterpriseId,
        status: &EndpointStatus,
        audit: &AuditEntry,
    ) -> Result<()>;
    async fn statuses(&self, enterprise: &EnterpriseId) -> Result<Vec<EndpointStatus>>;
    async fn status(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
    ) -> Result<Option<EndpointStatus>>;
}

/// Call sessions ([`crate::usage`]). The status writes of [`StatusStore`] open and close them,
/// in their own transactions, following [`crate::usage::SESSION_RULE`].
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait UsageStore: Send + Sync {
    /// The enterprise's usage figures for `query`, a session still going counted up to `now`,
    /// ordered by key (as [`crate::usage::sum_sessions`] computes them).
    async fn usage(
        &self,
        enterprise: &EnterpriseId,
        query: &UsageQuery,
        now: i64,
    ) -> Result<Vec<UsageTotals>>;
    /// At most `limit` of the enterprise's sessions that overlap `[from, to)` (one still going
    /// overlaps everything after its start), oldest first.
    async fn call_sessions(
        &self,
        enterprise: &EnterpriseId,
        from: i64,
        to: i64,
        limit: usize,
    ) -> Result<Vec<CallSession>>;
    /// Deletes every session that ended before `cutoff`; returns how many.
    async fn purge_call_sessions(&self, cutoff: i64) -> Result<u64>;
}

/// Room inventories ([`crate::inventory`]), one record per endpoint; a deleted endpoint's
/// record goes with it.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait InventoryStore: Send + Sync {
    /// Records one read attempt at `at`: a read replaces the inventory and clears the failure;
    /// a failure keeps the last inventory and records why. Nothing is written when the
    /// endpoint is not one of `enterprise`'s (it may have been deleted meanwhile).
    async fn save_inventory(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
        at: i64,
        read: &InventoryRead,
    ) -> Result<()>;
    async fn inventory(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &EndpointId,
    ) -> Result<Option<EndpointInventory>>;
    /// At most `limit` of the enterprise's records passing `filter` (on the last good read;
    /// `listener` on the endpoint's listener now), in endpoint id order after `after`.
    async fn inventory_page(
        &self,
        enterprise: &EnterpriseId,
        filter: &InventoryFilter,
        after: Option<EndpointId>,
        limit: usize,
    ) -> Result<InventoryPage>;
    /// The records of those of `endpoints` that have one, in no particular order.
    async fn inventories(
        &self,
        enterprise: &EnterpriseId,
        endpoints: &[EndpointId],
    ) -> Result<Vec<EndpointInventory>>;
    /// When each of `endpoints` that has a record was last tried.
    async fn inventory_attempts(
        &self,
        enterprise: &EnterpriseId,
        endpoints: &[EndpointId],
    ) -> Result<Vec<(EndpointId, i64)>>;
}

#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait FailureStore: Send + Sync {
    async fn record_failure(&self, failure: &Failure) -> Result<()>;
    /// The enterprise's most recent failures, newest first, at most `limit`.
    async fn failures(&self, enterprise: &EnterpriseId, limit: usize) -> Result<Vec<Failure>>;
    /// Deletes every failure dated before `cutoff`; returns how many.
    async fn purge_failures(&self, cutoff: i64) -> Result<u64>;
}

/// The failed-authentication allowances that a cluster's instances share (see
/// [`crate::throttle`]): one `tat` per key.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait AuthFailureLedger: Send + Sync {
    /// The key's `tat`, if it has one.
    async fn failure_tat(&self, key: &FailureKey) -> Result<Option<i64>>;
    /// Spends one failure of `key` at `now` as [`Allowance::spend`] does, atomically: failures
    /// spent at once by several instances each count.
    async fn spend_failure(
        &self,
        key: &FailureKey,
        now: i64,
        allowance: Allowance,
    ) -> Result<Spend>;
    /// Forgets the keys whose `tat` is not after `now` (a full bucket is the same as none);
    /// returns how many.
    async fn purge_auth_failures(&self, now: i64) -> Result<u64>;
}

/// The audit trail (see [`crate::audit`]). Successful writes are recorded by the write methods
/// themselves; this records what has no transaction of its own.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait AuditStore: Send + Sync {
    /// Appends an entry on its own (a refused request, a control command).
    async fn record_audit(&self, entry: &AuditEntry) -> Result<()>;
    /// At most `limit` of the enterprise's entries passing `filter`, newest first, older than
    /// `before` (from the newest when `None`).
    async fn audit_page(
        &self,
        enterprise: &EnterpriseId,
        filter: &AuditFilter,
        before: Option<ListPosition>,
        limit: usize,
    ) -> Result<AuditPage>;
    /// Deletes every entry dated before `cutoff`; returns how many.
    async fn purge_audit(&self, cutoff: i64) -> Result<u64>;
}

#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait StoreHealth: Send + Sync {
    /// Succeeds when the database answers; `StorageUnavailable` otherwise.
    async fn ping(&self) -> Result<()>;
    /// The connection pool's occupancy, for metrics; `None` where there is no pool.
    fn pool_status(&self) -> Option<PoolStatus> {
        None
    }
}

/// A snapshot of a connection pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolStatus {
    /// Connections the pool may open.
    pub max_size: usize,
    /// Connections open now.
    pub size: usize,
    /// Open connections not in use.
    pub available: usize,
    /// Requests waiting for a connection.
    pub waiting: usize,
}

/// Where a sealed value is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SealedKind {
    EndpointPassword,
    ListenerSecret,
    /// Held by `{enterpriseId}/{calendarType}` (an account has no id of its own).
    CalendarPassword,
    /// A webhook subscription's signing secret.
    WebhookSecret,
}

/// One stored sealed value: the id of the endpoint, listener or calendar account holding it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredSecret {
    pub id: String,
    pub sealed: SealedSecret,
}

/// The sealed values as stored, for re-sealing them under a new service key.
#[async_trait]
pub trait SealedSecretStore: Send + Sync {
    /// Up to `limit` values of `kind` whose key id is not `key_id`, ordered by holder id,
    /// after the holder `after`.
    async fn sealed_not_under(
        &self,
        kind: SealedKind,
        key_id: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<StoredSecret>>;
    /// Replaces the value held by `id` when it is still `old`; `false` when it changed
    /// meanwhile (the newer value stands) or the holder is gone.
    async fn replace_sealed(
        &self,
        kind: SealedKind,
        id: &str,
        old: &SealedSecret,
        new: &SealedSecret,
    ) -> Result<bool>;
}

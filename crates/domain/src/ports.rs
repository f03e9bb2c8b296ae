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

use crate::audit::{AuditEntry, AuditFilter, AuditPage};
use crate::calendar::CalendarEvent;
use crate::calendar::account::CalendarAccountRecord;
use crate::calendar::auto_join::{JoinOutcome, Occurrence};
use crate::calendar::push::CalendarPush;
use crate::endpoint::Endpoint;
use crate::endpoint::page::{EndpointPage, ListPosition};
use crate::enterprise::{Enterprise, EnterpriseUsage, ServiceUser};
use crate::enums::{CalendarType, EndpointCapability};
use crate::error::Result;
use crate::ids::{EndpointId, EnterpriseId, ListenerServiceId, PairingCodeId, TokenId};
use crate::listener::{LinkPresence, ListenerCheck, ListenerRoute, ListenerService};
use crate::pairing::{PairedStatus, PairingCode};
use crate::rules::csv::{CsvContext, CsvReport};
use crate::rules::dtmf::Dtmf;
use crate::rules::join::JoinRequest;
use crate::secret::{SealedSecret, Secret};
use crate::status::{EndpointStatus, Failure};
use crate::token::{AccessToken, TokenHash};
use async_trait::async_trait;

#[cfg(feature = "mock")]
use mockall::automock;

/// A change applied to a stored endpoint inside the store's transaction.
pub type EndpointChange = Box<dyn FnOnce(Endpoint) -> Result<Endpoint> + Send>;

/// Turns the CSV context read inside the upload's transaction into the rows to write.
pub type CsvApply = Box<dyn FnOnce(CsvContext) -> Result<CsvWrite> + Send>;

/// The writes of one CSV upload, and the report of what they do (handed back once written).
#[derive(Debug, Default)]
pub struct CsvWrite {
    pub inserts: Vec<Endpoint>,
    pub updates: Vec<Endpoint>,
    pub report: CsvReport,
}

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
    /// One CSV upload, in one transaction: reads the [`CsvContext`] for the named `ids`
    /// (existing endpoints, calendarIds in use, listener ids, remaining capacity under the
    /// limit, all consistent with the writes), calls `apply`, and writes its inserts and
    /// updates in batched statements; answers the write's report once committed. If `apply`
    /// or any write fails, nothing is written. `NotFound` for an update of an unknown id,
    /// then `LimitReached` ([`crate::rules::limit::EndpointLimit::admit`]), then
    /// `DuplicateCalendarId`. Records `audit`, with the report's counts as its detail, in the
    /// same transaction.
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
    /// Upserts the last observed status of each endpoint (of `enterprise` only).
    async fn save_statuses(
        &self,
        enterprise: &EnterpriseId,
        statuses: &[EndpointStatus],
    ) -> Result<()>;
    /// What one control command observed, with the command's audit entry, in one transaction
    /// that need not wait for the disk flush (a status is re-observed at the next poll; see
    /// docs/decisions.md). `NotFound` if the endpoint is gone, and nothing is written.
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

#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait FailureStore: Send + Sync {
    async fn record_failure(&self, failure: &Failure) -> Result<()>;
    /// The enterprise's most recent failures, newest first, at most `limit`.
    async fn failures(&self, enterprise: &EnterpriseId, limit: usize) -> Result<Vec<Failure>>;
    /// Deletes every failure dated before `cutoff`; returns how many.
    async fn purge_failures(&self, cutoff: i64) -> Result<u64>;
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
    + AuditStore
    + SealedSecretStore
    + CalendarAccountStore
    + AutoJoinStore
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
        + AuditStore
        + SealedSecretStore
        + CalendarAccountStore
        + AutoJoinStore
        + StoreHealth
{
}

/// Wall-clock time in milliseconds since the Unix epoch. Everything time-dependent (token
/// expiry, pairing heartbeats, status timestamps) reads it here, so tests can fix it.
#[cfg_attr(feature = "mock", automock)]
pub trait Clock: Send + Sync {
    fn now_ms(&self) -> i64;
}

/// Fresh identifiers and secrets from a CSPRNG.
#[cfg_attr(feature = "mock", automock)]
pub trait IdGenerator: Send + Sync {
    /// A new entity id: 24 lower-case hex digits.
    fn entity_id(&self) -> String;
    /// A new access token: 32 characters of `[0-9a-v]` (160 bits).
    fn access_token(&self) -> Secret;
    /// A new pairing code (see `docs/decisions.md` for its alphabet and length).
    fn pairing_code(&self) -> String;
    /// A new listener secret.
    fn listener_secret(&self) -> Secret;
}

/// Hashes and verifies service-user passwords. Implementations are CPU-heavy by design and
/// must run off the async reactor.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait PasswordHasher: Send + Sync {
    /// `false` for a wrong password or a hash of an unknown format.
    async fn verify(&self, password: Secret, hash: String) -> Result<bool>;
    async fn hash(&self, password: Secret) -> Result<String>;
}

/// Seals endpoint passwords and listener secrets for storage.
#[cfg_attr(feature = "mock", automock)]
pub trait SecretSealer: Send + Sync {
    /// Seals `plaintext`: to the enterprise's public key when it has one (then only its
    /// listener can open it), otherwise with the service's own key.
    #[allow(clippy::needless_lifetimes)] // mockall needs the lifetime named
    fn seal<'a>(
        &self,
        plaintext: &Secret,
        enterprise_public_key: Option<&'a str>,
    ) -> Result<SealedSecret>;
    /// Opens a value sealed with the service key; `None` if it was sealed to an enterprise key.
    /// `EncryptionUpdated` if the key that sealed it is no longer available.
    fn open(&self, sealed: &SealedSecret) -> Result<Option<Secret>>;
    /// The key id `seal` would use now. A stored value with another key id is stale.
    #[allow(clippy::needless_lifetimes)] // mockall needs the lifetime named
    fn current_key_id<'a>(&self, enterprise_public_key: Option<&'a str>) -> Result<String>;
    /// Whether `sealed` can be used now: sealed to the enterprise's current public key when it
    /// has one, otherwise under a service key this instance holds (the current one, or a
    /// previous one while a key rotation is re-sealing).
    #[allow(clippy::needless_lifetimes)] // mockall needs the lifetime named
    fn readable<'a>(
        &self,
        sealed: &SealedSecret,
        enterprise_public_key: Option<&'a str>,
    ) -> Result<bool>;
}

/// Who a companion-platform user is, as the platform says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformUser {
    pub platform_id: i64,
    /// The platform username, which is also the e-mail address.
    pub username: String,
    pub enterprise_name: String,
    pub enterprise_admin: bool,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    /// Whether Zero Touch pairing is enabled for the user.
    pub zero_touch: bool,
}

/// The companion meeting platform's identity service.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait PlatformIdentity: Send + Sync {
    /// The user if the platform accepts this username and password; `None` if it refuses them.
    async fn verify_password(
        &self,
        username: &str,
        password: &Secret,
    ) -> Result<Option<PlatformUser>>;
    /// The user a platform access token belongs to; `None` if the token is unknown or expired.
    async fn introspect(&self, token: &Secret) -> Result<Option<PlatformUser>>;
}

/// Where an enterprise's room calendars of one calendar type are read, and as whom.
#[derive(Debug, Clone)]
pub struct CalendarAccount {
    pub calendar_type: CalendarType,
    /// CalDAV: the URL under which each room's calendar collection is `{calendarId}/`.
    /// Microsoft Graph and Google: the API's root (an override, for tests and sovereign clouds).
    pub base_url: String,
    /// CalDAV: the Basic-auth user. Microsoft Graph: the application (client) id. Google: the
    /// service account's email.
    pub username: Option<String>,
    /// Where OAuth access tokens are asked for (Microsoft Graph and Google); unused by CalDAV.
    pub token_url: Option<String>,
    /// CalDAV: the password. Microsoft Graph: the client secret. Google: the service account's
    /// private key (PKCS#8 PEM). Opened only to be sent to, or sign for, the calendar system.
    pub secret: Option<Secret>,
}

/// Calendar accounts, one per enterprise and calendar type.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait CalendarAccountStore: Send + Sync {
    /// The enterprise's accounts, in calendar-type order.
    async fn calendar_accounts(
        &self,
        enterprise: &EnterpriseId,
    ) -> Result<Vec<CalendarAccountRecord>>;
    async fn calendar_account(
        &self,
        enterprise: &EnterpriseId,
        calendar_type: CalendarType,
    ) -> Result<Option<CalendarAccountRecord>>;
    /// Inserts or replaces the account of its enterprise and type, with its audit entry,
    /// atomically.
    async fn put_calendar_account(
        &self,
        account: &CalendarAccountRecord,
        audit: &AuditEntry,
    ) -> Result<()>;
    /// `false` (and no audit entry) if there was none.
    async fn delete_calendar_account(
        &self,
        enterprise: &EnterpriseId,
        calendar_type: CalendarType,
        audit: &AuditEntry,
    ) -> Result<bool>;
}

/// Claims on auto-joins: each occurrence of a meeting is joined by one instance, once.
///
/// A claim is a row keyed by the endpoint and the occurrence. An instance claims it before it
/// sends the join, holding it until `lease_until_ms`, and settles it with the outcome after.
/// A claim whose holder died unsettled can be taken once its lease has lapsed; a settled one
/// never again. See docs/calendars.md, "Auto-join".
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait AutoJoinStore: Send + Sync {
    /// Whether `holder` now holds the claim: `true` when there was none, or an unsettled one
    /// whose lease ended before `now_ms` (then taken over); `false` otherwise. Atomic: of
    /// several instances claiming at once, exactly one gets `true`.
    async fn claim_auto_join(&self, claim: &AutoJoinClaim, now_ms: i64) -> Result<bool>;
    /// Records how the claimed join ended; the claim is then never taken again.
    async fn settle_auto_join(
        &self,
        endpoint: &EndpointId,
        occurrence: &Occurrence,
        outcome: JoinOutcome,
        now_ms: i64,
    ) -> Result<()>;
    /// Deletes claims on occurrences that started before `before_ms`; returns how many.
    async fn purge_auto_joins(&self, before_ms: i64) -> Result<u64>;
}

/// An instance's claim on joining one occurrence of a meeting in one room.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutoJoinClaim {
    pub enterprise_id: EnterpriseId,
    pub endpoint_id: EndpointId,
    pub occurrence: Occurrence,
    /// The claiming instance (for operators reading the table).
    pub holder: String,
    pub lease_until_ms: i64,
}

/// A calendar system's events, read on behalf of one enterprise.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait CalendarReader: Send + Sync {
    /// The room's events that overlap `[from_ms, to_ms)`, recurring ones expanded into their
    /// occurrences, in start order. `CalendarServerException` (with this calendarId) when the
    /// calendar system cannot be reached, refuses the account or answers something unreadable.
    async fn events(
        &self,
        account: &CalendarAccount,
        calendar_id: &str,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<CalendarEvent>>;

    /// [`events`](Self::events), unless the calendar is unchanged since `since` (a mark an
    /// earlier answer of this method gave for the same calendar): then `Unchanged`, at the cost
    /// of one small request. A system without change marks reads in full and gives no mark.
    async fn events_since(
        &self,
        account: &CalendarAccount,
        calendar_id: &str,
        from_ms: i64,
        to_ms: i64,
        since: Option<String>,
    ) -> Result<CalendarRead> {
        let _ = since;
        let events = self.events(account, calendar_id, from_ms, to_ms).await?;
        Ok(CalendarRead::Events { events, mark: None })
    }
}

/// What [`CalendarReader::events_since`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CalendarRead {
    /// The calendar has not changed since the mark given.
    Unchanged,
    /// Not changed either, and `mark` is to be kept instead of the one given: the same state
    /// under a newer token (Microsoft Graph hands out a new delta link with every round).
    Confirmed { mark: String },
    /// The window's events, and the calendar's change mark as it was before they were read
    /// (so a change made during the read shows at the next one), when the system has marks.
    Events {
        events: Vec<CalendarEvent>,
        mark: Option<String>,
    },
}

impl CalendarRead {
    /// The events of a read asked without a mark: only `Events` can answer one, anything
    /// else is the calendar system's fault (`CalendarServerException` naming the calendar).
    pub fn into_events(self, calendar_id: &str) -> Result<Vec<CalendarEvent>> {
        match self {
            CalendarRead::Events { events, .. } => Ok(events),
            CalendarRead::Unchanged | CalendarRead::Confirmed { .. } => {
                Err(crate::error::Error::calendar_server(
                    calendar_id,
                    "the calendar system answered unchanged to a read without a mark",
                ))
            }
        }
    }
}

/// A command for a room system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Join(JoinRequest),
    HangUp,
    SendDtmf(Dtmf),
    MuteMicrophone,
    UnmuteMicrophone,
    /// The room's meetings, for it to show (calendar push; sent by the scheduler only).
    PushCalendar(CalendarPush),
}

impl Command {
    /// The command's name in errors (`commandName`) and in the listener protocol.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Join(_) => "join",
            Command::HangUp => "hangup",
            Command::SendDtmf(_) => "senddtmf",
            Command::MuteMicrophone => "mutemicrophone",
            Command::UnmuteMicrophone => "unmutemicrophone",
            Command::PushCalendar(_) => "pushcalendar",
        }
    }
}

/// How the listener gets the endpoint's password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointCredential {
    None,
    /// Opened by roomlink (sealed with the service key), sent over the authenticated channel.
    Plain(Secret),
    /// Sealed to the enterprise's public key; only the listener can open it.
    SealedForListener(SealedSecret),
}

/// Where a command goes: the listener (with its opened secret) and the endpoint.
#[derive(Debug, Clone)]
pub struct CommandTarget {
    pub listener_id: ListenerServiceId,
    pub route: ListenerRoute,
    pub listener_secret: Secret,
    pub endpoint: Endpoint,
    pub credential: EndpointCredential,
}

/// A listener to ask something of its own, not of a room (its `/v1/info`).
pub struct ListenerAddress {
    pub listener_id: ListenerServiceId,
    pub route: ListenerRoute,
    pub listener_secret: Secret,
}

/// What a listener observed of a room system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObservedState {
    pub call_active: bool,
    pub reserved: bool,
    pub dialing: bool,
    pub microphone_muted: bool,
    pub last_dial_timestamp_millis: Option<i64>,
}

/// Sends commands to listener services. Failures are the catalog's listener and remote-system
/// errors (see `docs/listener-protocol.md`).
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait ListenerTransport: Send + Sync {
    /// Sends one command; returns the room system's state after it.
    async fn send(&self, target: &CommandTarget, command: &Command) -> Result<ObservedState>;
    /// The capabilities the listener reports (its `/v1/info`) for the endpoints it serves.
    async fn capabilities(&self, target: &CommandTarget) -> Result<Vec<EndpointCapability>>;
    /// Asks one listener for the state of many of its endpoints in one request.
    async fn poll(
        &self,
        targets: &[CommandTarget],
    ) -> Result<Vec<(EndpointId, Result<ObservedState>)>>;
    /// Asks a listener what it is (`GET /v1/info`, never answered from a cache): its version.
    async fn check(&self, listener: &ListenerAddress) -> Result<String>;
    /// The events of a room calendar that the target's listener reads itself (`readcalendar`,
    /// listener 3.2.0; EXCHANGE), overlapping `[from_ms, to_ms)`, in start order.
    /// `CalendarServerException` (with this calendarId) when the listener cannot read it;
    /// the listener errors of the other commands otherwise (`ForwardsCompatibility` for an
    /// older listener). The target's credential is not used.
    async fn read_calendar(
        &self,
        target: &CommandTarget,
        calendar_type: CalendarType,
        calendar_id: &str,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<CalendarEvent>> {
        let _ = (target, calendar_type, from_ms, to_ms);
        Err(crate::error::Error::calendar_server(
            calendar_id,
            "this listener transport reads no calendars",
        ))
    }
}

//! roomlink's application layer: the use cases, written against the domain's ports.
//!
//! Plain structs over the ports, one per area. Each method takes the caller's
//! [`auth::Principal`] and enforces the role rules of `roomlink_domain::access` before touching
//! anything. What is not a rule lives here rather than in the domain: the list and token caches,
//! request coalescing ([`version_reads`]), the background rounds (auto-join, calendar push,
//! housekeeping), the calendar mirror and cluster coherence. Like the domain it does no I/O of
//! its own and needs no runtime (`cargo xtask boundaries` checks it).

pub mod admin;
pub mod audit;
pub mod auth;
pub mod auth_failures;
pub mod auto_join;
pub mod calendar_mirror;
pub mod calendar_push;
pub mod calendar_rooms;
pub mod calendars;
pub mod control;
pub mod csv_preview;
pub mod drift_checks;
pub mod endpoint_lists;
pub mod endpoints;
pub mod health;
pub mod housekeeping;
pub mod inventory;
pub mod keys;
pub mod listener_checks;
pub mod listeners;
pub mod live;
pub mod pairing;
pub mod revocation;
pub mod rounds;
pub mod snapshots;
pub mod status_writes;
pub mod template_drift;
pub mod template_jobs;
pub mod template_plans;
pub mod templates;
pub mod tokens;
pub mod usage;
pub mod version_reads;
pub mod webhooks;

use roomlink_domain::calendar::meeting::MeetingRules;
use roomlink_domain::cluster::{ClusterEvent, EventBus, EventSink, ListenerLinks};
use roomlink_domain::ports::{
    CalendarReader, Clock, IdGenerator, ListenerTransport, PasswordHasher, PlatformIdentity,
    SecretSealer, Store, TicketSigner, WebhookSender,
};
use std::sync::Arc;

/// The adapters a process provides.
#[derive(Clone)]
pub struct Ports {
    pub store: Arc<dyn Store>,
    pub hasher: Arc<dyn PasswordHasher>,
    pub sealer: Arc<dyn SecretSealer>,
    pub platform: Arc<dyn PlatformIdentity>,
    pub transport: Arc<dyn ListenerTransport>,
    /// Outbound listeners' connections (held here or on another instance).
    pub links: Arc<dyn ListenerLinks>,
    /// Tells every instance what changed ([`roomlink_domain::cluster::LocalBus`] for one alone).
    pub events: Arc<dyn EventBus>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGenerator>,
    /// Room calendars, by the account's calendar type.
    pub calendars: Arc<dyn CalendarReader>,
    /// Sends webhook deliveries.
    pub webhooks: Arc<dyn WebhookSender>,
    /// Signs the tickets that open live-update streams.
    pub tickets: Arc<dyn TicketSigner>,
}

/// Every use case, wired once from [`Ports`]. Adapters reach the ports only through these.
#[derive(Clone)]
pub struct Services {
    pub auth: Arc<auth::Authenticator>,
    pub tokens: Arc<tokens::TokenService>,
    pub endpoints: Arc<endpoints::EndpointService>,
    pub listeners: Arc<listeners::ListenerAdmin>,
    pub control: Arc<control::ControlService>,
    pub pairing: Arc<pairing::PairingService>,
    pub admin: Arc<admin::Admin>,
    pub audit_log: Arc<audit::AuditLog>,
    pub usage: Arc<usage::UsageService>,
    pub inventory: Arc<inventory::InventoryService>,
    pub health: Arc<health::HealthService>,
    pub housekeeping: Arc<housekeeping::Housekeeping>,
    pub key_rotation: Arc<keys::KeyRotation>,
    pub calendars: Arc<calendars::CalendarService>,
    pub auto_join: Arc<auto_join::AutoJoiner>,
    pub calendar_push: Arc<calendar_push::CalendarPusher>,
    pub webhooks: Arc<webhooks::WebhookService>,
    pub templates: Arc<templates::TemplateService>,
    pub template_plans: Arc<template_plans::TemplatePlans>,
    pub template_jobs: Arc<template_jobs::TemplateJobs>,
    pub template_drift: Arc<template_drift::TemplateDrift>,
    pub webhook_deliveries: Arc<webhooks::WebhookDeliveries>,
    pub health_watch: Arc<webhooks::HealthWatch>,
    pub live_tickets: Arc<live::LiveTickets>,
    /// Failed authentications counted for the whole cluster; `None` for an instance alone.
    pub auth_failures: Option<Arc<auth_failures::AuthFailures>>,
    revocation: Arc<revocation::Revocation>,
    snapshots: Arc<snapshots::StatusSnapshots>,
}

/// Tunable rules (from configuration).
#[derive(Debug, Clone, Default)]
pub struct Policies {
    pub pairing: roomlink_domain::pairing::PairingPolicy,
    /// How long audit entries are kept.
    pub audit_retention: housekeeping::AuditRetention,
    /// How long finished template jobs are kept.
    pub job_retention: housekeeping::JobRetention,
    /// How long call sessions are kept after they ended.
    pub usage_retention: roomlink_domain::usage::UsageRetention,
    /// Bytes of serialized endpoint lists kept in memory.
    pub endpoint_list_cache_bytes: ListCacheBudget,
    /// Which links and numbers in calendar events are meetings, and whose.
    pub meeting_rules: MeetingRules,
    /// The hosts calendar accounts may name.
    pub calendar_hosts: roomlink_domain::calendar::account::AllowedHosts,
    /// When rooms with auto-join on dial their meetings.
    pub auto_join: roomlink_domain::calendar::auto_join::AutoJoinTiming,
    /// How old a room calendar's copy may be when rounds (auto-join) use it.
    pub calendar_poll: CalendarPollInterval,
    /// How long a looked-up token is kept (`security.token_cache_ms`).
    pub token_cache: revocation::TokenCacheLifetime,
    /// How often room inventories are read, and how many per listener and poll round.
    pub inventory_refresh: inventory::InventoryRefresh,
    /// When a room's observations count as too old for it to be healthy.
    pub health: roomlink_domain::health::HealthPolicy,
    /// How webhook deliveries are claimed and timed.
    pub webhook_delivery: webhooks::DeliveryPolicy,
    /// The hosts webhook subscriptions may name.
    pub webhook_hosts: roomlink_domain::calendar::account::AllowedHosts,
    /// How template jobs are claimed and paced.
    pub template_jobs: template_jobs::JobPolicy,
    /// How often rooms assigned a template are checked for drift, and how many per round.
    pub drift_refresh: drift_checks::DriftRefresh,
    /// Set in a cluster: failed authentications count in the shared database.
    pub shared_allowances: Option<auth_failures::SharedAllowances>,
}

/// How old a room calendar's copy may be when rounds use it before its calendar system is
/// asked again: the poll interval of every room calendar in use.
#[derive(Debug, Clone, Copy)]
pub struct CalendarPollInterval(pub i64);

impl Default for CalendarPollInterval {
    fn default() -> Self {
        CalendarPollInterval(60_000)
    }
}

/// Bytes of serialized endpoint lists kept in memory (0: none).
#[derive(Debug, Clone, Copy)]
pub struct ListCacheBudget(pub usize);

impl Default for ListCacheBudget {
    fn default() -> Self {
        ListCacheBudget(endpoint_lists::DEFAULT_LIST_CACHE_BYTES)
    }
}

impl Services {
    pub fn new(ports: Ports, policies: Policies) -> Services {
        let store = &ports.store;
        let auditor = Arc::new(audit::Auditor {
            store: store.clone(),
            clock: ports.clock.clone(),
        });
        let pairing = Arc::new(pairing::PairingService {
            endpoints: store.clone(),
            listeners: store.clone(),
            pairing: store.clone(),
            transport: ports.transport.clone(),
            sealer: ports.sealer.clone(),
            ids: ports.ids.clone(),
            clock: ports.clock.clone(),
            policy: policies.pairing,
        });
        let cache = Arc::new(revocation::TokenCache::new(policies.token_cache));
        let revocation = Arc::new(revocation::Revocation::new(
            cache.clone(),
            ports.events.clone(),
        ));
        let snapshots = Arc::new(snapshots::StatusSnapshots::new(ports.events.clone()));
        let changes = Arc::new(live::FleetChanges::new(ports.events.clone()));
        // Endpoint and status writes go through this, which drops status snapshots as needed.
        let status_writes = Arc::new(status_writes::StatusWrites {
            endpoints: store.clone(),
            statuses: store.clone(),
            snapshots: snapshots.clone(),
        });
        let auth = Arc::new(auth::Authenticator {
            tokens: store.clone(),
            users: store.clone(),
            enterprises: store.clone(),
            hasher: ports.hasher.clone(),
            platform: ports.platform.clone(),
            clock: ports.clock.clone(),
            cache: cache.clone(),
        });
        let drift_checks = Arc::new(drift_checks::DriftChecks {
            templates: store.clone(),
            assignments: store.clone(),
            transport: ports.transport.clone(),
            clock: ports.clock.clone(),
            refresh: policies.drift_refresh,
            changes: changes.clone(),
        });
        let control = Arc::new(control::ControlService {
            endpoints: store.clone(),
            listeners: store.clone(),
            enterprises: store.clone(),
            statuses: status_writes.clone(),
            failures: store.clone(),
            pairing: store.clone(),
            transport: ports.transport.clone(),
            links: ports.links.clone(),
            poll_lease: store.clone(),
            sealer: ports.sealer.clone(),
            clock: ports.clock.clone(),
            ids: ports.ids.clone(),
            snapshots: snapshots.clone(),
            audit: auditor.clone(),
            inventory: Arc::new(inventory::InventoryReads {
                store: store.clone(),
                transport: ports.transport.clone(),
                clock: ports.clock.clone(),
                refresh: policies.inventory_refresh,
                changes: changes.clone(),
            }),
            drift: drift_checks.clone(),
        });
        let calendars = Arc::new(calendars::CalendarService {
            accounts: store.clone(),
            endpoints: store.clone(),
            reader: ports.calendars.clone(),
            transport: ports.transport.clone(),
            sealer: ports.sealer.clone(),
            clock: ports.clock.clone(),
            audit: auditor.clone(),
            rules: policies.meeting_rules.clone(),
            hosts: policies.calendar_hosts.clone(),
            mirror: Default::default(),
        });
        let auto_join = Arc::new(auto_join::AutoJoiner {
            enterprises: store.clone(),
            endpoints: store.clone(),
            claims: store.clone(),
            failures: store.clone(),
            webhooks: store.clone(),
            poll_lease: store.clone(),
            calendars: calendars.clone(),
            control: control.clone(),
            clock: ports.clock.clone(),
            ids: ports.ids.clone(),
            holder: ports.ids.entity_id(),
            timing: policies.auto_join,
            calendar_max_age_ms: policies.calendar_poll.0,
            rounds: Default::default(),
        });
        let calendar_push = Arc::new(calendar_push::CalendarPusher {
            enterprises: store.clone(),
            endpoints: store.clone(),
            failures: store.clone(),
            poll_lease: store.clone(),
            calendars: calendars.clone(),
            control: control.clone(),
            clock: ports.clock.clone(),
            ids: ports.ids.clone(),
            pushed: Default::default(),
            calendar_max_age_ms: policies.calendar_poll.0,
            rounds: Default::default(),
        });
        let listener_admin = Arc::new(listeners::ListenerAdmin {
            listeners: store.clone(),
            links: store.clone(),
            sealer: ports.sealer.clone(),
            ids: ports.ids.clone(),
            clock: ports.clock.clone(),
            events: ports.events.clone(),
            audit: auditor.clone(),
        });
        let health = Arc::new(health::HealthService {
            endpoints: store.clone(),
            statuses: store.clone(),
            inventories: store.clone(),
            listeners: listener_admin.clone(),
            enterprises: store.clone(),
            clock: ports.clock.clone(),
            policy: policies.health,
            history: store.clone(),
            fleet: Default::default(),
        });
        let template_plans = Arc::new(template_plans::TemplatePlans {
            templates: store.clone(),
            endpoints: store.clone(),
            listeners: store.clone(),
            control: control.clone(),
        });
        let template_jobs = Arc::new(template_jobs::TemplateJobs::new(
            store.clone(),
            store.clone(),
            store.clone(),
            template_plans.clone(),
            control.clone(),
            ports.clock.clone(),
            ports.ids.clone(),
            auditor.clone(),
            changes.clone(),
            policies.template_jobs,
        ));
        Services {
            template_drift: Arc::new(template_drift::TemplateDrift {
                templates: store.clone(),
                assignments: store.clone(),
                plans: template_plans.clone(),
                jobs: template_jobs.clone(),
                control: control.clone(),
                checks: drift_checks,
                clock: ports.clock.clone(),
                audit: auditor.clone(),
            }),
            template_jobs,
            template_plans,
            templates: Arc::new(templates::TemplateService {
                store: store.clone(),
                ids: ports.ids.clone(),
                clock: ports.clock.clone(),
                audit: auditor.clone(),
            }),
            webhooks: Arc::new(webhooks::WebhookService {
                store: store.clone(),
                sender: ports.webhooks.clone(),
                sealer: ports.sealer.clone(),
                ids: ports.ids.clone(),
                clock: ports.clock.clone(),
                audit: auditor.clone(),
                hosts: policies.webhook_hosts.clone(),
            }),
            webhook_deliveries: Arc::new(webhooks::WebhookDeliveries {
                store: store.clone(),
                sender: ports.webhooks.clone(),
                sealer: ports.sealer.clone(),
                clock: ports.clock.clone(),
                owner: ports.ids.entity_id(),
                policy: policies.webhook_delivery,
                counts: Default::default(),
            }),
            health_watch: Arc::new(webhooks::HealthWatch {
                health: health.clone(),
                store: store.clone(),
                enterprises: store.clone(),
                poll_lease: store.clone(),
                clock: ports.clock.clone(),
                changes,
            }),
            live_tickets: Arc::new(live::LiveTickets {
                signer: ports.tickets.clone(),
                tokens: store.clone(),
                clock: ports.clock.clone(),
            }),
            health,
            tokens: Arc::new(tokens::TokenService {
                auth: auth.clone(),
                tokens: store.clone(),
                pairing: pairing.clone(),
                platform: ports.platform.clone(),
                ids: ports.ids.clone(),
                clock: ports.clock.clone(),
                revocation: revocation.clone(),
                audit: auditor.clone(),
            }),
            endpoints: Arc::new(endpoints::EndpointService {
                endpoints: status_writes.clone(),
                listeners: store.clone(),
                enterprises: store.clone(),
                sealer: ports.sealer.clone(),
                ids: ports.ids.clone(),
                audit: auditor.clone(),
                lists: Arc::new(endpoint_lists::EndpointLists::with_budget(
                    policies.endpoint_list_cache_bytes.0,
                )),
                versions: Default::default(),
            }),
            listeners: listener_admin.clone(),
            control,
            pairing,
            admin: Arc::new(admin::Admin {
                enterprises: store.clone(),
                users: store.clone(),
                tokens: store.clone(),
                hasher: ports.hasher.clone(),
                sealer: ports.sealer.clone(),
                revocation: revocation.clone(),
                ids: ports.ids.clone(),
                audit: auditor.clone(),
            }),
            calendars,
            auto_join,
            calendar_push,
            audit_log: Arc::new(audit::AuditLog {
                store: store.clone(),
            }),
            usage: Arc::new(usage::UsageService {
                store: store.clone(),
                clock: ports.clock.clone(),
            }),
            inventory: Arc::new(inventory::InventoryService {
                store: store.clone(),
                endpoints: store.clone(),
            }),
            key_rotation: Arc::new(keys::KeyRotation {
                secrets: store.clone(),
                sealer: ports.sealer.clone(),
            }),
            housekeeping: Arc::new(housekeeping::Housekeeping {
                tokens: store.clone(),
                pairing: store.clone(),
                failures: store.clone(),
                auth_failures: store.clone(),
                audit: store.clone(),
                auto_joins: store.clone(),
                usage: store.clone(),
                webhooks: store.clone(),
                template_jobs: store.clone(),
                health: store.clone(),
                clock: ports.clock.clone(),
                audit_retention: policies.audit_retention,
                usage_retention: policies.usage_retention,
                job_retention: policies.job_retention,
            }),
            auth_failures: policies.shared_allowances.clone().map(|shared| {
                Arc::new(auth_failures::AuthFailures {
                    ledger: store.clone(),
                    clock: ports.clock.clone(),
                    shared,
                })
            }),
            auth,
            revocation,
            snapshots,
        }
    }
}

/// Events from other instances (and this one's own, which change nothing twice).
impl EventSink for Services {
    fn apply(&self, event: &ClusterEvent) {
        match event {
            ClusterEvent::TokenDeleted { hash } => self.revocation.forget_here(hash),
            ClusterEvent::StatusesChanged { enterprise } => self.snapshots.drop_local(enterprise),
            // Connections are the links adapter's; the domain caches nothing of listeners.
            ClusterEvent::ListenerChanged { .. } | ClusterEvent::LinkTaken { .. } => {}
            // For browsers' streams (the HTTP adapter's sink): nothing cached here depends on it.
            ClusterEvent::FleetChanged { .. } => {}
            // For the rate limits (the HTTP adapter's sink).
            ClusterEvent::RequestsAdmitted { .. } => {}
        }
    }
}

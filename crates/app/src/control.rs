//! Remote control: commands through listener services, the status cache, recorded failures.
//!
//! A command goes to the endpoint's listener service with the endpoint's credential: opened by
//! roomlink when it was sealed with the service key, passed sealed when it was sealed to the
//! enterprise's public key (only the listener can open it), refused with `EncryptionUpdated`
//! when the key that sealed it is no longer the current one. The room system's state after a
//! command updates the status cache; a failure is recorded for `GET /api/failures`.

use super::auth::Principal;
use super::snapshots::StatusSnapshots;
use roomlink_domain::access::{Operation, Target};
use roomlink_domain::cluster::ListenerLinks;
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::enums::EndpointCapability;
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EndpointId, EnterpriseId, FailureId, ListenerServiceId};
use roomlink_domain::listener::{ListenerRoute, ListenerService};
use roomlink_domain::ports::{
    Clock, Command, CommandTarget, EndpointCredential, EndpointStore, EnterpriseStore,
    FailureStore, IdGenerator, ListenerStore, ListenerTransport, ObservedState, PairingStore,
    PollLease, SecretSealer, StatusStore,
};
use roomlink_domain::secret::Secret;
use roomlink_domain::status::{EndpointStatus, Failure};
use std::collections::HashMap;
use std::sync::Arc;

/// How many failures `GET /api/failures` answers at most.
pub const FAILURES_LISTED: usize = 1000;

/// Endpoints read per page while polling.
const POLL_PAGE: usize = 1000;

pub struct ControlService {
    pub endpoints: Arc<dyn EndpointStore>,
    pub listeners: Arc<dyn ListenerStore>,
    pub enterprises: Arc<dyn EnterpriseStore>,
    pub statuses: Arc<dyn StatusStore>,
    pub failures: Arc<dyn FailureStore>,
    pub pairing: Arc<dyn PairingStore>,
    pub transport: Arc<dyn ListenerTransport>,
    pub links: Arc<dyn ListenerLinks>,
    pub poll_lease: Arc<dyn PollLease>,
    pub sealer: Arc<dyn SecretSealer>,
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn IdGenerator>,
    /// Read here; dropped by the writes themselves (`status_writes`).
    pub snapshots: Arc<StatusSnapshots>,
    pub audit: Arc<super::audit::Auditor>,
    /// Room inventories, read during the poll rounds.
    pub inventory: Arc<super::inventory::InventoryReads>,
    /// Checks rooms assigned a template in the same rounds.
    pub drift: Arc<super::drift_checks::DriftChecks>,
}

/// Which listeners one instance polls: each listener is polled by exactly one instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollShare {
    /// Inbound listeners: only the instance that holds the poll lease.
    pub inbound: bool,
}

impl PollShare {
    fn includes(&self, listener: &ListenerService, links: &dyn ListenerLinks) -> bool {
        match listener.route() {
            ListenerRoute::Http(_) => self.inbound,
            // Outbound listeners: the instance that holds the connection.
            ListenerRoute::Link => links.held_here(&listener.id),
        }
    }
}

/// The caller's operation of a command; `None` for calendar push, which no caller sends (the
/// scheduler does, through [`ControlService::push_target`] and [`ControlService::deliver`]).
fn operation_of(command: &Command) -> Option<Operation> {
    match command {
        Command::Join(_) => Some(Operation::Join),
        Command::HangUp => Some(Operation::HangUp),
        Command::SendDtmf(_) => Some(Operation::SendDtmf),
        Command::MuteMicrophone => Some(Operation::MuteMicrophone),
        Command::UnmuteMicrophone => Some(Operation::UnmuteMicrophone),
        Command::PushCalendar(_) => None,
    }
}

/// The status of an endpoint never observed: all flags false, `timestamp` 0 (the epoch), which
/// monitoring reads as "no fresh status".
fn never_observed(endpoint: &EndpointId) -> EndpointStatus {
    EndpointStatus {
        endpoint_id: endpoint.clone(),
        call_active: false,
        reserved: false,
        dialing: false,
        microphone_muted: false,
        last_dial_timestamp_millis: None,
        timestamp: 0,
    }
}

fn observed(endpoint: &EndpointId, state: ObservedState, now: i64) -> EndpointStatus {
    EndpointStatus {
        endpoint_id: endpoint.clone(),
        call_active: state.call_active,
        reserved: state.reserved,
        dialing: state.dialing,
        microphone_muted: state.microphone_muted,
        last_dial_timestamp_millis: state.last_dial_timestamp_millis,
        timestamp: now,
    }
}

/// An endpoint read for a command, with the listener service it names.
pub(crate) struct Routed {
    pub endpoint: Endpoint,
    pub listener: ListenerService,
    pub enterprise_public_key: Option<String>,
}

/// What every command, status poll and calendar read through a room's listener starts with:
/// the endpoint's command context (`NotFound` without one) and its listener
/// (`EndpointHasNoListenerService`, naming `command`).
pub(crate) async fn routed(
    endpoints: &dyn EndpointStore,
    enterprise: &EnterpriseId,
    id: &EndpointId,
    command: &str,
) -> Result<Routed> {
    let context = endpoints
        .command_context(enterprise, id)
        .await?
        .ok_or_else(|| id.not_found())?;
    let listener = listener_of(&context.endpoint, context.listener, command)?;
    Ok(Routed {
        endpoint: context.endpoint,
        listener,
        enterprise_public_key: context.enterprise_public_key,
    })
}

/// The listener service `endpoint` names, as read with it; `EndpointHasNoListenerService`
/// when it names none or one that does not exist.
fn listener_of(
    endpoint: &Endpoint,
    listener: Option<ListenerService>,
    command: &str,
) -> Result<ListenerService> {
    let named = endpoint.profile().listener();
    listener
        .filter(|l| Some(&l.id) == named.as_ref())
        .ok_or_else(|| {
            Error::endpoint_has_no_listener(
                command,
                endpoint.name(),
                named.as_ref().map(ListenerServiceId::as_str),
            )
        })
}

/// The listener's shared secret, opened: roomlink presents it to the listener (and checks it
/// when the listener connects). Always sealed with the service key, never to a public one.
pub(crate) fn listener_secret(
    sealer: &dyn SecretSealer,
    listener: &ListenerService,
) -> Result<Secret> {
    sealer
        .open(&listener.secret)?
        .ok_or_else(|| Error::internal("a listener secret was sealed to a public key"))
}

/// What every command through one listener needs besides the endpoint: the listener's secret,
/// opened, and the enterprise's public key.
struct Keys {
    listener_secret: Secret,
    public_key: Option<String>,
}

impl Keys {
    fn of(
        sealer: &dyn SecretSealer,
        listener: &ListenerService,
        public_key: Option<String>,
    ) -> Result<Keys> {
        let listener_secret = listener_secret(sealer, listener)?;
        Ok(Keys {
            listener_secret,
            public_key,
        })
    }

    /// The endpoint's credential as the listener is to get it: opened when sealed with the
    /// service key, passed sealed when sealed to the enterprise's key, `EncryptionUpdated`
    /// when its key is no longer current.
    fn target(
        &self,
        sealer: &dyn SecretSealer,
        listener: &ListenerService,
        endpoint: Endpoint,
    ) -> Result<CommandTarget> {
        let credential = match endpoint.password() {
            None => EndpointCredential::None,
            Some(sealed) => {
                if !sealer.readable(sealed, self.public_key.as_deref())? {
                    return Err(Error::encryption_updated());
                }
                match sealer.open(sealed)? {
                    Some(plain) => EndpointCredential::Plain(plain),
                    None => EndpointCredential::SealedForListener(sealed.clone()),
                }
            }
        };
        Ok(CommandTarget {
            listener_id: listener.id.clone(),
            route: listener.route(),
            listener_secret: self.listener_secret.clone(),
            endpoint,
            credential,
        })
    }
}

impl ControlService {
    /// Sends `command` to the endpoint's room system; `NotFound` for another enterprise's
    /// endpoint, `EndpointHasNoListenerService`, `EncryptionUpdated`, or the listener's error.
    ///
    /// Two database round trips around the listener call: one read of the endpoint, its
    /// listener and the enterprise's key, and one write of the observed status together with
    /// the audit entry.
    pub async fn command(
        &self,
        principal: &Principal,
        id: &EndpointId,
        command: Command,
    ) -> Result<()> {
        let Some(operation) = operation_of(&command) else {
            return Err(Error::internal(format!(
                "{} is not a caller's command",
                command.name()
            )));
        };
        // Recorded with its outcome, never its arguments (a meeting passcode, DTMF digits).
        let audit = self.audit.op(principal, operation, Some(id.as_str()));
        let enterprise = &principal.enterprise_id;
        let status = match self.send_command(principal, id, command).await {
            Ok(status) => status,
            Err(e) => return self.audit.record(audit, Err(e)).await,
        };
        let written = self
            .statuses
            .save_command_status(enterprise, &status, &audit)
            .await;
        match written {
            Ok(()) => Ok(()),
            // Nothing was written: the entry goes on its own, with the failure.
            Err(e) => self.audit.record(audit, Err(e)).await,
        }
    }

    /// The command sent; the endpoint's state it observed.
    async fn send_command(
        &self,
        principal: &Principal,
        id: &EndpointId,
        command: Command,
    ) -> Result<EndpointStatus> {
        let operation =
            operation_of(&command).ok_or_else(|| Error::internal("not a caller's command"))?;
        principal.authorize(operation, Target::Endpoint(id))?;
        self.note_zero_touch_use(principal).await?;
        let enterprise = &principal.enterprise_id;
        let Routed {
            endpoint,
            listener,
            enterprise_public_key,
        } = routed(self.endpoints.as_ref(), enterprise, id, command.name()).await?;
        let keys = Keys::of(self.sealer.as_ref(), &listener, enterprise_public_key)?;
        let target = keys.target(self.sealer.as_ref(), &listener, endpoint)?;
        match self.transport.send(&target, &command).await {
            Ok(state) => Ok(observed(id, state, self.clock.now_ms())),
            Err(error) => {
                self.record(enterprise, &listener.id, &error).await;
                Err(error)
            }
        }
    }

    /// Calendar push (a job of the scheduler, not a caller's): where the endpoint's commands
    /// go, when its listener reports `CALENDAR_PUSH` for it; `None` when it does not.
    /// `EndpointHasNoListenerService`, `EncryptionUpdated`, or the listener's error when its
    /// capabilities cannot be learnt.
    pub(crate) async fn push_target(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
    ) -> Result<Option<CommandTarget>> {
        let target = self.target_of(enterprise, id, "pushcalendar").await?;
        let capabilities = self.transport.capabilities(&target).await?;
        Ok(capabilities
            .contains(&EndpointCapability::CalendarPush)
            .then_some(target))
    }

    /// Where `command` for the endpoint goes (a job's, not a caller's: nothing authorized or
    /// audited here): `NotFound`, `EndpointHasNoListenerService` or `EncryptionUpdated`.
    pub(crate) async fn target_of(
        &self,
        enterprise: &EnterpriseId,
        id: &EndpointId,
        command: &str,
    ) -> Result<CommandTarget> {
        let Routed {
            endpoint,
            listener,
            enterprise_public_key,
        } = routed(self.endpoints.as_ref(), enterprise, id, command).await?;
        let keys = Keys::of(self.sealer.as_ref(), &listener, enterprise_public_key)?;
        keys.target(self.sealer.as_ref(), &listener, endpoint)
    }

    /// Sends a scheduler's command to a target of [`Self::push_target`]. Neither audited nor
    /// recorded here: the job records its failures against the endpoint.
    pub(crate) async fn deliver(&self, target: &CommandTarget, command: &Command) -> Result<()> {
        self.transport.send(target, command).await.map(|_| ())
    }

    /// Every endpoint of the enterprise with its last observed status, in endpoint order. No
    /// listener is called: statuses come from the cache the poller and commands keep.
    pub async fn statuses(&self, principal: &Principal) -> Result<Vec<EndpointStatus>> {
        principal.authorize(Operation::ListStatuses, Target::Enterprise)?;
        let enterprise = &principal.enterprise_id;
        let endpoints = self.endpoints.list_endpoints(enterprise).await?;
        let mut cached: HashMap<EndpointId, EndpointStatus> = self
            .statuses
            .statuses(enterprise)
            .await?
            .into_iter()
            .map(|s| (s.endpoint_id.clone(), s))
            .collect();
        Ok(endpoints
            .iter()
            .map(|e| {
                cached
                    .remove(e.id())
                    .unwrap_or_else(|| never_observed(e.id()))
            })
            .collect())
    }

    /// [`ControlService::statuses`] as its JSON array, from the enterprise's snapshot when it
    /// is fresh (see `snapshots`).
    pub async fn statuses_json(&self, principal: &Principal) -> Result<Arc<str>> {
        principal.authorize(Operation::ListStatuses, Target::Enterprise)?;
        let enterprise = &principal.enterprise_id;
        if let Some(json) = self.snapshots.get(enterprise, self.clock.now_ms()) {
            return Ok(json);
        }
        let generation = self.snapshots.generation();
        let taken_at = self.clock.now_ms();
        let statuses = self.statuses(principal).await?;
        let json: Arc<str> = serde_json::to_string(&statuses)
            .map_err(|e| Error::internal(format!("status serialization: {e}")))?
            .into();
        self.snapshots
            .put(enterprise, generation, taken_at, json.clone());
        Ok(json)
    }

    pub async fn status(&self, principal: &Principal, id: &EndpointId) -> Result<EndpointStatus> {
        principal.authorize(Operation::GetStatus, Target::Endpoint(id))?;
        self.note_zero_touch_use(principal).await?;
        let enterprise = &principal.enterprise_id;
        if self.endpoints.endpoint(enterprise, id).await?.is_none() {
            return Err(id.not_found());
        }
        Ok(self
            .statuses
            .status(enterprise, id)
            .await?
            .unwrap_or_else(|| never_observed(id)))
    }

    /// The enterprise's most recent control failures, newest first.
    pub async fn failures(&self, principal: &Principal) -> Result<Vec<Failure>> {
        principal.authorize(Operation::ListFailures, Target::Enterprise)?;
        self.failures
            .failures(&principal.enterprise_id, FAILURES_LISTED)
            .await
    }

    /// One round of status polling: every enterprise in turn ([`Self::poll_enterprise`]),
    /// the listeners this instance's share covers (outbound ones it holds; inbound ones when
    /// it holds the poll lease, which also checks them: [`Self::check_listeners`]). An
    /// enterprise whose poll fails does not stop the others; its error is returned with it,
    /// for the caller to log. Fails as a whole only when the enterprises cannot be listed.
    pub async fn poll_all(&self) -> Result<Vec<(EnterpriseId, Error)>> {
        let share = PollShare {
            inbound: self.poll_lease.hold_poll_lease().await?,
        };
        let mut failed = Vec::new();
        for enterprise in self.enterprises.enterprise_ids().await? {
            if share.inbound
                && let Err(e) = self.check_listeners(&enterprise).await
            {
                failed.push((enterprise.clone(), e));
            }
            if let Err(e) = self.poll_enterprise(&enterprise, share).await {
                failed.push((enterprise, e));
            }
        }
        Ok(failed)
    }

    /// Polls every listener of one enterprise for the state of its endpoints, one batched
    /// call per listener and page of endpoints, and stores what was observed. Walks the list
    /// a page at a time, so memory stays flat however many endpoints there are. Returns how
    /// many statuses were saved.
    pub async fn poll_enterprise(
        &self,
        enterprise: &EnterpriseId,
        share: PollShare,
    ) -> Result<usize> {
        let mut listeners: HashMap<ListenerServiceId, Option<ListenerService>> = HashMap::new();
        let mut saved = 0;
        let mut after = None;
        loop {
            let page = self
                .endpoints
                .endpoint_page(enterprise, after, POLL_PAGE)
                .await?;
            let mut by_listener: HashMap<ListenerServiceId, Vec<Endpoint>> = HashMap::new();
            for endpoint in page.endpoints {
                if let Some(listener) = endpoint.profile().listener() {
                    by_listener.entry(listener).or_default().push(endpoint);
                }
            }
            for (listener_id, endpoints) in by_listener {
                let listener = match listeners.get(&listener_id) {
                    Some(known) => known.clone(),
                    None => {
                        let found = self.listeners.listener(enterprise, &listener_id).await?;
                        listeners.insert(listener_id, found.clone());
                        found
                    }
                };
                if let Some(listener) = listener.filter(|l| share.includes(l, self.links.as_ref()))
                {
                    saved += self.poll_listener(enterprise, &listener, endpoints).await?;
                }
            }
            match page.next {
                Some(next) => after = Some(next),
                None => return Ok(saved),
            }
        }
    }

    async fn poll_listener(
        &self,
        enterprise: &EnterpriseId,
        listener: &ListenerService,
        endpoints: Vec<Endpoint>,
    ) -> Result<usize> {
        // The enterprise's key and the listener's secret once per listener, not per endpoint.
        let public_key = self
            .enterprises
            .enterprise(enterprise)
            .await?
            .and_then(|e| e.public_key);
        let keys = match Keys::of(self.sealer.as_ref(), listener, public_key) {
            Ok(keys) => keys,
            Err(error) => {
                self.record(enterprise, &listener.id, &error).await;
                return Ok(0);
            }
        };
        let targets: Vec<CommandTarget> = endpoints
            .into_iter()
            // An endpoint whose credential cannot be used is skipped, not the whole batch.
            .filter_map(|endpoint| keys.target(self.sealer.as_ref(), listener, endpoint).ok())
            .collect();
        match self.transport.poll(&targets).await {
            Ok(results) => {
                let now = self.clock.now_ms();
                let statuses: Vec<_> = results
                    .into_iter()
                    .filter_map(|(id, state)| state.ok().map(|s| observed(&id, s, now)))
                    .collect();
                self.statuses.save_statuses(enterprise, &statuses).await?;
                // The listener answered: the rooms whose inventory or drift check is due are
                // read too.
                self.inventory.refresh(enterprise, &targets).await?;
                self.drift.refresh(enterprise, &targets).await?;
                Ok(statuses.len())
            }
            Err(error) => {
                self.record(enterprise, &listener.id, &error).await;
                Ok(0)
            }
        }
    }

    /// Keeps a failure for monitoring; losing one is logged by the store, never fatal here.
    async fn record(&self, enterprise: &EnterpriseId, listener: &ListenerServiceId, error: &Error) {
        let failure = Failure::from_error(
            FailureId::from_trusted(self.ids.entity_id()),
            enterprise.clone(),
            ListenerServiceId::ENTITY_CLASS,
            listener.as_str(),
            error,
            self.clock.now_ms(),
        );
        let _ = self.failures.record_failure(&failure).await;
    }

    /// A Zero Touch token's use moves its PairedStatus heartbeat (or creates it).
    async fn note_zero_touch_use(&self, principal: &Principal) -> Result<()> {
        if let Some(token) = principal.token().filter(|t| t.pairing().is_some()) {
            self.pairing
                .touch_paired(token, self.clock.now_ms())
                .await?;
        }
        Ok(())
    }
}

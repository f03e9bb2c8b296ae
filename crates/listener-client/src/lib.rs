//! The HTTP adapter of `roomlink_domain::ports::ListenerTransport`: roomlink's side of the
//! listener protocol (docs/listener-protocol.md).
//!
//! - [`info`]: `GET /v1/info`, its cache and the version gate of each command.
//! - [`wire`]: request and answer bodies; [`errors`]: failures mapped to the catalog;
//!   [`redact`]: scrubbing of listener texts; [`transport`]: one exchange with a deadline.
//!
//! The listener secret and endpoint passwords go only into request headers and bodies: no
//! type here that holds one derives `Debug`, and no error or log line is built from them.
//!
//! Where the protocol's table leaves a choice:
//! - a connection closed or reset before a whole answer (the simulator's `listener_reset`)
//!   is `ListenerOffline`, like a refused one; only a deadline that passes is `CommandTimedOut`;
//! - a non-2xx answer other than 401/404 without a failure body is `ListenerServiceException`;
//! - an endpoint without a `controlProtocol` is `UnknownControlProtocol` (nothing is sent);
//! - `info` and `status` are retried once after any mid-exchange reset (reqwest cannot tell a
//!   pooled connection from a fresh one); commands never are;
//! - the command timeout bounds the whole call, the `/v1/info` fetch it may need included.

pub mod errors;
pub mod info;
pub mod redact;
pub mod transport;
pub mod wire;

use async_trait::async_trait;
use errors::Call;
use futures::stream::{self, StreamExt, TryStreamExt};
use info::{Info, InfoBody, InfoCache, Refusal, gate};
use reqwest::redirect::Policy;
use roomlink_domain::calendar::CalendarEvent;
use roomlink_domain::cluster::{LinkFailure, LinkRequest, ListenerLinks};
use roomlink_domain::enums::{CalendarType, EndpointCapability};
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EndpointId, ListenerServiceId};
use roomlink_domain::inventory::Inventory;
use roomlink_domain::listener::ListenerRoute;
use roomlink_domain::ports::{
    Command, CommandTarget, EndpointCredential, ListenerAddress, ListenerTransport, ObservedState,
};
use roomlink_domain::secret::Secret;
use roomlink_domain::template::{SettingKey, SettingOutcomes, TemplateSettings, WriteMode};
use std::sync::Arc;
use std::time::{Duration, Instant};
use transport::{Answer, Retry, exchange, exchange_link};
use wire::{
    CalendarAnswer, CalendarQuery, CommandBody, ConfigurationAnswer, FailureBody, InventoryAnswer,
    StateAnswer, StatusAnswer, StatusBody, StatusEntry, WireParams,
};

/// The protocol's limit on endpoints per `POST /v1/status`.
pub const MAX_STATUS_BATCH: usize = 500;

/// Status batches of one listener in flight at once: enough to overlap, few enough not to
/// swamp a listener that talks to hundreds of room systems per batch.
const PARALLEL_BATCHES: usize = 2;

#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `listener.command_timeout_ms`: a command (with the info it needs) has this long.
    pub command_timeout: Duration,
    /// Short, so a listener that is down is `ListenerOffline` at once, not after the timeout.
    pub connect_timeout: Duration,
    /// How long a listener's `/v1/info` is trusted.
    pub info_ttl: Duration,
}

impl Default for ClientConfig {
    fn default() -> Self {
        ClientConfig {
            command_timeout: Duration::from_millis(10_000),
            connect_timeout: Duration::from_secs(2),
            info_ttl: Duration::from_secs(60),
        }
    }
}

/// Talks to listener services: inbound ones over HTTP, outbound ones over their links. Cheap
/// to share: one connection pool for all.
pub struct HttpListenerClient {
    http: reqwest::Client,
    config: ClientConfig,
    info: InfoCache,
    links: Arc<dyn ListenerLinks>,
}

/// Without links (`HttpListenerClient::with_links`), every outbound listener is offline.
struct NoLinks;

#[async_trait]
impl ListenerLinks for NoLinks {
    async fn exchange(
        &self,
        _: &ListenerServiceId,
        _: LinkRequest,
        _: Duration,
    ) -> std::result::Result<roomlink_domain::cluster::LinkAnswer, LinkFailure> {
        Err(LinkFailure::Offline)
    }
    fn held_here(&self, _: &ListenerServiceId) -> bool {
        false
    }
}

/// A listener request before it takes a transport's form.
struct Request<'a> {
    method: reqwest::Method,
    path: &'a str,
    body: Option<String>,
    retry: Retry,
}

impl HttpListenerClient {
    pub fn new(config: ClientConfig) -> Self {
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .pool_idle_timeout(Duration::from_secs(30))
            .tcp_nodelay(true)
            // A listener never redirects; following one could carry the secret elsewhere.
            .redirect(Policy::none())
            .user_agent(concat!("roomlink/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_else(|e| {
                // Only a broken TLS backend fails here; the default client is the same minus
                // the timeouts above.
                tracing::error!(error = %e, "cannot configure the listener HTTP client");
                reqwest::Client::new()
            });
        HttpListenerClient {
            info: InfoCache::new(config.info_ttl),
            http,
            config,
            links: Arc::new(NoLinks),
        }
    }

    /// Outbound listeners' requests go over these links.
    pub fn with_links(mut self, links: Arc<dyn ListenerLinks>) -> Self {
        self.links = links;
        self
    }

    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// Sends one request to the listener by its route.
    async fn ask(
        &self,
        peer: Peer<'_>,
        call: &Call<'_>,
        request: Request<'_>,
        deadline: Instant,
    ) -> Result<Answer> {
        let timeout = self.config.command_timeout;
        let answer = match peer.route {
            ListenerRoute::Http(base_url) => {
                let url = format!("{}{}", base_key(base_url), request.path);
                let mut http = self
                    .http
                    .request(request.method, url)
                    .bearer_auth(peer.secret.expose());
                if let Some(body) = request.body {
                    http = http
                        .header(reqwest::header::CONTENT_TYPE, "application/json")
                        .body(body);
                }
                exchange(call, http, deadline, timeout, request.retry).await
            }
            ListenerRoute::Link => {
                let link = LinkRequest {
                    method: request.method.as_str().to_owned(),
                    path: request.path.to_owned(),
                    body: request.body,
                };
                exchange_link(call, self.links.as_ref(), link, deadline, timeout).await
            }
        };
        answer.inspect_err(|e| self.forget_if_offline(&peer.key(), e))
    }

    /// A JSON body's text; the wire types always serialize.
    fn json<T: serde::Serialize>(call: &Call<'_>, body: &T) -> Result<String> {
        serde_json::to_string(body)
            .map_err(|e| call.not_protocol(format!("cannot write the request: {e}")))
    }

    /// The listener's info, from the cache or `GET /v1/info`.
    async fn info(&self, peer: Peer<'_>, call: &Call<'_>, deadline: Instant) -> Result<Arc<Info>> {
        match self.info.get(&peer.key()) {
            Some(info) => Ok(info),
            None => self.fetch_info(peer, call, deadline).await,
        }
    }

    /// `GET /v1/info`, kept in the cache.
    async fn fetch_info(
        &self,
        peer: Peer<'_>,
        call: &Call<'_>,
        deadline: Instant,
    ) -> Result<Arc<Info>> {
        let request = Request {
            method: reqwest::Method::GET,
            path: "/v1/info",
            body: None,
            retry: Retry::OnceOnReset,
        };
        let answer = self.ask(peer, call, request, deadline).await?;
        if !answer.is_success() {
            return Err(call.from_status(answer.status, &answer.body, None));
        }
        let info = serde_json::from_slice::<InfoBody>(&answer.body)
            .map_err(|e| format!("the info answer is not the protocol: {e}"))
            .and_then(Info::from_body)
            .map_err(|cause| call.not_protocol(cause))?;
        let info = Arc::new(info);
        self.info.put(&peer.key(), Arc::clone(&info));
        Ok(info)
    }

    /// The version and command gate of `call.command` on this listener.
    fn gate(&self, info: &Info, call: &Call<'_>) -> Result<()> {
        match gate(info, call.command) {
            Ok(()) => Ok(()),
            Err(Refusal::TooOld { minimum }) => Err(call.too_old(minimum)),
            Err(Refusal::NoCommand) => Err(call.no_handler()),
        }
    }

    /// A command for one room (`call.command`) through the listener's gates, its success
    /// answer's body. `retry` says whether it is safe to send again after a reset.
    async fn room_command(
        &self,
        target: &CommandTarget,
        params: Option<WireParams>,
        retry: Retry,
        call: &mut Call<'_>,
    ) -> Result<Vec<u8>> {
        let deadline = Instant::now() + self.config.command_timeout;
        let info = self.info(Peer::of(target), call, deadline).await?;
        call.version = Some(info.version_text.clone());
        self.gate(&info, call)?;
        let protocol = target
            .endpoint
            .profile()
            .control_protocol()
            .map(|p| p.as_str());
        if !protocol.is_some_and(|p| info.supports(p)) {
            return Err(call.unknown_protocol(protocol));
        }
        let body = CommandBody {
            endpoint: wire::endpoint(&target.endpoint),
            credential: Some(wire::credential(&target.credential)),
            params,
        };
        let path = format!("/v1/commands/{}", call.command);
        let request = Request {
            method: reqwest::Method::POST,
            path: &path,
            body: Some(Self::json(call, &body)?),
            retry,
        };
        let answer = self.ask(Peer::of(target), call, request, deadline).await?;
        if answer.status == 404 {
            // The info promised the command: the listener changed under us.
            self.info.forget(&Peer::of(target).key());
        }
        if !answer.is_success() {
            return Err(call.from_status(answer.status, &answer.body, Some(&target.endpoint)));
        }
        Ok(answer.body)
    }

    async fn send_command(
        &self,
        target: &CommandTarget,
        command: &Command,
        call: &mut Call<'_>,
    ) -> Result<ObservedState> {
        let body = self
            .room_command(target, wire::params(command), Retry::Never, call)
            .await?;
        serde_json::from_slice::<StateAnswer>(&body)
            .map(|a| wire::observed(a.state))
            .map_err(|e| {
                call.not_protocol(format!(
                    "the {} answer is not the protocol: {e}",
                    call.command
                ))
            })
    }

    /// `readinventory`: a read, so sent again once after a connection reset.
    async fn device_inventory(
        &self,
        target: &CommandTarget,
        call: &mut Call<'_>,
    ) -> Result<Inventory> {
        let body = self
            .room_command(target, None, Retry::OnceOnReset, call)
            .await?;
        serde_json::from_slice::<InventoryAnswer>(&body)
            .map(|a| wire::inventory(a.inventory))
            .map_err(|e| {
                call.not_protocol(format!("the readinventory answer is not the protocol: {e}"))
            })
    }

    /// The raw Cisco paths of `keys` this listener is too old for, as unsupported outcomes
    /// ([`info::raw_paths_too_new`]); its info is asked only when there are some.
    async fn raw_paths_too_new(
        &self,
        target: &CommandTarget,
        call: &Call<'_>,
        keys: impl Iterator<Item = SettingKey>,
    ) -> Result<SettingOutcomes> {
        let raw: Vec<SettingKey> = keys.filter(|k| k.cisco_path().is_some()).collect();
        if raw.is_empty() {
            return Ok(SettingOutcomes::new());
        }
        let deadline = Instant::now() + self.config.command_timeout;
        let info = self.info(Peer::of(target), call, deadline).await?;
        Ok(info::raw_paths_too_new(&info, call.command, raw))
    }

    /// `readconfiguration` (a read: sent again once after a connection reset) or
    /// `writeconfiguration` (never sent twice), answered for exactly the `asked` keys, with the
    /// outcomes `too_new` of keys not sent added (nothing is sent when no key is left).
    async fn device_configuration(
        &self,
        target: &CommandTarget,
        params: WireParams,
        asked: Vec<SettingKey>,
        too_new: SettingOutcomes,
        call: &mut Call<'_>,
    ) -> Result<SettingOutcomes> {
        if asked.is_empty() {
            return Ok(too_new);
        }
        let retry = if call.command == "readconfiguration" {
            Retry::OnceOnReset
        } else {
            Retry::Never
        };
        let body = self.room_command(target, Some(params), retry, call).await?;
        serde_json::from_slice::<ConfigurationAnswer>(&body)
            .map_err(|e| e.to_string())
            .and_then(|answer| wire::configuration(answer, asked))
            .map(|mut outcomes| {
                outcomes.extend(too_new);
                outcomes
            })
            .map_err(|e| {
                call.not_protocol(format!(
                    "the {} answer is not the protocol: {e}",
                    call.command
                ))
            })
    }

    /// `readcalendar`: the version gate, then the listener's read of the room calendar.
    async fn calendar_events(
        &self,
        target: &CommandTarget,
        query: &CalendarQuery,
        call: &mut Call<'_>,
    ) -> Result<Vec<CalendarEvent>> {
        let deadline = Instant::now() + self.config.command_timeout;
        let info = self.info(Peer::of(target), call, deadline).await?;
        call.version = Some(info.version_text.clone());
        self.gate(&info, call)?;
        let request = Request {
            method: reqwest::Method::POST,
            path: "/v1/commands/readcalendar",
            body: Some(Self::json(call, query)?),
            // A read: safe to send again after a connection reset.
            retry: Retry::OnceOnReset,
        };
        let answer = self.ask(Peer::of(target), call, request, deadline).await?;
        if answer.status == 404 {
            self.info.forget(&Peer::of(target).key());
        }
        if !answer.is_success() {
            let failure = FailureBody::from_bytes(&answer.body);
            if let Some(error) = failure
                .as_ref()
                .and_then(|f| call.calendar_failure(&query.calendar_id, f))
            {
                return Err(error);
            }
            return Err(call.from_status(answer.status, &answer.body, None));
        }
        let read = serde_json::from_slice::<CalendarAnswer>(&answer.body).map_err(|e| {
            call.not_protocol(format!("the readcalendar answer is not the protocol: {e}"))
        })?;
        let mut events: Vec<CalendarEvent> = read
            .calendar
            .events
            .into_iter()
            .filter_map(wire::event)
            .filter(|e| e.start_ms < query.to && e.end_ms.max(e.start_ms + 1) > query.from)
            .collect();
        events.sort_by_key(|e| (e.start_ms, e.end_ms));
        Ok(events)
    }

    /// The listener's reported capabilities, from its (cached) `/v1/info`. Names roomlink does
    /// not know are left out.
    async fn reported_capabilities(
        &self,
        target: &CommandTarget,
    ) -> Result<Vec<EndpointCapability>> {
        let call = Call::new(&target.listener_id, "info", target.listener_secret.expose());
        let deadline = Instant::now() + self.config.command_timeout;
        let info = self.info(Peer::of(target), &call, deadline).await?;
        let protocol = target
            .endpoint
            .profile()
            .control_protocol()
            .map(|p| p.as_str());
        Ok(info
            .capabilities_for(protocol)
            .into_iter()
            .filter_map(|c| EndpointCapability::parse(c).ok())
            .collect())
    }

    /// A listener that went away may come back as another version.
    fn forget_if_offline(&self, key: &str, e: &Error) {
        if e.kind() == roomlink_domain::ErrorKind::ListenerOffline {
            self.info.forget(key);
        }
    }

    /// Polls the targets of one listener (`group` indexes `targets`).
    async fn poll_listener(
        &self,
        targets: &[CommandTarget],
        group: &[usize],
        results: &mut [Option<Result<ObservedState>>],
    ) -> Result<()> {
        let Some(first) = group.first().map(|&i| &targets[i]) else {
            return Ok(());
        };
        let mut call = Call::new(&first.listener_id, "status", first.listener_secret.expose());
        let deadline = Instant::now() + self.config.command_timeout;
        let info = self.info(Peer::of(first), &call, deadline).await?;
        call.version = Some(info.version_text.clone());
        self.gate(&info, &call)?;
        // Endpoints the listener cannot control are answered here, not sent.
        let mut sendable = Vec::with_capacity(group.len());
        for &i in group {
            let protocol = targets[i]
                .endpoint
                .profile()
                .control_protocol()
                .map(|p| p.as_str());
            if protocol.is_some_and(|p| info.supports(p)) {
                sendable.push(i);
            } else {
                results[i] = Some(Err(call.unknown_protocol(protocol)));
            }
        }
        // A loop, not a closure: a closure here trips the `Send` check of `async_trait`
        // ("FnOnce is not general enough").
        let mut requests = Vec::new();
        for batch in sendable.chunks(MAX_STATUS_BATCH) {
            requests.push(self.status_batch(first, targets, batch, &call));
        }
        let batches: Vec<Vec<(usize, Result<ObservedState>)>> = stream::iter(requests)
            .buffer_unordered(PARALLEL_BATCHES)
            .try_collect()
            .await?;
        for (i, result) in batches.into_iter().flatten() {
            results[i] = Some(result);
        }
        Ok(())
    }

    /// One `POST /v1/status` of at most [`MAX_STATUS_BATCH`] endpoints.
    async fn status_batch(
        &self,
        listener: &CommandTarget,
        targets: &[CommandTarget],
        batch: &[usize],
        call: &Call<'_>,
    ) -> Result<Vec<(usize, Result<ObservedState>)>> {
        let body = StatusBody {
            endpoints: batch
                .iter()
                .map(|&i| StatusEntry {
                    endpoint: wire::endpoint(&targets[i].endpoint),
                    credential: Some(wire::credential(&targets[i].credential)),
                })
                .collect(),
        };
        let request = Request {
            method: reqwest::Method::POST,
            path: "/v1/status",
            body: Some(Self::json(call, &body)?),
            retry: Retry::OnceOnReset,
        };
        let deadline = Instant::now() + self.config.command_timeout;
        let answer = self
            .ask(Peer::of(listener), call, request, deadline)
            .await?;
        self.read_statuses(targets, batch, call, answer, &Peer::of(listener).key())
    }

    fn read_statuses(
        &self,
        targets: &[CommandTarget],
        batch: &[usize],
        call: &Call<'_>,
        answer: Answer,
        key: &str,
    ) -> Result<Vec<(usize, Result<ObservedState>)>> {
        if answer.status == 404 {
            self.info.forget(key);
        }
        if !answer.is_success() {
            return Err(call.from_status(answer.status, &answer.body, None));
        }
        let statuses = serde_json::from_slice::<StatusAnswer>(&answer.body)
            .map_err(|e| call.not_protocol(format!("the status answer is not the protocol: {e}")))?
            .statuses;
        if statuses.len() != batch.len() {
            return Err(call.not_protocol(format!(
                "{} statuses answered for {} endpoints",
                statuses.len(),
                batch.len()
            )));
        }
        let mut out = Vec::with_capacity(batch.len());
        for (item, &i) in statuses.into_iter().zip(batch) {
            let endpoint = &targets[i].endpoint;
            if item
                .endpoint_id
                .as_deref()
                .is_some_and(|id| id != endpoint.id().as_str())
            {
                return Err(call.not_protocol(
                    "statuses are not in the order of the endpoints asked about".to_owned(),
                ));
            }
            let call = call.with_password(password(&targets[i].credential));
            let result = match (item.state, item.failure) {
                (Some(state), _) => Ok(wire::observed(state)),
                (None, Some(failure)) => match FailureBody::from_value(&failure) {
                    Some(f) => Err(call.from_failure(endpoint, f)),
                    None => Err(call.not_protocol("a status failure without a name".to_owned())),
                },
                (None, None) => {
                    Err(call.not_protocol("a status with neither state nor failure".to_owned()))
                }
            };
            out.push((i, result));
        }
        Ok(out)
    }
}

/// The base URL as the cache and request paths use it.
fn base_key(base_url: &str) -> &str {
    base_url.trim().trim_end_matches('/')
}

/// The info cache's key of the target's listener: its base URL, or its id for a link.
/// The listener a request goes to: which one, by what route, asked with which secret.
#[derive(Clone, Copy)]
struct Peer<'a> {
    id: &'a ListenerServiceId,
    route: &'a ListenerRoute,
    secret: &'a Secret,
}

impl<'a> Peer<'a> {
    fn of(target: &'a CommandTarget) -> Self {
        Peer {
            id: &target.listener_id,
            route: &target.route,
            secret: &target.listener_secret,
        }
    }

    fn at(address: &'a ListenerAddress) -> Self {
        Peer {
            id: &address.listener_id,
            route: &address.route,
            secret: &address.listener_secret,
        }
    }

    /// The info cache's key: the base URL, or the listener for an outbound one.
    fn key(&self) -> String {
        match self.route {
            ListenerRoute::Http(base_url) => base_key(base_url).to_owned(),
            ListenerRoute::Link => format!("link:{}", self.id),
        }
    }
}

fn password(credential: &EndpointCredential) -> Option<&str> {
    match credential {
        EndpointCredential::Plain(p) => Some(p.expose()),
        EndpointCredential::None | EndpointCredential::SealedForListener(_) => None,
    }
}

/// The targets grouped by listener, in first-seen order (the port asks one listener per poll,
/// but a mixed slice must not send an endpoint to the wrong one).
fn group_by_listener(targets: &[CommandTarget]) -> Vec<Vec<usize>> {
    let mut groups: Vec<(&ListenerServiceId, &ListenerRoute, Vec<usize>)> = Vec::new();
    for (i, t) in targets.iter().enumerate() {
        let key = (&t.listener_id, &t.route);
        match groups.iter_mut().find(|(id, base, _)| (*id, *base) == key) {
            Some((_, _, group)) => group.push(i),
            None => groups.push((key.0, key.1, vec![i])),
        }
    }
    groups.into_iter().map(|(_, _, group)| group).collect()
}

#[async_trait]
impl ListenerTransport for HttpListenerClient {
    async fn send(&self, target: &CommandTarget, command: &Command) -> Result<ObservedState> {
        let mut call = Call::new(
            &target.listener_id,
            command.name(),
            target.listener_secret.expose(),
        )
        .with_password(password(&target.credential));
        let outcome = self.send_command(target, command, &mut call).await;
        match &outcome {
            Ok(_) => tracing::debug!(
                listener = %target.listener_id, endpoint = %target.endpoint.id(),
                command = command.name(), "listener command done"
            ),
            Err(e) => tracing::warn!(
                listener = %target.listener_id, endpoint = %target.endpoint.id(),
                command = command.name(), error = %e, "listener command failed"
            ),
        }
        outcome
    }

    async fn capabilities(&self, target: &CommandTarget) -> Result<Vec<EndpointCapability>> {
        self.reported_capabilities(target).await
    }

    async fn read_calendar(
        &self,
        target: &CommandTarget,
        calendar_type: CalendarType,
        calendar_id: &str,
        from_ms: i64,
        to_ms: i64,
    ) -> Result<Vec<CalendarEvent>> {
        let mut call = Call::new(
            &target.listener_id,
            "readcalendar",
            target.listener_secret.expose(),
        );
        let query = CalendarQuery {
            calendar_type: calendar_type.as_str().to_owned(),
            calendar_id: calendar_id.to_owned(),
            from: from_ms,
            to: to_ms,
        };
        let outcome = self.calendar_events(target, &query, &mut call).await;
        if let Err(e) = &outcome {
            tracing::warn!(listener = %target.listener_id, endpoint = %target.endpoint.id(),
                error = %e, "listener calendar read failed");
        }
        outcome
    }

    async fn read_inventory(&self, target: &CommandTarget) -> Result<Inventory> {
        let mut call = Call::new(
            &target.listener_id,
            "readinventory",
            target.listener_secret.expose(),
        )
        .with_password(password(&target.credential));
        let outcome = self.device_inventory(target, &mut call).await;
        if let Err(e) = &outcome {
            tracing::info!(listener = %target.listener_id, endpoint = %target.endpoint.id(),
                error = %e, "room inventory read failed");
        }
        outcome
    }

    async fn read_configuration(
        &self,
        target: &CommandTarget,
        keys: &[SettingKey],
    ) -> Result<SettingOutcomes> {
        let mut call = Call::new(
            &target.listener_id,
            "readconfiguration",
            target.listener_secret.expose(),
        )
        .with_password(password(&target.credential));
        let outcome = async {
            let too_new = self
                .raw_paths_too_new(target, &call, keys.iter().copied())
                .await?;
            let asked: Vec<SettingKey> = keys
                .iter()
                .copied()
                .filter(|k| !too_new.contains_key(k))
                .collect();
            let params = wire::configuration_keys(&asked);
            self.device_configuration(target, params, asked, too_new, &mut call)
                .await
        }
        .await;
        if let Err(e) = &outcome {
            tracing::info!(listener = %target.listener_id, endpoint = %target.endpoint.id(),
                error = %e, "room configuration read failed");
        }
        outcome
    }

    async fn write_configuration(
        &self,
        target: &CommandTarget,
        settings: &TemplateSettings,
        mode: WriteMode,
    ) -> Result<SettingOutcomes> {
        let mut call = Call::new(
            &target.listener_id,
            "writeconfiguration",
            target.listener_secret.expose(),
        )
        .with_password(password(&target.credential));
        let outcome = async {
            let too_new = self
                .raw_paths_too_new(target, &call, settings.iter().map(|(k, _)| k))
                .await?;
            let mut sent = settings.clone();
            sent.retain(|k| !too_new.contains_key(&k));
            let params = wire::configuration_settings(&sent, mode);
            let asked = sent.iter().map(|(k, _)| k).collect();
            self.device_configuration(target, params, asked, too_new, &mut call)
                .await
        }
        .await;
        if let Err(e) = &outcome {
            tracing::warn!(listener = %target.listener_id, endpoint = %target.endpoint.id(),
                error = %e, "room configuration write failed");
        }
        outcome
    }

    async fn poll(
        &self,
        targets: &[CommandTarget],
    ) -> Result<Vec<(EndpointId, Result<ObservedState>)>> {
        let mut results: Vec<Option<Result<ObservedState>>> = std::iter::repeat_with(|| None)
            .take(targets.len())
            .collect();
        for group in group_by_listener(targets) {
            if let Err(e) = self.poll_listener(targets, &group, &mut results).await {
                tracing::warn!(error = %e, "status poll failed");
                return Err(e);
            }
        }
        Ok(targets
            .iter()
            .zip(results)
            .map(|(t, r)| {
                let r = r.unwrap_or_else(|| Err(Error::internal("an endpoint was left unpolled")));
                (t.endpoint.id().clone(), r)
            })
            .collect())
    }

    async fn check(&self, listener: &ListenerAddress) -> Result<String> {
        let peer = Peer::at(listener);
        let call = Call::new(peer.id, "info", peer.secret.expose());
        let deadline = Instant::now() + self.config.command_timeout;
        let info = self.fetch_info(peer, &call, deadline).await;
        if let Err(e) = &info {
            tracing::debug!(listener = %peer.id, error = %e, "listener check failed");
        }
        Ok(info?.version_text.clone())
    }
}

//! The operator commands: serve, migrate, admin enterprise create, admin user create (the
//! other admin commands: `crate::admin`).

use crate::settings::Settings;
use crate::{KeySource, Wiring};
use anyhow::Context;
use roomlink_app::Services;
use roomlink_crypto::{KeyRing, Sealer};
use roomlink_domain::access::Role;
use roomlink_domain::cluster::EventBus;
use roomlink_domain::listener::LINK_HEARTBEAT_MS;
use roomlink_domain::secret::Secret;
use roomlink_http::tls::ReloadableCert;
use roomlink_http::{Limiter, LinkRegistry, REPORT_EVERY};
use std::io::Read;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

/// A started server: its address, the server handle (await it, or stop it), the use cases,
/// and the background tasks (status polling, housekeeping), stopped when this is dropped.
pub struct Running {
    pub address: SocketAddr,
    pub server: actix_web::dev::Server,
    pub services: Services,
    /// Outbound listeners' connections held here.
    pub links: Arc<LinkRegistry>,
    /// Browsers' live-update streams on this instance.
    pub live: Arc<roomlink_http::LiveHub>,
    /// Kept for its background tasks (NATS subscriptions).
    pub cluster: Option<roomlink_cluster::Cluster>,
    pub background: Background,
    /// What SIGHUP reloads.
    pub reload: Reload,
    /// On SQLite: held while serving, so that `admin restore` refuses (see [`start`]).
    pub serving: Option<roomlink_store::ServingLock>,
}

/// What a running instance reads again on SIGHUP: the TLS certificate and the service key ring.
pub struct Reload {
    tls: Option<Arc<ReloadableCert>>,
    sealer: Arc<Sealer>,
    keys: KeySource,
}

impl Reload {
    /// Reads the certificate and the key file again. What fails to load is kept as it was and
    /// reported; the rest is reloaded all the same.
    pub fn reload(&self) -> anyhow::Result<()> {
        let mut failures = Vec::new();
        if let Some(tls) = &self.tls {
            match tls.reload() {
                Ok(()) => tracing::info!(
                    cert = %tls.files().cert.display(),
                    "TLS certificate reloaded"
                ),
                Err(e) => failures.push(format!("TLS certificate kept: {e}")),
            }
        }
        match &self.keys {
            KeySource::File(path) => match KeyRing::load(path) {
                Ok(ring) => {
                    tracing::info!(
                        file = %path.display(),
                        current = ring.current().id(),
                        previous = ?ring.previous_ids(),
                        "service key ring reloaded"
                    );
                    self.sealer.reload(ring);
                }
                Err(e) => failures.push(format!("service key ring kept: {e}")),
            },
            KeySource::Settings => tracing::info!(
                "the service keys come from settings (security.service_key): restart to change them"
            ),
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(anyhow::anyhow!(failures.join("; ")))
        }
    }
}

/// Aborts the background tasks when dropped.
pub struct Background(Vec<tokio::task::JoinHandle<()>>);

impl Drop for Background {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// Migrates, binds `server.bind` (port 0 picks a free port) and starts serving. On SQLite the
/// serving lock comes first: a restore under way is not raced by migrations, and a restore
/// started later is refused until this process ends.
pub async fn start(settings: &Settings) -> anyhow::Result<Running> {
    let serving = settings
        .sqlite_path()
        .map(|db| roomlink_store::ServingLock::acquire(&db))
        .transpose()?;
    let mut running = start_with(settings, crate::services(settings, true).await?).await?;
    running.serving = serving;
    Ok(running)
}

/// Serves the given wiring (tests wire it with a hand-moved clock).
pub async fn start_with(settings: &Settings, wiring: Wiring) -> anyhow::Result<Running> {
    let Wiring {
        services,
        links,
        live,
        cluster,
        sealer,
        outbox: _,
        rate_token_key,
    } = wiring;
    let tls = match settings.server.tls_files() {
        Some(files) => {
            Some(ReloadableCert::load(files).context("server.tls_cert / server.tls_key")?)
        }
        None => None,
    };
    let listener = TcpListener::bind(&settings.server.bind)
        .with_context(|| format!("cannot listen on {}", settings.server.bind))?;
    let address = listener.local_addr()?;
    // In a cluster the rate limits hold for all instances: each reports what it admitted and
    // charges what the others did.
    let limiter = cluster.as_ref().map(|cluster| {
        let limiter = Arc::new(Limiter::in_cluster(
            settings.limits.options(),
            cluster.instance().to_owned(),
            rate_token_key,
        ));
        cluster.local_bus().subscribe(limiter.clone());
        limiter
    });
    let options = roomlink_http::ServerOptions {
        workers: settings.server.workers,
        shutdown_timeout: Duration::from_secs(settings.server.shutdown_timeout_secs),
        limits: settings.limits.options(),
        limiter: limiter.clone(),
        tls: tls.clone(),
    };
    let server = roomlink_http::serve(
        listener,
        services.clone(),
        &options,
        links.clone(),
        live.clone(),
    )?;
    let poll_every = Duration::from_millis(settings.listener.status_poll_interval_ms.max(1000));
    let mut background = vec![
        tokio::spawn(poll_statuses(services.clone(), poll_every)),
        tokio::spawn(housekeeping(services.clone())),
        tokio::spawn(link_heartbeat(services.clone(), links.clone())),
        tokio::spawn(auto_join(
            services.clone(),
            Duration::from_millis(settings.calendar.auto_join_interval_ms.max(100)),
        )),
        tokio::spawn(calendar_push(
            services.clone(),
            Duration::from_millis(settings.calendar.push_interval_ms.max(100)),
        )),
        tokio::spawn(deliver_webhooks(
            services.clone(),
            Duration::from_millis(settings.webhooks.delivery_interval_ms.max(50)),
        )),
        // A quarter of the lease: a stopped instance's jobs resume soon after it lapses.
        tokio::spawn(run_template_jobs(
            services.clone(),
            Duration::from_millis((settings.templates.job_lease_secs * 250).max(1000)),
        )),
    ];
    if let (Some(limiter), Some(cluster)) = (&limiter, &cluster) {
        background.push(tokio::spawn(report_admitted(
            limiter.clone(),
            cluster.bus(),
        )));
    }
    let background = Background(background);
    Ok(Running {
        address,
        server,
        services,
        links,
        live,
        cluster,
        background,
        reload: Reload {
            tls,
            sealer,
            keys: crate::key_source(settings)?,
        },
        serving: None,
    })
}

/// `roomlink serve`: runs until SIGINT or SIGTERM. Either signal stops gracefully: no new
/// connections, background tasks stop, in-flight requests get `server.shutdown_timeout_secs`
/// to finish. A second SIGINT meanwhile stops at once (an error: requests were cut off).
/// SIGHUP reads the TLS certificate and the service key file again.
pub async fn serve(settings: &Settings) -> anyhow::Result<()> {
    let running = start(settings).await?;
    // Listening for signals before saying so: a signal sent right after the announcement counts.
    let mut signals = StopSignals::new().context("cannot listen for SIGINT/SIGTERM/SIGHUP")?;
    let handle = running.server.handle();
    let Running {
        address,
        server,
        background,
        links,
        live,
        reload,
        services,
        // Held to the end: dropping it would leave the cluster mid-shutdown.
        cluster: _cluster,
        // Held to the end: a restore must wait until this process has stopped.
        serving: _serving,
        ..
    } = running;
    let mut server = std::pin::pin!(server);
    let scheme = if settings.server.tls_files().is_some() {
        "https"
    } else {
        "http"
    };
    // Where a person goes next: the console and the API reference, as links that open; and
    // the process to send SIGHUP to. The message stays as it was: scripts and tests wait for it.
    let base = browsable(scheme, address);
    tracing::info!(
        address = %address,
        scheme,
        console = %format!("{base}/console/"),
        reference = %format!("{base}/api/docs/"),
        pid = std::process::id(),
        "roomlink is listening"
    );
    let first = loop {
        tokio::select! {
            result = &mut server => {
                drop(background);
                tracing::info!("roomlink stopped");
                return result.context("the HTTP server failed");
            }
            signal = signals.next() => match signal {
                Signal::Hangup => {
                    if let Err(e) = reload.reload() {
                        tracing::error!(error = %e, "SIGHUP: reload incomplete");
                    }
                }
                stop => break stop,
            },
        }
    };
    tracing::info!(
        signal = first.name(),
        grace_secs = settings.server.shutdown_timeout_secs,
        "shutting down: accepting no new connections, finishing in-flight requests \
         (a second SIGINT stops at once)"
    );
    drop(background);
    // The template jobs' runs stopped with the background tasks: their claims are released, so
    // another instance (or this one, restarted) resumes them at once, not after the lease.
    match services.template_jobs.release_claims().await {
        Ok(0) => {}
        Ok(released) => tracing::info!(
            jobs = released,
            "template jobs left to the next instance to look (GET /api/jobs)"
        ),
        Err(e) => tracing::warn!(error = %e, "template jobs: claims not released; they lapse"),
    }
    // Listeners' sockets would hold the graceful stop for its whole grace period: closed now,
    // their listeners reconnect to another instance.
    links.close_all();
    // Browsers' event streams too: they reconnect, to another instance if there is one.
    live.close_all();
    // The command is sent now; the server's own future ends when the workers are done (the
    // returned one would only say the same).
    drop(handle.stop(true));
    loop {
        tokio::select! {
            result = &mut server => {
                tracing::info!("roomlink stopped");
                return result.context("the HTTP server failed");
            }
            signal = signals.next() => match signal {
                Signal::Interrupt => {
                    tracing::warn!("second SIGINT: stopping now, in-flight requests are cut off");
                    // actix-server handles one stop command at a time and the graceful one is
                    // still waiting for its workers: dropping the server instead tells every
                    // worker to stop at once.
                    return Err(anyhow::anyhow!(
                        "stopped by a second SIGINT before in-flight requests finished"
                    ));
                }
                Signal::Terminate => tracing::info!(
                    "SIGTERM: already shutting down (a second SIGINT stops at once)"
                ),
                Signal::Hangup => tracing::info!("SIGHUP: ignored while shutting down"),
            },
        }
    }
}

/// The base URL a browser on this machine can open: a wildcard bind address is reached
/// through loopback.
fn browsable(scheme: &str, address: SocketAddr) -> String {
    let host = match address.ip() {
        ip if ip.is_unspecified() && ip.is_ipv4() => "127.0.0.1".to_owned(),
        ip if ip.is_unspecified() => "[::1]".to_owned(),
        std::net::IpAddr::V6(ip) => format!("[{ip}]"),
        ip => ip.to_string(),
    };
    format!("{scheme}://{host}:{}", address.port())
}

/// A signal asking the service to stop, or (SIGHUP) to reload its certificate and keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Signal {
    Interrupt,
    Terminate,
    Hangup,
}

impl Signal {
    fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
            Signal::Hangup => "SIGHUP",
        }
    }
}

/// SIGINT, SIGTERM and SIGHUP as a stream. Once created, none ends the process by itself.
#[cfg(unix)]
struct StopSignals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl StopSignals {
    fn new() -> std::io::Result<StopSignals> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(StopSignals {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    async fn next(&mut self) -> Signal {
        tokio::select! {
            Some(()) = self.interrupt.recv() => Signal::Interrupt,
            Some(()) = self.terminate.recv() => Signal::Terminate,
            Some(()) = self.hangup.recv() => Signal::Hangup,
            else => std::future::pending().await,
        }
    }
}

/// Elsewhere only Ctrl-C, which counts as SIGINT.
#[cfg(not(unix))]
struct StopSignals;

#[cfg(not(unix))]
impl StopSignals {
    fn new() -> std::io::Result<StopSignals> {
        Ok(StopSignals)
    }

    async fn next(&mut self) -> Signal {
        match tokio::signal::ctrl_c().await {
            Ok(()) => Signal::Interrupt,
            Err(_) => std::future::pending().await,
        }
    }
}

/// Refreshes the status cache: every enterprise's listeners, one batched call each.
/// With several instances on one database each polls; the cache keeps the latest answer.
async fn poll_statuses(services: Services, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        match services.control.poll_all().await {
            Ok(failed) => {
                for (enterprise, e) in failed {
                    tracing::warn!(error = %e, enterprise = %enterprise, "status poll failed");
                }
            }
            Err(e) => tracing::warn!(error = %e, "status poll: cannot list enterprises"),
        }
        // After the poll: health changes become webhook events (on the poll lease holder).
        match services.health_watch.round().await {
            Ok(Some(events)) if events > 0 => {
                tracing::info!(events, "room and listener health changed: events queued")
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "health watch round failed"),
        }
    }
}

/// Sends the webhook deliveries that are due (the rules: `roomlink_app::webhooks`). Every
/// instance runs this; leases on subscriptions keep two from sending the same outbox.
async fn deliver_webhooks(services: Services, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut failing = false;
    loop {
        tick.tick().await;
        match services.webhook_deliveries.round().await {
            Ok(round) => {
                failing = false;
                if round.attempts > round.delivered {
                    tracing::info!(
                        attempts = round.attempts,
                        delivered = round.delivered,
                        "webhook deliveries failed and wait for their retry \
                         (GET /api/webhooks/{{id}}/deliveries)"
                    );
                }
            }
            // Once per outage, not once per tick.
            Err(e) if !failing => {
                failing = true;
                tracing::warn!(error = %e, "webhook delivery round failed");
            }
            Err(_) => {}
        }
    }
}

/// Runs template jobs: each started here at once, and any whose instance stopped renewing its
/// claim (a crash, a restart) once it lapses. Each job is its own task, held in a set this task
/// owns, so that stopping this task stops them all; a job's rooms are paced by
/// `roomlink_app::template_jobs`. A graceful stop then releases their claims (`serve`), and the
/// next instance to look resumes them from the database.
async fn run_template_jobs(services: Services, every: Duration) {
    use futures::StreamExt;
    let Some(mut started) = services.template_jobs.take_started() else {
        return;
    };
    let mut runs = tokio::task::JoinSet::new();
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            Some(job) = started.next() => spawn_job(&mut runs, &services, job),
            // Finished runs leave the set (their outcome is logged by the run itself).
            Some(_) = runs.join_next() => {}
            _ = tick.tick() => match services.template_jobs.orphans().await {
                Ok(orphans) => {
                    for job in orphans {
                        tracing::info!(job = %job.1, "resuming a template job its instance left");
                        spawn_job(&mut runs, &services, job);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "template jobs: cannot look for orphans"),
            },
        }
    }
}

/// One job's run, as a task of `runs`.
fn spawn_job(
    runs: &mut tokio::task::JoinSet<()>,
    services: &Services,
    (enterprise, id): roomlink_app::template_jobs::JobRef,
) {
    let jobs = services.template_jobs.clone();
    runs.spawn(async move {
        match jobs.run(&enterprise, &id).await {
            Ok(roomlink_app::template_jobs::JobRun::Finished(p)) => tracing::info!(
                job = %id,
                rooms = p.rooms,
                unreachable = p.unreachable,
                applied = p.applied,
                refused = p.refused,
                "template job finished (GET /api/jobs/{{id}})"
            ),
            Ok(_) => {}
            // Its claim lapses and a later scan resumes it.
            Err(e) => tracing::warn!(job = %id, error = %e, "template job stopped"),
        }
    });
}

/// Sends rooms with calendar push on their meetings when they changed (the rules:
/// `roomlink_app::calendar_push`). Only the instance holding the poll lease reads calendars.
async fn calendar_push(services: Services, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let round = match services.calendar_push.run_once().await {
            Ok(round) => round,
            Err(e) => {
                tracing::warn!(error = %e, "calendar push: cannot list enterprises");
                continue;
            }
        };
        if round.pushed + round.failed > 0 {
            tracing::info!(
                pushed = round.pushed,
                failed = round.failed,
                unchanged = round.unchanged,
                rooms = round.rooms,
                "calendar push sent meetings (failures are in GET /api/failures)"
            );
        }
        // One line per round, not per room.
        if let Some((room, e)) = round.skipped.first() {
            tracing::warn!(
                skipped = round.skipped.len(),
                first_room = %room,
                error = %e,
                "calendar push: rooms skipped this round (listener or calendar unavailable)"
            );
        }
        for (enterprise, e) in round.enterprises_failed {
            tracing::warn!(error = %e, enterprise = %enterprise, "calendar push round failed");
        }
    }
}

/// Joins rooms with auto-join on to their meetings (the rules: `roomlink_app::auto_join`). Only the
/// instance holding the poll lease reads calendars; the others' rounds do nothing.
async fn auto_join(services: Services, every: Duration) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let round = match services.auto_join.run_once().await {
            Ok(round) => round,
            Err(e) => {
                tracing::warn!(error = %e, "auto-join: cannot list enterprises");
                continue;
            }
        };
        if round.joined + round.failed > 0 {
            tracing::info!(
                joined = round.joined,
                failed = round.failed,
                rooms = round.rooms,
                "auto-join sent joins (failures are in GET /api/failures)"
            );
        }
        // One line per round, not per room: a broken calendar server must not flood the log.
        if let Some((room, e)) = round.unread.first() {
            tracing::warn!(
                unread = round.unread.len(),
                first_room = %room,
                error = %e,
                "auto-join: room calendars could not be read this round"
            );
        }
        for (enterprise, e) in round.enterprises_failed {
            tracing::warn!(error = %e, enterprise = %enterprise, "auto-join round failed");
        }
    }
}

/// Confirms this instance's listener connections, so other instances keep showing them as
/// connected (and stop once this instance is gone).
async fn link_heartbeat(services: Services, links: Arc<LinkRegistry>) {
    let every = Duration::from_millis(LINK_HEARTBEAT_MS.unsigned_abs());
    let mut tick = tokio::time::interval(every);
    loop {
        tick.tick().await;
        if links.count() == 0 {
            continue;
        }
        if let Err(e) = services.listeners.links_seen(links.instance()).await {
            tracing::warn!(error = %e, "cannot confirm the listener connections held here");
        }
    }
}

/// Tells the other instances of a cluster, every `REPORT_EVERY`, which requests this one
/// admitted (nothing when there were none).
async fn report_admitted(limiter: Arc<Limiter>, bus: Arc<dyn EventBus>) {
    let mut tick = tokio::time::interval(REPORT_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if let Some(report) = limiter.report() {
            bus.publish(report);
        }
    }
}

/// Purges expired records every five minutes (the rules: `roomlink_app::housekeeping`).
async fn housekeeping(services: Services) {
    let mut tick = tokio::time::interval(Duration::from_secs(300));
    loop {
        tick.tick().await;
        match services.housekeeping.purge().await {
            Ok(purged) if purged.total() > 0 => tracing::info!(
                tokens = purged.tokens,
                paired = purged.paired,
                failures = purged.failures,
                audit = purged.audit,
                auto_joins = purged.auto_joins,
                webhook_deliveries = purged.webhook_deliveries,
                health_changes = purged.health_changes,
                call_sessions = purged.call_sessions,
                auth_failures = purged.auth_failures,
                template_jobs = purged.template_jobs,
                "expired records purged"
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "purging expired records failed"),
        }
    }
}

/// `roomlink migrate`.
pub async fn migrate(settings: &Settings) -> anyhow::Result<Vec<String>> {
    let store = crate::connect_store(settings, false).await?;
    Ok(store.migrate().await?)
}

/// `roomlink admin enterprise create NAME [--endpoint-limit N] [--create-database]`.
pub async fn create_enterprise(
    settings: &Settings,
    name: &str,
    limit: Option<u32>,
    create_database: bool,
) -> anyhow::Result<String> {
    // A new SQLite file only when asked: run from the wrong directory, the command would
    // otherwise fill a new empty database (with a new key) that no service reads.
    let services = crate::admin_services(settings, create_database).await?;
    let enterprise = services.admin.create_enterprise(name, limit).await?;
    Ok(format!(
        "created enterprise {} (id {}, endpoint limit {})",
        enterprise.name, enterprise.id, enterprise.endpoint_limit
    ))
}

/// `roomlink admin user create ... --password-stdin`: the password is the first line of stdin.
pub async fn create_user(
    settings: &Settings,
    enterprise: &str,
    username: &str,
    role: Role,
    password: Secret,
) -> anyhow::Result<String> {
    let services = crate::admin_services(settings, false).await?;
    let user = services
        .admin
        .create_user(enterprise, username, role, password)
        .await?;
    Ok(format!(
        "created user {} ({}) in enterprise {enterprise}",
        user.username,
        role.as_str()
    ))
}

/// Reads a password from standard input: the first line, without its line ending.
pub fn password_from_stdin() -> anyhow::Result<Secret> {
    let mut input = String::new();
    std::io::stdin()
        .take(4096)
        .read_to_string(&mut input)
        .context("cannot read the password from standard input")?;
    let line = input.lines().next().unwrap_or("");
    if line.is_empty() {
        // Bad input (exit code 1), like any other refused value.
        return Err(roomlink_domain::Error::invalid("no password on standard input").into());
    }
    Ok(Secret::new(line))
}

//! roomlink's HTTP adapter (actix-web): routes, authentication, body intake and catalog error
//! rendering over the domain's use cases. It knows no database and no listener: only
//! `roomlink_app::Services`, and the sockets outbound listeners open to it
//! ([`links`]).

mod body;
mod caller;
mod completion;
mod error;
mod limits;
pub mod links;
pub mod live;
mod metrics;
mod observe;
mod openapi;
mod routes;
mod table;
pub mod tls;

pub use error::ApiError;
pub use limits::{LimitOptions, Limiter, REPORT_EVERY, Rate};
pub use links::LinkRegistry;
pub use live::LiveHub;
pub use openapi::{DOCUMENT_PATH, REFERENCE_PATH};

use actix_web::dev::Server;
use actix_web::middleware::from_fn;
use actix_web::{App, HttpServer, web};
use roomlink_app::Services;
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;
use tracing_actix_web::TracingLogger;

/// The OpenAPI 3.1 document of the route table as pretty JSON with a final newline, as
/// `docs/openapi.json` holds it and `GET /api/openapi.json` serves it.
pub fn openapi_json() -> String {
    openapi::document_json(routes::TABLE)
}

/// What every handler can reach.
pub struct AppState {
    pub services: Services,
    pub metrics: metrics::Metrics,
    /// Outbound listeners' connections held by this instance.
    pub links: Arc<LinkRegistry>,
    /// Browsers' live-update streams on this instance.
    pub live: Arc<LiveHub>,
    limiter: Arc<limits::Limiter>,
}

impl AppState {
    pub fn new(
        services: Services,
        options: &ServerOptions,
        links: Arc<LinkRegistry>,
        live: Arc<LiveHub>,
    ) -> AppState {
        AppState {
            services,
            metrics: metrics::Metrics::default(),
            links,
            live,
            limiter: options
                .limiter
                .clone()
                .unwrap_or_else(|| Arc::new(limits::Limiter::new(options.limits))),
        }
    }
}

/// Server knobs the binary takes from configuration.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Worker threads; 0 means one per core.
    pub workers: usize,
    /// How long in-flight requests may run on after a graceful stop (whole seconds).
    pub shutdown_timeout: Duration,
    /// Rate limits and header bound (none by default; the binary configures them).
    pub limits: LimitOptions,
    /// The limiter to apply them with, when it must be reachable from outside (a cluster's
    /// instance charges it with the others' requests); one of its own otherwise.
    pub limiter: Option<Arc<limits::Limiter>>,
    /// HTTPS with this certificate; plain HTTP without.
    pub tls: Option<Arc<tls::ReloadableCert>>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            workers: 0,
            shutdown_timeout: Duration::from_secs(30),
            limits: LimitOptions::default(),
            limiter: None,
            tls: None,
        }
    }
}

/// Adds roomlink's routes, state and middleware to an actix `App` configuration.
pub fn configure(state: web::Data<AppState>) -> impl Fn(&mut web::ServiceConfig) + Clone {
    move |cfg| {
        cfg.app_data(state.clone());
        routes::configure(cfg);
        cfg.default_service(web::to(routes::not_found));
    }
}

/// Serves on an already bound listener (port 0 works) until the returned server is stopped
/// through its handle: `stop(true)` refuses new connections and gives in-flight requests
/// `shutdown_timeout` to end. Signals are the caller's (actix-web's own handling would make
/// SIGINT a forced stop); the binary handles SIGINT and SIGTERM itself.
pub fn serve(
    listener: TcpListener,
    services: Services,
    options: &ServerOptions,
    links: Arc<LinkRegistry>,
    live: Arc<LiveHub>,
) -> std::io::Result<Server> {
    let state = web::Data::new(AppState::new(services, options, links, live));
    let server = HttpServer::new(move || {
        App::new()
            // Innermost: the handler's work survives its client (see `completion`).
            .wrap(from_fn(completion::run_to_completion))
            .wrap(from_fn(observe::observe))
            // Outermost: the request span is open for everything inside, limits included.
            .wrap(TracingLogger::<observe::RequestSpan>::new())
            .configure(configure(state.clone()))
    })
    .shutdown_timeout(options.shutdown_timeout.as_secs())
    .disable_signals();
    let mut server = match &options.tls {
        None => server.listen(listener)?,
        Some(cert) => {
            let config = cert.server_config().map_err(std::io::Error::other)?;
            server.listen_rustls_0_23(listener, config)?
        }
    };
    if options.workers > 0 {
        server = server.workers(options.workers);
    }
    Ok(server.run())
}

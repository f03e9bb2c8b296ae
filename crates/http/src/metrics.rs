//! Prometheus metrics, kept in process with prometheus-client and rendered at `GET /metrics`.
//!
//! Each server has its own registry (no global recorder), so several servers in one process,
//! as in the API tests, count apart.
//!
//! Labels are bounded by construction: routes are the route table's patterns (never raw paths,
//! which hold ids and tokens), methods the standard ones (any other is `OTHER`), statuses are
//! HTTP codes, and listener outcomes are catalog names.

use crate::AppState;
use crate::table::{
    Access, Body, Description, Doc, Method as RouteMethod, Operation, Success, Tag,
};
use actix_web::http::{Method, header};
use actix_web::{HttpRequest, HttpResponse, web};
use prometheus_client::encoding::{EncodeLabelSet, text};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use roomlink_app::webhooks::DeliveryTotals;
use roomlink_domain::health::HealthCounts;
use roomlink_domain::ports::PoolStatus;
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: &'static str,
    route: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CommandLabels {
    command: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabels {
    limit: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PoolLabels {
    state: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OutcomeLabels {
    outcome: &'static str,
}

type Durations = Family<RouteLabels, Histogram, fn() -> Histogram>;

pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    durations: Durations,
    listener_commands: Family<CommandLabels, Counter>,
    limited: Family<LimitLabels, Counter>,
}

impl Default for Metrics {
    fn default() -> Self {
        let requests = Family::<RequestLabels, Counter>::default();
        let durations: Durations = Family::new_with_constructor(|| Histogram::new(BUCKETS));
        let listener_commands = Family::<CommandLabels, Counter>::default();
        let limited = Family::<LimitLabels, Counter>::default();
        // Counters are registered without `_total`, which the encoder adds to their samples;
        // help texts without their final period, which it adds too.
        let mut registry = Registry::default();
        registry.register(
            "roomlink_http_requests",
            "Requests answered, by method, route pattern and status",
            requests.clone(),
        );
        registry.register(
            "roomlink_http_request_duration_seconds",
            "Time to answer, by method and route pattern",
            durations.clone(),
        );
        registry.register(
            "roomlink_listener_commands",
            "Remote-control commands, by command and outcome (ok or the catalog error)",
            listener_commands.clone(),
        );
        registry.register(
            "roomlink_requests_limited",
            "Requests refused with 429, by limit",
            limited.clone(),
        );
        Metrics {
            registry,
            requests,
            durations,
            listener_commands,
            limited,
        }
    }
}

/// The remote-control command a route pattern sends, if it is one.
pub fn listener_command(route: &str) -> Option<&'static str> {
    let last = route.rsplit('/').next()?;
    [
        "join",
        "senddtmf",
        "hangup",
        "mutemicrophone",
        "unmutemicrophone",
    ]
    .into_iter()
    .find(|c| *c == last)
    .filter(|_| route.starts_with("/api/endpoints/{id}/"))
}

/// The method as a label: a client can send any token as a method, and each would be a series.
fn method_label(method: &Method) -> &'static str {
    const KNOWN: [Method; 9] = [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::PATCH,
        Method::OPTIONS,
        Method::CONNECT,
        Method::TRACE,
    ];
    const NAMES: [&str; 9] = [
        "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE",
    ];
    KNOWN
        .iter()
        .position(|m| m == method)
        .map_or("OTHER", |i| NAMES[i])
}

impl Metrics {
    /// One answered request. `outcome` is the catalog name of a failure, `None` on success.
    pub fn record(
        &self,
        method: &Method,
        route: &str,
        status: u16,
        elapsed: Duration,
        outcome: Option<&'static str>,
    ) {
        let method = method_label(method);
        self.requests
            .get_or_create(&RequestLabels {
                method,
                route: route.to_owned(),
                status,
            })
            .inc();
        self.durations
            .get_or_create(&RouteLabels {
                method,
                route: route.to_owned(),
            })
            .observe(elapsed.as_secs_f64());
        if let Some(command) = listener_command(route) {
            self.listener_commands
                .get_or_create(&CommandLabels {
                    command,
                    outcome: outcome.unwrap_or("ok"),
                })
                .inc();
        }
    }

    /// A request refused by a rate limit or throttle (`limit` as in the error's details).
    pub fn record_limited(&self, limit: &'static str) {
        self.limited.get_or_create(&LimitLabels { limit }).inc();
    }

    /// The exposition, in the OpenMetrics text format: the counters kept here and what the
    /// rest of the service reads at this scrape.
    pub fn render(&self, readings: Readings) -> String {
        let Readings {
            pool,
            rooms,
            live_streams,
            webhooks,
        } = readings;
        let mut out = String::with_capacity(4096);
        // Writing into a String cannot fail.
        let _ = text::encode_registry(&mut out, &self.registry);
        let mut live = Registry::default();
        live.register(
            "roomlink_live_streams",
            "Live-update event streams open on this instance (GET /api/live/events)",
            ConstGauge::new(i64::try_from(live_streams).unwrap_or(i64::MAX)),
        );
        let _ = text::encode_registry(&mut out, &live);
        let _ = text::encode_registry(&mut out, &webhook_registry(webhooks));
        if let Some(pool) = pool {
            let _ = text::encode_registry(&mut out, &pool_registry(pool));
        }
        if let Some(rooms) = rooms {
            let _ = text::encode_registry(&mut out, &rooms_registry(rooms));
        }
        let _ = text::encode_eof(&mut out);
        out
    }
}

/// What a scrape reads from the rest of the service at that moment.
#[derive(Debug, Default)]
pub struct Readings {
    /// The database pool; `None` when the store has none.
    pub pool: Option<PoolStatus>,
    /// Rooms per health state; `None` when the database could not say.
    pub rooms: Option<HealthCounts>,
    /// Browsers' event streams open on this instance.
    pub live_streams: usize,
    /// This instance's webhook attempts since it started.
    pub webhooks: DeliveryTotals,
}

/// This instance's webhook attempts by outcome, and the subscriptions its attempts paused.
fn webhook_registry(totals: DeliveryTotals) -> Registry {
    let mut registry = Registry::default();
    let attempts = Family::<OutcomeLabels, Counter>::default();
    for (outcome, n) in [("delivered", totals.delivered), ("failed", totals.failed)] {
        attempts.get_or_create(&OutcomeLabels { outcome }).inc_by(n);
    }
    registry.register(
        "roomlink_webhook_attempts",
        "Webhook delivery attempts made by this instance, by outcome (failed: any answer but 2xx, a timeout, a refused target)",
        attempts,
    );
    let paused = Counter::<u64>::default();
    paused.inc_by(totals.paused);
    registry.register(
        "roomlink_webhook_subscriptions_paused",
        "Subscriptions this instance paused because a delivery's retries were spent",
        paused,
    );
    registry
}

/// The fleet's rooms per health state (every enterprise; the same on every instance, so a
/// dashboard takes one instance's value, not the sum).
fn rooms_registry(counts: HealthCounts) -> Registry {
    let mut registry = Registry::default();
    let rooms = Family::<PoolLabels, Gauge>::default();
    for (state, n) in [
        ("ok", counts.ok),
        ("degraded", counts.degraded),
        ("offline", counts.offline),
    ] {
        rooms
            .get_or_create(&PoolLabels { state })
            .set(i64::try_from(n).unwrap_or(i64::MAX));
    }
    registry.register(
        "roomlink_rooms",
        "Rooms by health state (GET /api/health/rooms), every enterprise, computed at most every 30 s",
        rooms,
    );
    registry
}

/// The pool's state at this scrape, as a registry of its own: read when asked, never stored,
/// and left out when the store has no pool.
fn pool_registry(p: PoolStatus) -> Registry {
    let mut registry = Registry::default();
    registry.register(
        "roomlink_db_pool_max_connections",
        "Connections the database pool may open",
        ConstGauge::new(p.max_size),
    );
    let connections = Family::<PoolLabels, Gauge>::default();
    let gauge = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
    connections
        .get_or_create(&PoolLabels { state: "in_use" })
        .set(gauge(p.size.saturating_sub(p.available)));
    connections
        .get_or_create(&PoolLabels { state: "idle" })
        .set(gauge(p.available));
    registry.register(
        "roomlink_db_pool_connections",
        "Open database connections by state",
        connections,
    );
    registry.register(
        "roomlink_db_pool_waiting",
        "Requests waiting for a database connection (pool saturation)",
        ConstGauge::new(p.waiting),
    );
    registry
}

/// Whether the scraper asked for OpenMetrics (Prometheus does, first), which is what the text
/// is; others get the same text labelled as the classic format, which their parsers read too:
/// it differs only in comment lines (`# EOF`, counters' `# TYPE` without `_total`).
fn wants_openmetrics(req: &HttpRequest) -> bool {
    req.headers()
        .get_all(header::ACCEPT)
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';').map(str::trim);
            let media = parts.next().unwrap_or_default();
            let refused = parts.any(|p| {
                let q = p.strip_prefix("q=").or_else(|| p.strip_prefix("Q="));
                q.and_then(|q| q.trim().parse::<f64>().ok()) == Some(0.0)
            });
            media.eq_ignore_ascii_case("application/openmetrics-text") && !refused
        })
}

/// `GET /metrics`, unauthenticated as scrapers expect: it reveals counts, never ids or secrets.
pub(crate) const SERVE: Operation = Operation {
    method: RouteMethod::Get,
    path: "/metrics",
    handler: |route| route.to(serve),
    access: Access::Public,
    doc: Doc::Described(Description {
        id: "metrics",
        tag: Tag::Operations,
        summary: "Prometheus metrics",
        description: "Request counts and latencies by route pattern, listener command outcomes, \
            rate-limit refusals, database pool use and rooms per health state, in the \
            Prometheus text format.",
        params: &[],
        body: Body::None,
        success: Success::Other("text/plain"),
        errors: &[],
    }),
};

async fn serve(req: HttpRequest, state: web::Data<AppState>) -> HttpResponse {
    // A database that cannot answer leaves the gauges out rather than failing the scrape.
    let rooms = match state.services.health.fleet_counts().await {
        Ok(counts) => Some(counts),
        Err(error) => {
            tracing::warn!(%error, "room health gauges left out of this scrape");
            None
        }
    };
    let text = state.metrics.render(Readings {
        pool: state.services.housekeeping.pool_status(),
        rooms,
        live_streams: state.live.open_streams(),
        webhooks: state.services.webhook_deliveries.counts.totals(),
    });
    let content_type = if wants_openmetrics(&req) {
        OPENMETRICS
    } else {
        PROMETHEUS_TEXT
    };
    HttpResponse::Ok().content_type(content_type).body(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use actix_web::test::TestRequest;

    #[test]
    fn renders_counts_buckets_and_outcomes() {
        let m = Metrics::default();
        let get = Method::GET;
        m.record(&get, "/api/endpoints", 200, Duration::from_millis(2), None);
        m.record(&get, "/api/endpoints", 200, Duration::from_secs(3), None);
        m.record(
            &Method::POST,
            "/api/endpoints/{id}/join",
            504,
            Duration::from_millis(7),
            Some("ExternalSystemTimedOut"),
        );
        m.record_limited("address");
        let text = m.render(Readings {
            pool: Some(PoolStatus {
                max_size: 16,
                size: 3,
                available: 1,
                waiting: 0,
            }),
            rooms: Some(HealthCounts {
                ok: 5,
                degraded: 1,
                offline: 2,
            }),
            live_streams: 3,
            webhooks: DeliveryTotals {
                delivered: 7,
                failed: 2,
                paused: 1,
            },
        });
        for line in [
            "roomlink_live_streams 3",
            "roomlink_webhook_attempts_total{outcome=\"delivered\"} 7",
            "roomlink_webhook_attempts_total{outcome=\"failed\"} 2",
            "roomlink_webhook_subscriptions_paused_total 1",
            "roomlink_http_requests_total{method=\"GET\",route=\"/api/endpoints\",status=\"200\"} 2",
            "roomlink_http_request_duration_seconds_bucket{le=\"0.0025\",method=\"GET\",route=\"/api/endpoints\"} 1",
            "roomlink_http_request_duration_seconds_bucket{le=\"2.5\",method=\"GET\",route=\"/api/endpoints\"} 1",
            "roomlink_http_request_duration_seconds_bucket{le=\"+Inf\",method=\"GET\",route=\"/api/endpoints\"} 2",
            "roomlink_http_request_duration_seconds_count{method=\"GET\",route=\"/api/endpoints\"} 2",
            "roomlink_listener_commands_total{command=\"join\",outcome=\"ExternalSystemTimedOut\"} 1",
            "roomlink_requests_limited_total{limit=\"address\"} 1",
            "roomlink_db_pool_connections{state=\"in_use\"} 2",
            "roomlink_db_pool_connections{state=\"idle\"} 1",
            "roomlink_db_pool_max_connections 16",
            "roomlink_db_pool_waiting 0",
            "roomlink_rooms{state=\"ok\"} 5",
            "roomlink_rooms{state=\"degraded\"} 1",
            "roomlink_rooms{state=\"offline\"} 2",
            "# HELP roomlink_http_requests Requests answered, by method, route pattern and status.",
            "# TYPE roomlink_http_request_duration_seconds histogram",
            "# HELP roomlink_db_pool_waiting Requests waiting for a database connection (pool saturation).",
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line} in\n{text}");
        }
        // Every bound operators' dashboards use, then the overflow bucket. (prometheus-client
        // puts `le` first among the labels and writes 1 as "1.0".)
        let bounds: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("roomlink_http_request_duration_seconds_bucket{"))
            .filter(|l| l.contains("route=\"/api/endpoints\"}"))
            .filter_map(|l| l.split("le=\"").nth(1)?.split('"').next())
            .collect();
        assert_eq!(
            bounds,
            [
                "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25",
                "0.5", "1.0", "2.5", "+Inf"
            ]
        );
        assert_eq!(text.lines().last(), Some("# EOF"));
        assert_eq!(text.matches("# EOF").count(), 1);
    }

    #[test]
    fn no_pool_no_pool_metrics_and_odd_methods_share_one_label() {
        let m = Metrics::default();
        let odd = Method::from_bytes(b"X-SCAN-1").expect("a method token");
        m.record(&odd, "(unmatched)", 404, Duration::ZERO, None);
        let text = m.render(Readings::default());
        assert!(!text.contains("roomlink_db_pool"), "{text}");
        assert!(!text.contains("X-SCAN-1"), "{text}");
        assert!(text.contains(
            "roomlink_http_requests_total{method=\"OTHER\",route=\"(unmatched)\",status=\"404\"} 1"
        ));
    }

    #[test]
    fn openmetrics_only_when_asked_for() {
        let prometheus = "application/openmetrics-text;version=1.0.0;q=0.5,\
            application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2";
        for (accept, expected) in [
            (Some(prometheus), true),
            (Some("application/OpenMetrics-Text"), true),
            (Some("application/openmetrics-text; q=0, text/plain"), false),
            (Some("application/openmetrics-text;q=0.000"), false),
            (Some("text/plain"), false),
            (Some("*/*"), false),
            (None, false),
        ] {
            let mut req = TestRequest::get();
            if let Some(accept) = accept {
                req = req.insert_header((header::ACCEPT, accept));
            }
            assert_eq!(
                wants_openmetrics(&req.to_http_request()),
                expected,
                "{accept:?}"
            );
        }
    }

    #[test]
    fn only_control_routes_are_listener_commands() {
        assert_eq!(listener_command("/api/endpoints/{id}/join"), Some("join"));
        assert_eq!(listener_command("/api/endpoints/{id}/status"), None);
        assert_eq!(listener_command("/api/listenerservices/{id}"), None);
    }
}

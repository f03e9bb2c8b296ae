//! Prometheus metrics, kept in process and rendered in the text exposition format at
//! `GET /metrics`.
//!
//! Labels are bounded by construction: routes are the route table's patterns (never raw paths,
//! which hold ids and tokens), statuses are HTTP codes, and listener outcomes are catalog names.

use crate::AppState;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Success, Tag};
use actix_web::{HttpResponse, web};
use roomlink_domain::ports::PoolStatus;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

#[derive(Default)]
struct RouteStats {
    by_status: BTreeMap<u16, u64>,
    /// Per bucket of [`BUCKETS`]; the `+Inf` bucket is the total count.
    buckets: [u64; BUCKETS.len()],
    count: u64,
    sum_seconds: f64,
}

#[derive(Default)]
struct Counters {
    /// By (method, route pattern).
    routes: BTreeMap<(String, String), RouteStats>,
    /// By (command, outcome).
    listener_commands: BTreeMap<(&'static str, &'static str), u64>,
    /// By limit name.
    limited: BTreeMap<&'static str, u64>,
}

#[derive(Default)]
pub struct Metrics {
    counters: Mutex<Counters>,
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

impl Metrics {
    fn with<R>(&self, f: impl FnOnce(&mut Counters) -> R) -> R {
        // A poisoned lock only means another request panicked mid-update: counts stay usable.
        let mut counters = self
            .counters
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut counters)
    }

    /// One answered request. `outcome` is the catalog name of a failure, `None` on success.
    pub fn record(
        &self,
        method: &str,
        route: &str,
        status: u16,
        elapsed: Duration,
        outcome: Option<&'static str>,
    ) {
        let seconds = elapsed.as_secs_f64();
        self.with(|c| {
            // Look up without allocating: only a route's first request builds its key.
            let stats = match c
                .routes
                .iter_mut()
                .find(|((m, r), _)| m == method && r == route)
            {
                Some((_, stats)) => stats,
                None => c
                    .routes
                    .entry((method.to_owned(), route.to_owned()))
                    .or_default(),
            };
            *stats.by_status.entry(status).or_default() += 1;
            stats.count += 1;
            stats.sum_seconds += seconds;
            if let Some(i) = BUCKETS.iter().position(|b| seconds <= *b) {
                for bucket in &mut stats.buckets[i..] {
                    *bucket += 1;
                }
            }
            if let Some(command) = listener_command(route) {
                *c.listener_commands
                    .entry((command, outcome.unwrap_or("ok")))
                    .or_default() += 1;
            }
        });
    }

    /// A request refused by a rate limit or throttle (`limit` as in the error's details).
    pub fn record_limited(&self, limit: &'static str) {
        self.with(|c| *c.limited.entry(limit).or_default() += 1);
    }

    /// The exposition text.
    pub fn render(&self, pool: Option<PoolStatus>) -> String {
        let mut out = String::with_capacity(4096);
        self.with(|c| render_counters(c, &mut out));
        if let Some(p) = pool {
            gauge(
                &mut out,
                "roomlink_db_pool_max_connections",
                "Connections the database pool may open.",
                p.max_size,
            );
            let _ = writeln!(
                out,
                "# HELP roomlink_db_pool_connections Open database connections by state.\n\
                 # TYPE roomlink_db_pool_connections gauge\n\
                 roomlink_db_pool_connections{{state=\"in_use\"}} {}\n\
                 roomlink_db_pool_connections{{state=\"idle\"}} {}",
                p.size.saturating_sub(p.available),
                p.available
            );
            gauge(
                &mut out,
                "roomlink_db_pool_waiting",
                "Requests waiting for a database connection (pool saturation).",
                p.waiting,
            );
        }
        out
    }
}

/// `GET /metrics`, unauthenticated as scrapers expect: it reveals counts, never ids or secrets.
pub(crate) const SERVE: Operation = Operation {
    method: Method::Get,
    path: "/metrics",
    handler: |route| route.to(serve),
    access: Access::Public,
    doc: Doc::Described(Description {
        id: "metrics",
        tag: Tag::Operations,
        summary: "Prometheus metrics",
        description: "Request counts and latencies by route pattern, listener command outcomes, \
            rate-limit refusals and database pool use, in the Prometheus text format.",
        params: &[],
        body: Body::None,
        success: Success::Other("text/plain"),
        errors: &[],
    }),
};

async fn serve(state: web::Data<AppState>) -> HttpResponse {
    let text = state
        .metrics
        .render(state.services.housekeeping.pool_status());
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(text)
}

fn gauge(out: &mut String, name: &str, help: &str, value: usize) {
    let _ = writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {value}"
    );
}

fn render_counters(c: &Counters, out: &mut String) {
    let _ = writeln!(
        out,
        "# HELP roomlink_http_requests_total Requests answered, by method, route pattern and status.\n\
         # TYPE roomlink_http_requests_total counter"
    );
    for ((method, route), stats) in &c.routes {
        for (status, n) in &stats.by_status {
            let _ = writeln!(
                out,
                "roomlink_http_requests_total{{method=\"{method}\",route=\"{route}\",status=\"{status}\"}} {n}"
            );
        }
    }
    let _ = writeln!(
        out,
        "# HELP roomlink_http_request_duration_seconds Time to answer, by method and route pattern.\n\
         # TYPE roomlink_http_request_duration_seconds histogram"
    );
    for ((method, route), stats) in &c.routes {
        let labels = format!("method=\"{method}\",route=\"{route}\"");
        for (bound, n) in BUCKETS.iter().zip(stats.buckets) {
            let _ = writeln!(
                out,
                "roomlink_http_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {n}"
            );
        }
        let _ = writeln!(
            out,
            "roomlink_http_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {count}\n\
             roomlink_http_request_duration_seconds_sum{{{labels}}} {sum}\n\
             roomlink_http_request_duration_seconds_count{{{labels}}} {count}",
            count = stats.count,
            sum = stats.sum_seconds
        );
    }
    let _ = writeln!(
        out,
        "# HELP roomlink_listener_commands_total Remote-control commands, by command and outcome (ok or the catalog error).\n\
         # TYPE roomlink_listener_commands_total counter"
    );
    for ((command, outcome), n) in &c.listener_commands {
        let _ = writeln!(
            out,
            "roomlink_listener_commands_total{{command=\"{command}\",outcome=\"{outcome}\"}} {n}"
        );
    }
    let _ = writeln!(
        out,
        "# HELP roomlink_requests_limited_total Requests refused with 429, by limit.\n\
         # TYPE roomlink_requests_limited_total counter"
    );
    for (limit, n) in &c.limited {
        let _ = writeln!(
            out,
            "roomlink_requests_limited_total{{limit=\"{limit}\"}} {n}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts_buckets_and_outcomes() {
        let m = Metrics::default();
        m.record("GET", "/api/endpoints", 200, Duration::from_millis(2), None);
        m.record("GET", "/api/endpoints", 200, Duration::from_secs(3), None);
        m.record(
            "POST",
            "/api/endpoints/{id}/join",
            504,
            Duration::from_millis(7),
            Some("ExternalSystemTimedOut"),
        );
        m.record_limited("address");
        let text = m.render(Some(PoolStatus {
            max_size: 16,
            size: 3,
            available: 1,
            waiting: 0,
        }));
        for line in [
            "roomlink_http_requests_total{method=\"GET\",route=\"/api/endpoints\",status=\"200\"} 2",
            "roomlink_http_request_duration_seconds_bucket{method=\"GET\",route=\"/api/endpoints\",le=\"0.0025\"} 1",
            "roomlink_http_request_duration_seconds_bucket{method=\"GET\",route=\"/api/endpoints\",le=\"2.5\"} 1",
            "roomlink_http_request_duration_seconds_bucket{method=\"GET\",route=\"/api/endpoints\",le=\"+Inf\"} 2",
            "roomlink_listener_commands_total{command=\"join\",outcome=\"ExternalSystemTimedOut\"} 1",
            "roomlink_requests_limited_total{limit=\"address\"} 1",
            "roomlink_db_pool_connections{state=\"in_use\"} 2",
            "roomlink_db_pool_max_connections 16",
        ] {
            assert!(text.lines().any(|l| l == line), "missing {line} in\n{text}");
        }
    }

    #[test]
    fn only_control_routes_are_listener_commands() {
        assert_eq!(listener_command("/api/endpoints/{id}/join"), Some("join"));
        assert_eq!(listener_command("/api/endpoints/{id}/status"), None);
        assert_eq!(listener_command("/api/listenerservices/{id}"), None);
    }
}

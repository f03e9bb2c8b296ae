//! Room usage at a year of call sessions for 10,000 rooms on PostgreSQL: the figures in
//! docs/benchmarks.md ("Room usage at a year of sessions"). A measurement, not a check: it
//! takes minutes and asserts no timing, so `cargo test` skips it (saying why) and
//! `cargo xtask bench-usage` runs it, printing what it measured.
//!
//! The sessions are written in one statement with the rollup triggers off, then summed by the
//! migration's own statements (what upgrading a deployment with a year of sessions costs); the
//! questions then go through `UsageStore::usage`, the statement `GET /api/analytics/usage`
//! sends.

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use futures::future::join_all;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::enterprise::Enterprise;
use roomlink_domain::ids::{EndpointId, EnterpriseId};
use roomlink_domain::ports::{EndpointStore, EnterpriseStore, StatusStore, UsageStore};
use roomlink_domain::rules::put;
use roomlink_domain::status::EndpointStatus;
use roomlink_domain::usage::{UsageGrouping, UsageQuery};
use roomlink_store::testing::TestDatabase;
use roomlink_store::{DbConfig, DbStore};
use std::time::{Duration, Instant};

const ROOMS: usize = 10_000;
const DAY: i64 = 86_400_000;
/// The migration that adds the rollups; its statements between these two markers sum the
/// sessions already recorded.
const MIGRATION: &str =
    include_str!("../../migrations/postgres/2026-12-04-000000_usage_rollups/up.sql");
const BACKFILL_FROM: &str = "-- that a range of days reads few pages.";
const BACKFILL_TO: &str = "CREATE FUNCTION";

fn room(enterprise: &EnterpriseId, n: usize) -> Endpoint {
    let body = serde_json::json!({ "name": format!("Room {n}") });
    let profile = put::insert(body.as_object().unwrap()).unwrap().profile;
    Endpoint::new(
        EndpointId::from_trusted(format!("bench-room-{n:05}")),
        enterprise.clone(),
        profile,
        None,
    )
    .unwrap()
}

fn median_and_p95(mut runs: Vec<Duration>) -> (f64, f64) {
    runs.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let p95 = runs[((runs.len() * 95).div_ceil(100)).saturating_sub(1)];
    (ms(runs[runs.len() / 2]), ms(p95))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement of minutes, not a check: `cargo xtask bench-usage` runs it"]
async fn usage_at_a_year_of_sessions() {
    let db = TestDatabase::create()
        .await
        .expect("bench-usage needs ROOMLINK_TEST_DATABASE_URL (a PostgreSQL server)");
    let store = DbStore::connect(&DbConfig::new(db.url())).await.unwrap();
    store.migrate().await.unwrap();
    let enterprise = Enterprise {
        id: EnterpriseId::from_trusted("bench-usage".into()),
        name: "bench-usage".into(),
        endpoint_limit: ROOMS as u32 + 10,
        public_key: None,
    };
    store.create_enterprise(&enterprise).await.unwrap();
    let ent = &enterprise.id;
    let clock = Instant::now();
    for chunk in (0..ROOMS).collect::<Vec<_>>().chunks(500) {
        join_all(chunk.iter().map(|&n| {
            let store = &store;
            async move {
                let endpoint = room(ent, n);
                let audit = AuditEntry::sample(ent, "endpoints.create", 0);
                store.insert_endpoint(&endpoint, &audit).await.unwrap();
            }
        }))
        .await;
    }
    println!(
        "bench-usage: {ROOMS} rooms in {:.1} s",
        clock.elapsed().as_secs_f64()
    );

    // A year of calls, three a day per room, 15 to 59 minutes long, each room at its own
    // seconds past 08:00, 11:00 and 14:00 UTC; "now" is noon of the day after.
    let first_day: i64 = 20_423; // 2025-12-01
    let days = 365;
    let now = (first_day + days) * DAY + 12 * 3_600_000;
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    let clock = Instant::now();
    conn.batch_execute(&format!(
        "ALTER TABLE call_sessions DISABLE TRIGGER USER; \
         INSERT INTO call_sessions (enterprise_id, endpoint_id, started_ms, ended_ms, source) \
         SELECT e.enterprise_id, e.id, s.started, s.started + (15 + (d.day + k) % 45) * 60000, \
                'device' \
         FROM endpoints e, generate_series({first_day}::bigint, {last_day}) AS d(day), \
              generate_series(0::bigint, 2) AS k, \
              LATERAL (SELECT d.day * {DAY} + (8 + 3 * k) * 3600000 \
                              + (hashtext(e.id) & 2047) * 1000 AS started) AS s \
         WHERE e.enterprise_id = 'bench-usage'; \
         ALTER TABLE call_sessions ENABLE TRIGGER USER;",
        last_day = first_day + days - 1
    ))
    .await
    .unwrap();
    let sessions = ROOMS as i64 * days * 3;
    println!(
        "bench-usage: {sessions} sessions written in {:.1} s",
        clock.elapsed().as_secs_f64()
    );
    let backfill = MIGRATION
        .split_once(BACKFILL_FROM)
        .and_then(|(_, rest)| rest.split_once(BACKFILL_TO))
        .map(|(statements, _)| statements)
        .expect("the migration's backfill markers");
    let clock = Instant::now();
    conn.batch_execute(&format!(
        "TRUNCATE usage_hours, usage_room_spans; {backfill}"
    ))
    .await
    .unwrap();
    println!(
        "bench-usage: the migration's sums of them in {:.1} s",
        clock.elapsed().as_secs_f64()
    );
    conn.batch_execute("VACUUM ANALYZE").await.unwrap();

    let periods = [
        ("a year", now - 365 * DAY),
        ("30 days", now - 30 * DAY),
        ("1 day", now - DAY),
    ];
    println!("bench-usage: | period | groupBy | groups | p50 ms | p95 ms |");
    for (label, from) in periods {
        for grouping in UsageGrouping::ALL {
            let query = UsageQuery::new(from, now, grouping).unwrap();
            let groups = store.usage(ent, &query, now).await.unwrap().len();
            let mut runs = Vec::new();
            for _ in 0..20 {
                let clock = Instant::now();
                store.usage(ent, &query, now).await.unwrap();
                runs.push(clock.elapsed());
            }
            let (p50, p95) = median_and_p95(runs);
            println!(
                "bench-usage: | {label} | {} | {groups} | {p50:.1} | {p95:.1} |",
                grouping.name()
            );
        }
    }

    // What the triggers cost the status writes: every room's call opening, then ending.
    for (what, active) in [("open", true), ("end", false)] {
        let at = now + if active { 60_000 } else { 30 * 60_000 };
        let statuses: Vec<EndpointStatus> = (0..ROOMS)
            .map(|n| EndpointStatus {
                endpoint_id: room(ent, n).id().clone(),
                call_active: active,
                reserved: !active,
                dialing: false,
                microphone_muted: false,
                last_dial_timestamp_millis: None,
                timestamp: at,
            })
            .collect();
        let clock = Instant::now();
        store.save_statuses(ent, &statuses).await.unwrap();
        println!(
            "bench-usage: one status write of {ROOMS} rooms whose calls {what}: {:.2} s",
            clock.elapsed().as_secs_f64()
        );
    }
}

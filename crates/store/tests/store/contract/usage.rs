//! UsageStore: call sessions follow the status writes, the database's sums agree with the
//! domain's reference computation, retention and deletion take sessions with them.

use super::*;
use roomlink_domain::audit::{ActorKind, AuditEntry};
use roomlink_domain::usage::{
    CallSession, JoinSource, UsageGrouping, UsageQuery, UsageTotals, sum_sessions,
};

const MINUTE: i64 = 60_000;
/// 2026-11-30 09:00 UTC, a Monday.
const NINE: i64 = 20_787 * 86_400_000 + 9 * 60 * MINUTE;

fn command(ent: &Enterprise, operation: &str, target: &EndpointId, at: i64) -> AuditEntry {
    let mut e = AuditEntry::sample(&ent.id, operation, at);
    e.target_id = Some(target.as_str().to_owned());
    e
}

fn session(id: &EndpointId, start: i64, end: Option<i64>, source: JoinSource) -> CallSession {
    CallSession {
        endpoint_id: id.clone(),
        started_ms: start,
        ended_ms: end,
        source,
    }
}

async fn save(h: &Harness, ent: &Enterprise, rows: &[EndpointStatus]) {
    h.store.save_statuses(&ent.id, rows).await.unwrap();
}

async fn sessions(h: &Harness, ent: &Enterprise) -> Vec<CallSession> {
    h.store
        .call_sessions(&ent.id, 0, i64::MAX, 1_000)
        .await
        .unwrap()
}

pub async fn call_sessions_follow_the_statuses(h: &Harness) {
    let e = enterprise(h, 10).await;
    let a = inserted(h, named(h, &e, "A")).await;
    let b = inserted(h, named(h, &e, "B")).await;
    let c = inserted(h, named(h, &e, "C")).await;
    let (a, b, c) = (a.id(), b.id(), c.id());

    // A join through the API that is still dialling opens nothing yet.
    let join = command(&e, "endpoints.join", a, NINE);
    h.store
        .save_command_status(&e.id, &status(a, NINE, false), &join)
        .await
        .unwrap();
    assert_eq!(sessions(h, &e).await, []);

    // B's call was started on the device; A's, seen by the next poll, is the join's.
    save(
        h,
        &e,
        &[
            status(b, NINE + MINUTE, true),
            status(c, NINE + MINUTE, false),
        ],
    )
    .await;
    save(
        h,
        &e,
        &[
            status(a, NINE + 2 * MINUTE, true),
            status(b, NINE + 2 * MINUTE, true),
        ],
    )
    .await;
    // Seen again: still one session each. B's call ends.
    save(
        h,
        &e,
        &[
            status(a, NINE + 3 * MINUTE, true),
            status(b, NINE + 3 * MINUTE, false),
        ],
    )
    .await;
    // A hangs up through the API.
    let hang_up = command(&e, "endpoints.hangup", a, NINE + 4 * MINUTE);
    h.store
        .save_command_status(&e.id, &status(a, NINE + 4 * MINUTE, false), &hang_up)
        .await
        .unwrap();
    // The auto-join round joins C, which is in the call at once.
    let mut auto = command(&e, "endpoints.join", c, NINE + 5 * MINUTE);
    auto.actor.kind = ActorKind::Scheduler;
    h.store
        .save_command_status(&e.id, &status(c, NINE + 5 * MINUTE, true), &auto)
        .await
        .unwrap();
    // A's next call, soon after: the join was spent on the first, so the device's.
    let again = NINE + 4 * MINUTE + 30_000;
    save(h, &e, &[status(a, again, true)]).await;

    let expected = vec![
        session(
            b,
            NINE + MINUTE,
            Some(NINE + 3 * MINUTE),
            JoinSource::Device,
        ),
        session(
            a,
            NINE + 2 * MINUTE,
            Some(NINE + 4 * MINUTE),
            JoinSource::Api,
        ),
        session(a, again, None, JoinSource::Device),
        session(c, NINE + 5 * MINUTE, None, JoinSource::AutoJoin),
    ];
    assert_eq!(sessions(h, &e).await, expected);

    // Only sessions overlapping the period, at most `limit`.
    let overlapping = h
        .store
        .call_sessions(&e.id, NINE + 3 * MINUTE + 1, NINE + 6 * MINUTE, 10)
        .await
        .unwrap();
    assert_eq!(overlapping, expected[1..]);
    let first = h.store.call_sessions(&e.id, 0, i64::MAX, 1).await.unwrap();
    assert_eq!(first, expected[..1]);

    // Another enterprise sees none of them.
    let other = enterprise(h, 10).await;
    assert_eq!(sessions(h, &other).await, []);

    // A deleted room's sessions go with it.
    assert!(
        h.store
            .delete_endpoint(&e.id, c, &audit_for(&e.id))
            .await
            .unwrap()
    );
    let left = sessions(h, &e).await;
    assert!(left.iter().all(|s| s.endpoint_id != *c), "{left:?}");
}

pub async fn usage_sums_agree_with_the_reference(h: &Harness) {
    let e = enterprise(h, 10).await;
    let rooms: Vec<Endpoint> =
        join_all((0..3).map(|n| inserted(h, named(h, &e, &format!("R{n}"))))).await;
    // A week of calls: each room in a call of 20 + 7n minutes every 5 hours, one still going.
    let mut t = NINE - 3 * 24 * 60 * MINUTE;
    let now = NINE + 4 * 24 * 60 * MINUTE;
    let mut n = 0;
    while t < now - 60 * MINUTE {
        let room = rooms[n % 3].id();
        h.store
            .save_statuses(&e.id, &[status(room, t, true)])
            .await
            .unwrap();
        let end = t + (20 + 7 * (n as i64 % 5)) * MINUTE;
        h.store
            .save_statuses(&e.id, &[status(room, end, false)])
            .await
            .unwrap();
        t += 5 * 60 * MINUTE + 13 * MINUTE;
        n += 1;
    }
    let ongoing = rooms[0].id();
    h.store
        .save_statuses(&e.id, &[status(ongoing, now - 30 * MINUTE, true)])
        .await
        .unwrap();
    let all = sessions(h, &e).await;
    assert_eq!(all.len(), n + 1);

    // Periods cutting calls in two, a period ending before now, and one reaching past it.
    let periods = [
        (
            NINE - 2 * 24 * 60 * MINUTE + 7 * MINUTE,
            NINE + 2 * 24 * 60 * MINUTE,
        ),
        (NINE, now + 24 * 60 * MINUTE),
        (0, now),
    ];
    for (from, to) in periods {
        for grouping in UsageGrouping::ALL {
            let query = UsageQuery::new(from, to, grouping).unwrap_or(UsageQuery {
                from,
                to,
                group_by: grouping,
            });
            let got = h.store.usage(&e.id, &query, now).await.unwrap();
            let mut expected: Vec<UsageTotals> = sum_sessions(&query, &all, now);
            expected.sort_by(|a, b| a.key.cmp(&b.key));
            assert_eq!(got, expected, "{grouping:?} over {from}..{to}");
            assert!(!got.is_empty());
        }
    }
}

/// Every grouping over `periods` equals the reference over the sessions stored now.
async fn usage_agrees(h: &Harness, e: &Enterprise, periods: &[(i64, i64)], now: i64) {
    let all = h
        .store
        .call_sessions(&e.id, 0, i64::MAX, 10_000)
        .await
        .unwrap();
    for &(from, to) in periods {
        for grouping in UsageGrouping::ALL {
            let query = UsageQuery::new(from, to, grouping).unwrap();
            let got = h.store.usage(&e.id, &query, now).await.unwrap();
            let mut expected: Vec<UsageTotals> = sum_sessions(&query, &all, now);
            expected.sort_by(|a, b| a.key.cmp(&b.key));
            assert_eq!(got, expected, "{grouping:?} over {from}..{to}");
            assert!(!got.is_empty());
        }
    }
}

/// Over months, the databases answer from their rollups (roomlink_domain::usage::rollup) and
/// the sessions at the edges: still the reference's answer, with calls longer than a day,
/// calls crossing the period's ends, and after a room's deletion and a retention purge.
pub async fn usage_from_rollups_agrees_over_months(h: &Harness) {
    const HOUR: i64 = 60 * MINUTE;
    const DAY: i64 = 24 * HOUR;
    let e = enterprise(h, 10).await;
    let rooms: Vec<Endpoint> =
        join_all((0..3).map(|n| inserted(h, named(h, &e, &format!("R{n}"))))).await;
    let ids: Vec<&EndpointId> = rooms.iter().map(|r| r.id()).collect();
    let start = NINE - 150 * DAY;
    let now = NINE + 5 * DAY + 3 * HOUR;
    let (mut t, mut step) = (start, 0_i64);
    while t < now - 2 * HOUR {
        // R0: a short call every step; R1: in one call over two steps of three (calls of
        // about a day); R2: a short call every other step.
        let long = step % 3 != 2;
        let at_start: Vec<EndpointStatus> = vec![
            status(ids[0], t, true),
            status(ids[1], t, long),
            status(ids[2], t, step % 2 == 0),
        ];
        h.store.save_statuses(&e.id, &at_start).await.unwrap();
        let end = t + (20 + 7 * (step % 5)) * MINUTE;
        let at_end: Vec<EndpointStatus> = vec![
            status(ids[0], end, false),
            status(ids[1], end, long),
            status(ids[2], end, false),
        ];
        h.store.save_statuses(&e.id, &at_end).await.unwrap();
        t += 11 * HOUR + 17 * MINUTE;
        step += 1;
    }
    save(h, &e, &[status(ids[0], now - 30 * MINUTE, true)]).await;

    let midnight = |ms: i64| ms.div_euclid(DAY) * DAY;
    let periods = [
        // Whole days of every span length, ending before now and cutting calls at both ends.
        (start + 3 * DAY + 7 * MINUTE, NINE),
        // From midnight to midnight.
        (midnight(NINE - 100 * DAY), midnight(NINE - 2 * DAY)),
        // From before the first call to past now.
        (start - 10 * DAY, now + DAY),
        // Within one day, and across one midnight.
        (NINE - DAY, NINE - DAY + 5 * HOUR),
        (NINE - 20 * HOUR, NINE + 2 * HOUR),
    ];
    usage_agrees(h, &e, &periods, now).await;

    // A room's deletion and the retention take their sessions' figures with them.
    assert!(
        h.store
            .delete_endpoint(&e.id, ids[2], &audit_for(&e.id))
            .await
            .unwrap()
    );
    assert!(h.store.purge_call_sessions(start + 40 * DAY).await.unwrap() > 0);
    usage_agrees(h, &e, &periods, now).await;
}

pub async fn call_sessions_are_purged_once_ended_before_the_cutoff(h: &Harness) {
    let e = enterprise(h, 10).await;
    let a = inserted(h, named(h, &e, "A")).await;
    let b = inserted(h, named(h, &e, "B")).await;
    let (a, b) = (a.id(), b.id());
    for (at, active) in [(1_000, true), (2_000, false), (3_000, true), (4_000, false)] {
        h.store
            .save_statuses(&e.id, &[status(a, at, active)])
            .await
            .unwrap();
    }
    h.store
        .save_statuses(&e.id, &[status(b, 1_500, true)])
        .await
        .unwrap();
    // Ended before 4 000: A's first call only. B's goes on, whatever its age.
    assert_eq!(h.store.purge_call_sessions(4_000).await.unwrap(), 1);
    assert_eq!(
        sessions(h, &e).await,
        [
            session(b, 1_500, None, JoinSource::Device),
            session(a, 3_000, Some(4_000), JoinSource::Device),
        ]
    );
}

//! The PostgreSQL primary lost under write load and a streaming replica promoted in its place
//! (issue #34): roomlink, given both servers in one multi-host URL with
//! `target_session_attrs=read-write`, writes to whichever is the primary, without a restart.

use super::postgres_restart::{Cluster, WriteOutcome, assert_stored_once, roomlink_on, writer};
use super::*;

/// How soon after the promotion writes must succeed again.
const RESUMED_WITHIN: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_failover_to_a_promoted_replica() {
    let _serial = SERIAL.lock().await;
    let primary = match tokio::task::spawn_blocking(Cluster::start).await.unwrap() {
        Ok(cluster) => Arc::new(cluster),
        Err(reason) => return skipped("postgres_failover_to_a_promoted_replica", &reason),
    };
    tokio::time::timeout(Duration::from_secs(240), failover_under_load(primary))
        .await
        .expect("the test finishes within its bound");
}

/// Polls `sql` on `cluster` until it answers `want`, at most 30 s.
async fn until_answers(cluster: &Arc<Cluster>, sql: &'static str, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let c = cluster.clone();
        let got = tokio::task::spawn_blocking(move || c.psql(sql))
            .await
            .unwrap();
        if got.as_deref() == Ok(want) {
            return;
        }
        assert!(Instant::now() < deadline, "{sql}: {got:?}, not {want}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn failover_under_load(primary: Arc<Cluster>) {
    let p = primary.clone();
    let standby = Arc::new(
        tokio::task::spawn_blocking(move || p.standby())
            .await
            .unwrap(),
    );
    // Synchronous replication: a commit is acknowledged once the standby has it, so that an
    // acknowledged write survives the primary's loss.
    primary
        .psql("ALTER SYSTEM SET synchronous_standby_names = '*'")
        .unwrap();
    primary.psql("SELECT pg_reload_conf()").unwrap();
    until_answers(
        &primary,
        "SELECT sync_state FROM pg_stat_replication",
        "sync",
    )
    .await;

    let url = format!(
        "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/postgres?target_session_attrs=read-write",
        primary.port(),
        standby.port()
    );
    let app = roomlink_on(&url).await;
    let (token, _) = app.tenant("acme").await;

    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..4)
        .map(|w| tokio::spawn(writer(app.clone(), token.clone(), w, stop.clone())))
        .collect();
    // Writes flow: wait until some are stored.
    let deadline = Instant::now() + Duration::from_secs(30);
    while app
        .call(Method::GET, "/api/endpoints", &token, None)
        .await
        .1
        .as_array()
        .is_none_or(|list| list.len() < 20)
    {
        assert!(Instant::now() < deadline, "no writes before the failover");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // The primary dies (no shutdown checkpoint, connections cut), and the replica is promoted.
    let p = primary.clone();
    assert!(
        tokio::task::spawn_blocking(move || p.pg_ctl_stop("immediate"))
            .await
            .unwrap()
    );
    let lost = Instant::now();
    let s = standby.clone();
    let data = standby.data_dir();
    let promoted =
        tokio::task::spawn_blocking(move || s.run("pg_ctl", &["-D", &data, "-w", "promote"]))
            .await
            .unwrap();
    assert!(
        promoted.status.success(),
        "pg_ctl promote: {}",
        String::from_utf8_lossy(&promoted.stderr)
    );
    let promoted_at = Instant::now();
    until_answers(&standby, "SELECT pg_is_in_recovery()", "f").await;

    // Writes resume on the new primary without restarting roomlink.
    let deadline = promoted_at + Duration::from_secs(30);
    let resumed = loop {
        let (status, _) = app
            .call(
                Method::POST,
                "/api/endpoints",
                &token,
                Some(json!({"name": format!("probe-{}", promoted_at.elapsed().as_millis())})),
            )
            .await;
        if status == StatusCode::OK {
            break promoted_at.elapsed();
        }
        assert!(
            Instant::now() < deadline,
            "no write succeeded after the promotion"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // A moment of writes on the new primary, then stop.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    stop.store(true, Ordering::Relaxed);
    let mut writes: Vec<WriteOutcome> = Vec::new();
    for w in writers {
        writes.extend(w.await.unwrap());
    }

    // Every write was answered: a success, or StorageUnavailable while there was no primary.
    let mut acknowledged = Vec::new();
    let mut refused = 0;
    for write in &writes {
        match &write.answer {
            Ok((200, _)) => acknowledged.push(write.name.as_str()),
            Ok((status, body)) => {
                assert_error(
                    StatusCode::from_u16(*status).unwrap(),
                    body,
                    503,
                    "StorageUnavailable",
                    1900000007,
                );
                refused += 1;
            }
            Err(e) => panic!("{}: {e}", write.name),
        }
    }
    let after_promotion = writes
        .iter()
        .filter(|w| w.started >= promoted_at + resumed && matches!(w.answer, Ok((200, _))))
        .count();
    assert!(after_promotion > 0, "no writer wrote on the new primary");

    // No acknowledged write was lost: every one is on the new primary, once.
    assert_stored_once(&app, &token, &acknowledged).await;
    let _ = writeln!(
        std::io::stderr(),
        "postgres failover: {} writes, {} acknowledged (all kept), {} StorageUnavailable; \
         promotion {:?} after the primary died, first write {:?} after the promotion, {} \
         writes on the new primary by the writers",
        writes.len(),
        acknowledged.len(),
        refused,
        promoted_at - lost,
        resumed,
        after_promotion
    );
    assert!(
        resumed <= RESUMED_WITHIN,
        "writes resumed {resumed:?} after the promotion, not within {RESUMED_WITHIN:?}"
    );
}

//! The contract on PostgreSQL (a fresh database per test), plus what only the PostgreSQL
//! adapter promises.

use crate::secrets;
use diesel::QueryableByName;
use diesel::sql_types::Text;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use roomlink_domain::ErrorKind;
use roomlink_domain::ids::EnterpriseId;
use roomlink_domain::ports::{EndpointStore, EnterpriseStore, PollLease, StoreHealth};
use roomlink_store::testing::TestDatabase;
use roomlink_store::{Backend, DbConfig, DbStore, StoreError};
use std::sync::Arc;
use std::time::Duration;

crate::contract::contract_tests!(crate::support::postgres);

#[derive(QueryableByName)]
struct Line {
    #[diesel(sql_type = Text)]
    s: String,
}

async fn lines(conn: &mut AsyncPgConnection, sql: &str) -> Vec<String> {
    diesel::sql_query(sql)
        .load::<Line>(conn)
        .await
        .unwrap()
        .into_iter()
        .map(|l| l.s)
        .collect()
}

async fn schema(url: &str) -> Vec<String> {
    let mut conn = AsyncPgConnection::establish(url).await.unwrap();
    lines(
        &mut conn,
        "SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable AS s \
         FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1",
    )
    .await
}

#[tokio::test]
async fn migrate_creates_the_schema_once() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let store = DbStore::connect(&DbConfig::new(db.url())).await.unwrap();
    assert_eq!(store.backend(), Backend::Postgres);
    assert!(schema(db.url()).await.is_empty());
    assert_eq!(
        store.migrate().await.unwrap(),
        [
            "2025-11-22-000000_initial",
            "2026-01-10-000000_user_disabled",
            "2026-11-24-000000_outbound_listeners",
            "2026-11-25-000000_audit_log",
            "2026-11-26-000000_endpoint_list_version",
            "2026-11-27-000000_calendar_accounts",
            "2026-11-28-000000_calendar_token_url",
            "2026-11-28-000001_auto_joins",
            "2026-11-29-000000_listener_checks",
            "2026-11-30-000000_call_sessions",
            "2026-12-01-000000_endpoint_inventories",
            "2026-12-02-000000_webhooks",
            "2026-12-03-000000_health_history",
            "2026-12-04-000000_usage_rollups",
            "2026-12-05-000000_auth_failures",
            "2026-12-06-000000_templates",
            "2026-12-07-000000_template_jobs",
            "2026-12-08-000000_template_assignments"
        ]
    );
    let migrated = schema(db.url()).await;
    for column in [
        "endpoints.password_ciphertext bytea",
        "access_tokens.token_hash text",
        "endpoints.elevation double precision",
        "endpoint_statuses.call_active boolean",
        "listener_services.connection text NO",
        "listener_services.base_url text NO",
        "listener_links.seen_ms bigint NO",
        "listener_links.version text YES",
        "listener_checks.answered_ms bigint YES",
    ] {
        assert!(migrated.iter().any(|s| s.starts_with(column)), "{column}");
    }
    assert_eq!(store.migrate().await.unwrap(), Vec::<String>::new());
    assert_eq!(schema(db.url()).await, migrated);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn instances_migrating_together_take_turns() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let mut stores = Vec::new();
    for _ in 0..4 {
        stores.push(DbStore::connect(&DbConfig::new(db.url())).await.unwrap());
    }
    let results = futures::future::join_all(stores.iter().map(|s| s.migrate())).await;
    let applied: Vec<Vec<String>> = results.into_iter().map(Result::unwrap).collect();
    // Exactly one applied the migration; the others waited and found nothing left.
    assert_eq!(
        applied.iter().filter(|names| !names.is_empty()).count(),
        1,
        "{applied:?}"
    );
}

/// actix runs on current-thread runtimes: connect, migrate and queries must work there.
#[tokio::test(flavor = "current_thread")]
async fn works_on_a_current_thread_runtime() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let store = DbStore::connect(&DbConfig::new(db.url())).await.unwrap();
    assert!(!store.migrate().await.unwrap().is_empty());
    secrets::store_secrets(&store).await;
    let ent = store.enterprise_by_name("secrets").await.unwrap().unwrap();
    assert_eq!(store.list_endpoints(&ent.id).await.unwrap().len(), 1);
    drop(store);
}

#[tokio::test(flavor = "multi_thread")]
async fn no_plaintext_secret_is_stored() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let store = DbStore::connect(&DbConfig::new(db.url())).await.unwrap();
    store.migrate().await.unwrap();
    secrets::store_secrets(&store).await;

    // Every row of every table as JSON (bytea as \x… hex).
    let mut conn = AsyncPgConnection::establish(db.url()).await.unwrap();
    let mut dump = String::new();
    let tables = lines(
        &mut conn,
        "SELECT tablename::text AS s FROM pg_tables WHERE schemaname = 'public'",
    )
    .await;
    assert!(tables.len() >= 9, "{tables:?}");
    for table in tables {
        for line in lines(
            &mut conn,
            &format!("SELECT row_to_json(t)::text AS s FROM \"{table}\" t"),
        )
        .await
        {
            dump.push_str(&format!("{table}: {line}\n"));
        }
    }
    secrets::assert_no_plaintext("the PostgreSQL dump", dump.as_bytes());
}

#[tokio::test]
async fn unreachable_server_is_a_clear_error() {
    let mut config = DbConfig::new("postgresql://roomlink:hunter2@127.0.0.1:1/roomlink");
    config.connect_timeout = Duration::from_secs(3);
    let err = DbStore::connect(&config).await.unwrap_err();
    assert!(
        matches!(
            err,
            StoreError::Unreachable {
                backend: Backend::Postgres,
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.starts_with(
            "cannot connect to PostgreSQL at postgresql://roomlink:***@127.0.0.1:1/roomlink: "
        ),
        "{text}"
    );
    assert!(
        text.contains("Connection refused"),
        "the cause is kept: {text}"
    );
    assert!(!text.contains("hunter2") && !text.contains('\n'), "{text}");
    assert!(!format!("{err:?}").contains("hunter2"));
}

#[tokio::test]
async fn missing_database_is_a_clear_error() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let url = db.url().replace("rl_test_", "rl_missing_");
    let err = DbStore::connect(&DbConfig::new(url)).await.unwrap_err();
    let text = err.to_string();
    assert!(text.contains("does not exist"), "{text}");
    assert!(!text.contains('\n'), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn lost_database_is_storage_unavailable() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let mut config = DbConfig::new(db.url());
    config.connect_timeout = Duration::from_secs(2);
    let store = DbStore::connect(&config).await.unwrap();
    store.migrate().await.unwrap();
    store.ping().await.unwrap();
    db.drop_now().await;
    let err = store.ping().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::StorageUnavailable, "{err:?}");
    let ent = EnterpriseId::from_trusted("e1".into());
    let err = store.list_endpoints(&ent).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::StorageUnavailable, "{err:?}");
}

/// Runs `op` on `store` while `admin` holds an exclusive lock on `table`, so that the store's
/// query waits on the server; then ends the waiting session from another connection, as a
/// server restart or failover does (`pg_terminate_backend`: FATAL 57P01 admin_shutdown).
/// Returns what the store's operation answered.
async fn end_session_mid_query<T: Send + 'static>(
    db: &TestDatabase,
    table: &str,
    op: impl std::future::Future<Output = roomlink_domain::Result<T>> + Send + 'static,
) -> roomlink_domain::Result<T> {
    let mut admin = AsyncPgConnection::establish(db.url()).await.unwrap();
    admin
        .batch_execute(&format!(
            "BEGIN; LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE"
        ))
        .await
        .unwrap();
    let running = tokio::spawn(op);
    let mut killer = AsyncPgConnection::establish(db.url()).await.unwrap();
    let mut killed = Vec::new();
    for _ in 0..100 {
        killed = lines(
            &mut killer,
            "SELECT pg_terminate_backend(pid)::text AS s FROM pg_stat_activity \
             WHERE datname = current_database() AND wait_event_type = 'Lock'",
        )
        .await;
        if !killed.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        killed,
        ["true"],
        "the store's query was waiting on the lock"
    );
    let answered = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the store answers once its session is gone")
        .unwrap();
    admin.batch_execute("ROLLBACK").await.unwrap();
    answered
}

/// A session the server ends mid-query is `StorageUnavailable`, outside and inside a
/// transaction, decided by the connection's state and not by the server's message: the
/// message would read otherwise under another `lc_messages`. (This machine's PostgreSQL cannot
/// show that directly: `locale -a` lists only C and POSIX, so `SET lc_messages` refuses
/// `de_DE.UTF-8`; the unit tests in `error.rs` give the classification German text.)
#[tokio::test(flavor = "multi_thread")]
async fn a_session_ended_mid_query_is_storage_unavailable() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let mut config = DbConfig::new(db.url());
    config.connect_timeout = Duration::from_secs(5);
    let store = Arc::new(DbStore::connect(&config).await.unwrap());
    store.migrate().await.unwrap();

    // Outside a transaction (`db_run!`).
    let s = store.clone();
    let err = end_session_mid_query(
        &db,
        "enterprises",
        async move { s.list_enterprises().await },
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::StorageUnavailable, "{err:?}");

    // Inside one (`db_tx!`): its first statement waits on the lock.
    let s = store.clone();
    let err = end_session_mid_query(&db, "endpoint_statuses", async move {
        s.delete_enterprise(&EnterpriseId::from_trusted("e1".into()))
            .await
    })
    .await
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::StorageUnavailable, "{err:?}");

    // The dead connections left the pool: the store serves again.
    assert!(store.list_enterprises().await.unwrap().is_empty());
    assert!(
        store
            .delete_enterprise(&EnterpriseId::from_trusted("e1".into()))
            .await
            .unwrap()
            .is_none()
    );
}

/// A statement the server refuses while the session lives (here 42P01 undefined_table: a schema
/// that is not the store's) stays `InternalError`, outside and inside a transaction: asking the
/// session after a failure does not turn bugs into "try again".
#[tokio::test(flavor = "multi_thread")]
async fn a_statement_error_on_a_live_session_is_internal() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let store = DbStore::connect(&DbConfig::new(db.url())).await.unwrap();
    store.migrate().await.unwrap();
    let mut admin = AsyncPgConnection::establish(db.url()).await.unwrap();
    admin
        .batch_execute(
            "ALTER TABLE enterprises RENAME TO enterprises_gone; \
             ALTER TABLE endpoint_statuses RENAME TO endpoint_statuses_gone",
        )
        .await
        .unwrap();
    let err = store.list_enterprises().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InternalError, "{err:?}");
    let err = store
        .delete_enterprise(&EnterpriseId::from_trusted("e1".into()))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InternalError, "{err:?}");
    store.ping().await.unwrap();
}

/// Two instances on one database: one holds the poll lease, the other does not until the
/// holder's session ends (its process died), and then takes it.
#[tokio::test(flavor = "multi_thread")]
async fn one_store_holds_the_poll_lease_until_it_goes() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let first = DbStore::connect(&DbConfig::new(db.url())).await.unwrap();
    first.migrate().await.unwrap();
    let second = DbStore::connect(&DbConfig::new(db.url())).await.unwrap();
    assert!(first.hold_poll_lease().await.unwrap());
    assert!(!second.hold_poll_lease().await.unwrap());
    assert!(first.hold_poll_lease().await.unwrap(), "still held");
    assert!(!second.hold_poll_lease().await.unwrap(), "still not");

    drop(first);
    // The server notices the closed session a moment later.
    let mut taken = false;
    for _ in 0..50 {
        if second.hold_poll_lease().await.unwrap() {
            taken = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(taken, "the lease is taken over once its holder is gone");
    assert!(second.hold_poll_lease().await.unwrap());
}

/// The lease's session killed (a server restart, a network cut): the next call notices, takes
/// the lease again on a new connection, and nothing panics.
#[tokio::test(flavor = "multi_thread")]
async fn a_lost_lease_connection_is_replaced() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let store = DbStore::connect(&DbConfig::new(db.url())).await.unwrap();
    store.migrate().await.unwrap();
    assert!(store.hold_poll_lease().await.unwrap());
    let mut admin = AsyncPgConnection::establish(db.url()).await.unwrap();
    let killed = lines(
        &mut admin,
        // This test's database only: other tests hold advisory locks in theirs at the same
        // time (a migration's, another lease), and killing those failed them.
        "SELECT pg_terminate_backend(pid)::text AS s FROM pg_locks \
         WHERE locktype = 'advisory' AND granted \
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
    )
    .await;
    assert_eq!(killed, ["true"]);
    let mut held = false;
    for _ in 0..50 {
        if store.hold_poll_lease().await.unwrap() {
            held = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(held);
}

/// The server gone: not holding the lease, not an error.
#[tokio::test(flavor = "multi_thread")]
async fn no_server_no_poll_lease() {
    let Some(db) = TestDatabase::create().await else {
        return;
    };
    let mut config = DbConfig::new(db.url());
    config.connect_timeout = Duration::from_secs(2);
    let store = DbStore::connect(&config).await.unwrap();
    db.drop_now().await;
    assert!(!store.hold_poll_lease().await.unwrap());
}

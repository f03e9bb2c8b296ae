//! The contract on SQLite, plus what only the SQLite adapter promises.

use crate::secrets;
use crate::support;
use diesel::prelude::*;
use diesel::sql_types::Text;
use roomlink_domain::audit::audit_for;
use roomlink_store::{Backend, DbConfig, DbStore, StoreError};

crate::contract::contract_tests!(crate::support::sqlite);

#[derive(QueryableByName)]
struct Line {
    #[diesel(sql_type = Text)]
    s: String,
}

fn lines(conn: &mut SqliteConnection, sql: &str) -> Vec<String> {
    diesel::sql_query(sql)
        .load::<Line>(conn)
        .unwrap()
        .into_iter()
        .map(|l| l.s)
        .collect()
}

/// The schema as SQLite records it.
fn schema(path: &std::path::Path) -> Vec<String> {
    let mut conn = SqliteConnection::establish(path.to_str().unwrap()).unwrap();
    lines(
        &mut conn,
        "SELECT type || ' ' || name || ': ' || coalesce(sql, '') AS s \
         FROM sqlite_master ORDER BY name",
    )
}

#[tokio::test]
async fn migrate_creates_the_schema_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fresh.db");
    let store = DbStore::connect(&DbConfig::new(format!("sqlite://{}", path.display())))
        .await
        .unwrap();
    assert_eq!(store.backend(), Backend::Sqlite);
    assert!(
        schema(&path).iter().all(|s| !s.contains("endpoints")),
        "not yet migrated"
    );
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
    let migrated = schema(&path);
    for table in [
        "enterprises",
        "service_users",
        "access_tokens",
        "endpoints",
        "listener_services",
        "listener_links",
        "listener_checks",
        "pairing_codes",
        "paired_statuses",
        "endpoint_statuses",
        "failures",
        "templates",
        "template_jobs",
        "template_job_rooms",
        "template_assignments",
    ] {
        assert!(
            migrated
                .iter()
                .any(|s| s.starts_with(&format!("table {table}:"))),
            "{table}"
        );
    }
    assert_eq!(store.migrate().await.unwrap(), Vec::<String>::new());
    assert_eq!(schema(&path), migrated);
}

/// actix runs on current-thread runtimes: connect, migrate and queries must work there.
#[tokio::test(flavor = "current_thread")]
async fn works_on_a_current_thread_runtime() {
    let dir = tempfile::tempdir().unwrap();
    // A directory that does not exist yet, relative paths aside.
    let path = dir.path().join("nested/deeper/roomlink.db");
    let config = DbConfig::new(format!("sqlite://{}", path.display()));
    let store = DbStore::connect(&config).await.unwrap();
    assert!(!store.migrate().await.unwrap().is_empty());
    let harness_store: std::sync::Arc<dyn roomlink_domain::ports::Store> =
        std::sync::Arc::new(store);
    secrets::store_secrets(harness_store.as_ref()).await;
    let ent = harness_store
        .enterprise_by_name("secrets")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        harness_store.list_endpoints(&ent.id).await.unwrap().len(),
        1
    );
    assert!(path.exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn no_plaintext_secret_is_stored() {
    let (store, dir) = support::sqlite_store().await;
    secrets::store_secrets(&store).await;

    // The files as they are on disk (WAL mode: recent pages sit in the -wal file).
    let files = support::files_in(dir.path());
    assert!(
        files
            .iter()
            .any(|(p, _)| p.to_string_lossy().ends_with("-wal")),
        "WAL mode is on"
    );
    let bytes: Vec<u8> = files.into_iter().flat_map(|(_, b)| b).collect();
    secrets::assert_no_plaintext("the database files", &bytes);

    // Every column of every row, as SQL text (blobs as X'…' hex).
    let mut conn =
        SqliteConnection::establish(dir.path().join("roomlink.db").to_str().unwrap()).unwrap();
    let mut dump = String::new();
    for table in lines(
        &mut conn,
        "SELECT name AS s FROM sqlite_master WHERE type = 'table'",
    ) {
        let columns = lines(
            &mut conn,
            &format!("SELECT name AS s FROM pragma_table_info('{table}')"),
        );
        let row = columns
            .iter()
            .map(|c| format!("quote(\"{c}\")"))
            .collect::<Vec<_>>()
            .join(" || '|' || ");
        for line in lines(&mut conn, &format!("SELECT {row} AS s FROM \"{table}\"")) {
            dump.push_str(&format!("{table}: {line}\n"));
        }
    }
    secrets::assert_no_plaintext("the SQL dump", dump.as_bytes());
}

#[tokio::test]
async fn bad_urls_are_clear_errors() {
    for (url, expected) in [
        (
            "mysql://root:hunter2@db/rl",
            "unsupported database URL scheme 'mysql'",
        ),
        (
            "roomlink.db",
            "invalid database URL: the database URL needs a scheme",
        ),
        ("sqlite://", "invalid database URL"),
    ] {
        let err = DbStore::connect(&DbConfig::new(url)).await.unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with(expected), "{text}");
        assert!(!text.contains("hunter2") && !text.contains('\n'), "{text}");
    }
    let err = DbStore::connect(&DbConfig::new("sqlite:///proc/no/such/dir/x.db"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::CreateDir { .. }), "{err}");
}

/// Commands that need existing data refuse to create a new SQLite file, and name the path.
#[tokio::test]
async fn a_missing_file_is_refused_unless_creation_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("elsewhere/roomlink.db");
    let mut config = DbConfig::new(format!("sqlite://{}", path.display()));
    config.create_sqlite = false;
    let refused = DbStore::connect(&config).await.unwrap_err();
    assert!(matches!(refused, StoreError::NoSqliteDatabase { .. }));
    let reason = refused.to_string();
    assert!(reason.contains(&path.display().to_string()), "{reason}");
    assert!(reason.contains("ROOMLINK__DATABASE__URL"), "{reason}");
    assert!(
        !path.exists() && !path.parent().unwrap().exists(),
        "nothing created"
    );

    config.create_sqlite = true;
    let store = DbStore::connect(&config).await.unwrap();
    assert!(path.exists());
    assert_eq!(store.location(), path.display().to_string());
    config.create_sqlite = false;
    DbStore::connect(&config).await.unwrap();
}

/// A stored `connection` neither inbound nor outbound, or an inbound listener without a usable
/// base URL, is an internal error, not a panic.
#[tokio::test(flavor = "multi_thread")]
async fn a_listener_row_that_makes_no_sense_is_an_internal_error() {
    use roomlink_domain::ErrorKind;
    use roomlink_domain::enterprise::Enterprise;
    use roomlink_domain::ids::{EnterpriseId, ListenerServiceId};
    use roomlink_domain::listener::{ListenerService, decode_listener};
    use roomlink_domain::ports::{EnterpriseStore, ListenerStore, PollLease, SecretSealer};
    use roomlink_domain::secret::Secret;

    let (store, dir) = support::sqlite_store().await;
    let e = Enterprise {
        id: EnterpriseId::from_trusted("e1".into()),
        name: "acme".into(),
        endpoint_limit: 10,
        public_key: None,
    };
    store.create_enterprise(&e).await.unwrap();
    let body = serde_json::json!({ "name": "out", "connection": "outbound" });
    let l = ListenerService {
        id: ListenerServiceId::from_trusted("l1".into()),
        enterprise_id: e.id.clone(),
        profile: decode_listener(body.as_object().unwrap()).unwrap().0,
        secret: support::sealer()
            .seal(&Secret::new("listener-secret-0123456789"), None)
            .unwrap(),
    };
    store.insert_listener(&l, &audit_for(&l)).await.unwrap();
    let mut conn =
        SqliteConnection::establish(dir.path().join("roomlink.db").to_str().unwrap()).unwrap();
    for (connection, base_url) in [("sideways", ""), ("inbound", ""), ("inbound", "ftp://x")] {
        diesel::sql_query("UPDATE listener_services SET connection = ?, base_url = ?")
            .bind::<Text, _>(connection)
            .bind::<Text, _>(base_url)
            .execute(&mut conn)
            .unwrap();
        let err = store.listener_by_id(&l.id).await.unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::InternalError,
            "{connection} {base_url}"
        );
        let err = store.list_listeners(&e.id).await.unwrap_err();
        assert_eq!(
            err.kind(),
            ErrorKind::InternalError,
            "{connection} {base_url}"
        );
    }
    // The embedded database has one process: it always polls.
    assert!(store.hold_poll_lease().await.unwrap());
}

/// A stored drift record that does not read back is an internal error, not a panic nor a room
/// shown as unchecked.
#[tokio::test(flavor = "multi_thread")]
async fn a_drift_record_that_does_not_read_is_an_internal_error() {
    use roomlink_domain::ErrorKind;
    use roomlink_domain::audit::AuditEntry;
    use roomlink_domain::endpoint::Endpoint;
    use roomlink_domain::enterprise::Enterprise;
    use roomlink_domain::ids::{EndpointId, EnterpriseId, TemplateId};
    use roomlink_domain::ports::{
        EndpointStore, EnterpriseStore, TemplateAssignmentStore, TemplateStore,
    };
    use roomlink_domain::template::drift::{DriftRead, DriftRecord};
    use roomlink_domain::template::{Template, TemplateDraft};

    let (store, dir) = support::sqlite_store().await;
    let e = Enterprise {
        id: EnterpriseId::from_trusted("e1".into()),
        name: "acme".into(),
        endpoint_limit: 10,
        public_key: None,
    };
    store.create_enterprise(&e).await.unwrap();
    let body = serde_json::json!({ "name": "Fjord" });
    let draft = roomlink_domain::rules::put::insert(body.as_object().unwrap()).unwrap();
    let room = Endpoint::new(
        EndpointId::from_trusted("r1".into()),
        e.id.clone(),
        draft.profile,
        None,
    )
    .unwrap();
    store
        .insert_endpoint(&room, &audit_for(&room))
        .await
        .unwrap();
    let body = serde_json::json!({ "name": "Oslo", "settings": {} });
    let draft = TemplateDraft::from_body(body.as_object().unwrap()).unwrap();
    let t = Template::new(
        TemplateId::from_trusted("t1".into()),
        e.id.clone(),
        draft,
        1,
    );
    let audit = AuditEntry::sample(&e.id, "templates.create", 1);
    store.insert_template(&t, &audit).await.unwrap();
    let ids = [room.id().clone()];
    store
        .assign_template(&e.id, &t.id, &ids, 1, &audit)
        .await
        .unwrap();
    let record = DriftRecord {
        checked_at: 2,
        read: Some((2, DriftRead::InLine)),
        drifted_since: None,
        failure: None,
    };
    let saved = store.save_drift(&e.id, room.id(), &t.id, &record, None);
    assert!(saved.await.unwrap());
    let mut conn =
        SqliteConnection::establish(dir.path().join("roomlink.db").to_str().unwrap()).unwrap();
    for drift in [
        "not json",
        r#"{"read": {"at": 1, "held": {}}}"#,
        r#"{"checkedAt": 2, "read": {"at": 1, "held": {"no.such.key": 1}}}"#,
    ] {
        diesel::sql_query("UPDATE template_assignments SET drift = ?")
            .bind::<Text, _>(drift)
            .execute(&mut conn)
            .unwrap();
        let err = store.assignments(&e.id, &t.id).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InternalError, "{drift}");
        let err = store.assignments_of(&e.id, &ids).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InternalError, "{drift}");
    }
}

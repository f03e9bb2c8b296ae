//! The storage contract of `roomlink_domain::ports`, written once. `contract_tests!` turns
//! every check (the `pub async fn`s of the submodules) into a test for one adapter;
//! `memory.rs`, `sqlite.rs` and `postgres.rs` instantiate it, so a check added here runs
//! everywhere. Below: the macro and the fixtures the checks share.

mod access;
mod admin;
mod audit;
mod calendars;
mod csv;
mod endpoints;
mod inventory;
mod keys;
mod links;
mod pairing;
mod records;
mod template_assignments;
mod template_jobs;
mod templates;
mod usage;
mod webhooks;

pub use access::*;
pub use admin::*;
pub use audit::*;
pub use calendars::*;
pub use csv::*;
pub use endpoints::*;
pub use inventory::*;
pub use keys::*;
pub use links::*;
pub use pairing::*;
pub use records::*;
pub use template_assignments::*;
pub use template_jobs::*;
pub use templates::*;
pub use usage::*;
pub use webhooks::*;

use crate::support::Harness;
use futures::future::join_all;
use roomlink_domain::access::{Role, RoleSet};
use roomlink_domain::audit::audit_for;
use roomlink_domain::endpoint::page::EndpointPage;
use roomlink_domain::endpoint::{Endpoint, Field};
use roomlink_domain::enterprise::{Enterprise, EnterpriseUsage, ServiceUser};
use roomlink_domain::enums::ClientDeviceType;
use roomlink_domain::ids::{
    EndpointId, EnterpriseId, FailureId, ListenerServiceId, PairingCodeId, TokenId, UserId,
};
use roomlink_domain::listener::{ListenerService, decode_listener};
use roomlink_domain::pairing::{PAIRED_STATUS_TTL_MS, PairingCode};
use roomlink_domain::ports::*;
use roomlink_domain::rules::csv::{CsvReport, CsvUpload, CsvWrite, SkipReason, SkippedRow};
use roomlink_domain::rules::{patch, put};
use roomlink_domain::secret::{Secret, SecretChange};
use roomlink_domain::status::{EndpointStatus, Failure};
use roomlink_domain::system::RandomIds;
use roomlink_domain::token::{AccessToken, PairingGrant, TokenHash, TokenParts};
use roomlink_domain::{Error, ErrorKind, Result};
use serde_json::{Map, Value, json};

/// One `#[tokio::test]` per check, on a fresh store from `$harness` (an `async fn() ->
/// Option<Harness>`; `None` skips).
macro_rules! contract_tests {
    ($harness:path) => {
        $crate::contract::contract_tests!(@checks $harness;
            enterprises_and_users,
            tokens_round_trip_and_expire,
            tokens_are_scoped_and_purged,
            endpoints_round_trip_every_field,
            endpoints_list_in_creation_order,
            the_list_version_moves_with_every_endpoint_write_and_only_then,
            a_command_context_is_the_endpoint_its_listener_and_the_key,
            a_command_status_comes_with_its_audit_entry,
            endpoint_pages_walk_the_list_by_key,
            update_errors_leave_the_endpoint_unchanged,
            duplicate_calendar_ids,
            limit_holds_under_concurrent_inserts,
            limit_holds_under_concurrent_csv_uploads,
            csv_round_trips_every_field,
            csv_report_comes_back_after_commit,
            csv_apply_error_writes_nothing,
            csv_write_failing_midway_writes_nothing,
            csv_unknown_update_or_over_limit_writes_nothing,
            csv_moves_calendar_ids_between_endpoints,
            csv_batches_thousands_of_rows,
            delete_endpoint_takes_its_dependents,
            pairing_codes_one_current_per_endpoint,
            paired_status_lifecycle,
            listeners_round_trip_and_guard_deletion,
            statuses_upsert_in_endpoint_order,
            failures_newest_first,
            auth_failures_follow_the_domain_rule,
            enterprises_are_isolated,
            ping_answers,
            enterprises_listed_counted_and_limited,
            users_listed_disabled_repassworded_and_deleted,
            user_tokens_are_revoked_and_no_others,
            deleting_an_enterprise_leaves_no_orphans,
            outbound_listeners_round_trip,
            listener_by_id_finds_across_enterprises,
            links_replace_and_ignore_stale_downs,
            audit_entries_come_with_committed_writes,
            audit_pages_filter_and_purge,
            a_failed_audit_entry_undoes_its_write,
            links_seen_bumps_only_that_instance,
            links_are_enterprise_scoped,
            links_go_with_their_listener,
            links_go_with_their_enterprise,
            listener_checks_keep_the_last_answer,
            poll_lease_is_answered,
            sealed_values_are_paged_by_key_and_replaced_only_if_unchanged,
            a_rotation_reseals_everything_under_the_new_key,
            calendar_accounts_are_replaced_in_place_and_scoped,
            an_auto_join_is_claimed_by_one_holder_once,
            call_sessions_follow_the_statuses,
            usage_sums_agree_with_the_reference,
            usage_from_rollups_agrees_over_months,
            call_sessions_are_purged_once_ended_before_the_cutoff,
            inventories_keep_the_last_read_through_failures,
            inventory_listings_filter_and_page_by_endpoint_id,
            inventories_are_scoped_and_go_with_their_endpoint,
            webhook_claims_are_exclusive_and_expire,
            deliveries_go_in_order_and_a_spent_schedule_pauses,
            events_enter_the_outbox_with_the_writes_that_make_them,
            health_changes_are_events_once,
            calendar_reads_are_events_once,
            templates_round_trip_listed_by_name_and_scoped,
            template_names_are_unique_per_enterprise_without_regard_to_case,
            templates_are_limited_per_enterprise,
            template_jobs_round_trip_with_every_room_state,
            one_template_job_runs_per_enterprise,
            template_job_claims_are_exclusive_until_they_lapse,
            orphaned_template_jobs_are_running_with_a_lapsed_claim,
            template_jobs_list_newest_first_limited_and_scoped,
            released_template_jobs_are_free_at_once,
            finished_template_jobs_are_purged_before_the_cutoff,
            a_cancelled_template_job_is_nobodys_and_frees_its_enterprise,
            cancelled_template_jobs_are_purged_before_the_cutoff,
            templates_are_assigned_moved_and_unassigned,
            template_assignments_list_by_name_with_many_ids,
            drift_records_are_saved_only_while_assigned_with_their_events,
            template_assignments_go_with_their_endpoint_template_and_enterprise,
        );
    };
    (@checks $harness:path; $($check:ident),* $(,)?) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $check() {
            if let Some(h) = $harness().await {
                $crate::contract::$check(&h).await;
            }
        }
    )*};
}
pub(crate) use contract_tests;

// ---------------------------------------------------------------------------------------------
// Fixtures

fn new_id() -> String {
    RandomIds.entity_id()
}

async fn enterprise(h: &Harness, limit: u32) -> Enterprise {
    let e = Enterprise {
        id: EnterpriseId::from_trusted(new_id()),
        name: format!("acme-{}", new_id()),
        endpoint_limit: limit,
        public_key: None,
    };
    h.store.create_enterprise(&e).await.unwrap();
    e
}

fn object(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

/// An endpoint of `ent` made from a POST body, its password sealed.
fn endpoint(h: &Harness, ent: &Enterprise, body: Value) -> Endpoint {
    let draft = put::insert(&object(body)).unwrap();
    let password = match draft.password {
        SecretChange::Set(s) => Some(h.sealer.seal(&s, None).unwrap()),
        _ => None,
    };
    Endpoint::new(
        EndpointId::from_trusted(new_id()),
        ent.id.clone(),
        draft.profile,
        password,
    )
    .unwrap()
}

fn named(h: &Harness, ent: &Enterprise, name: &str) -> Endpoint {
    endpoint(h, ent, json!({ "name": name }))
}

fn with_calendar(h: &Harness, ent: &Enterprise, name: &str, calendar: &str) -> Endpoint {
    endpoint(h, ent, json!({ "name": name, "calendarId": calendar }))
}

async fn inserted(h: &Harness, e: Endpoint) -> Endpoint {
    h.store.insert_endpoint(&e, &audit_for(&e)).await.unwrap();
    e
}

/// A POST body setting every field.
fn full_body(listener: &ListenerServiceId) -> Value {
    json!({
        "name": "Boardroom", "ipAddress": "127.77.0.1", "port": 443,
        "listenerServiceId": listener.as_str(), "controlProtocol": "TANDBERG_SSH",
        "signalingProtocol": "SIP", "dialStyle": "ANNEX_O", "addressStyle": "HOSTNAME",
        "username": "admin", "calendarId": "board@corp.example", "calendarType": "GOOGLE",
        "customData": {"correlationId": "x", "nested": {"n": [1, 2.5, null, "é"]}},
        "announcementId": "a1", "assetId": "tag-7",
        "autoJoinMode": "ENABLED", "calendarPushMode": "DISABLED", "contactListId": "c1",
        "elevation": 102.25, "externalId": "ext",
        "geolocation": {"latitude": 1.5, "longitude": -2.0}, "inMeetingControls": "ENABLED",
        "location": "Floor 3, \"north\" wing", "manualMeetingDialer": "ENABLED",
        "meetingPrivacyMode": "REDACTED", "meshBaseUri": "https://mesh.example",
        "pointOfContact": "it@corp.example", "registerToSipProxy": "AUTO",
        "validatePasscodes": "ENABLED", "zeroTouchType": "STATIC",
        "password": "s3cret-endpoint-pw"
    })
}

/// A PUT body changing every field (but the ANNEX_O dial style, which cannot change).
fn other_full_body(listener: &ListenerServiceId) -> Value {
    json!({
        "name": "Huddle", "ipAddress": "fe80::1", "port": 8443,
        "listenerServiceId": listener.as_str(), "controlProtocol": "POLYCOM_HTTP_HDX",
        "signalingProtocol": "H323", "dialStyle": "ANNEX_O", "addressStyle": "IP_ADDRESS",
        "username": "root", "calendarId": "huddle@corp.example", "calendarType": "OFFICE_365",
        "customData": {"k": true}, "announcementId": "a2", "assetId": "tag-8",
        "autoJoinMode": "DISABLED", "calendarPushMode": "ENABLED", "contactListId": "c2",
        "elevation": -499.5, "externalId": "ext2",
        "geolocation": {"latitude": -89.0, "longitude": 179.75}, "inMeetingControls": "DISABLED",
        "location": "Basement", "manualMeetingDialer": "DISABLED",
        "meetingPrivacyMode": "VISIBLE", "meshBaseUri": "http://mesh2.example/x?y=1",
        "pointOfContact": "ops@corp.example", "registerToSipProxy": "NEVER",
        "validatePasscodes": "DISABLED", "zeroTouchType": "ROTATING",
        "password": "another-pw"
    })
}

async fn listener(h: &Harness, ent: &Enterprise, name: &str) -> ListenerService {
    listener_from(
        h,
        ent,
        json!({
            "name": name, "baseUrl": "https://listener.corp.example:9001/api",
            "assetId": "asset", "externalId": "ext", "location": "DC1",
            "pointOfContact": "noc@corp.example"
        }),
    )
    .await
}

/// A listener that connects out to roomlink (no base URL).
async fn outbound_listener(h: &Harness, ent: &Enterprise, name: &str) -> ListenerService {
    listener_from(
        h,
        ent,
        json!({ "name": name, "connection": "outbound", "location": "Site 4" }),
    )
    .await
}

/// A listener of `ent` made from a POST body, inserted.
async fn listener_from(h: &Harness, ent: &Enterprise, body: Value) -> ListenerService {
    let (profile, _) = decode_listener(&object(body)).unwrap();
    let l = ListenerService {
        id: ListenerServiceId::from_trusted(new_id()),
        enterprise_id: ent.id.clone(),
        profile,
        secret: h
            .sealer
            .seal(&Secret::new("listener-secret-0123456789"), None)
            .unwrap(),
    };
    h.store.insert_listener(&l, &audit_for(&l)).await.unwrap();
    l
}

fn token_parts(ent: &Enterprise, value: &str, created: i64, expires: i64) -> TokenParts {
    TokenParts {
        id: TokenId::from_trusted(new_id()),
        hash: TokenHash::of(&Secret::new(value)),
        enterprise_id: ent.id.clone(),
        enterprise_name: ent.name.clone(),
        creation_date: created,
        expiration_date: expires,
        roles: RoleSet::read_write(),
        client_name: Some("cli".into()),
        creator: Some("alice@corp.example".into()),
        platform_id: Some(4_000_000_001),
        first_name: Some("Alice".into()),
        last_name: None,
        pairing: None,
    }
}

fn token(ent: &Enterprise, value: &str, created: i64, expires: i64) -> AccessToken {
    AccessToken::new(token_parts(ent, value, created, expires)).unwrap()
}

/// A Zero Touch token for `endpoint`.
fn zt_token(ent: &Enterprise, endpoint: &EndpointId, created: i64) -> AccessToken {
    let mut parts = token_parts(ent, &new_id(), created, created + 86_400_000);
    parts.roles = RoleSet::pairing_code();
    parts.platform_id = None;
    parts.pairing = Some(PairingGrant {
        pairing_code_id: PairingCodeId::from_trusted(new_id()),
        endpoint_id: endpoint.clone(),
        client_device_type: Some(ClientDeviceType::IosNative),
    });
    AccessToken::new(parts).unwrap()
}

fn pairing_code(ent: &Enterprise, endpoint: &EndpointId, code: &str) -> PairingCode {
    PairingCode {
        id: PairingCodeId::from_trusted(new_id()),
        enterprise_id: ent.id.clone(),
        endpoint_id: endpoint.clone(),
        code: code.into(),
        created_at: 1_000,
    }
}

fn status(endpoint: &EndpointId, timestamp: i64, call_active: bool) -> EndpointStatus {
    EndpointStatus {
        endpoint_id: endpoint.clone(),
        call_active,
        reserved: !call_active,
        dialing: false,
        microphone_muted: true,
        last_dial_timestamp_millis: call_active.then_some(timestamp - 5),
        timestamp,
    }
}

fn failure(ent: &Enterprise, n: i64) -> Failure {
    Failure {
        id: FailureId::from_trusted(new_id()),
        enterprise_id: ent.id.clone(),
        subject_class: "ListenerService".into(),
        subject_id: format!("l{n}"),
        error_date: 1_000 + n,
        error_code: 208581637,
        error_name: "ListenerOffline".into(),
        error_message: format!("listener {n} is offline"),
        error_details: object(json!({ "listenerServiceId": format!("l{n}"), "n": n })),
    }
}

fn kind<T: std::fmt::Debug>(r: Result<T>) -> ErrorKind {
    r.expect_err("expected an error").kind()
}

/// A change that renames the endpoint.
fn rename(name: &'static str) -> EndpointChange {
    Box::new(move |e: Endpoint| {
        let draft = patch::EndpointPatch::from_json(json!({ "name": name }))?.merge_into(&e)?;
        Endpoint::new(
            e.id().clone(),
            e.enterprise_id().clone(),
            draft.profile,
            e.password().cloned(),
        )
    })
}

/// A CSV cell, quoted.
fn cell(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// Runs a CSV upload through the store's `bulk_put` with the domain's CSV rules, as the
/// endpoint service does (passwords sealed first, then `CsvUpload::apply`); any skipped row
/// fails the upload.
async fn upload(h: &Harness, ent: &Enterprise, csv: &str) -> Result<()> {
    let upload = CsvUpload::parse(csv.as_bytes()).unwrap();
    let passwords = upload.seal_passwords(|p| h.sealer.seal(p, None))?;
    let enterprise = ent.id.clone();
    h.store
        .bulk_put(
            &ent.id,
            upload.ids(),
            Box::new(move |ctx| {
                let write = upload.apply(ctx, &enterprise, &passwords, &mut || {
                    EndpointId::from_trusted(new_id())
                })?;
                if let Some(skip) = write.report.skipped.first() {
                    return Err(Error::invalid(format!("skipped: {skip:?}")));
                }
                Ok(write)
            }),
            &audit_for(&ent.id),
        )
        .await
        .map(drop)
}

/// A `bulk_put` whose apply writes exactly `write` (built from the context's capacity).
async fn bulk_write(
    h: &Harness,
    ent: &EnterpriseId,
    ids: Vec<EndpointId>,
    write: impl FnOnce(&roomlink_domain::rules::csv::CsvContext) -> CsvWrite + Send + 'static,
) -> Result<()> {
    h.store
        .bulk_put(
            ent,
            ids,
            Box::new(move |ctx| Ok(write(ctx))),
            &audit_for(ent),
        )
        .await
        .map(drop)
}

/// Opens `n` pooled connections, so that racing tasks do not queue behind their creation.
async fn warm_up(h: &Harness, n: usize) {
    for r in join_all((0..n).map(|_| h.store.ping())).await {
        r.unwrap();
    }
}

async fn names(h: &Harness, ent: &Enterprise) -> Vec<String> {
    h.store
        .list_endpoints(&ent.id)
        .await
        .unwrap()
        .iter()
        .map(|e| e.name().to_owned())
        .collect()
}

//! Template jobs end to end: roomlink → `roomlink-listener` (`readconfiguration`,
//! `writeconfiguration`) → emulated Cisco (HTTP, SSH), Poly (Telnet) and Mesh rooms, on SQLite
//! and PostgreSQL: apply, undo, and a job whose instance dies in the middle of a room, resumed
//! by another instance without losing what it had written.

use crate::real_rooms::site;
use crate::support::app::{Backend, TestApp, assert_error};
use reqwest::{Method, StatusCode};
use roomlink_app::template_jobs::JobRun;
use roomlink_device_emu::device::Fault;
use roomlink_domain::ids::{EnterpriseId, JobId};
use serde_json::{Value, json};

const SETTINGS: &str = r#"{"time_zone": "Europe/Oslo", "standby.delay_minutes": 15,
    "auto_answer.mode": "on"}"#;

async fn template(app: &TestApp, token: &str, name: &str) -> String {
    let settings: Value = serde_json::from_str(SETTINGS).unwrap();
    let (status, template) = app
        .call(
            Method::POST,
            "/api/templates",
            token,
            Some(json!({"name": name, "settings": settings})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{template}");
    template["id"].as_str().unwrap().to_owned()
}

/// Starts a job (an apply with its body, an undo without); answers its id.
pub(crate) async fn start(app: &TestApp, token: &str, path: &str, body: Option<Value>) -> String {
    let response = app
        .with_token(Method::POST, path, token)
        .json(&body.unwrap_or(Value::Null))
        .send()
        .await
        .unwrap();
    let status = response.status();
    let location = response
        .headers()
        .get("location")
        .map(|l| l.to_str().unwrap().to_owned());
    let job: Value = response.json().await.unwrap();
    assert_eq!(status, StatusCode::ACCEPTED, "{job}");
    let id = job["id"].as_str().unwrap().to_owned();
    assert_eq!(
        location.as_deref(),
        Some(format!("/api/jobs/{id}").as_str())
    );
    assert_eq!(job["state"], "running", "{job}");
    id
}

/// Runs the job here (the binary's runner does the same with each job it is woken for).
pub(crate) async fn run(app: &TestApp, enterprise: &EnterpriseId, id: &str) -> Value {
    let job = JobId::from_trusted(id.to_owned());
    let run = app
        .services
        .template_jobs
        .run(enterprise, &job)
        .await
        .expect("run");
    assert!(matches!(run, JobRun::Finished(_)), "{run:?}");
    let token = app.token("acme-viewer").await;
    get(app, &token, id).await
}

async fn get(app: &TestApp, token: &str, id: &str) -> Value {
    let (status, job) = app
        .call(Method::GET, &format!("/api/jobs/{id}"), token, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{job}");
    job
}

pub(crate) fn room<'a>(job: &'a Value, name: &str) -> &'a Value {
    job["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {job}"))
}

async fn apply_and_undo(app: TestApp, net: u8) {
    let (rw, ro) = app.tenant("acme").await;
    let enterprise = app.enterprise_of(&rw).await;
    let site = site(&app, &rw, net, None).await;
    let id = template(&app, &rw, "Oslo rooms").await;
    let apply = format!("/api/templates/{id}/apply");

    // Writing settings on rooms is for read-write users; the body is checked as a plan's.
    let (status, body) = app
        .call(
            Method::POST,
            &apply,
            &ro,
            Some(json!({"rooms": {"all": true}})),
        )
        .await;
    assert_error(status, &body, 403, "Forbidden", 1900000001);
    let (status, body) = app
        .call(Method::POST, &apply, &rw, Some(json!({"rooms": {}})))
        .await;
    assert_error(status, &body, 400, "Invalid", 1782937293);

    let job = start(&app, &rw, &apply, Some(json!({"rooms": {"all": true}}))).await;
    // One job at a time per enterprise: a second waits for the first.
    let (status, body) = app
        .call(
            Method::POST,
            &apply,
            &rw,
            Some(json!({"rooms": {"all": true}})),
        )
        .await;
    assert_error(status, &body, 409, "Conflict", 1900000009);
    assert!(body.to_string().contains(&job), "{body}");

    let done = run(&app, &enterprise, &job).await;
    assert_eq!(done["state"], "finished", "{done}");
    assert_eq!(done["kind"], "apply");
    assert_eq!(done["createdBy"], "acme-admin");
    for cisco in ["TANDBERG_HTTP room", "TANDBERG_SSH room"] {
        assert_eq!(
            room(&done, cisco)["settings"],
            json!({
                "time_zone": {"outcome": "applied", "from": "Etc/UTC", "to": "Europe/Oslo"},
                "standby.delay_minutes": {"outcome": "applied", "from": 10, "to": 15},
                "auto_answer.mode": {"outcome": "applied", "from": "off", "to": "on"},
            }),
            "{cisco}"
        );
    }
    let poly = &room(&done, "POLYCOM_TELNET room")["settings"];
    assert_eq!(poly["time_zone"]["outcome"], "unsupported", "{poly}");
    assert_eq!(
        poly["standby.delay_minutes"]["outcome"], "applied",
        "{poly}"
    );
    assert_eq!(poly["auto_answer.mode"]["outcome"], "unchanged", "{poly}");
    assert_eq!(
        done["progress"],
        json!({"rooms": 4, "done": 4, "unreachable": 0, "applied": 7, "unchanged": 1,
            "unsupported": 4, "refused": 0, "unreadable": 0, "skipped": 0})
    );
    // The devices hold what the job wrote.
    let http = site.address("TANDBERG_HTTP");
    let ssh = site.address("TANDBERG_SSH");
    let poly_address = site.address("POLYCOM_TELNET");
    for address in [&http, &ssh] {
        let held = site.emu.devices.get(address).configuration;
        assert_eq!(held["Time Zone"], "Europe/Oslo", "{address}: {held:?}");
        assert_eq!(held["Standby Delay"], "15", "{address}: {held:?}");
    }
    assert_eq!(
        site.emu.devices.get(&poly_address).poly_configuration["sleeptime"],
        "15"
    );

    // Someone changes one room by hand; the undo leaves that setting and restores the rest.
    site.emu.devices.with(&ssh, |d| {
        d.configuration
            .insert("Time Zone".into(), "Europe/Paris".into());
    });
    app.clock.advance(1_000);
    let undo = start(&app, &rw, &format!("/api/jobs/{job}/undo"), None).await;
    let undone = run(&app, &enterprise, &undo).await;
    assert_eq!(undone["kind"], "undo");
    assert_eq!(undone["undoes"], json!(job));
    assert_eq!(undone["rooms"].as_array().unwrap().len(), 3, "{undone}");
    assert_eq!(
        room(&undone, "TANDBERG_HTTP room")["settings"]["time_zone"],
        json!({"outcome": "applied", "from": "Europe/Oslo", "to": "Etc/UTC"})
    );
    let paris = &room(&undone, "TANDBERG_SSH room")["settings"]["time_zone"];
    assert_eq!(paris["outcome"], "skipped", "{paris}");
    assert!(
        paris["reason"].as_str().unwrap().contains("Europe/Paris"),
        "{paris}"
    );
    assert_eq!(
        site.emu.devices.get(&http).configuration["Time Zone"],
        "Etc/UTC"
    );
    assert_eq!(
        site.emu.devices.get(&http).configuration["Standby Delay"],
        "10"
    );
    assert_eq!(
        site.emu.devices.get(&ssh).configuration["Time Zone"],
        "Europe/Paris"
    );
    assert_eq!(
        site.emu.devices.get(&poly_address).poly_configuration["sleeptime"],
        "3"
    );

    // An undo is not undone, a job of another enterprise is not there, and both jobs are
    // listed newest first.
    let (status, body) = app
        .call(Method::POST, &format!("/api/jobs/{undo}/undo"), &rw, None)
        .await;
    assert_error(status, &body, 409, "Conflict", 1900000009);
    let (globex, _) = app.tenant("globex").await;
    let (status, body) = app
        .call(Method::GET, &format!("/api/jobs/{job}"), &globex, None)
        .await;
    assert_error(status, &body, 404, "NotFound", 1217481661);
    let (status, list) = app.call(Method::GET, "/api/jobs", &ro, None).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [undo.as_str(), job.as_str()]);

    // The trail: who started each job, and how each ended.
    let (_, trail) = app.call(Method::GET, "/api/auditlog", &rw, None).await;
    let trail = trail.to_string();
    for operation in ["templates.apply", "jobs.undo", "jobs.finished"] {
        assert!(trail.contains(operation), "{operation} in {trail}");
    }
    assert!(
        !trail.contains("Europe/Oslo"),
        "values stay out of the trail"
    );
    assert!(!list.to_string().contains("password"));
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_apply_and_undo_on_sqlite() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("sqlite app");
    apply_and_undo(app, 30).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_apply_and_undo_on_postgres() {
    if let Some(app) = TestApp::spawn(Backend::Postgres).await {
        apply_and_undo(app, 31).await;
    }
}

/// An instance starts a job and dies while writing a room; another resumes it once the
/// claim lapses. The room's values from before the first write were saved before it, so the
/// job still reports what it replaced, and its undo restores it.
async fn a_restart_loses_nothing(first: TestApp, net: u8) {
    let (rw, _) = first.tenant("acme").await;
    let enterprise = first.enterprise_of(&rw).await;
    let site = site(&first, &rw, net, None).await;
    let id = template(&first, &rw, "Oslo rooms").await;
    let http = site.address("TANDBERG_HTTP");
    // Every answer of this codec comes late: the run is caught between saving the room's
    // values and hearing back from its write.
    site.emu.devices.with(&http, |d| {
        d.slow_ms = 250;
        d.faults.insert(Fault::Slow);
    });
    let body = json!({"rooms": {"endpoints": [site.endpoint("TANDBERG_HTTP")]}});
    let job = start(
        &first,
        &rw,
        &format!("/api/templates/{id}/apply"),
        Some(body),
    )
    .await;
    let running = {
        let jobs = first.services.template_jobs.clone();
        let (enterprise, job) = (enterprise.clone(), JobId::from_trusted(job.clone()));
        tokio::spawn(async move { jobs.run(&enterprise, &job).await })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let seen = get(&first, &rw, &job).await;
        match seen["rooms"][0]["state"].as_str() {
            Some("writing") => break,
            Some("pending") => {}
            _ => panic!("the room should be caught writing: {seen}"),
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the room never got to writing"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // The instance dies mid-write.
    running.abort();
    assert!(running.await.unwrap_err().is_cancelled());

    let second = first.spawn_beside(&[]).await;
    // Its claim is still good: nobody else takes the job yet.
    assert!(
        second
            .services
            .template_jobs
            .orphans()
            .await
            .unwrap()
            .is_empty()
    );
    let (status, body) = second
        .call(
            Method::POST,
            &format!("/api/templates/{id}/apply"),
            &rw,
            Some(json!({"rooms": {"all": true}})),
        )
        .await;
    assert_error(status, &body, 409, "Conflict", 1900000009);
    second
        .clock
        .advance(roomlink_domain::template::job::JOB_LEASE_MS + 1);
    let orphans = second.services.template_jobs.orphans().await.unwrap();
    assert_eq!(
        orphans,
        [(enterprise.clone(), JobId::from_trusted(job.clone()))]
    );
    site.emu.devices.with(&http, |d| {
        d.faults.remove(&Fault::Slow);
    });
    let done = run(&second, &enterprise, &job).await;
    assert_eq!(
        done["rooms"][0]["settings"]["time_zone"],
        json!({"outcome": "applied", "from": "Etc/UTC", "to": "Europe/Oslo"}),
        "{done}"
    );
    assert_eq!(done["progress"]["applied"], 3, "{done}");
    assert_eq!(
        site.emu.devices.get(&http).configuration["Time Zone"],
        "Europe/Oslo"
    );
    let undo = start(&second, &rw, &format!("/api/jobs/{job}/undo"), None).await;
    run(&second, &enterprise, &undo).await;
    let held = site.emu.devices.get(&http).configuration;
    assert_eq!(held["Time Zone"], "Etc/UTC", "{held:?}");
    assert_eq!(held["Standby Delay"], "10", "{held:?}");
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_in_the_middle_of_a_job_loses_nothing_on_sqlite() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("sqlite app");
    a_restart_loses_nothing(app, 32).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_in_the_middle_of_a_job_loses_nothing_on_postgres() {
    if let Some(app) = TestApp::spawn(Backend::Postgres).await {
        a_restart_loses_nothing(app, 33).await;
    }
}

/// A graceful stop releases the claims of its jobs: another instance takes them over at once,
/// without waiting for the lease to lapse.
async fn a_graceful_stop_hands_its_jobs_over_at_once(first: TestApp) {
    let (rw, _) = first.tenant("acme").await;
    let enterprise = first.enterprise_of(&rw).await;
    let site = site(&first, &rw, 36, None).await;
    let id = template(&first, &rw, "Oslo rooms").await;
    let body = json!({"rooms": {"endpoints": [site.endpoint("TANDBERG_HTTP")]}});
    let job = start(
        &first,
        &rw,
        &format!("/api/templates/{id}/apply"),
        Some(body),
    )
    .await;
    let second = first.spawn_beside(&[]).await;
    // Claimed by the first instance: nobody else may take it.
    assert!(
        second
            .services
            .template_jobs
            .orphans()
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        first.services.template_jobs.release_claims().await.unwrap(),
        1
    );
    // The clock has not moved: the job is free because it was released, not because it lapsed.
    assert_eq!(
        second.services.template_jobs.orphans().await.unwrap(),
        [(enterprise.clone(), JobId::from_trusted(job.clone()))]
    );
    let done = run(&second, &enterprise, &job).await;
    assert_eq!(done["progress"]["applied"], 3, "{done}");
    // Nothing left to release.
    assert_eq!(
        first.services.template_jobs.release_claims().await.unwrap(),
        0
    );
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_stop_hands_its_jobs_over_at_once_on_postgres() {
    if let Some(app) = TestApp::spawn(Backend::Postgres).await {
        a_graceful_stop_hands_its_jobs_over_at_once(app).await;
    }
}

/// A job cancelled while it writes: nothing more is begun, another job may start at once, and
/// the undo of the cancelled job restores the rooms it had reached, the one caught writing too.
async fn a_cancelled_job_stops_and_can_be_undone(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let enterprise = app.enterprise_of(&rw).await;
    let site = site(&app, &rw, 37, None).await;
    let id = template(&app, &rw, "Oslo rooms").await;
    let slow = ["TANDBERG_HTTP", "TANDBERG_SSH", "POLYCOM_TELNET"];
    for protocol in slow {
        site.emu.devices.with(&site.address(protocol), |d| {
            d.slow_ms = 250;
            d.faults.insert(Fault::Slow);
        });
    }
    let apply = format!("/api/templates/{id}/apply");
    let job = start(&app, &rw, &apply, Some(json!({"rooms": {"all": true}}))).await;
    let running = {
        let jobs = app.services.template_jobs.clone();
        let (enterprise, job) = (enterprise.clone(), JobId::from_trusted(job.clone()));
        tokio::spawn(async move { jobs.run(&enterprise, &job).await })
    };
    // Two rooms of the listener are worked on at once: cancelled when one is being written,
    // the other two have not been begun.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let seen = get(&app, &rw, &job).await;
        if seen["rooms"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["state"] == "writing")
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no room got to writing"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let cancel = format!("/api/jobs/{job}/cancel");
    let (status, body) = app.call(Method::POST, &cancel, &ro, None).await;
    assert_error(status, &body, 403, "Forbidden", 1900000001);
    let (status, cancelled) = app.call(Method::POST, &cancel, &rw, None).await;
    assert_eq!(status, StatusCode::OK, "{cancelled}");
    assert_eq!(cancelled["state"], "cancelled", "{cancelled}");
    assert!(cancelled["finishedAt"].is_i64(), "{cancelled}");
    // The run notices at its next save and stops; it begins no other room.
    let ended = running.await.unwrap().unwrap();
    assert!(matches!(ended, JobRun::ClaimedElsewhere), "{ended:?}");
    let after = get(&app, &rw, &job).await;
    assert_eq!(after["state"], "cancelled");
    let states: Vec<&str> = after["rooms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["state"].as_str().unwrap())
        .collect();
    assert!(states.contains(&"pending"), "{after}");
    assert!(!states.iter().all(|s| *s == "done"), "{after}");
    let (status, body) = app.call(Method::POST, &cancel, &rw, None).await;
    assert_error(status, &body, 409, "Conflict", 1900000009);
    assert!(body.to_string().contains("cancelled"), "{body}");

    // Not running any more: the undo may start at once, and restores what was written.
    for protocol in slow {
        site.emu.devices.with(&site.address(protocol), |d| {
            d.faults.remove(&Fault::Slow);
        });
    }
    let undo = start(&app, &rw, &format!("/api/jobs/{job}/undo"), None).await;
    let undone = run(&app, &enterprise, &undo).await;
    assert_eq!(undone["state"], "finished", "{undone}");
    assert!(!undone["rooms"].as_array().unwrap().is_empty(), "{undone}");
    // The room caught writing is among them: what it held before was known, and written back.
    assert!(
        undone["progress"]["applied"].as_u64().unwrap() >= 1,
        "{undone}"
    );
    // Every Cisco room holds its own values again (a room never reached was never written).
    for protocol in ["TANDBERG_HTTP", "TANDBERG_SSH"] {
        let held = site.emu.devices.get(&site.address(protocol)).configuration;
        for (key, own) in [("Time Zone", "Etc/UTC"), ("Standby Delay", "10")] {
            let value = held.get(key).map(String::as_str);
            assert!(
                value.is_none() || value == Some(own),
                "{protocol}: {held:?}"
            );
        }
    }
    let (_, trail) = app.call(Method::GET, "/api/auditlog", &rw, None).await;
    assert!(trail.to_string().contains("jobs.cancel"), "{trail}");
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_job_stops_and_can_be_undone_on_sqlite() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("sqlite app");
    a_cancelled_job_stops_and_can_be_undone(app).await;
}

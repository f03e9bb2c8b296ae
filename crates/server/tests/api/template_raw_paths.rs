//! Raw Cisco paths in templates end to end (issue #36's escape hatch), on SQLite and
//! PostgreSQL: refused as the neutral keys are, before anything is stored; planned, applied
//! and undone through `roomlink-listener` (3.5.0) on emulated Cisco rooms, whose schema subset
//! judges every write; unsupported on Poly and Mesh rooms.

use crate::real_rooms::site;
use crate::support::app::{Backend, TestApp, assert_error};
use crate::template_jobs::{room, run, start};
use reqwest::{Method, StatusCode};
use serde_json::json;

const ULTRASOUND: &str = "cisco:Audio Ultrasound MaxVolume";
const LANGUAGE: &str = "cisco:UserInterface Language";

async fn raw_paths_plan_apply_and_undo(app: TestApp, net: u8) {
    let (rw, _) = app.tenant("acme").await;
    let enterprise = app.enterprise_of(&rw).await;

    // Refused before anything is stored, naming the key, the value and the space or why.
    let refusals = [
        (
            json!({ULTRASOUND: 91}),
            "settings.cisco:Audio Ultrasound MaxVolume: 91 is not a whole number from 0 to 90",
        ),
        (
            json!({LANGUAGE: "Klingon"}),
            "settings.cisco:UserInterface Language: 'Klingon' is not one of Arabic, Catalan,",
        ),
        (
            json!({"cisco:Audio DefaultVolume": 40}),
            "settings: 'cisco:Audio DefaultVolume': the template setting \
             'audio.default_volume' writes this path on Cisco rooms: set that instead",
        ),
        (
            json!({"cisco:SIP Authentication Password": "secret"}),
            "settings: 'cisco:SIP Authentication Password': not a configuration an Admin may \
             write in Cisco's published schemas",
        ),
        (
            json!({"poly:sleeptime": 3}),
            "settings: 'poly:sleeptime': raw paths are taken for Cisco only",
        ),
    ];
    for (settings, message) in refusals {
        let (status, body) = app
            .call(
                Method::POST,
                "/api/templates",
                &rw,
                Some(json!({"name": "Raw", "settings": settings})),
            )
            .await;
        assert_error(status, &body, 400, "Invalid", 1782937293);
        let said = body["errorMessage"].as_str().unwrap();
        assert!(said.starts_with(message), "{said}");
        assert!(!said.contains("secret"), "{said}");
    }
    let (_, listed) = app.call(Method::GET, "/api/templates", &rw, None).await;
    assert_eq!(listed, json!([]), "nothing stored");

    // Any case and spacing in; the schemas' spelling out.
    let (status, template) = app
        .call(
            Method::POST,
            "/api/templates",
            &rw,
            Some(json!({"name": "Ultrasound and language", "settings": {
                "cisco:audio  ultrasound maxvolume": 40,
                "cisco:UserInterface Language": "norwegian",
                "time_zone": "Europe/Oslo"}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{template}");
    assert_eq!(
        template["settings"],
        json!({"time_zone": "Europe/Oslo", ULTRASOUND: 40, LANGUAGE: "Norwegian"})
    );
    let id = template["id"].as_str().unwrap();

    let site = site(&app, &rw, net, None).await;
    let (status, plan) = app
        .call(
            Method::POST,
            &format!("/api/templates/{id}/plan"),
            &rw,
            Some(json!({"rooms": {"all": true}})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{plan}");
    for cisco in ["TANDBERG_HTTP room", "TANDBERG_SSH room"] {
        let settings = &room(&plan, cisco)["settings"];
        assert_eq!(
            settings[ULTRASOUND],
            json!({"plan": "change", "from": 70, "to": 40}),
            "{cisco}: {settings}"
        );
        assert_eq!(
            settings[LANGUAGE],
            json!({"plan": "change", "from": "English", "to": "Norwegian"}),
            "{cisco}: {settings}"
        );
    }
    for other in ["POLYCOM_TELNET room", "MESH room"] {
        let settings = &room(&plan, other)["settings"];
        assert_eq!(
            settings[ULTRASOUND]["plan"], "unsupported",
            "{other}: {settings}"
        );
    }

    let job = start(
        &app,
        &rw,
        &format!("/api/templates/{id}/apply"),
        Some(json!({"rooms": {"all": true}})),
    )
    .await;
    let done = run(&app, &enterprise, &job).await;
    assert_eq!(done["state"], "finished", "{done}");
    for cisco in ["TANDBERG_HTTP room", "TANDBERG_SSH room"] {
        let settings = &room(&done, cisco)["settings"];
        assert_eq!(
            settings[ULTRASOUND],
            json!({"outcome": "applied", "from": 70, "to": 40}),
            "{cisco}: {settings}"
        );
        assert_eq!(settings[LANGUAGE]["outcome"], "applied", "{settings}");
    }
    let poly = &room(&done, "POLYCOM_TELNET room")["settings"];
    assert_eq!(poly[LANGUAGE]["outcome"], "unsupported", "{poly}");
    let http = site.address("TANDBERG_HTTP");
    let ssh = site.address("TANDBERG_SSH");
    for address in [&http, &ssh] {
        let held = site.emu.devices.get(address).configuration;
        assert_eq!(held["Audio Ultrasound MaxVolume"], "40", "{held:?}");
        assert_eq!(held["UserInterface Language"], "Norwegian", "{held:?}");
        assert_eq!(held["Time Zone"], "Europe/Oslo", "{held:?}");
    }

    let undo = start(&app, &rw, &format!("/api/jobs/{job}/undo"), None).await;
    let undone = run(&app, &enterprise, &undo).await;
    assert_eq!(undone["state"], "finished", "{undone}");
    for address in [&http, &ssh] {
        let held = site.emu.devices.get(address).configuration;
        assert_eq!(held["Audio Ultrasound MaxVolume"], "70", "{held:?}");
        assert_eq!(held["UserInterface Language"], "English", "{held:?}");
    }
    site.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_cisco_paths_are_planned_applied_and_undone_on_sqlite() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("sqlite app");
    raw_paths_plan_apply_and_undo(app, 38).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_cisco_paths_are_planned_applied_and_undone_on_postgres() {
    if let Some(app) = TestApp::spawn(Backend::Postgres).await {
        raw_paths_plan_apply_and_undo(app, 39).await;
    }
}

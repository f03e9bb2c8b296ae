//! Configuration templates through the API (`/api/templates`): create, read, list, merge patch,
//! replace and delete; refusals naming the key, the value and the space with nothing stored;
//! unique names; other enterprises; roles; the audit trail; the settings catalog.

use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error, json};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// The trail's entries about `id`, oldest first, as "operation outcome detail".
async fn trail(app: &TestApp, token: &str, id: &str) -> Vec<String> {
    let (status, body) = app
        .call(
            Method::GET,
            &format!("/api/auditlog?targetId={id}"),
            token,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mut entries: Vec<String> = body
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{} {} {}",
                e["operation"].as_str().unwrap(),
                e["outcome"].as_str().unwrap(),
                e["detail"].as_str().unwrap_or("-")
            )
        })
        .collect();
    entries.reverse();
    entries
}

async fn listed(app: &TestApp, token: &str) -> Value {
    let (status, body) = app.call(Method::GET, "/api/templates", token, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

async fn a_template_is_created_read_patched_replaced_and_deleted(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let response = app
        .with_token(Method::POST, "/api/templates", &rw)
        .json(&json!({
            "name": " Oslo rooms ",
            "description": "4th floor",
            "settings": {"time_zone": "europe/oslo", "audio.default_volume": 40,
                         "auto_answer.mode": "On"},
        }))
        .send()
        .await
        .unwrap();
    let location = response
        .headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_owned());
    let (status, created) = json(response).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(location, Some(format!("/api/templates/{id}")));
    assert_eq!(created["name"], "Oslo rooms");
    assert_eq!(
        created["settings"],
        json!({"time_zone": "Europe/Oslo", "audio.default_volume": 40, "auto_answer.mode": "on"})
    );
    assert_eq!(created["createdAt"], created["updatedAt"]);
    let keys: Vec<&String> = created.as_object().unwrap().keys().collect();
    assert_eq!(
        keys.len(),
        6,
        "id, name, description, settings, createdAt, updatedAt: {created}"
    );

    // Readers read it.
    let (status, got) = app
        .call(Method::GET, &format!("/api/templates/{id}"), &ro, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{got}");
    assert_eq!(got, created);
    assert_eq!(listed(&app, &ro).await, json!([created]));

    // A merge patch: a key's null removes it, the others merge, description null clears it.
    let (status, patched) = app
        .call(
            Method::PATCH,
            &format!("/api/templates/{id}"),
            &rw,
            Some(json!({
                "description": null,
                "settings": {"audio.default_volume": null, "standby.delay_minutes": 15},
            })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    assert_eq!(patched["name"], "Oslo rooms");
    assert!(patched["description"].is_null());
    assert_eq!(
        patched["settings"],
        json!({"time_zone": "Europe/Oslo", "standby.delay_minutes": 15, "auto_answer.mode": "on"})
    );

    // A replace sets exactly the body.
    let (status, replaced) = app
        .call(
            Method::PUT,
            &format!("/api/templates/{id}"),
            &rw,
            Some(json!({"name": "Oslo", "settings": {"proximity.mode": "off"}})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{replaced}");
    assert_eq!(replaced["settings"], json!({"proximity.mode": "off"}));
    assert_eq!(replaced["createdAt"], created["createdAt"]);
    let (_, got) = app
        .call(Method::GET, &format!("/api/templates/{id}"), &rw, None)
        .await;
    assert_eq!(got, replaced);

    let (status, body) = app
        .call(Method::DELETE, &format!("/api/templates/{id}"), &rw, None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (status, body) = app
        .call(Method::GET, &format!("/api/templates/{id}"), &rw, None)
        .await;
    assert_error(status, &body, 404, "NotFound", 1217481661);
    assert_eq!(body["errorDetails"]["entityClass"], "Template");
    assert_eq!(listed(&app, &rw).await, json!([]));

    // The trail names what changed, never a value.
    assert_eq!(
        trail(&app, &rw, &id).await,
        [
            "templates.create ok fields: name, description, settings.time_zone, \
             settings.audio.default_volume, settings.auto_answer.mode",
            "templates.update ok fields: description, settings.standby.delay_minutes, \
             settings.audio.default_volume",
            "templates.update ok fields: name, settings.time_zone, settings.standby.delay_minutes, \
             settings.proximity.mode, settings.auto_answer.mode",
            "templates.delete ok -",
        ]
    );
}

async fn refusals_name_key_value_and_space_and_store_nothing(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let (status, body) = app
        .call(
            Method::POST,
            "/api/templates",
            &rw,
            Some(json!({"name": "loud", "settings": {"audio.default_volume": 150}})),
        )
        .await;
    assert_error(status, &body, 400, "Invalid", 1782937293);
    let message = "settings.audio.default_volume: 150 is not a whole number from 0 to 100";
    assert_eq!(body["errorMessage"], message);
    assert_eq!(body["errorDetails"]["message"], message);
    for (bad, says) in [
        (
            json!({"name": "a", "settings": {"timezone": "Etc/UTC"}}),
            "'timezone' is not a template setting",
        ),
        (
            json!({"name": "a", "settings": {"standby.delay_minutes": 10}}),
            "10 is not one of 1, 3, 15",
        ),
        (
            json!({"name": "a", "settings": {}, "id": "mine"}),
            "id: is not a field of a template",
        ),
        (json!({"settings": {}}), "name: a string is required"),
    ] {
        let (status, body) = app
            .call(Method::POST, "/api/templates", &rw, Some(bad.clone()))
            .await;
        assert_error(status, &body, 400, "Invalid", 1782937293);
        let got = body["errorMessage"].as_str().unwrap();
        assert!(got.contains(says), "{bad}: {got}");
    }
    assert_eq!(listed(&app, &rw).await, json!([]), "nothing stored");

    // A patch is refused as a whole: the stored template stays as it was.
    let (status, created) = app
        .call(
            Method::POST,
            "/api/templates",
            &rw,
            Some(json!({"name": "quiet", "settings": {"audio.default_volume": 10}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_str().unwrap();
    let (status, body) = app
        .call(
            Method::PATCH,
            &format!("/api/templates/{id}"),
            &rw,
            Some(json!({"name": "louder", "settings": {"audio.default_volume": 101}})),
        )
        .await;
    assert_error(status, &body, 400, "Invalid", 1782937293);
    let (status, body) = app
        .call(
            Method::PATCH,
            &format!("/api/templates/{id}"),
            &rw,
            Some(json!({"settings": {"volume": null}})),
        )
        .await;
    assert_error(status, &body, 400, "Invalid", 1782937293);
    let (_, got) = app
        .call(Method::GET, &format!("/api/templates/{id}"), &rw, None)
        .await;
    assert_eq!(got, created);
    // The refusals are in the trail as such, without their values.
    let entries = trail(&app, &rw, id).await;
    assert_eq!(entries.len(), 3, "{entries:?}");
    assert!(
        entries[1].starts_with("templates.update Invalid"),
        "{entries:?}"
    );
    assert!(!entries.join(" ").contains("101"), "{entries:?}");
}

async fn create(app: &TestApp, token: &str, name: &str) -> (StatusCode, Value) {
    app.call(
        Method::POST,
        "/api/templates",
        token,
        Some(json!({"name": name, "settings": {}})),
    )
    .await
}

async fn names_are_unique_per_enterprise_without_regard_to_case(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let (other, _) = app.tenant("globex").await;
    let (status, first) = create(&app, &rw, "Lobby").await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let (status, body) = create(&app, &rw, "LOBBY ").await;
    assert_error(status, &body, 409, "Conflict", 1900000009);
    assert_eq!(
        body["errorDetails"],
        json!({"entityClass": "Template", "name": "LOBBY"})
    );
    let (status, body) = create(&app, &other, "lobby").await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "another enterprise's name: {body}"
    );
    // Renaming onto a taken name, by PUT or PATCH.
    let (_, second) = create(&app, &rw, "Hall").await;
    let second = format!("/api/templates/{}", second["id"].as_str().unwrap());
    let (status, body) = app
        .call(Method::PATCH, &second, &rw, Some(json!({"name": "lobby"})))
        .await;
    assert_error(status, &body, 409, "Conflict", 1900000009);
    let (status, body) = app
        .call(
            Method::PUT,
            &second,
            &rw,
            Some(json!({"name": "lobby", "settings": {}})),
        )
        .await;
    assert_error(status, &body, 409, "Conflict", 1900000009);
    let (_, got) = app.call(Method::GET, &second, &rw, None).await;
    assert_eq!(got["name"], "Hall");
}

async fn other_enterprises_and_roles_are_refused_as_the_catalog_says(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let (other_rw, _) = app.tenant("globex").await;
    let (status, created) = app
        .call(
            Method::POST,
            "/api/templates",
            &rw,
            Some(json!({"name": "Oslo", "settings": {"time_zone": "Etc/UTC"}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let path = format!("/api/templates/{}", created["id"].as_str().unwrap());
    let patch = json!({"name": "mine"});
    let replace = json!({"name": "mine", "settings": {}});
    for (method, body) in [
        (Method::GET, None),
        (Method::PATCH, Some(patch.clone())),
        (Method::PUT, Some(replace.clone())),
        (Method::DELETE, None),
    ] {
        let (status, error) = app.call(method.clone(), &path, &other_rw, body).await;
        assert_error(status, &error, 404, "NotFound", 1217481661);
        assert_eq!(error["errorDetails"]["entityClass"], "Template", "{method}");
    }
    assert_eq!(listed(&app, &other_rw).await, json!([]));
    // A malformed id is not found either.
    let (status, error) = app
        .call(Method::GET, "/api/templates/not%20an%20id", &rw, None)
        .await;
    assert_error(status, &error, 404, "NotFound", 1217481661);

    // Readers read; writing takes ROLE_READWRITE.
    for (method, path, body) in [
        (Method::POST, "/api/templates", Some(replace.clone())),
        (Method::PATCH, path.as_str(), Some(patch)),
        (Method::PUT, path.as_str(), Some(replace)),
        (Method::DELETE, path.as_str(), None),
    ] {
        let (status, error) = app.call(method, path, &ro, body).await;
        assert_error(status, &error, 403, "Forbidden", 1900000001);
    }
    let (_, got) = app.call(Method::GET, &path, &ro, None).await;
    assert_eq!(got, created);

    // No credentials: NotAuthenticated.
    for path in ["/api/templates", path.as_str(), "/api/templates/settings"] {
        let response = app.request(Method::GET, path).send().await.unwrap();
        let (status, body) = json(response).await;
        assert_error(status, &body, 401, "NotAuthenticated", 1285563822);
    }
}

async fn the_settings_catalog_lists_every_key_with_its_space(app: TestApp) {
    let (_, ro) = app.tenant("acme").await;
    let (status, catalog) = app
        .call(Method::GET, "/api/templates/settings", &ro, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{catalog}");
    let entries = catalog.as_array().unwrap();
    let keys: Vec<&str> = entries.iter().map(|e| e["key"].as_str().unwrap()).collect();
    let expected: Vec<&str> = roomlink_domain::template::SettingKey::ALL
        .iter()
        .map(|k| k.name())
        .collect();
    assert_eq!(keys, expected);
    let volume = entries
        .iter()
        .find(|e| e["key"] == "audio.default_volume")
        .unwrap();
    assert_eq!(
        (&volume["type"], &volume["min"], &volume["max"]),
        (&json!("integer"), &json!(0), &json!(100))
    );
    let zone = entries.iter().find(|e| e["key"] == "time_zone").unwrap();
    assert!(
        zone["values"]
            .as_array()
            .unwrap()
            .contains(&json!("Europe/Oslo"))
    );
}

on_every_backend!(
    a_template_is_created_read_patched_replaced_and_deleted,
    refusals_name_key_value_and_space_and_store_nothing,
    names_are_unique_per_enterprise_without_regard_to_case,
    other_enterprises_and_roles_are_refused_as_the_catalog_says,
    the_settings_catalog_lists_every_key_with_its_space,
);

use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error, json};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

fn full_endpoint() -> Value {
    json!({
        "name": "Boardroom", "ipAddress": "127.77.0.1", "port": 443,
        "controlProtocol": "TANDBERG_SSH", "signalingProtocol": "SIP", "dialStyle": "SIP_URI",
        "addressStyle": "HOSTNAME", "username": "admin", "password": "room-secret-1",
        "calendarId": "board@corp.example", "calendarType": "GOOGLE",
        "customData": {"correlationId": "c-1"}, "assetId": "tag-7", "externalId": "ext-7",
        "location": "Floor 3", "pointOfContact": "it@corp.example",
        "geolocation": {"latitude": 52.52, "longitude": 13.4}, "elevation": 102.0,
        "autoJoinMode": "ENABLED", "zeroTouchType": "STATIC"
    })
}

async fn insert_get_list_and_delete(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let created = app.create_endpoint(&rw, full_endpoint()).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 24);
    assert!(
        created.get("password").is_some_and(Value::is_null),
        "password key present and null"
    );
    for (key, value) in full_endpoint().as_object().unwrap() {
        if key != "password" {
            assert_eq!(&created[key], value, "{key}");
        }
    }
    assert!(created["meshBaseUri"].is_null(), "unset fields are null");

    // The trailing-slash form inserts too.
    let (status, second) = app
        .call(
            Method::POST,
            "/api/endpoints/",
            &rw,
            Some(json!({"name": "Huddle"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{second}");

    let (status, fetched) = app
        .call(Method::GET, &format!("/api/endpoints/{id}"), &ro, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(fetched, created);
    let (status, list) = app.call(Method::GET, "/api/endpoints", &ro, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert_eq!(list[0], created, "creation order");

    let (status, body) = app
        .call(Method::DELETE, &format!("/api/endpoints/{id}"), &rw, None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (status, body) = app
        .call(Method::GET, &format!("/api/endpoints/{id}"), &rw, None)
        .await;
    assert_error(status, &body, 404, "NotFound", 1217481661);
    assert_eq!(
        body["errorDetails"],
        json!({"entityClass": "Endpoint", "entityId": id})
    );
    let (status, body) = app
        .call(Method::DELETE, &format!("/api/endpoints/{id}"), &rw, None)
        .await;
    assert_error(status, &body, 404, "NotFound", 1217481661);
}

async fn put_replaces_every_field(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let created = app.create_endpoint(&rw, full_endpoint()).await;
    let id = created["id"].as_str().unwrap();
    let (status, replaced) = app
        .call(
            Method::PUT,
            &format!("/api/endpoints/{id}"),
            &rw,
            Some(json!({"name": "Renamed", "port": null, "id": id})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{replaced}");
    assert_eq!(replaced["name"], "Renamed");
    for key in [
        "ipAddress",
        "port",
        "location",
        "customData",
        "geolocation",
        "calendarId",
    ] {
        assert!(
            replaced[key].is_null(),
            "{key} omitted or null becomes null"
        );
    }
    let (_, fetched) = app
        .call(Method::GET, &format!("/api/endpoints/{id}"), &rw, None)
        .await;
    assert_eq!(fetched, replaced, "reads back as answered");

    // The id is immutable.
    let (status, body) = app
        .call(
            Method::PUT,
            &format!("/api/endpoints/{id}"),
            &rw,
            Some(json!({"name": "x", "id": "ffffffffffffffffffffffff"})),
        )
        .await;
    assert_error(status, &body, 405, "Unmodifiable", 1867716210);
    assert_eq!(body["errorDetails"]["entityId"], id);
}

async fn patch_merges_modified_fields(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let created = app.create_endpoint(&rw, full_endpoint()).await;
    let id = created["id"].as_str().unwrap();
    let path = format!("/api/endpoints/{id}");
    let (status, patched) = app
        .call(
            Method::PATCH,
            &path,
            &rw,
            Some(json!({"port": 22, "location": null})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    assert_eq!(patched["port"], 22);
    assert!(patched["location"].is_null());
    assert_eq!(patched["name"], "Boardroom", "omitted fields stay");
    assert_eq!(patched["customData"], json!({"correlationId": "c-1"}));

    // Wrapped form, and PUT with the override header.
    let (status, wrapped) = app
        .call(
            Method::PATCH,
            &path,
            &rw,
            Some(json!({"modifiedFields": {"name": "Wrapped"}})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{wrapped}");
    assert_eq!(wrapped["name"], "Wrapped");
    let response = app
        .with_token(Method::PUT, &path, &rw)
        .header("X-HTTP-Method-Override", "PATCH")
        .json(&json!({"name": "Overridden"}))
        .send()
        .await
        .unwrap();
    let (status, overridden) = json(response).await;
    assert_eq!(status, StatusCode::OK, "{overridden}");
    assert_eq!(overridden["name"], "Overridden");
    assert_eq!(overridden["port"], 22, "a PATCH, not a replacement");

    // An empty map changes nothing; unknown names are Invalid.
    let (status, same) = app.call(Method::PATCH, &path, &rw, Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(same, overridden);
    let (status, body) = app
        .call(Method::PATCH, &path, &rw, Some(json!({"colour": "red"})))
        .await;
    assert_error(status, &body, 400, "Invalid", 1782937293);
    assert!(body["errorMessage"].as_str().unwrap().contains("colour"));
}

async fn annex_o_dial_style_is_unmodifiable(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let created = app
        .create_endpoint(&rw, json!({"name": "Legacy", "dialStyle": "ANNEX_O"}))
        .await;
    let id = created["id"].as_str().unwrap();
    let path = format!("/api/endpoints/{id}");
    let (status, body) = app
        .call(
            Method::PATCH,
            &path,
            &rw,
            Some(json!({"dialStyle": "SIP_URI"})),
        )
        .await;
    assert_error(status, &body, 405, "Unmodifiable", 1867716210);
    assert_eq!(
        body["errorDetails"],
        json!({"entityClass": "Endpoint", "entityId": id})
    );
    let (status, body) = app
        .call(Method::PUT, &path, &rw, Some(json!({"name": "Legacy"})))
        .await;
    assert_error(status, &body, 405, "Unmodifiable", 1867716210);
    let (status, ok) = app
        .call(Method::PATCH, &path, &rw, Some(json!({"location": "B2"})))
        .await;
    assert_eq!(status, StatusCode::OK, "{ok}");
    assert_eq!(ok["dialStyle"], "ANNEX_O");
}

async fn validation_errors_name_the_field(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    for (body, needle) in [
        (json!({"ipAddress": "127.0.0.1"}), "name"),
        (json!({"name": "x", "port": 70000}), "port"),
        (json!({"name": "x", "ipAddress": "999.1.1.1"}), "ipAddress"),
        (
            json!({"name": "x", "controlProtocol": "CARRIER_PIGEON"}),
            "TANDBERG_SSH",
        ),
        (json!({"name": "x", "id": "abc"}), "id"),
    ] {
        let (status, error) = app
            .call(Method::POST, "/api/endpoints", &rw, Some(body.clone()))
            .await;
        assert_error(status, &error, 400, "Invalid", 1782937293);
        assert!(
            error["errorMessage"].as_str().unwrap().contains(needle),
            "{body} -> {error}"
        );
    }
    // Duplicate calendarId within the enterprise.
    app.create_endpoint(&rw, json!({"name": "a", "calendarId": "room@x.example"}))
        .await;
    let (status, error) = app
        .call(
            Method::POST,
            "/api/endpoints",
            &rw,
            Some(json!({"name": "b", "calendarId": "room@x.example"})),
        )
        .await;
    assert_error(status, &error, 400, "DuplicateCalendarId", 1782937294);
}

async fn endpoint_passwords_never_leave_the_service(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let created = app.create_endpoint(&rw, full_endpoint()).await;
    let id = created["id"].as_str().unwrap();
    let mut bodies = vec![created.to_string()];
    for (method, path, body) in [
        (Method::GET, format!("/api/endpoints/{id}"), None),
        (Method::GET, "/api/endpoints".to_owned(), None),
        (
            Method::PATCH,
            format!("/api/endpoints/{id}"),
            Some(json!({"password": "room-secret-2"})),
        ),
        (
            Method::PUT,
            format!("/api/endpoints/{id}"),
            Some(json!({"name": "n", "password": "room-secret-3"})),
        ),
    ] {
        let (status, body) = app.call(method, &path, &rw, body).await;
        assert_eq!(status, StatusCode::OK);
        // One record, or the list: each shows the write-only field as null.
        let records = body
            .as_array()
            .cloned()
            .unwrap_or_else(|| vec![body.clone()]);
        assert!(!records.is_empty(), "{path}");
        for record in &records {
            assert_eq!(
                record.get("password"),
                Some(&Value::Null),
                "{path}: {record}"
            );
        }
        bodies.push(body.to_string());
    }
    for body in bodies {
        assert!(!body.contains("room-secret"), "{body}");
    }
}

async fn the_endpoint_limit_holds_under_concurrent_inserts(app: TestApp) {
    app.enterprise("small", Some(5)).await;
    app.user(
        "small",
        "small-admin",
        roomlink_domain::access::Role::ReadWrite,
    )
    .await;
    let token = app.token("small-admin").await;
    let attempts = (0..20).map(|i| {
        app.with_token(Method::POST, "/api/endpoints", &token)
            .json(&json!({"name": format!("room {i}")}))
            .send()
    });
    let responses = futures::future::join_all(attempts).await;
    let mut created = 0;
    for response in responses {
        let (status, body) = json(response.unwrap()).await;
        if status == StatusCode::OK {
            created += 1;
        } else {
            assert_error(status, &body, 403, "LimitReached", 1881171140);
            assert_eq!(body["errorDetails"], json!({"entityClass": "Endpoint"}));
        }
    }
    assert_eq!(created, 5);
    let (_, list) = app.call(Method::GET, "/api/endpoints", &token, None).await;
    assert_eq!(list.as_array().unwrap().len(), 5);
}

async fn read_only_callers_are_refused_every_write(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let created = app.create_endpoint(&rw, json!({"name": "Room"})).await;
    let id = created["id"].as_str().unwrap();
    let listener = app
        .call(
            Method::POST,
            "/api/listenerservices",
            &rw,
            Some(json!({"name": "L", "baseUrl": "http://127.0.0.1:9"})),
        )
        .await
        .1;
    let listener_id = listener["id"].as_str().unwrap();
    let writes = [
        (
            Method::POST,
            "/api/endpoints".to_owned(),
            Some(json!({"name": "x"})),
        ),
        (
            Method::PUT,
            format!("/api/endpoints/{id}"),
            Some(json!({"name": "x"})),
        ),
        (
            Method::PATCH,
            format!("/api/endpoints/{id}"),
            Some(json!({"name": "x"})),
        ),
        (Method::DELETE, format!("/api/endpoints/{id}"), None),
        (
            Method::POST,
            "/api/listenerservices".to_owned(),
            Some(json!({"name": "x", "baseUrl": "http://127.0.0.1:9"})),
        ),
        (
            Method::PUT,
            format!("/api/listenerservices/{listener_id}"),
            Some(json!({"name": "x", "baseUrl": "http://127.0.0.1:9"})),
        ),
        (
            Method::DELETE,
            format!("/api/listenerservices/{listener_id}"),
            None,
        ),
    ];
    for (method, path, body) in writes {
        let (status, error) = app.call(method.clone(), &path, &ro, body).await;
        assert_error(status, &error, 403, "Forbidden", 1900000001);
        assert_eq!(
            error["errorDetails"]["roles"],
            json!(["ROLE_READONLY"]),
            "{method} {path}"
        );
    }
    let response = app
        .with_token(Method::PUT, "/api/endpoints/csv", &ro)
        .header("Content-Type", "text/csv")
        .body("id,name,password\n,x,pw\n")
        .send()
        .await
        .unwrap();
    let (status, error) = json(response).await;
    assert_error(status, &error, 403, "Forbidden", 1900000001);
    let (_, list) = app.call(Method::GET, "/api/endpoints", &ro, None).await;
    assert_eq!(list.as_array().unwrap().len(), 1, "nothing changed");
}

on_every_backend!(
    insert_get_list_and_delete,
    put_replaces_every_field,
    patch_merges_modified_fields,
    annex_o_dial_style_is_unmodifiable,
    validation_errors_name_the_field,
    endpoint_passwords_never_leave_the_service,
    the_endpoint_limit_holds_under_concurrent_inserts,
    read_only_callers_are_refused_every_write,
);

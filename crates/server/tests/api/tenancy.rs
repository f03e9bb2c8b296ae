use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error};
use reqwest::Method;
use serde_json::json;

/// Another enterprise's records answer exactly as records that do not exist.
async fn enterprises_cannot_see_or_touch_each_other(app: TestApp) {
    let (acme, _) = app.tenant("acme").await;
    let (globex, _) = app.tenant("globex").await;
    let theirs = app
        .create_endpoint(
            &acme,
            json!({"name": "Acme room", "calendarId": "shared@x.example"}),
        )
        .await;
    let id = theirs["id"].as_str().unwrap();
    // The same calendarId is fine in another enterprise.
    app.create_endpoint(
        &globex,
        json!({"name": "Globex room", "calendarId": "shared@x.example"}),
    )
    .await;

    let missing = "ffffffffffffffffffffffff";
    for method in [Method::GET, Method::DELETE] {
        let (s1, foreign) = app
            .call(
                method.clone(),
                &format!("/api/endpoints/{id}"),
                &globex,
                None,
            )
            .await;
        let (s2, absent) = app
            .call(method, &format!("/api/endpoints/{missing}"), &globex, None)
            .await;
        assert_error(s1, &foreign, 404, "NotFound", 1217481661);
        assert_eq!(s1, s2);
        assert_eq!(
            foreign["errorDetails"]["entityClass"],
            absent["errorDetails"]["entityClass"]
        );
        assert_eq!(
            foreign["errorMessage"].as_str().unwrap().replace(id, "ID"),
            absent["errorMessage"]
                .as_str()
                .unwrap()
                .replace(missing, "ID")
        );
    }
    for (method, body) in [
        (Method::PUT, json!({"name": "x"})),
        (Method::PATCH, json!({"name": "x"})),
    ] {
        let (status, error) = app
            .call(method, &format!("/api/endpoints/{id}"), &globex, Some(body))
            .await;
        assert_error(status, &error, 404, "NotFound", 1217481661);
    }
    let csv = format!("id,name\n{id},Hijacked\n");
    let response = app
        .with_token(Method::PUT, "/api/endpoints/csv", &globex)
        .header("Content-Type", "text/csv")
        .body(csv)
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success());

    let (_, list) = app.call(Method::GET, "/api/endpoints", &globex, None).await;
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert!(!list.to_string().contains(id));
    let (_, mine) = app
        .call(Method::GET, &format!("/api/endpoints/{id}"), &acme, None)
        .await;
    assert_eq!(mine, theirs, "untouched by the other enterprise");

    // Tokens and enterprises too.
    let (_, tokens) = app
        .call(Method::GET, "/api/auth/accesstokens", &globex, None)
        .await;
    assert!(
        tokens
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["enterpriseName"] == "globex")
    );
    let (status, error) = app
        .call(
            Method::GET,
            &format!("/api/auth/accesstokens/{acme}"),
            &globex,
            None,
        )
        .await;
    assert_error(status, &error, 404, "NotFound", 1217481661);
    let (_, me) = app
        .call(Method::GET, "/api/enterprises/self", &globex, None)
        .await;
    assert_eq!(me["name"], "globex");
    assert!(me["id"].is_string());
}

on_every_backend!(enterprises_cannot_see_or_touch_each_other);

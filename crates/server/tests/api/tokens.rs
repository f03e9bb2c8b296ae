use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error, json};
use reqwest::{Method, StatusCode};
use roomlink_domain::access::Role;

const TWO_WEEKS_MS: i64 = 1_209_600_000;

async fn service_credentials_give_a_two_week_token(app: TestApp) {
    app.enterprise("acme", None).await;
    app.user("acme", "ops", Role::ReadWrite).await;
    let response = app
        .request(Method::POST, "/api/auth/accesstokens")
        .basic_auth("ops", Some("ops-password"))
        .send()
        .await
        .unwrap();
    let (status, token) = json(response).await;
    assert_eq!(status, StatusCode::OK, "{token}");
    let value = token["accessToken"].as_str().unwrap();
    assert_eq!(value.len(), 32);
    assert_eq!(token["enterpriseName"], "acme");
    assert_eq!(
        token["roles"],
        serde_json::json!(["ROLE_READONLY", "ROLE_READWRITE"])
    );
    assert_eq!(token["creator"], "ops");
    let lifetime =
        token["expirationDate"].as_i64().unwrap() - token["creationDate"].as_i64().unwrap();
    assert_eq!(lifetime, TWO_WEEKS_MS);

    // The token works from the header and from the query string.
    let (status, _) = app.call(Method::GET, "/api/endpoints", value, None).await;
    assert_eq!(status, StatusCode::OK);
    let response = app
        .request(Method::GET, &format!("/api/endpoints?accesstoken={value}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // And so does Basic auth on a request.
    let response = app
        .request(Method::GET, "/api/endpoints")
        .basic_auth("ops", Some("ops-password"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
}

async fn wrong_or_missing_credentials_are_refused(app: TestApp) {
    app.enterprise("acme", None).await;
    app.user("acme", "ops", Role::ReadWrite).await;
    for (user, password) in [
        ("ops", "wrong"),
        ("nobody", "x"),
        ("alice@example.com", "wrong"),
    ] {
        let response = app
            .request(Method::POST, "/api/auth/accesstokens")
            .basic_auth(user, Some(password))
            .send()
            .await
            .unwrap();
        let (status, body) = json(response).await;
        assert_error(status, &body, 401, "BadCredentialsException", 1285563821);
    }
    let (status, body) = json(
        app.request(Method::POST, "/api/auth/accesstokens")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(status, &body, 401, "NotAuthenticated", 1285563822);
    let (status, body) = json(
        app.request(Method::GET, "/api/endpoints")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(status, &body, 401, "NotAuthenticated", 1285563822);
    let (status, body) = app
        .call(Method::GET, "/api/endpoints", "not-a-real-token", None)
        .await;
    assert_error(status, &body, 401, "BadCredentialsException", 1285563821);
    let response = app
        .request(Method::GET, "/api/endpoints")
        .header("Authorization", "Basic !!!not-base64")
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_error(status, &body, 401, "BadCredentialsException", 1285563821);
}

async fn platform_credentials_and_tokens(app: TestApp) {
    app.enterprise("acme", None).await;
    // Platform username and password (an enterprise admin): full rights.
    let response = app
        .request(Method::POST, "/api/auth/accesstokens")
        .basic_auth("alice@example.com", Some("alice-platform-pw"))
        .send()
        .await
        .unwrap();
    let (status, token) = json(response).await;
    assert_eq!(status, StatusCode::OK, "{token}");
    assert_eq!(
        token["roles"],
        serde_json::json!(["ROLE_READONLY", "ROLE_READWRITE"])
    );
    assert_eq!(token["platformId"], 1001);
    assert_eq!(token["firstName"], "Alice");

    // A platform admin token: full rights; a plain user's: read-only.
    let create = |platform_token: &'static str| {
        app.request(
            Method::POST,
            &format!("/api/auth/accesstokens?platformaccesstoken={platform_token}&duration=2h"),
        )
        .send()
    };
    let (status, admin) = json(create("plat-token-alice").await.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{admin}");
    assert_eq!(
        admin["roles"],
        serde_json::json!(["ROLE_READONLY", "ROLE_READWRITE"])
    );
    let lifetime =
        admin["expirationDate"].as_i64().unwrap() - admin["creationDate"].as_i64().unwrap();
    assert_eq!(lifetime, 7_200_000);
    let (status, user) = json(create("plat-token-bob").await.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{user}");
    assert_eq!(user["roles"], serde_json::json!(["ROLE_READONLY"]));
    let (status, body) = json(create("plat-token-unknown").await.unwrap()).await;
    assert_error(status, &body, 401, "BadCredentialsException", 1285563821);
    // A platform user of an enterprise roomlink does not serve.
    let (status, body) = json(create("plat-token-mallory").await.unwrap()).await;
    assert_error(status, &body, 401, "BadCredentialsException", 1285563821);

    // The read-only token reads but cannot write.
    let ro = user["accessToken"].as_str().unwrap();
    assert_eq!(
        app.call(Method::GET, "/api/endpoints", ro, None).await.0,
        StatusCode::OK
    );
    let (status, body) = app
        .call(
            Method::POST,
            "/api/endpoints",
            ro,
            Some(serde_json::json!({"name": "x"})),
        )
        .await;
    assert_error(status, &body, 403, "Forbidden", 1900000001);
}

async fn bad_durations_are_invalid(app: TestApp) {
    app.enterprise("acme", None).await;
    app.user("acme", "ops", Role::ReadWrite).await;
    for duration in ["5y", "10", "400d", "-1h"] {
        let response = app
            .request(
                Method::POST,
                &format!("/api/auth/accesstokens?duration={duration}"),
            )
            .basic_auth("ops", Some("ops-password"))
            .send()
            .await
            .unwrap();
        let (status, body) = json(response).await;
        assert_error(status, &body, 400, "Invalid", 1782937293);
        assert!(body["errorMessage"].as_str().unwrap().contains("duration"));
    }
}

async fn list_get_and_delete_tokens(app: TestApp) {
    let (rw, ro) = app.tenant("acme").await;
    let (status, list) = app
        .call(Method::GET, "/api/auth/accesstokens", &rw, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert!(
        list.iter().all(|t| t["accessToken"].is_null()),
        "values are never listed"
    );
    let body = serde_json::to_string(list).unwrap();
    assert!(!body.contains(&rw) && !body.contains(&ro));

    // One token, by value or by id.
    let (status, mine) = app
        .call(
            Method::GET,
            &format!("/api/auth/accesstokens/{ro}"),
            &ro,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{mine}");
    assert_eq!(mine["roles"], serde_json::json!(["ROLE_READONLY"]));
    let id = mine["id"].as_str().unwrap().to_owned();
    let (status, by_id) = app
        .call(
            Method::GET,
            &format!("/api/auth/accesstokens/{id}"),
            &rw,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(by_id["id"], id.as_str());
    let (status, body) = app
        .call(
            Method::GET,
            "/api/auth/accesstokens/abcdefabcdefabcdefabcdef",
            &rw,
            None,
        )
        .await;
    assert_error(status, &body, 404, "NotFound", 1217481661);

    // Read-only may delete its own token, not another's.
    let (status, body) = app
        .call(
            Method::DELETE,
            &format!("/api/auth/accesstokens/{rw}"),
            &ro,
            None,
        )
        .await;
    assert_error(status, &body, 403, "Forbidden", 1900000001);
    let (status, _) = app
        .call(
            Method::DELETE,
            &format!("/api/auth/accesstokens/{id}"),
            &rw,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    // Deleted means unusable at once (the cache is invalidated).
    let (status, body) = app.call(Method::GET, "/api/endpoints", &ro, None).await;
    assert_error(status, &body, 401, "BadCredentialsException", 1285563821);
    let (status, list) = app
        .call(Method::GET, "/api/auth/accesstokens", &rw, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list.as_array().unwrap().len(), 1);
}

on_every_backend!(
    service_credentials_give_a_two_week_token,
    wrong_or_missing_credentials_are_refused,
    platform_credentials_and_tokens,
    bad_durations_are_invalid,
    list_get_and_delete_tokens,
);

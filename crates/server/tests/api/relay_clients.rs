//! Clients written for the predecessor (Relay) keep working: the calls two of them make, and
//! the fields they read. The room-map web app uses Basic credentials and reads the endpoint
//! list and statuses; the failure-monitoring script gets its token from `seamaccesstoken` and
//! reads failures and the endpoint list.

use crate::control::room;
use crate::on_every_backend;
use crate::support::app::{TestApp, assert_error, json};
use reqwest::{Method, StatusCode};
use roomlink_domain::access::Role;
use roomlink_listener_sim::SimConfig;
use serde_json::{Value, json};

/// `POST /api/auth/accesstokens` with a query and no other credentials.
async fn create_token(app: &TestApp, query: &str) -> (StatusCode, Value) {
    let path = format!("/api/auth/accesstokens?{query}");
    json(app.request(Method::POST, &path).send().await.unwrap()).await
}

/// A GET with Basic credentials, as the room-map web app sends every request.
async fn basic_get(app: &TestApp, path: &str, user: &str, password: &str) -> Value {
    let response = app
        .request(Method::GET, path)
        .basic_auth(user, Some(password))
        .send()
        .await
        .unwrap();
    let (status, body) = json(response).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    body
}

async fn the_room_map_reads_endpoints_and_statuses_with_basic_auth(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    app.user("acme", "roommap", Role::ReadOnly).await;
    let busy = room(&app, &rw, SimConfig::default(), "127.77.2.1").await;
    let idle = app
        .create_endpoint(&rw, json!({"name": "Huddle", "ipAddress": "127.77.2.2"}))
        .await;
    let (status, body) = app
        .call(
            Method::POST,
            &format!("/api/endpoints/{}/join?meetingid=123456789", busy.endpoint),
            &rw,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");

    let password = "roommap-password";
    // The service user, and a platform user, as the app's operators may configure either.
    for (user, password) in [
        ("roommap", password),
        ("alice@example.com", "alice-platform-pw"),
    ] {
        let endpoints = basic_get(&app, "/api/endpoints", user, password).await;
        let endpoints = endpoints.as_array().unwrap();
        assert_eq!(endpoints.len(), 2);
        let ids: Vec<&str> = endpoints
            .iter()
            .map(|e| e["id"].as_str().unwrap())
            .collect();
        assert!(
            ids.contains(&busy.endpoint.as_str()) && ids.contains(&idle["id"].as_str().unwrap())
        );
        assert!(endpoints.iter().all(|e| e["name"].is_string()));

        let statuses = basic_get(&app, "/api/endpoints/status", user, password).await;
        let statuses = statuses.as_array().unwrap();
        assert_eq!(statuses.len(), 2);
        for status in statuses {
            // The fields the map reads, with the JSON types it expects.
            assert!(status["endpointId"].is_string(), "{status}");
            assert!(status["callActive"].is_boolean(), "{status}");
            assert!(status["reserved"].is_boolean(), "{status}");
            assert!(status["timestamp"].is_i64(), "{status}");
        }
        let of = |id: &str| {
            statuses
                .iter()
                .find(|s| s["endpointId"] == id)
                .unwrap_or_else(|| panic!("no status for {id}"))
                .clone()
        };
        let busy_status = of(&busy.endpoint);
        assert_eq!(busy_status["callActive"], true);
        assert_eq!(busy_status["reserved"], false);
        assert!(busy_status["timestamp"].as_i64().unwrap() > 0);
        let idle_status = of(idle["id"].as_str().unwrap());
        assert_eq!(idle_status["callActive"], false);
        assert_eq!(idle_status["timestamp"], 0, "never observed");
    }
}

async fn the_failure_monitor_uses_a_seamaccesstoken(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    let faulty = room(&app, &rw, SimConfig::default(), "127.77.3.1").await;
    let response = app
        .client
        .put(format!("{}/sim/endpoints/127.77.3.1/fault", faulty.sim))
        .json(&json!({"fault": "bad_credentials"}))
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success());
    let (status, body) = app
        .call(
            Method::POST,
            &format!("/api/endpoints/{}/join", faulty.endpoint),
            &rw,
            None,
        )
        .await;
    assert_error(status, &body, 502, "AuthenticationFailed", 1780355652);

    // The script's token: a platform user's token under the predecessor's parameter name.
    let (status, token) = create_token(&app, "seamaccesstoken=plat-token-bob").await;
    assert_eq!(status, StatusCode::OK, "{token}");
    assert_eq!(token["roles"], json!(["ROLE_READONLY"]));
    assert_eq!(token["username"], "bob@example.com");
    assert_eq!(token["seamId"], Value::Null);
    let monitor = token["accessToken"].as_str().unwrap();

    let (status, failures) = app.call(Method::GET, "/api/failures", monitor, None).await;
    assert_eq!(status, StatusCode::OK, "{failures}");
    let failures = failures.as_array().unwrap();
    // Every field the script reads, with the JSON types it expects.
    for failure in failures {
        assert!(failure["id"].is_string(), "{failure}");
        assert_eq!(failure["subjectClass"], "ListenerService");
        assert!(failure["subjectId"].is_string(), "{failure}");
        assert!(failure["errorDate"].as_i64().unwrap() > 0, "{failure}");
        assert!(failure["errorCode"].is_i64(), "{failure}");
        assert!(failure["errorName"].is_string(), "{failure}");
        assert!(failure["errorMessage"].is_string(), "{failure}");
        assert!(failure["errorDetails"].is_object(), "{failure}");
    }
    let failure = failures
        .iter()
        .find(|f| f["errorName"] == "AuthenticationFailed")
        .unwrap_or_else(|| panic!("the join's failure: {failures:?}"));
    assert_eq!(failure["errorCode"], 1780355652);
    assert!(!failure.to_string().contains("room-pw-secret"));
    // The predecessor's path had a trailing slash.
    let (status, again) = app.call(Method::GET, "/api/failures/", monitor, None).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again.as_array().unwrap().len(), failures.len());

    let (status, endpoints) = app.call(Method::GET, "/api/endpoints", monitor, None).await;
    assert_eq!(status, StatusCode::OK, "{endpoints}");
    let endpoints = endpoints.as_array().unwrap();
    assert_eq!(endpoints.len(), 1);
    assert_eq!(endpoints[0]["id"], faulty.endpoint.as_str());
    assert_eq!(endpoints[0]["listenerServiceId"], failure["subjectId"]);
    assert_eq!(endpoints[0]["name"], "Boardroom");
    // Read-only: it may look, not change.
    let (status, body) = app
        .call(
            Method::DELETE,
            &format!("/api/endpoints/{}", faulty.endpoint),
            monitor,
            None,
        )
        .await;
    assert_error(status, &body, 403, "Forbidden", 1900000001);
}

/// Everything but what differs from one token to the next.
fn comparable(token: &Value) -> Value {
    let mut token = token.clone();
    for key in ["accessToken", "id", "creationDate", "expirationDate"] {
        token.as_object_mut().unwrap().remove(key);
    }
    token
}

async fn seamaccesstoken_is_platformaccesstoken(app: TestApp) {
    let (rw, _) = app.tenant("acme").await;
    for (platform_token, roles) in [
        (
            "plat-token-alice",
            json!(["ROLE_READONLY", "ROLE_READWRITE"]),
        ),
        ("plat-token-bob", json!(["ROLE_READONLY"])),
    ] {
        let query = "duration=2h&clientName=monitor";
        let (status, current) = create_token(
            &app,
            &format!("platformaccesstoken={platform_token}&{query}"),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{current}");
        let (status, former) =
            create_token(&app, &format!("seamaccesstoken={platform_token}&{query}")).await;
        assert_eq!(status, StatusCode::OK, "{former}");
        assert_eq!(comparable(&former), comparable(&current));
        assert_eq!(former["roles"], roles);
        assert_eq!(
            former["expirationDate"].as_i64().unwrap() - former["creationDate"].as_i64().unwrap(),
            7_200_000
        );
        // Both names with the same value: that token.
        let (status, both) = create_token(
            &app,
            &format!(
                "platformaccesstoken={platform_token}&seamaccesstoken={platform_token}&{query}"
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{both}");
        assert_eq!(comparable(&both), comparable(&current));
        // Each answers the same on use.
        for token in [&current, &former] {
            let value = token["accessToken"].as_str().unwrap();
            let (status, seen) = app
                .call(
                    Method::GET,
                    &format!("/api/auth/accesstokens/{value}"),
                    value,
                    None,
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{seen}");
            assert_eq!(comparable(&seen), comparable(&current));
        }
    }

    // Different values under the two names: refused, neither echoed.
    let (status, body) = create_token(
        &app,
        "platformaccesstoken=plat-token-alice&seamaccesstoken=plat-token-bob",
    )
    .await;
    assert_error(status, &body, 400, "Invalid", 1782937293);
    let text = body.to_string();
    assert!(text.contains("seamaccesstoken"), "{text}");
    assert!(!text.contains("plat-token"), "{text}");
    // An unknown platform token under the former name is refused like under the current one.
    let (status, body) = create_token(&app, "seamaccesstoken=plat-token-unknown").await;
    assert_error(status, &body, 401, "BadCredentialsException", 1285563821);
    // An empty one counts as absent: no credentials at all.
    let (status, body) = create_token(&app, "seamaccesstoken=").await;
    assert_error(status, &body, 401, "NotAuthenticated", 1285563822);

    // With a pairing code: a Zero Touch token, as with platformaccesstoken.
    let endpoint = app
        .create_endpoint(&rw, json!({"name": "Board", "ipAddress": "127.77.4.1"}))
        .await;
    let id = endpoint["id"].as_str().unwrap();
    let (status, code) = app
        .call(
            Method::GET,
            &format!("/api/endpoints/{id}/currentpairingcode"),
            &rw,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{code}");
    let (status, zt) = create_token(
        &app,
        &format!(
            "seamaccesstoken=plat-token-alice&code={}&clientDeviceType=IOS_NATIVE",
            code["code"].as_str().unwrap()
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{zt}");
    assert_eq!(zt["roles"], json!(["ROLE_PAIRINGCODE"]));
    assert_eq!(zt["pairingCodeEndpointId"], id);
    assert_eq!(zt["pairingCodeId"], code["id"]);
    assert_eq!(zt["username"], "alice@example.com");
    assert_eq!(zt["creator"], "alice@example.com");
    assert_eq!(zt["seamId"], Value::Null);
}

async fn tokens_carry_the_predecessors_username_and_seam_id(app: TestApp) {
    app.enterprise("acme", None).await;
    app.user("acme", "ops", Role::ReadWrite).await;
    let response = app
        .request(Method::POST, "/api/auth/accesstokens")
        .basic_auth("ops", Some("ops-password"))
        .send()
        .await
        .unwrap();
    let (status, service) = json(response).await;
    assert_eq!(status, StatusCode::OK, "{service}");
    assert_eq!(service["username"], "ops");
    assert_eq!(service["creator"], "ops");
    assert!(service.as_object().unwrap().contains_key("seamId"));
    assert_eq!(service["seamId"], Value::Null);
    let value = service["accessToken"].as_str().unwrap();

    let response = app
        .request(Method::POST, "/api/auth/accesstokens")
        .basic_auth("alice@example.com", Some("alice-platform-pw"))
        .send()
        .await
        .unwrap();
    let (status, platform) = json(response).await;
    assert_eq!(status, StatusCode::OK, "{platform}");
    assert_eq!(platform["username"], "alice@example.com");
    assert_eq!(platform["platformId"], 1001);
    assert_eq!(platform["seamId"], Value::Null);

    // Listed and inspected tokens carry them too.
    let (status, list) = app
        .call(Method::GET, "/api/auth/accesstokens", value, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let mut names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert_eq!(t["seamId"], Value::Null, "{t}");
            assert_eq!(t["username"], t["creator"], "{t}");
            t["username"].as_str().unwrap()
        })
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["alice@example.com", "ops"]);
    let (status, own) = app
        .call(
            Method::GET,
            &format!("/api/auth/accesstokens/{value}"),
            value,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{own}");
    assert_eq!(own["username"], "ops");
    assert_eq!(own["seamId"], Value::Null);
}

on_every_backend!(
    the_room_map_reads_endpoints_and_statuses_with_basic_auth,
    the_failure_monitor_uses_a_seamaccesstoken,
    seamaccesstoken_is_platformaccesstoken,
    tokens_carry_the_predecessors_username_and_seam_id,
);

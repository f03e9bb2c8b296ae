//! The route table: each route declared once and either described or explicitly hidden, and
//! actix answering exactly what the table says, with `MethodNotAllowed` listing its methods.

mod enforcement;

use super::{TABLE, by_path, configure, not_found};
use crate::table::{Access, Doc, Method};
use actix_web::http::{Method as HttpMethod, StatusCode, header};
use actix_web::test::{TestRequest, call_service, init_service, read_body_json};
use actix_web::{App, web};
use roomlink_domain::access;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The methods a path answers, in table order.
fn allowed(path: &str) -> Vec<&'static str> {
    by_path()
        .into_iter()
        .find(|(p, _)| *p == path)
        .map(|(_, ops)| ops.iter().map(|op| op.method.as_str()).collect())
        .unwrap_or_default()
}

/// A request path that `pattern` matches: each `{...}` segment filled in.
fn sample(pattern: &str) -> String {
    pattern
        .split('/')
        .map(|segment| {
            if segment.starts_with('{') {
                "sample"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[test]
fn each_path_and_method_is_declared_once() {
    let mut seen = BTreeSet::new();
    for op in TABLE {
        assert!(
            seen.insert((op.path, op.method.as_str())),
            "{} {} is declared twice",
            op.method.as_str(),
            op.path
        );
    }
}

#[test]
fn operation_ids_are_unique() {
    let mut seen = BTreeSet::new();
    for description in TABLE.iter().filter_map(|op| op.description()) {
        assert!(
            seen.insert(description.id),
            "operation id {} is used twice",
            description.id
        );
    }
}

/// Only the browsers' pages (the reference page and the web console) are served without a
/// description, and they need no credentials: a hidden route behind credentials would be an
/// undocumented part of the interface.
#[test]
fn hidden_routes_are_the_public_browser_pages() {
    let hidden: Vec<_> = TABLE
        .iter()
        .filter(|op| matches!(op.doc, Doc::Hidden))
        .collect();
    assert_eq!(hidden.len(), 5);
    for op in hidden {
        assert_eq!(op.access, Access::Public, "{}", op.path);
        assert!(
            op.path.starts_with("/api/docs") || op.path.starts_with("/console") || op.path == "/",
            "{}",
            op.path
        );
    }
}

/// Every operation of the domain's access rules is reachable over HTTP, so the document
/// states the roles of each.
#[test]
fn every_domain_operation_has_a_route() {
    for domain_op in access::Operation::ALL {
        let routed = TABLE
            .iter()
            .any(|op| op.access == Access::Caller(*domain_op));
        assert!(routed, "{} has no route", domain_op.name());
    }
}

/// The `allowed` lists clients have always been given.
#[test]
fn allowed_methods_keep_their_order() {
    for (path, methods) in [
        ("/api/auth/accesstokens", &["GET", "POST"][..]),
        ("/api/auth/accesstokens/{token}", &["GET", "DELETE"]),
        ("/api/endpoints", &["GET", "POST"]),
        ("/api/endpoints/", &["GET", "POST"]),
        ("/api/endpoints/csv", &["GET", "PUT", "POST"]),
        ("/api/endpoints/{id}", &["GET", "PUT", "PATCH", "DELETE"]),
        ("/api/enterprises/self", &["GET", "PUT"]),
        ("/api/listenerservices", &["GET", "POST"]),
        ("/api/listenerservices/{id}", &["GET", "PUT", "DELETE"]),
    ] {
        assert_eq!(allowed(path), methods, "{path}");
    }
}

/// Each path of the table reaches its own resource (none is shadowed by a pattern registered
/// before it), each of its methods reaches a handler, and any other method is
/// `MethodNotAllowed` listing the table's methods for that path, in its details and in `Allow`.
#[actix_web::test]
async fn actix_answers_exactly_the_table() {
    let app = init_service(
        App::new()
            .configure(configure)
            .default_service(web::to(not_found)),
    )
    .await;
    let all = [
        Method::Get,
        Method::Post,
        Method::Put,
        Method::Patch,
        Method::Delete,
    ];
    for (path, ops) in by_path() {
        let uri = sample(path);
        for op in &ops {
            let request = TestRequest::default()
                .method(op.method.actix())
                .uri(&uri)
                .to_request();
            let response = call_service(&app, request).await;
            assert_eq!(
                response.request().match_pattern().as_deref(),
                Some(path),
                "{} {uri}",
                op.method.as_str()
            );
            assert_ne!(response.status(), StatusCode::METHOD_NOT_ALLOWED, "{path}");
        }
        let allowed = allowed(path);
        let refused = all
            .iter()
            .map(|m| m.actix())
            .filter(|m| !allowed.contains(&m.as_str()))
            .chain([HttpMethod::OPTIONS, HttpMethod::HEAD]);
        for method in refused {
            let request = TestRequest::default()
                .method(method.clone())
                .uri(&uri)
                .to_request();
            let response = call_service(&app, request).await;
            assert_eq!(
                response.status(),
                StatusCode::METHOD_NOT_ALLOWED,
                "{method} {path}"
            );
            assert_eq!(response.request().match_pattern().as_deref(), Some(path));
            // RFC 9110 §15.5.6: the same list in `Allow`, HEAD and OPTIONS included.
            let allow: Vec<_> = response
                .headers()
                .get_all(header::ALLOW)
                .map(|v| v.to_str().expect("an ASCII Allow"))
                .collect();
            assert_eq!(allow, [allowed.join(", ")], "{method} {path}");
            if method == HttpMethod::HEAD {
                continue;
            }
            let body: Value = read_body_json(response).await;
            assert_eq!(body["errorName"], "MethodNotAllowed", "{method} {path}");
            assert_eq!(
                body["errorMessage"],
                format!("{method} is not allowed here; use {}.", allowed.join(", "))
            );
            assert_eq!(
                body["errorDetails"],
                json!({ "method": method.as_str(), "allowed": allowed })
            );
        }
    }
    for unknown in ["/api/nothing", "/api/endpoints/sample/nothing", "/nothing"] {
        let response = call_service(&app, TestRequest::get().uri(unknown).to_request()).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{unknown}");
        let body: Value = read_body_json(response).await;
        assert_eq!(body["errorName"], "NotFound", "{unknown}");
    }
}

#[actix_web::test]
async fn unknown_paths_are_named_with_their_secrets_redacted() {
    let app = init_service(
        App::new()
            .configure(configure)
            .default_service(web::to(not_found)),
    )
    .await;
    let token = "i0gni52qmhtdsht5pvpu68dv96gqvil6";
    for (method, uri, echoed) in [
        (HttpMethod::GET, "/api/nothing", "/api/nothing"),
        (
            HttpMethod::POST,
            "/api/endpoints/sample/joinn?meetingid=1&accesstoken=secret",
            "/api/endpoints/sample/joinn",
        ),
        (
            HttpMethod::GET,
            &format!("/api/auth/accesstoken/{token}"),
            "/api/auth/accesstoken/{redacted}",
        ),
        (
            HttpMethod::DELETE,
            "/api/auth/AccessTokens/short-one/x",
            "/api/auth/AccessTokens/{redacted}/x",
        ),
        (
            HttpMethod::GET,
            &format!("/api/endpoint/0123456789abcdef01234567/{token}/status"),
            "/api/endpoint/{redacted}/{redacted}/status",
        ),
    ] {
        let request = TestRequest::default()
            .method(method.clone())
            .uri(uri)
            .to_request();
        let response = call_service(&app, request).await;
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "{uri}");
        let body: Value = read_body_json(response).await;
        assert_eq!(body["errorName"], "NotFound", "{uri}");
        assert_eq!(
            body["errorMessage"],
            format!("No Resource exists at {method} {echoed}."),
        );
        assert_eq!(
            body["errorDetails"],
            json!({"entityClass": "Resource", "entityId": echoed})
        );
        let text = body.to_string();
        for secret in [token, "short-one", "secret", "meetingid"] {
            assert!(!text.contains(secret), "{secret} echoed: {text}");
        }
    }
}

#[test]
fn echoed_paths_are_bounded() {
    let long = "/a".repeat(500);
    let echoed = super::redacted_path(&long);
    assert_eq!(
        echoed.chars().count(),
        201,
        "200 characters and the ellipsis"
    );
    assert!(echoed.ends_with('…'));
    assert_eq!(super::redacted_path("/"), "/");
    assert_eq!(
        super::redacted_path("/api/accesstokens"),
        "/api/accesstokens"
    );
}

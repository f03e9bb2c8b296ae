//! The web console's files (docs/console.md): served without credentials under strict headers,
//! a page path answers the console's index, a missing file the catalog's NotFound, and none of
//! it is in the OpenAPI document.

use crate::support::app::{Backend, TestApp, assert_error, json};
use reqwest::{Method, StatusCode, header};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_is_served_with_strict_headers() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("sqlite app");

    let page = app.request(Method::GET, "/console/").send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    let headers = page.headers().clone();
    let csp = headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    assert!(csp.contains("script-src 'self'"), "{csp}");
    assert!(csp.contains("default-src 'none'"), "{csp}");
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert_eq!(headers[header::CACHE_CONTROL], "no-cache");
    assert!(
        headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/html")
    );
    let index = page.text().await.unwrap();
    assert!(index.contains("/console/assets/app.js?v="), "{index}");

    for (path, kind) in [
        ("/console/assets/app.js", "text/javascript"),
        ("/console/assets/app.css", "text/css"),
    ] {
        let file = app.request(Method::GET, path).send().await.unwrap();
        assert_eq!(file.status(), StatusCode::OK, "{path}");
        let content_type = file.headers()[header::CONTENT_TYPE].to_str().unwrap();
        assert!(content_type.starts_with(kind), "{path}: {content_type}");
        assert!(file.headers().contains_key(header::CONTENT_SECURITY_POLICY));
    }

    // A page of the console (no dot) is the index; a missing file is the catalog's NotFound.
    let deep = app
        .request(Method::GET, "/console/rooms")
        .send()
        .await
        .unwrap();
    assert_eq!(deep.status(), StatusCode::OK);
    assert_eq!(deep.text().await.unwrap(), index);
    let (status, body) = json(
        app.request(Method::GET, "/console/missing.js")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(status, &body, 404, "NotFound", 1217481661);

    // Without the slash: redirected.
    let root = app.request(Method::GET, "/console").send().await.unwrap();
    assert!(root.status().is_success() || root.status().is_redirection());

    // The service's own address leads a browser to the console, without redirecting it for good.
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let site = client.get(format!("{}/", app.base)).send().await.unwrap();
    assert_eq!(site.status(), StatusCode::FOUND);
    assert_eq!(site.headers()["location"], "/console/");

    assert!(!roomlink_http::openapi_json().contains("/console"));
}

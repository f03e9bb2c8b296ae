//! The interface's own description: the OpenAPI document and the browsable reference, served
//! without credentials; anything else under them is still the catalog's NotFound.

use crate::support::app::{Backend, TestApp, assert_error, json};
use reqwest::{Method, StatusCode, header};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_document_and_the_reference_page_are_served_without_credentials() {
    let app = TestApp::spawn(Backend::Sqlite).await.expect("sqlite app");

    let response = app
        .request(Method::GET, "/api/openapi.json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response.headers()[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("application/json")
    );
    let text = response.text().await.unwrap();
    assert_eq!(text, roomlink_http::openapi_json());

    // The page, its assets, and its configuration pointing at this origin's document.
    let page = app.request(Method::GET, "/api/docs/").send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.unwrap().contains("swagger-ui"));
    let config = app
        .request(Method::GET, "/api/docs/swagger-initializer.js")
        .send()
        .await
        .unwrap();
    assert_eq!(config.status(), StatusCode::OK);
    let config = config.text().await.unwrap();
    assert!(
        config.contains("\"url\": \"/api/openapi.json\""),
        "{config}"
    );
    assert!(!config.contains("petstore"), "{config}");
    // Without the slash: redirected to the page (reqwest follows it).
    let page = app.request(Method::GET, "/api/docs").send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.url().path().ends_with("/api/docs/"));

    for path in [
        "/api/docs/nothing-here.js",
        "/api/docs/a/b",
        "/api/openapi.yaml",
    ] {
        let (status, body) = json(app.request(Method::GET, path).send().await.unwrap()).await;
        assert_error(status, &body, 404, "NotFound", 1217481661);
    }
    let (status, body) = json(
        app.request(Method::POST, "/api/openapi.json")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_error(status, &body, 405, "MethodNotAllowed", 1900000002);
}

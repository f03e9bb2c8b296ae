//! The interface's own description: `GET /api/openapi.json` and the browsable reference under
//! `/api/docs/` (Swagger UI, embedded in the binary; it fetches the document from the same
//! origin). Neither needs credentials: they describe the interface, not any tenant's data.

use crate::error::ApiError;
use crate::openapi::{self, DOCUMENT_PATH, REFERENCE_PATH};
use crate::table::{Access, Body, Description, Doc, Method, Operation, Success, Tag};
use actix_web::http::header::{self, ContentType};
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_domain::Error;
use std::sync::{Arc, OnceLock};
use utoipa_swagger_ui::Config;

/// The document never changes while the process runs: built once.
fn document_json() -> &'static str {
    static DOCUMENT: OnceLock<String> = OnceLock::new();
    DOCUMENT.get_or_init(|| openapi::document_json(super::TABLE))
}

fn reference_config() -> Arc<Config<'static>> {
    static CONFIG: OnceLock<Arc<Config<'static>>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            // A path, not a URL: the page asks the origin that served it, whatever the host.
            Arc::new(Config::new([DOCUMENT_PATH]).try_it_out_enabled(true))
        })
        .clone()
}

pub(super) const DOCUMENT: Operation = Operation {
    method: Method::Get,
    path: DOCUMENT_PATH,
    handler: |route| route.to(document),
    access: Access::Public,
    doc: Doc::Described(Description {
        id: "openApiDocument",
        tag: Tag::Operations,
        summary: "This OpenAPI document",
        description: "The OpenAPI 3.1 description of this interface. A browsable reference is \
            served at `/api/docs/`.",
        params: &[],
        body: Body::None,
        success: Success::Other("application/json"),
        errors: &[],
    }),
};

async fn document() -> HttpResponse {
    HttpResponse::Ok()
        .content_type(ContentType::json())
        .body(document_json())
}

/// The reference page is a browser's page, not part of the interface: served, not described.
pub(super) const REFERENCE_ROOT: Operation = Operation {
    method: Method::Get,
    path: "/api/docs",
    handler: |route| route.to(reference_root),
    access: Access::Public,
    doc: Doc::Hidden,
};

/// `/api/docs` without the slash: the page's relative asset links need it.
async fn reference_root() -> HttpResponse {
    HttpResponse::PermanentRedirect()
        .insert_header((header::LOCATION, REFERENCE_PATH))
        .finish()
}

pub(super) const REFERENCE_FILE: Operation = Operation {
    method: Method::Get,
    path: "/api/docs/{file:.*}",
    handler: |route| route.to(reference_file),
    access: Access::Public,
    doc: Doc::Hidden,
};

/// `/api/docs/{file}`: the page (`index.html` for an empty name) and its assets. Anything
/// else is the catalog's `NotFound`, as for any unknown path.
async fn reference_file(
    req: HttpRequest,
    file: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    match utoipa_swagger_ui::serve(&file, reference_config()) {
        Ok(Some(found)) => Ok(HttpResponse::Ok()
            .content_type(found.content_type)
            .insert_header((header::CACHE_CONTROL, "no-cache"))
            .body(found.bytes.into_owned())),
        Ok(None) => Err(ApiError(super::unknown_path(&req))),
        Err(e) => Err(ApiError(Error::internal(format!(
            "the API reference page could not be served: {e}"
        )))),
    }
}

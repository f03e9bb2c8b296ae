//! The operational probes `/healthz` and `/readyz`.

use crate::AppState;
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Success, Tag};
use actix_web::{HttpResponse, web};
use roomlink_domain::ErrorKind as E;
use serde_json::json;

pub(super) const HEALTHZ: Operation = Operation {
    method: Method::Get,
    path: "/healthz",
    handler: |route| route.to(healthz),
    access: Access::Public,
    doc: Doc::Described(Description {
        id: "healthz",
        tag: Tag::Operations,
        summary: "Liveness probe",
        description: "The process is up. Needs no database.",
        params: &[],
        body: Body::None,
        success: Success::Json("Health"),
        errors: &[],
    }),
};

/// The process is up.
async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({ "status": "ok" }))
}

pub(super) const READYZ: Operation = Operation {
    method: Method::Get,
    path: "/readyz",
    handler: |route| route.to(readyz),
    access: Access::Public,
    doc: Doc::Described(Description {
        id: "readyz",
        tag: Tag::Operations,
        summary: "Readiness probe",
        description: "The process can serve: its database answers.",
        params: &[],
        body: Body::None,
        success: Success::Json("Health"),
        errors: &[E::StorageUnavailable],
    }),
};

/// The process can serve: its database answers.
async fn readyz(state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    state.services.housekeeping.ready().await?;
    Ok(HttpResponse::Ok().json(json!({ "status": "ready" })))
}

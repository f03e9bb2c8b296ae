//! `/api/enterprises/self`, and the operational probes `/healthz` and `/readyz`.

use crate::AppState;
use crate::caller::Caller;
use crate::error::ApiResult;
use actix_web::{HttpResponse, web};
use serde_json::json;

pub async fn get_self(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let e = state.services.admin.enterprise_of(&caller.0).await?;
    Ok(HttpResponse::Ok().json(json!({
        "id": e.id,
        "name": e.name,
        "endpointLimit": e.endpoint_limit,
        "publicKey": e.public_key,
        "password": null,
    })))
}

/// The process is up.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({ "status": "ok" }))
}

/// The process can serve: its database answers.
pub async fn readyz(state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    state.services.ports.store.ping().await?;
    Ok(HttpResponse::Ok().json(json!({ "status": "ready" })))
}

//! `/api/enterprises/self`, and the operational probes `/healthz` and `/readyz`.

use crate::AppState;
use crate::body::read_json_object;
use crate::caller::Caller;
use crate::error::ApiResult;
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_domain::Error;
use roomlink_domain::enterprise::Enterprise;
use serde_json::json;

fn enterprise_json(e: &Enterprise) -> serde_json::Value {
    json!({
        "id": e.id,
        "name": e.name,
        "endpointLimit": e.endpoint_limit,
        "publicKey": e.public_key,
        "password": null,
    })
}

pub async fn get_self(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let e = state.services.admin.enterprise_of(&caller.0).await?;
    Ok(HttpResponse::Ok().json(enterprise_json(&e)))
}

/// `PUT /api/enterprises/self` with `{"publicKey": "<base64 X25519 key>" | null}`: the key
/// endpoint passwords are sealed to from now on. Other properties are read-only and ignored.
pub async fn update_self(
    caller: Caller,
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let body = read_json_object(&req, body, "Enterprise").await?;
    let public_key = match body.get("publicKey") {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::String(key)) => Some(key.clone()),
        Some(_) => return Err(Error::json_mapping("publicKey", "expected a string").into()),
    };
    let e = state
        .services
        .admin
        .set_public_key(&caller.0, public_key)
        .await?;
    Ok(HttpResponse::Ok().json(enterprise_json(&e)))
}

/// The process is up.
pub async fn healthz() -> HttpResponse {
    HttpResponse::Ok().json(json!({ "status": "ok" }))
}

/// The process can serve: its database answers.
pub async fn readyz(state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    state.services.housekeeping.ready().await?;
    Ok(HttpResponse::Ok().json(json!({ "status": "ready" })))
}

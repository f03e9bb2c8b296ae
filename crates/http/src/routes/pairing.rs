//! Zero Touch: an endpoint's current pairing code, the pairing-code view, who is paired.

use crate::AppState;
use crate::caller::Caller;
use crate::error::ApiResult;
use actix_web::{HttpResponse, web};
use roomlink_domain::ids::{EndpointId, PairingCodeId};
use serde_json::json;

/// `GET /api/endpoints/{id}/currentpairingcode`: `{id, code}`.
pub async fn current(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(&id)?;
    let code = state.services.pairing.current_code(&caller.0, &id).await?;
    Ok(HttpResponse::Ok().json(json!({ "id": code.id, "code": code.code })))
}

/// `GET /api/endpoints/{pairingCodeId}/pairingcode`.
pub async fn view(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = PairingCodeId::parse(&id)?;
    Ok(HttpResponse::Ok().json(state.services.pairing.view(&caller.0, &id).await?))
}

/// `GET /api/endpoints/{id}/paired`.
pub async fn paired(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(&id)?;
    Ok(HttpResponse::Ok().json(state.services.pairing.paired(&caller.0, &id).await?))
}

//! `/api/listenerservices`: listener-service records.

use crate::AppState;
use crate::body::read_json_object;
use crate::caller::Caller;
use crate::error::ApiResult;
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_domain::ids::ListenerServiceId;
use serde_json::Value;

pub async fn list(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    Ok(HttpResponse::Ok().json(state.services.listeners.list(&caller.0).await?))
}

/// The creation response is the only one that carries the secret, and only when roomlink
/// generated it.
pub async fn create(
    caller: Caller,
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let body = read_json_object(&req, body, "ListenerService").await?;
    let registered = state.services.listeners.create(&caller.0, &body).await?;
    let mut json =
        serde_json::to_value(&registered.listener).map_err(roomlink_domain::Error::internal)?;
    if let (Some(secret), Value::Object(map)) = (&registered.generated_secret, &mut json) {
        map.insert(
            "secret".to_owned(),
            Value::String(secret.expose().to_owned()),
        );
    }
    Ok(HttpResponse::Ok().json(json))
}

pub async fn get(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = ListenerServiceId::parse(&id)?;
    Ok(HttpResponse::Ok().json(state.services.listeners.get(&caller.0, &id).await?))
}

pub async fn replace(
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = ListenerServiceId::parse(&id)?;
    let body = read_json_object(&req, body, "ListenerService").await?;
    Ok(HttpResponse::Ok().json(
        state
            .services
            .listeners
            .replace(&caller.0, &id, &body)
            .await?,
    ))
}

pub async fn delete(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = ListenerServiceId::parse(&id)?;
    state.services.listeners.delete(&caller.0, &id).await?;
    Ok(HttpResponse::NoContent().finish())
}

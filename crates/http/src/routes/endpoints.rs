//! `/api/endpoints`: provisioning (insert, get, replace, patch, delete, bulk CSV).

use crate::AppState;
use crate::body::{read_csv, read_json, read_json_object};
use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_domain::ErrorKind;
use roomlink_domain::error::Error;
use roomlink_domain::ids::EndpointId;

pub async fn insert(
    caller: Caller,
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let body = read_json_object(&req, body, "Endpoint").await?;
    let endpoint = state.services.endpoints.insert(&caller.0, &body).await?;
    Ok(HttpResponse::Ok().json(endpoint))
}

pub async fn get(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(&id)?;
    let endpoint = state.services.endpoints.get(&caller.0, &id).await?;
    Ok(HttpResponse::Ok().json(endpoint))
}

/// `PUT /api/endpoints/{id}` replaces; with `X-HTTP-Method-Override: PATCH` it patches.
pub async fn replace(
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(&id)?;
    let method_override = req
        .headers()
        .get("x-http-method-override")
        .map(|v| v.to_str().unwrap_or("").trim().to_ascii_uppercase());
    let endpoint = match method_override.as_deref() {
        Some("PATCH") => {
            let body = read_json(&req, body).await?;
            state.services.endpoints.patch(&caller.0, &id, body).await?
        }
        None | Some("PUT") => {
            let body = read_json_object(&req, body, "Endpoint").await?;
            state
                .services
                .endpoints
                .replace(&caller.0, &id, &body)
                .await?
        }
        Some(other) => {
            return Err(ApiError(
                Error::new(
                    ErrorKind::MethodNotAllowed,
                    format!("X-HTTP-Method-Override: only PATCH is supported, not '{other}'."),
                )
                .with("method", other)
                .with("allowed", vec!["PATCH"]),
            ));
        }
    };
    Ok(HttpResponse::Ok().json(endpoint))
}

pub async fn patch(
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(&id)?;
    let body = read_json(&req, body).await?;
    let endpoint = state.services.endpoints.patch(&caller.0, &id, body).await?;
    Ok(HttpResponse::Ok().json(endpoint))
}

pub async fn delete(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(&id)?;
    state.services.endpoints.delete(&caller.0, &id).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// `PUT` or `POST /api/endpoints/csv`: applies the upload in one transaction and answers with
/// the full list, as the list operation does.
pub async fn bulk_put(
    caller: Caller,
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    // Checked here too (the service checks again) so a refusal comes before reading up to 1 MiB.
    caller.0.authorize(
        roomlink_domain::access::Operation::BulkPutEndpoints,
        roomlink_domain::access::Target::Enterprise,
    )?;
    let csv = read_csv(&req, body).await?;
    let (endpoints, outcome) = state.services.endpoints.bulk_put(&caller.0, &csv).await?;
    tracing::info!(
        created = outcome.created,
        updated = outcome.updated,
        skipped = outcome.skipped.len(),
        "CSV upload applied"
    );
    for skip in outcome.skipped.iter().take(50) {
        tracing::info!(line = skip.line, reason = %skip.reason, "CSV row skipped");
    }
    Ok(HttpResponse::Ok().json(endpoints))
}

//! `/api/auth/accesstokens`: create, list, inspect, delete.

use crate::AppState;
use crate::caller::{Caller, basic_credentials, query_param};
use crate::error::ApiResult;
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_domain::Error;
use roomlink_domain::enums::ClientDeviceType;
use roomlink_domain::secret::Secret;
use roomlink_domain::service::tokens::{CreateOptions, TokenView};

/// `POST /api/auth/accesstokens`: from Basic credentials (service or platform user), or from
/// `platformaccesstoken` (plus `code` for Zero Touch). Options: `duration`, `clientName`,
/// `clientDeviceType`.
pub async fn create(req: HttpRequest, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let options = CreateOptions {
        duration: query_param(&req, "duration"),
        client_name: query_param(&req, "clientName"),
        client_device_type: query_param(&req, "clientDeviceType")
            .filter(|v| !v.is_empty())
            .map(|v| ClientDeviceType::parse(&v))
            .transpose()?,
    };
    let tokens = &state.services.tokens;
    let created = match query_param(&req, "platformaccesstoken").filter(|t| !t.is_empty()) {
        Some(platform_token) => {
            let code = query_param(&req, "code");
            tokens
                .create_with_platform_token(&Secret::new(platform_token), code.as_deref(), &options)
                .await?
        }
        None => match basic_credentials(&req) {
            Some(creds) => {
                let (username, password) = creds?;
                tokens
                    .create_with_password(&username, password, &options)
                    .await?
            }
            None => return Err(Error::not_authenticated().into()),
        },
    };
    Ok(HttpResponse::Ok().json(created.view()))
}

pub async fn list(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let tokens = state.services.tokens.list(&caller.0).await?;
    let views: Vec<_> = tokens
        .iter()
        .map(|token| TokenView { token, value: None })
        .collect();
    Ok(HttpResponse::Ok().json(views))
}

/// `GET /api/auth/accesstokens/{token}`: `{token}` is a token value or a token id.
pub async fn get(
    caller: Caller,
    key: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let token = state.services.tokens.get(&caller.0, &key).await?;
    Ok(HttpResponse::Ok().json(TokenView {
        token: &token,
        value: None,
    }))
}

pub async fn delete(
    caller: Caller,
    key: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    state.services.tokens.delete(&caller.0, &key).await?;
    Ok(HttpResponse::NoContent().finish())
}

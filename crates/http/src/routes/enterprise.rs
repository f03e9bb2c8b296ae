//! `/api/enterprises/self`: the caller's enterprise.

use crate::AppState;
use crate::body::read_json_object;
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Success, Tag};
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_domain::Error;
use roomlink_domain::access::Operation as Op;
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

pub(super) const GET_SELF: Operation = Operation {
    method: Method::Get,
    path: "/api/enterprises/self",
    handler: |route| route.to(get_self),
    access: Access::Caller(Op::GetEnterprise),
    doc: Doc::Described(Description {
        id: "enterprises.getSelf",
        tag: Tag::Enterprise,
        summary: "The caller's enterprise",
        description: "Its name, endpoint limit and public key.",
        params: &[],
        body: Body::None,
        success: Success::Json("Enterprise"),
        errors: &[],
    }),
};

async fn get_self(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let e = state.services.admin.enterprise_of(&caller.0).await?;
    Ok(HttpResponse::Ok().json(enterprise_json(&e)))
}

pub(super) const UPDATE_SELF: Operation = Operation {
    method: Method::Put,
    path: "/api/enterprises/self",
    handler: |route| route.to(update_self),
    access: Access::Caller(Op::UpdateEnterprise),
    doc: Doc::Described(Description {
        id: "enterprises.updateSelf",
        tag: Tag::Enterprise,
        summary: "Set the enterprise's public key",
        description: "Endpoint passwords written afterwards are sealed to this X25519 key, so \
            only the enterprise's listeners can read them; null removes it. Other properties \
            are read-only and ignored.",
        params: &[],
        body: Body::Json("EnterpriseUpdate"),
        success: Success::Json("Enterprise"),
        errors: &[],
    }),
};

/// `PUT /api/enterprises/self` with `{"publicKey": "<base64 X25519 key>" | null}`: the key
/// endpoint passwords are sealed to from now on. Other properties are read-only and ignored.
async fn update_self(
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

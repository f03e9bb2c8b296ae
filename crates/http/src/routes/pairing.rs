//! Zero Touch: an endpoint's current pairing code, the pairing-code view, who is paired.

use crate::AppState;
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::{HttpResponse, web};
use roomlink_domain::ErrorKind as E;
use roomlink_domain::access::Operation as Op;
use roomlink_domain::ids::{EndpointId, PairingCodeId};
use serde_json::json;

pub(super) const CURRENT: Operation = Operation {
    method: Method::Get,
    path: "/api/endpoints/{id}/currentpairingcode",
    handler: |route| route.to(current),
    access: Access::Caller(Op::CurrentPairingCode),
    doc: Doc::Described(Description {
        id: "endpoints.currentPairingCode",
        tag: Tag::ZeroTouch,
        summary: "The endpoint's current pairing code",
        description: "Made on first read; kept forever (STATIC or unset `zeroTouchType`) or \
            for the rotation interval (ROTATING).",
        params: &[Param::ENDPOINT_ID],
        body: Body::None,
        success: Success::Json("CurrentPairingCode"),
        errors: &[E::NotFound],
    }),
};

/// `GET /api/endpoints/{id}/currentpairingcode`: `{id, code}`.
async fn current(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(&id)?;
    let code = state.services.pairing.current_code(&caller.0, &id).await?;
    Ok(HttpResponse::Ok().json(json!({ "id": code.id, "code": code.code })))
}

pub(super) const VIEW: Operation = Operation {
    method: Method::Get,
    path: "/api/endpoints/{id}/pairingcode",
    handler: |route| route.to(view),
    access: Access::Caller(Op::PairingCode),
    doc: Doc::Described(Description {
        id: "endpoints.pairingCode",
        tag: Tag::ZeroTouch,
        summary: "A pairing code with its endpoint",
        description: "`{id}` is a pairing code's id (a Zero Touch token's `pairingCodeId`). \
            Answers the code, its endpoint and the capabilities its listener reports.",
        params: &[Param::Id("The pairing code's id.")],
        body: Body::None,
        success: Success::Json("PairingCode"),
        errors: &[E::NotFound],
    }),
};

/// `GET /api/endpoints/{pairingCodeId}/pairingcode`.
async fn view(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = PairingCodeId::parse(&id)?;
    Ok(HttpResponse::Ok().json(state.services.pairing.view(&caller.0, &id).await?))
}

pub(super) const PAIRED: Operation = Operation {
    method: Method::Get,
    path: "/api/endpoints/{id}/paired",
    handler: |route| route.to(paired),
    access: Access::Caller(Op::Paired),
    doc: Doc::Described(Description {
        id: "endpoints.paired",
        tag: Tag::ZeroTouch,
        summary: "Who is paired to the endpoint",
        description: "The live PairedStatus records: each lasts one minute after the last use \
            of its Zero Touch token.",
        params: &[Param::ENDPOINT_ID],
        body: Body::None,
        success: Success::JsonList("PairedStatus"),
        errors: &[E::NotFound],
    }),
};

/// `GET /api/endpoints/{id}/paired`.
async fn paired(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(&id)?;
    Ok(HttpResponse::Ok().json(state.services.pairing.paired(&caller.0, &id).await?))
}

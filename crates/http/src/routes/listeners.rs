//! `/api/listenerservices`: listener-service records.

use crate::AppState;
use crate::body::read_json_object;
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_domain::ErrorKind as E;
use roomlink_domain::access::Operation as Op;
use roomlink_domain::ids::ListenerServiceId;
use serde_json::Value;

const LISTENER_ID: Param = Param::Id("The listener service's id.");

pub(super) const LIST: Operation = Operation {
    method: Method::Get,
    path: "/api/listenerservices",
    handler: |route| route.to(list),
    access: Access::Caller(Op::ListListenerServices),
    doc: Doc::Described(Description {
        id: "listenerServices.list",
        tag: Tag::ListenerServices,
        summary: "List listener services",
        description: "The enterprise's listener services (never their secrets).",
        params: &[],
        body: Body::None,
        success: Success::JsonList("ListenerService"),
        errors: &[],
    }),
};

async fn list(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    Ok(HttpResponse::Ok().json(state.services.listeners.list(&caller.0).await?))
}

pub(super) const CREATE: Operation = Operation {
    method: Method::Post,
    path: "/api/listenerservices",
    handler: |route| route.to(create),
    access: Access::Caller(Op::CreateListenerService),
    doc: Doc::Described(Description {
        id: "listenerServices.create",
        tag: Tag::ListenerServices,
        summary: "Register a listener service",
        description: "Without a `secret`, roomlink generates one and returns it in this \
            response only.",
        params: &[],
        body: Body::Json("ListenerServiceInput"),
        success: Success::Json("ListenerServiceCreated"),
        errors: &[],
    }),
};

/// The creation response is the only one that carries the secret, and only when roomlink
/// generated it.
async fn create(
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

pub(super) const GET: Operation = Operation {
    method: Method::Get,
    path: "/api/listenerservices/{id}",
    handler: |route| route.to(get),
    access: Access::Caller(Op::GetListenerService),
    doc: Doc::Described(Description {
        id: "listenerServices.get",
        tag: Tag::ListenerServices,
        summary: "Get a listener service",
        description: "One listener service (never its secret).",
        params: &[LISTENER_ID],
        body: Body::None,
        success: Success::Json("ListenerService"),
        errors: &[E::NotFound],
    }),
};

async fn get(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = ListenerServiceId::parse(&id)?;
    Ok(HttpResponse::Ok().json(state.services.listeners.get(&caller.0, &id).await?))
}

pub(super) const REPLACE: Operation = Operation {
    method: Method::Put,
    path: "/api/listenerservices/{id}",
    handler: |route| route.to(replace),
    access: Access::Caller(Op::UpdateListenerService),
    doc: Doc::Described(Description {
        id: "listenerServices.update",
        tag: Tag::ListenerServices,
        summary: "Replace a listener service",
        description: "Omitted optional fields become null; an omitted `secret` keeps the \
            stored one. A body `id` other than the path's is `Unmodifiable`.",
        params: &[LISTENER_ID],
        body: Body::Json("ListenerServiceInput"),
        success: Success::Json("ListenerService"),
        errors: &[E::NotFound, E::Unmodifiable],
    }),
};

async fn replace(
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

pub(super) const DELETE: Operation = Operation {
    method: Method::Delete,
    path: "/api/listenerservices/{id}",
    handler: |route| route.to(delete),
    access: Access::Caller(Op::DeleteListenerService),
    doc: Doc::Described(Description {
        id: "listenerServices.delete",
        tag: Tag::ListenerServices,
        summary: "Delete a listener service",
        description: "Refused (`Invalid`) while endpoints still name it.",
        params: &[LISTENER_ID],
        body: Body::None,
        success: Success::NoContent,
        errors: &[E::NotFound, E::Invalid],
    }),
};

async fn delete(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = ListenerServiceId::parse(&id)?;
    state.services.listeners.delete(&caller.0, &id).await?;
    Ok(HttpResponse::NoContent().finish())
}

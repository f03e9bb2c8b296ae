//! `/api/endpoints`: provisioning (insert, get, replace, patch, delete, bulk CSV).

use super::endpoint_list::ListBytes;
use crate::AppState;
use crate::body::{read_csv, read_json, read_json_object};
use crate::caller::Caller;
use crate::error::{ApiError, ApiResult};
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::http::header::ContentType;
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_app::endpoints::OneEndpoint;
use roomlink_domain::ErrorKind as E;
use roomlink_domain::access::Operation as Op;
use roomlink_domain::error::Error;
use roomlink_domain::ids::EndpointId;
use roomlink_domain::rules::patch::EndpointPatch;
use roomlink_domain::rules::put::EndpointBody;

pub(super) const INSERT: Operation = Operation {
    method: Method::Post,
    path: "/api/endpoints",
    handler: |route| route.to(insert),
    access: Access::Caller(Op::InsertEndpoint),
    doc: Doc::Described(Description {
        id: "endpoints.insert",
        tag: Tag::Endpoints,
        summary: "Create an endpoint",
        description: "Creates an endpoint. `name` is required; the service assigns \
            the `id` (a body with an `id` is `Invalid`). Fails with `LimitReached` once the \
            enterprise's endpoint limit is reached.",
        params: &[],
        body: Body::Json("EndpointInput"),
        success: Success::Json("Endpoint"),
        errors: &[E::LimitReached, E::DuplicateCalendarId],
    }),
};

pub(super) const INSERT_SLASH: Operation = INSERT.also_at(
    "/api/endpoints/",
    "endpoints.insertSlash",
    "Create an endpoint (the specification's path)",
);

async fn insert(
    caller: Caller,
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let body = read_json_object(&req, body, "Endpoint").await?;
    let body = EndpointBody::from_json(&body);
    let endpoint = state.services.endpoints.insert(&caller.0, body).await?;
    Ok(HttpResponse::Ok().json(endpoint))
}

pub(super) const GET: Operation = Operation {
    method: Method::Get,
    path: "/api/endpoints/{id}",
    handler: |route| route.to(get),
    access: Access::Caller(Op::GetEndpoint),
    doc: Doc::Described(Description {
        id: "endpoints.get",
        tag: Tag::Endpoints,
        summary: "Get an endpoint",
        description: "One endpoint; `password` is always null.",
        params: &[Param::ENDPOINT_ID],
        body: Body::None,
        success: Success::Json("Endpoint"),
        errors: &[E::NotFound],
    }),
};

async fn get(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(&id)?;
    match state.services.endpoints.get_one(&caller.0, &id).await? {
        OneEndpoint::Cached(list, range) => Ok(HttpResponse::Ok()
            .content_type(ContentType::json())
            .body(Bytes::from_owner(ListBytes(list)).slice(range))),
        OneEndpoint::Read(endpoint) => Ok(HttpResponse::Ok().json(endpoint)),
    }
}

pub(super) const REPLACE: Operation = Operation {
    method: Method::Put,
    path: "/api/endpoints/{id}",
    handler: |route| route.to(replace),
    access: Access::Caller(Op::UpdateEndpoint),
    doc: Doc::Described(Description {
        id: "endpoints.update",
        tag: Tag::Endpoints,
        summary: "Replace an endpoint",
        description: "Every field is set to the body's value: omitted or null becomes null, \
            the password included. A body `id` other than the path's is `Unmodifiable`, as is \
            changing the dial style of an ANNEX_O endpoint. With `X-HTTP-Method-Override: \
            PATCH` this is a PATCH (and the body is a PATCH body).",
        params: &[Param::ENDPOINT_ID, Param::MethodOverride],
        body: Body::Json("EndpointInput"),
        success: Success::Json("Endpoint"),
        errors: &[
            E::NotFound,
            E::Unmodifiable,
            E::MethodNotAllowed,
            E::DuplicateCalendarId,
        ],
    }),
};

/// `PUT /api/endpoints/{id}` replaces; with `X-HTTP-Method-Override: PATCH` it patches.
async fn replace(
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
            let patch = EndpointPatch::from_json(read_json(&req, body).await?);
            state
                .services
                .endpoints
                .patch(&caller.0, &id, patch)
                .await?
        }
        None | Some("PUT") => {
            let body = EndpointBody::from_json(&read_json_object(&req, body, "Endpoint").await?);
            state
                .services
                .endpoints
                .replace(&caller.0, &id, body)
                .await?
        }
        Some(other) => {
            return Err(ApiError(
                Error::new(
                    E::MethodNotAllowed,
                    format!("X-HTTP-Method-Override: only PATCH is supported, not '{other}'."),
                )
                .with("method", other)
                .with("allowed", vec!["PATCH"]),
            ));
        }
    };
    Ok(HttpResponse::Ok().json(endpoint))
}

pub(super) const PATCH: Operation = Operation {
    method: Method::Patch,
    path: "/api/endpoints/{id}",
    handler: |route| route.to(patch),
    access: Access::Caller(Op::PatchEndpoint),
    doc: Doc::Described(Description {
        id: "endpoints.patch",
        tag: Tag::Endpoints,
        summary: "Patch an endpoint",
        description: "Sets the fields named in `modifiedFields` (or in the body itself); the \
            others stay. Answers the whole endpoint.",
        params: &[Param::ENDPOINT_ID],
        body: Body::Json("EndpointPatch"),
        success: Success::Json("Endpoint"),
        errors: &[E::NotFound, E::Unmodifiable, E::DuplicateCalendarId],
    }),
};

async fn patch(
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(&id)?;
    let patch = EndpointPatch::from_json(read_json(&req, body).await?);
    let endpoint = state
        .services
        .endpoints
        .patch(&caller.0, &id, patch)
        .await?;
    Ok(HttpResponse::Ok().json(endpoint))
}

pub(super) const DELETE: Operation = Operation {
    method: Method::Delete,
    path: "/api/endpoints/{id}",
    handler: |route| route.to(delete),
    access: Access::Caller(Op::DeleteEndpoint),
    doc: Doc::Described(Description {
        id: "endpoints.delete",
        tag: Tag::Endpoints,
        summary: "Delete an endpoint",
        description: "Deletes the endpoint, its pairing code and its status.",
        params: &[Param::ENDPOINT_ID],
        body: Body::None,
        success: Success::NoContent,
        errors: &[E::NotFound],
    }),
};

async fn delete(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(&id)?;
    state.services.endpoints.delete(&caller.0, &id).await?;
    Ok(HttpResponse::NoContent().finish())
}

pub(super) const BULK_PUT: Operation = Operation {
    method: Method::Put,
    path: "/api/endpoints/csv",
    handler: |route| route.to(bulk_put),
    access: Access::Caller(Op::BulkPutEndpoints),
    doc: Doc::Described(Description {
        id: "endpoints.bulkPut",
        tag: Tag::Endpoints,
        summary: "Bulk load endpoints from CSV",
        description: "Bulk load from CSV: a header row (any endpoint field, any case and \
            order; `id` and `password` included), then one row per endpoint. A blank `id` creates \
            (a password is required), a filled `id` updates (a blank password keeps the stored \
            one). Rows that cannot be applied are skipped; endpoints absent from the file are \
            untouched. The upload is one transaction; the answer is the full list, as `GET \
            /api/endpoints`. At most 1 MiB.",
        params: &[],
        body: Body::Csv,
        success: Success::JsonList("Endpoint"),
        errors: &[E::Invalid],
    }),
};

/// The same upload by POST.
pub(super) const BULK_POST: Operation = Operation {
    method: Method::Post,
    ..BULK_PUT.also_at(
        "/api/endpoints/csv",
        "endpoints.bulkPost",
        "Bulk load endpoints from CSV (POST)",
    )
};

/// The dry run of a CSV upload.
pub(super) const BULK_PLAN: Operation = Operation {
    method: Method::Post,
    path: "/api/endpoints/csv/plan",
    handler: |route| route.to(bulk_plan),
    access: Access::Caller(Op::BulkPutEndpoints),
    doc: Doc::Described(Description {
        id: "endpoints.bulkPlan",
        tag: Tag::Endpoints,
        summary: "Plan a CSV bulk load without writing",
        description: "The dry run of `PUT /api/endpoints/csv`: the same file, planned by the same \
            rules against the enterprise as it is now, answered row by row (create, update, or \
            skip with the reason) and written nowhere. The upload itself may still differ if \
            the enterprise changes in between. Same role, same errors, at most 1 MiB.",
        params: &[],
        body: Body::Csv,
        success: Success::Json("CsvPlan"),
        errors: &[E::Invalid],
    }),
};

/// `POST /api/endpoints/csv/plan`: what the upload would do.
async fn bulk_plan(
    caller: Caller,
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    caller.0.authorize(
        Op::BulkPutEndpoints,
        roomlink_domain::access::Target::Enterprise,
    )?;
    let csv = read_csv(&req, body).await?;
    let preview = state.services.endpoints.plan_csv(&caller.0, &csv).await?;
    let rows: Vec<serde_json::Value> = preview
        .rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "line": r.line,
                "action": r.action.as_str(),
                "id": r.id,
                "name": r.name,
                "reason": r.reason,
            })
        })
        .collect();
    Ok(HttpResponse::Ok().json(serde_json::json!({
        "created": preview.created,
        "updated": preview.updated,
        "skipped": preview.skipped,
        "rows": rows,
    })))
}

/// `PUT` or `POST /api/endpoints/csv`: applies the upload in one transaction and answers with
/// the full list, as the list operation does.
async fn bulk_put(
    caller: Caller,
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    // Checked here too (the service checks again) so a refusal comes before reading up to 1 MiB.
    caller.0.authorize(
        Op::BulkPutEndpoints,
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

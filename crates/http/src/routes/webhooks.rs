//! `/api/webhooks`: an enterprise's webhook subscriptions, their deliveries, a test delivery,
//! pause and resume. Deliveries themselves go out from the background rounds
//! (`roomlink_app::webhooks`).

use crate::AppState;
use crate::body::read_json_object;
use crate::caller::{Caller, single_query_param};
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_app::webhooks::MAX_DELIVERY_PAGE;
use roomlink_domain::ErrorKind as E;
use roomlink_domain::access::Operation as Op;
use roomlink_domain::endpoint::page::ListPosition;
use roomlink_domain::error::Error;
use roomlink_domain::ids::WebhookId;
use serde_json::{Value, json};

const WEBHOOK_ID: Param = Param::Id("The webhook subscription's id.");

/// The deliveries' default page.
const DEFAULT_DELIVERY_PAGE: usize = 50;

pub(super) const LIST: Operation = Operation {
    method: Method::Get,
    path: "/api/webhooks",
    handler: |route| route.to(list),
    access: Access::Caller(Op::ListWebhooks),
    doc: Doc::Described(Description {
        id: "webhooks.list",
        tag: Tag::Webhooks,
        summary: "List webhook subscriptions",
        description: "The enterprise's subscriptions, oldest first (never their secrets). \
            A paused one says when and why in `paused`.",
        params: &[],
        body: Body::None,
        success: Success::JsonList("Webhook"),
        errors: &[],
    }),
};

async fn list(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    Ok(HttpResponse::Ok().json(state.services.webhooks.list(&caller.0).await?))
}

pub(super) const CREATE: Operation = Operation {
    method: Method::Post,
    path: "/api/webhooks",
    handler: |route| route.to(create),
    access: Access::Caller(Op::CreateWebhook),
    doc: Doc::Described(Description {
        id: "webhooks.create",
        tag: Tag::Webhooks,
        summary: "Subscribe a URL to events",
        description: "Events of the listed types are POSTed to `url`, signed as Standard \
            Webhooks 1.0 describes (`webhook-id`, `webhook-timestamp`, `webhook-signature`). \
            The signing `secret` (`whsec_...`) is in this response only. The URL must be http \
            or https without user information, and its host must resolve to public addresses \
            only, unless the operator allows loopback or private networks \
            (`webhooks.allow_networks`); otherwise `Invalid` says why.",
        params: &[],
        body: Body::Json("WebhookInput"),
        success: Success::Json("WebhookCreated"),
        errors: &[E::Invalid, E::LimitReached],
    }),
};

async fn create(
    caller: Caller,
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let body = read_json_object(&req, body, "Webhook").await?;
    let created = state.services.webhooks.create(&caller.0, &body).await?;
    let mut json = serde_json::to_value(&created.subscription).map_err(Error::internal)?;
    if let Value::Object(map) = &mut json {
        map.insert(
            "secret".to_owned(),
            Value::String(created.secret.expose().to_owned()),
        );
    }
    Ok(HttpResponse::Ok().json(json))
}

pub(super) const GET: Operation = Operation {
    method: Method::Get,
    path: "/api/webhooks/{id}",
    handler: |route| route.to(get),
    access: Access::Caller(Op::GetWebhook),
    doc: Doc::Described(Description {
        id: "webhooks.get",
        tag: Tag::Webhooks,
        summary: "Get a webhook subscription",
        description: "One subscription (never its secret).",
        params: &[WEBHOOK_ID],
        body: Body::None,
        success: Success::Json("Webhook"),
        errors: &[E::NotFound],
    }),
};

async fn get(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = WebhookId::parse(&id)?;
    Ok(HttpResponse::Ok().json(state.services.webhooks.get(&caller.0, &id).await?))
}

pub(super) const REPLACE: Operation = Operation {
    method: Method::Put,
    path: "/api/webhooks/{id}",
    handler: |route| route.to(replace),
    access: Access::Caller(Op::UpdateWebhook),
    doc: Doc::Described(Description {
        id: "webhooks.update",
        tag: Tag::Webhooks,
        summary: "Replace a webhook subscription",
        description: "A new URL, event types and description; the secret and the pending \
            deliveries stay.",
        params: &[WEBHOOK_ID],
        body: Body::Json("WebhookInput"),
        success: Success::Json("Webhook"),
        errors: &[E::NotFound, E::Invalid],
    }),
};

async fn replace(
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = WebhookId::parse(&id)?;
    let body = read_json_object(&req, body, "Webhook").await?;
    Ok(HttpResponse::Ok().json(
        state
            .services
            .webhooks
            .update(&caller.0, &id, &body)
            .await?,
    ))
}

pub(super) const DELETE: Operation = Operation {
    method: Method::Delete,
    path: "/api/webhooks/{id}",
    handler: |route| route.to(delete),
    access: Access::Caller(Op::DeleteWebhook),
    doc: Doc::Described(Description {
        id: "webhooks.delete",
        tag: Tag::Webhooks,
        summary: "Delete a webhook subscription",
        description: "With its deliveries, pending ones included.",
        params: &[WEBHOOK_ID],
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
    let id = WebhookId::parse(&id)?;
    state.services.webhooks.delete(&caller.0, &id).await?;
    Ok(HttpResponse::NoContent().finish())
}

pub(super) const PAUSE: Operation = Operation {
    method: Method::Post,
    path: "/api/webhooks/{id}/pause",
    handler: |route| route.to(pause),
    access: Access::Caller(Op::PauseWebhook),
    doc: Doc::Described(Description {
        id: "webhooks.pause",
        tag: Tag::Webhooks,
        summary: "Stop deliveries",
        description: "Events keep queueing; nothing is sent until the subscription resumes. \
            roomlink pauses a subscription itself when a delivery fails every attempt of its \
            retry schedule.",
        params: &[WEBHOOK_ID],
        body: Body::None,
        success: Success::Json("Webhook"),
        errors: &[E::NotFound],
    }),
};

async fn pause(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = WebhookId::parse(&id)?;
    Ok(HttpResponse::Ok().json(
        state
            .services
            .webhooks
            .set_paused(&caller.0, &id, true)
            .await?,
    ))
}

pub(super) const RESUME: Operation = Operation {
    method: Method::Post,
    path: "/api/webhooks/{id}/resume",
    handler: |route| route.to(resume),
    access: Access::Caller(Op::ResumeWebhook),
    doc: Doc::Described(Description {
        id: "webhooks.resume",
        tag: Tag::Webhooks,
        summary: "Restart deliveries",
        description: "What queued meanwhile goes out at once, oldest first. A delivery that \
            had failed for good stays failed.",
        params: &[WEBHOOK_ID],
        body: Body::None,
        success: Success::Json("Webhook"),
        errors: &[E::NotFound],
    }),
};

async fn resume(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = WebhookId::parse(&id)?;
    Ok(HttpResponse::Ok().json(
        state
            .services
            .webhooks
            .set_paused(&caller.0, &id, false)
            .await?,
    ))
}

pub(super) const TEST: Operation = Operation {
    method: Method::Post,
    path: "/api/webhooks/{id}/test",
    handler: |route| route.to(test),
    access: Access::Caller(Op::TestWebhook),
    doc: Doc::Described(Description {
        id: "webhooks.test",
        tag: Tag::Webhooks,
        summary: "Send a test delivery",
        description: "Queues a `webhook.test` event for this subscription alone, whatever \
            types it asks for; it goes out like any other (in order, signed, retried) and \
            shows in its deliveries under the answered `eventId`.",
        params: &[WEBHOOK_ID],
        body: Body::None,
        success: Success::Json("WebhookTestQueued"),
        errors: &[E::NotFound],
    }),
};

async fn test(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = WebhookId::parse(&id)?;
    let event_id = state.services.webhooks.test(&caller.0, &id).await?;
    Ok(HttpResponse::Ok().json(json!({ "eventId": event_id })))
}

pub(super) const DELIVERIES: Operation = Operation {
    method: Method::Get,
    path: "/api/webhooks/{id}/deliveries",
    handler: |route| route.to(deliveries),
    access: Access::Caller(Op::ListWebhookDeliveries),
    doc: Doc::Described(Description {
        id: "webhooks.deliveries",
        tag: Tag::Webhooks,
        summary: "A subscription's deliveries",
        description: "Newest first, one page per request (`limit`, default 50, at most \
            1000); the next page's cursor is in the `X-Next-Cursor` and `Link` headers. Each \
            says its state (pending, delivered, failed), attempts, the last answer's HTTP \
            status or why there was none, and when it is tried next. Finished deliveries are \
            kept for 7 days.",
        params: &[WEBHOOK_ID, Param::Query("limit"), Param::Query("cursor")],
        body: Body::None,
        success: Success::JsonList("WebhookDelivery"),
        errors: &[E::NotFound, E::Invalid],
    }),
};

async fn deliveries(
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = WebhookId::parse(&id)?;
    let limit = match single_query_param(&req, "limit")? {
        None => DEFAULT_DELIVERY_PAGE,
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_DELIVERY_PAGE).contains(n))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "limit: expected a whole number from 1 to {MAX_DELIVERY_PAGE}"
                ))
            })?,
    };
    let before = single_query_param(&req, "cursor")?
        .as_deref()
        .map(ListPosition::from_cursor)
        .transpose()?
        .map(|p| p.0);
    let page = state
        .services
        .webhooks
        .deliveries(&caller.0, &id, before, limit)
        .await?;
    let mut response = HttpResponse::Ok();
    if let Some(next) = page.next {
        let cursor = ListPosition(next).to_cursor();
        response.insert_header(("X-Next-Cursor", cursor.as_str()));
        response.insert_header((
            header::LINK,
            format!(
                "</api/webhooks/{}/deliveries?limit={limit}&cursor={cursor}>; rel=\"next\"",
                id.as_str()
            ),
        ));
    }
    Ok(response.json(&page.deliveries))
}

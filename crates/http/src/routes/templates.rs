//! `/api/templates`: an enterprise's configuration templates, and the catalog of the settings
//! they may hold (`roomlink_app::templates`; the rules: `roomlink_domain::template`).

use crate::AppState;
use crate::body::read_json_object;
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_domain::ErrorKind as E;
use roomlink_domain::access::Operation as Op;
use roomlink_domain::ids::TemplateId;

const TEMPLATE_ID: Param = Param::Id("The template's id.");

pub(super) const LIST: Operation = Operation {
    method: Method::Get,
    path: "/api/templates",
    handler: |route| route.to(list),
    access: Access::Caller(Op::ListTemplates),
    doc: Doc::Described(Description {
        id: "templates.list",
        tag: Tag::Templates,
        summary: "List configuration templates",
        description: "The enterprise's templates, by name (at most 200, so one answer holds \
            them all).",
        params: &[],
        body: Body::None,
        success: Success::JsonList("Template"),
        errors: &[],
    }),
};

async fn list(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    Ok(HttpResponse::Ok().json(state.services.templates.list(&caller.0).await?))
}

pub(super) const SETTINGS: Operation = Operation {
    method: Method::Get,
    path: "/api/templates/settings",
    handler: |route| route.to(settings),
    access: Access::Caller(Op::ListTemplateSettings),
    doc: Doc::Described(Description {
        id: "templates.settings",
        tag: Tag::Templates,
        summary: "List the settings a template may hold",
        description: "Every setting key with its value space, in catalog order: enough to \
            build a form. A value outside its key's space is refused with `Invalid` naming \
            the key, the value and the space (`description` words the space as refusals do).",
        params: &[],
        body: Body::None,
        success: Success::JsonList("TemplateSettingSpace"),
        errors: &[],
    }),
};

async fn settings(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    Ok(HttpResponse::Ok().json(state.services.templates.settings_catalog(&caller.0)?))
}

pub(super) const CREATE: Operation = Operation {
    method: Method::Post,
    path: "/api/templates",
    handler: |route| route.to(create),
    access: Access::Caller(Op::CreateTemplate),
    doc: Doc::Described(Description {
        id: "templates.create",
        tag: Tag::Templates,
        summary: "Create a configuration template",
        description: "A name (unique in the enterprise without regard to case, else \
            `Conflict`), an optional description and the settings. An unknown field or \
            setting key, or a value outside its key's space, is `Invalid` and nothing is \
            stored. Answers 201 with the template and its URL in `Location`.",
        params: &[],
        body: Body::Json("TemplateInput"),
        success: Success::Created("Template"),
        errors: &[E::Invalid, E::Conflict, E::LimitReached],
    }),
};

async fn create(
    caller: Caller,
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let body = read_json_object(&req, body, "Template").await?;
    let template = state.services.templates.create(&caller.0, &body).await?;
    Ok(HttpResponse::Created()
        .insert_header((header::LOCATION, format!("/api/templates/{}", template.id)))
        .json(template))
}

pub(super) const GET: Operation = Operation {
    method: Method::Get,
    path: "/api/templates/{id}",
    handler: |route| route.to(get),
    access: Access::Caller(Op::GetTemplate),
    doc: Doc::Described(Description {
        id: "templates.get",
        tag: Tag::Templates,
        summary: "Get a configuration template",
        description: "One template of the enterprise.",
        params: &[TEMPLATE_ID],
        body: Body::None,
        success: Success::Json("Template"),
        errors: &[E::NotFound],
    }),
};

async fn get(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = TemplateId::parse(&id)?;
    Ok(HttpResponse::Ok().json(state.services.templates.get(&caller.0, &id).await?))
}

pub(super) const REPLACE: Operation = Operation {
    method: Method::Put,
    path: "/api/templates/{id}",
    handler: |route| route.to(replace),
    access: Access::Caller(Op::UpdateTemplate),
    doc: Doc::Described(Description {
        id: "templates.update",
        tag: Tag::Templates,
        summary: "Replace a configuration template",
        description: "Name, description and settings become the body's, as a create takes \
            them: a description omitted or null is removed, a setting not in `settings` is \
            no longer set.",
        params: &[TEMPLATE_ID],
        body: Body::Json("TemplateInput"),
        success: Success::Json("Template"),
        errors: &[E::NotFound, E::Invalid, E::Conflict],
    }),
};

async fn replace(
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = TemplateId::parse(&id)?;
    let body = read_json_object(&req, body, "Template").await?;
    let template = state
        .services
        .templates
        .replace(&caller.0, &id, &body)
        .await?;
    Ok(HttpResponse::Ok().json(template))
}

pub(super) const PATCH: Operation = Operation {
    method: Method::Patch,
    path: "/api/templates/{id}",
    handler: |route| route.to(patch),
    access: Access::Caller(Op::UpdateTemplate),
    doc: Doc::Described(Description {
        id: "templates.patch",
        tag: Tag::Templates,
        summary: "Patch a configuration template",
        description: "A JSON merge patch (RFC 7396): the fields present are set \
            (`description: null` removes it), the others stay; `settings` merges key by key, \
            a key's `null` removing that setting. The result is checked as a replace is.",
        params: &[TEMPLATE_ID],
        body: Body::Json("TemplatePatch"),
        success: Success::Json("Template"),
        errors: &[E::NotFound, E::Invalid, E::Conflict],
    }),
};

async fn patch(
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = TemplateId::parse(&id)?;
    let body = read_json_object(&req, body, "Template").await?;
    let template = state
        .services
        .templates
        .patch(&caller.0, &id, &body)
        .await?;
    Ok(HttpResponse::Ok().json(template))
}

pub(super) const DELETE: Operation = Operation {
    method: Method::Delete,
    path: "/api/templates/{id}",
    handler: |route| route.to(delete),
    access: Access::Caller(Op::DeleteTemplate),
    doc: Doc::Described(Description {
        id: "templates.delete",
        tag: Tag::Templates,
        summary: "Delete a configuration template",
        description: "The template is gone; nothing on the room systems changes.",
        params: &[TEMPLATE_ID],
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
    let id = TemplateId::parse(&id)?;
    state.services.templates.delete(&caller.0, &id).await?;
    Ok(HttpResponse::NoContent().finish())
}

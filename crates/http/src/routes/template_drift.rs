//! The rooms a template is assigned to and their drift: `GET /api/templates/{id}/rooms`,
//! `POST .../assign`, `.../unassign`, `.../check` and `.../reapply`
//! (`roomlink_app::template_drift`; the rules: `roomlink_domain::template::drift`).

use super::template_jobs::accepted;
use crate::AppState;
use crate::body::read_json_object;
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_app::template_drift::TemplateRooms;
use roomlink_domain::ErrorKind as E;
use roomlink_domain::access::Operation as Op;
use roomlink_domain::ids::TemplateId;
use roomlink_domain::template::drift::{Assignment, DriftRead, DriftState};
use serde_json::{Value, json};

const TEMPLATE_ID: Param = Param::Id("The template's id.");

pub(super) const ROOMS: Operation = Operation {
    method: Method::Get,
    path: "/api/templates/{id}/rooms",
    handler: |route| route.to(rooms),
    access: Access::Caller(Op::ListTemplateRooms),
    doc: Doc::Described(Description {
        id: "templates.rooms",
        tag: Tag::Templates,
        summary: "List the rooms a template is assigned to, with their drift",
        description: "Each room assigned the template, by name, with what its last check \
            found: `unchecked` (not yet), `in_line`, `drifted` (`drifted` lists each setting \
            the room holds another value of: `held` and the template's), or `unreachable` \
            (the last check could not ask the room: `error`; the last read's `drifted` is \
            kept). Assigned rooms are checked in the status poll rounds \
            (`templates.drift_check_minutes`) and on request (`POST .../check`). Settings a \
            room cannot set or would not say are not drift.",
        params: &[TEMPLATE_ID],
        body: Body::None,
        success: Success::Json("TemplateRooms"),
        errors: &[E::NotFound],
    }),
};

async fn rooms(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = TemplateId::parse(&id)?;
    let rooms = state.services.template_drift.rooms(&caller.0, &id).await?;
    Ok(HttpResponse::Ok().json(rooms_json(&rooms)))
}

pub(super) const ASSIGN: Operation = Operation {
    method: Method::Post,
    path: "/api/templates/{id}/assign",
    handler: |route| route.to(assign),
    access: Access::Caller(Op::AssignTemplate),
    doc: Doc::Described(Description {
        id: "templates.assign",
        tag: Tag::Templates,
        summary: "Assign a template to rooms",
        description: "Assigns the template to the chosen rooms (`rooms` as a plan takes \
            them), so that they are checked for drift from it. A room is assigned one \
            template at most: a room assigned another moves to this one, its last check \
            forgotten. Answers the template's rooms.",
        params: &[TEMPLATE_ID],
        body: Body::Json("TemplatePlanInput"),
        success: Success::Json("TemplateRooms"),
        errors: &[E::NotFound, E::Invalid],
    }),
};

async fn assign(
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = TemplateId::parse(&id)?;
    let body = read_json_object(&req, body, "TemplateRooms").await?;
    let rooms = state
        .services
        .template_drift
        .assign(&caller.0, &id, &body)
        .await?;
    Ok(HttpResponse::Ok().json(rooms_json(&rooms)))
}

pub(super) const UNASSIGN: Operation = Operation {
    method: Method::Post,
    path: "/api/templates/{id}/unassign",
    handler: |route| route.to(unassign),
    access: Access::Caller(Op::UnassignTemplate),
    doc: Doc::Described(Description {
        id: "templates.unassign",
        tag: Tag::Templates,
        summary: "Unassign a template from rooms",
        description: "Ends the assignment of those chosen rooms that are assigned the \
            template (others are left as they are). Nothing is written on the rooms. Answers \
            the template's rooms.",
        params: &[TEMPLATE_ID],
        body: Body::Json("TemplatePlanInput"),
        success: Success::Json("TemplateRooms"),
        errors: &[E::NotFound, E::Invalid],
    }),
};

async fn unassign(
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = TemplateId::parse(&id)?;
    let body = read_json_object(&req, body, "TemplateRooms").await?;
    let rooms = state
        .services
        .template_drift
        .unassign(&caller.0, &id, &body)
        .await?;
    Ok(HttpResponse::Ok().json(rooms_json(&rooms)))
}

pub(super) const CHECK: Operation = Operation {
    method: Method::Post,
    path: "/api/templates/{id}/check",
    handler: |route| route.to(check),
    access: Access::Caller(Op::CheckTemplate),
    doc: Doc::Described(Description {
        id: "templates.check",
        tag: Tag::Templates,
        summary: "Check the rooms a template is assigned to now",
        description: "Reads the template's settings from every assigned room now, as the \
            poll rounds do, records what each check found (a room found drifted anew is a \
            `template.drifted` webhook event) and answers the template's rooms. At most \
            1,000 assigned rooms (`Invalid` beyond: the poll rounds check them all).",
        params: &[TEMPLATE_ID],
        body: Body::None,
        success: Success::Json("TemplateRooms"),
        errors: &[E::NotFound, E::Invalid],
    }),
};

async fn check(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = TemplateId::parse(&id)?;
    let rooms = state.services.template_drift.check(&caller.0, &id).await?;
    Ok(HttpResponse::Ok().json(rooms_json(&rooms)))
}

pub(super) const REAPPLY: Operation = Operation {
    method: Method::Post,
    path: "/api/templates/{id}/reapply",
    handler: |route| route.to(reapply),
    access: Access::Caller(Op::ReapplyTemplate),
    doc: Doc::Described(Description {
        id: "templates.reapply",
        tag: Tag::Templates,
        summary: "Re-apply a template to its drifted rooms",
        description: "Starts an apply job (as `POST .../apply` does, audited as \
            `templates.apply`) on the assigned rooms whose last check found them drifted, \
            and answers 202 with the job. `Invalid` when no assigned room has drifted; \
            `Conflict` while another job of the enterprise runs.",
        params: &[TEMPLATE_ID],
        body: Body::None,
        success: Success::Accepted("TemplateJob"),
        errors: &[E::NotFound, E::Invalid, E::Conflict],
    }),
};

async fn reapply(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = TemplateId::parse(&id)?;
    let job = state
        .services
        .template_drift
        .reapply(&caller.0, &id)
        .await?;
    Ok(accepted(&job))
}

fn room_json(rooms: &TemplateRooms, room: &Assignment) -> Value {
    let drift = room.drift.as_ref();
    let drifted: Vec<Value> = match drift.and_then(|d| d.read.as_ref()) {
        Some((_, DriftRead::Drifted(held))) => held
            .iter()
            // A key the template no longer sets (edited since the check) is left out.
            .filter_map(|(key, held)| {
                let template = rooms.template.settings.get(*key)?.to_json();
                Some(json!({"key": key.name(), "held": held, "template": template}))
            })
            .collect(),
        _ => Vec::new(),
    };
    let mut out = json!({
        "endpointId": room.endpoint_id,
        "name": room.name,
        "assignedAt": room.assigned_at,
        "state": room.state().name(),
        "checkedAt": drift.map(|d| d.checked_at),
        "readAt": drift.and_then(|d| d.read.as_ref()).map(|(at, _)| at),
        "driftedSince": drift.and_then(|d| d.drifted_since),
        "drifted": drifted,
    });
    if let Some((kind, message)) = drift.and_then(|d| d.failure.as_ref()) {
        out["error"] = json!({"errorName": kind.name(), "message": message});
    }
    out
}

/// The answer of every route here: the template, counts by state, and the rooms.
fn rooms_json(rooms: &TemplateRooms) -> Value {
    let count = |state: DriftState| rooms.rooms.iter().filter(|r| r.state() == state).count();
    json!({
        "templateId": rooms.template.id,
        "counts": {
            "assigned": rooms.rooms.len(),
            "unchecked": count(DriftState::Unchecked),
            "inLine": count(DriftState::InLine),
            "drifted": count(DriftState::Drifted),
            "unreachable": count(DriftState::Unreachable),
        },
        "rooms": rooms.rooms.iter().map(|r| room_json(rooms, r)).collect::<Vec<_>>(),
    })
}

//! Template jobs: `POST /api/templates/{id}/apply` starts one, `/api/jobs` reads them,
//! `POST /api/jobs/{id}/cancel` stops one and `POST /api/jobs/{id}/undo` starts the undo of an
//! apply (`roomlink_app::template_jobs`; the rules of a room:
//! `roomlink_domain::template::room_work`).

use crate::AppState;
use crate::body::read_json_object;
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_domain::ErrorKind as E;
use roomlink_domain::access::Operation as Op;
use roomlink_domain::ids::{JobId, TemplateId};
use roomlink_domain::template::job::{JobKind, JobProgress, JobRoom, RoomState, TemplateJob};
use roomlink_domain::template::job_json::key_outcome_to_json;
use roomlink_domain::template::room_outcome::RoomOutcome;
use serde_json::{Map, Value, json};

const JOB_ID: Param = Param::Id("The job's id.");

pub(super) const APPLY: Operation = Operation {
    method: Method::Post,
    path: "/api/templates/{id}/apply",
    handler: |route| route.to(apply),
    access: Access::Caller(Op::ApplyTemplate),
    doc: Doc::Described(Description {
        id: "templates.apply",
        tag: Tag::Templates,
        summary: "Apply a configuration template to rooms",
        description: "Starts a job writing the template's settings (as they are now) on the \
            chosen rooms, as a plan chooses them, and answers 202 at once with the job and its \
            URL in `Location`. Each room is read first; what it held is kept before anything \
            is written, only settings that differ are written, and each setting ends \
            `applied` (with `from`), `unchanged`, `unsupported`, `refused` (the room's \
            message) or `unreadable`; a room that cannot be asked is `unreachable`. At most \
            two rooms of one listener are written at once. A job survives a restart of \
            roomlink and resumes where it was. One job runs per enterprise at a time: \
            `Conflict` names the running one.",
        params: &[Param::Id("The template's id.")],
        body: Body::Json("TemplatePlanInput"),
        success: Success::Accepted("TemplateJob"),
        errors: &[E::NotFound, E::Invalid, E::Conflict],
    }),
};

async fn apply(
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = TemplateId::parse(&id)?;
    let body = read_json_object(&req, body, "TemplateJob").await?;
    let job = state
        .services
        .template_jobs
        .apply(&caller.0, &id, &body)
        .await?;
    Ok(accepted(&job))
}

pub(super) const LIST: Operation = Operation {
    method: Method::Get,
    path: "/api/jobs",
    handler: |route| route.to(list),
    access: Access::Caller(Op::ListJobs),
    doc: Doc::Described(Description {
        id: "jobs.list",
        tag: Tag::Templates,
        summary: "List template jobs",
        description: "The enterprise's 50 newest jobs (applies and undos), newest first, each \
            with its rooms.",
        params: &[],
        body: Body::None,
        success: Success::JsonList("TemplateJob"),
        errors: &[],
    }),
};

async fn list(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let jobs = state.services.template_jobs.list(&caller.0).await?;
    Ok(HttpResponse::Ok().json(jobs.iter().map(job_json).collect::<Vec<_>>()))
}

pub(super) const GET: Operation = Operation {
    method: Method::Get,
    path: "/api/jobs/{id}",
    handler: |route| route.to(get),
    access: Access::Caller(Op::GetJob),
    doc: Doc::Described(Description {
        id: "jobs.get",
        tag: Tag::Templates,
        summary: "Get a template job",
        description: "One job with its progress and every room's state and outcome. Live \
            updates (`/api/live/events`) announce a job's progress as `jobs` events.",
        params: &[JOB_ID],
        body: Body::None,
        success: Success::Json("TemplateJob"),
        errors: &[E::NotFound],
    }),
};

async fn get(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = JobId::parse(&id)?;
    let job = state.services.template_jobs.job(&caller.0, &id).await?;
    Ok(HttpResponse::Ok().json(job_json(&job)))
}

pub(super) const UNDO: Operation = Operation {
    method: Method::Post,
    path: "/api/jobs/{id}/undo",
    handler: |route| route.to(undo),
    access: Access::Caller(Op::UndoJob),
    doc: Doc::Described(Description {
        id: "jobs.undo",
        tag: Tag::Templates,
        summary: "Undo a template job",
        description: "Starts a job writing back, room by room, the values a finished (or \
            cancelled) apply job replaced, each only where the room still holds what the job \
            wrote (a setting changed since is `skipped`). A value outside roomlink's space for \
            its key is `refused` without being sent. Answers 202 with the new job and its URL in \
            `Location`. `Conflict` for a job still running, an undo job, or one that changed \
            nothing.",
        params: &[JOB_ID],
        body: Body::None,
        success: Success::Accepted("TemplateJob"),
        errors: &[E::NotFound, E::Conflict],
    }),
};

async fn undo(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = JobId::parse(&id)?;
    let job = state.services.template_jobs.undo(&caller.0, &id).await?;
    Ok(accepted(&job))
}

pub(super) const CANCEL: Operation = Operation {
    method: Method::Post,
    path: "/api/jobs/{id}/cancel",
    handler: |route| route.to(cancel),
    access: Access::Caller(Op::CancelJob),
    doc: Doc::Described(Description {
        id: "jobs.cancel",
        tag: Tag::Templates,
        summary: "Cancel a running template job",
        description: "Stops a running job: no room is begun after this, and another job may \
            start at once. Rooms not begun stay `pending`; a room being written when the \
            cancel arrived may stay `writing` (what it held was kept, so an undo of a \
            cancelled apply restores it where the room holds what the job wrote). Answers the \
            job, its state `cancelled` (200: nothing starts). `Conflict` for a job that is not \
            running.",
        params: &[JOB_ID],
        body: Body::None,
        success: Success::Json("TemplateJob"),
        errors: &[E::NotFound, E::Conflict],
    }),
};

async fn cancel(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = JobId::parse(&id)?;
    let job = state.services.template_jobs.cancel(&caller.0, &id).await?;
    Ok(HttpResponse::Ok().json(job_json(&job)))
}

pub(super) fn accepted(job: &TemplateJob) -> HttpResponse {
    HttpResponse::Accepted()
        .insert_header((header::LOCATION, format!("/api/jobs/{}", job.id)))
        .json(job_json(job))
}

fn progress_json(p: JobProgress) -> Value {
    json!({
        "rooms": p.rooms, "done": p.done, "unreachable": p.unreachable,
        "applied": p.applied, "unchanged": p.unchanged, "unsupported": p.unsupported,
        "refused": p.refused, "unreadable": p.unreadable, "skipped": p.skipped,
    })
}

fn room_json(room: &JobRoom) -> Value {
    let outcomes = match &room.state {
        RoomState::Done(RoomOutcome::Written(keys)) => Some(keys),
        _ => None,
    };
    let settings: Map<String, Value> = room
        .steps
        .iter()
        .map(|(key, step)| {
            let mut out = outcomes
                .and_then(|keys| keys.get(key))
                .map(key_outcome_to_json)
                .unwrap_or_else(|| json!({}));
            out["to"] = step.to.clone();
            (key.name().to_owned(), out)
        })
        .collect();
    let mut out = json!({
        "endpointId": room.endpoint_id,
        "name": room.name,
        "state": room.state.name(),
        "settings": settings,
    });
    if let RoomState::Done(RoomOutcome::Unreachable { kind, message, .. }) = &room.state {
        out["unreachable"] = json!({"code": kind.name(), "message": message});
    }
    out
}

/// A job as the API answers it (schema `TemplateJob`).
pub(crate) fn job_json(job: &TemplateJob) -> Value {
    let undoes = match &job.kind {
        JobKind::Undo { of } => json!(of),
        JobKind::Apply => Value::Null,
    };
    json!({
        "id": job.id,
        "templateId": job.template_id,
        "templateName": job.template_name,
        "kind": job.kind.name(),
        "undoes": undoes,
        "state": job.state.name(),
        "createdBy": job.created_by,
        "createdAt": job.created_at,
        "finishedAt": job.finished_at,
        "progress": progress_json(JobProgress::of(job)),
        "rooms": job.rooms.iter().map(room_json).collect::<Vec<_>>(),
    })
}

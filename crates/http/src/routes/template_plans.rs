//! `POST /api/templates/{id}/plan`: what applying a template would change on the chosen rooms,
//! read from the rooms themselves (`roomlink_app::template_plans`; the comparison:
//! `roomlink_domain::template::plan`).

use crate::AppState;
use crate::body::read_json_object;
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_app::template_plans::{PlannedRoom, TemplatePlan};
use roomlink_domain::ErrorKind as E;
use roomlink_domain::access::Operation as Op;
use roomlink_domain::ids::TemplateId;
use roomlink_domain::template::plan::{KeyPlan, PlanSummary, RoomPlan};
use serde_json::{Map, Value, json};

pub(super) const PLAN: Operation = Operation {
    method: Method::Post,
    path: "/api/templates/{id}/plan",
    handler: |route| route.to(plan),
    access: Access::Caller(Op::PlanTemplate),
    doc: Doc::Described(Description {
        id: "templates.plan",
        tag: Tag::Templates,
        summary: "Plan a configuration template on rooms",
        description: "Reads the template's settings from each chosen room through its \
            listener (`readconfiguration`, listener 3.4.0) and answers, per room and key, \
            `unchanged`, `change` (`from` → `to`), `unsupported` (the room's driver or \
            firmware has no such setting: `reason`) or `unreadable` (the room refused to say: \
            `reason`); a room that cannot be asked at all is `unreachable` with the catalog \
            error's `code` and `message`. Nothing is written. `rooms` is one of \
            `{\"endpoints\": [ids]}`, `{\"listenerId\": id}` or `{\"all\": true}`, at most \
            1,000 rooms.",
        params: &[Param::Id("The template's id.")],
        body: Body::Json("TemplatePlanInput"),
        success: Success::Json("TemplatePlan"),
        errors: &[E::NotFound, E::Invalid],
    }),
};

async fn plan(
    caller: Caller,
    req: HttpRequest,
    id: web::Path<String>,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = TemplateId::parse(&id)?;
    let body = read_json_object(&req, body, "TemplatePlan").await?;
    let plan = state
        .services
        .template_plans
        .plan(&caller.0, &id, &body)
        .await?;
    Ok(HttpResponse::Ok().json(plan_json(&plan)))
}

fn key_json(plan: &KeyPlan, to: Value) -> Value {
    match plan {
        KeyPlan::Unchanged => json!({"plan": "unchanged", "value": to}),
        KeyPlan::Change { from } => json!({"plan": "change", "from": from, "to": to}),
        KeyPlan::Unsupported(reason) | KeyPlan::Unreadable(reason) => {
            json!({"plan": plan.name(), "reason": reason})
        }
    }
}

fn room_json(plan: &TemplatePlan, room: &PlannedRoom) -> Value {
    let mut out = json!({"endpointId": room.endpoint_id, "name": room.name});
    match &room.plan {
        RoomPlan::Unreachable { kind, message } => {
            out["unreachable"] = json!({"code": kind.name(), "message": message});
        }
        RoomPlan::Read(keys) => {
            let settings: Map<String, Value> = plan
                .template
                .settings
                .iter()
                .filter_map(|(key, value)| {
                    let key_plan = keys.get(&key)?;
                    Some((key.name().to_owned(), key_json(key_plan, value.to_json())))
                })
                .collect();
            out["settings"] = Value::Object(settings);
        }
    }
    out
}

/// The answer: the template, a summary, and each room's plan in the rooms' order.
pub(crate) fn plan_json(plan: &TemplatePlan) -> Value {
    json!({
        "template": {"id": plan.template.id, "name": plan.template.name},
        "summary": PlanSummary::of(plan.rooms.iter().map(|r| &r.plan)).to_json(),
        "rooms": plan.rooms.iter().map(|r| room_json(plan, r)).collect::<Vec<_>>(),
    })
}

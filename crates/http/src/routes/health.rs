//! `GET /api/health/rooms`: every room's health, with counts per state and per listener; and
//! `GET /api/endpoints/{id}/health`: one room's recorded changes.

use crate::AppState;
use crate::caller::Caller;
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::{HttpResponse, web};
use roomlink_domain::ErrorKind as E;
use roomlink_domain::access::Operation as Op;
use roomlink_domain::health::{HealthCounts, RoomHealth};
use roomlink_domain::ids::EndpointId;
use serde::Serialize;

pub(super) const ROOMS: Operation = Operation {
    method: Method::Get,
    path: "/api/health/rooms",
    handler: |route| route.to(rooms),
    access: Access::Caller(Op::ReadRoomHealth),
    doc: Doc::Described(Description {
        id: "health.rooms",
        tag: Tag::Fleet,
        summary: "Which rooms work, which do not, and why",
        description: "Every room's health: `offline` when nothing reaches it (no listener \
            service, its listener offline, never observed, or no status for three poll \
            intervals), `degraded` when it answers but its inventory shows a peripheral not \
            connected or cannot be read for two refresh intervals, `ok` otherwise; with the \
            reasons, and `since`: the observation that shows it (the last status of a room that \
            stopped answering, the inventory read that found a peripheral missing). Counts per \
            state and per listener; the rooms offline first, then degraded, by name.",
        params: &[],
        body: Body::None,
        success: Success::Json("RoomHealthReport"),
        errors: &[],
    }),
};

pub(super) const ROOM_HISTORY: Operation = Operation {
    method: Method::Get,
    path: "/api/endpoints/{id}/health",
    handler: |route| route.to(room_history),
    access: Access::Caller(Op::ReadRoomHealthHistory),
    doc: Doc::Described(Description {
        id: "health.roomHistory",
        tag: Tag::Fleet,
        summary: "How a room's health changed",
        description: "The room's health changes as the health watch recorded them during the \
            status poll rounds, newest first: the state it changed to, from which (`null`: ok, \
            or not seen before), and the reasons then. At most the last 50, kept 30 days. A \
            room first seen ok has no entry until it changes.",
        params: &[Param::ENDPOINT_ID],
        body: Body::None,
        success: Success::JsonList("HealthChange"),
        errors: &[E::NotFound],
    }),
};

async fn room_history(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(&id)?;
    let changes = state.services.health.history(&caller.0, &id).await?;
    Ok(HttpResponse::Ok().json(changes))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListenerView<'a> {
    listener_service_id: &'a str,
    name: &'a str,
    health: &'static str,
    counts: HealthCounts,
}

/// A room's health with its name.
#[derive(Serialize)]
struct RoomView<'a> {
    name: &'a str,
    #[serde(flatten)]
    health: &'a RoomHealth,
}

#[derive(Serialize)]
struct ReportView<'a> {
    at: i64,
    counts: HealthCounts,
    listeners: Vec<ListenerView<'a>>,
    rooms: Vec<RoomView<'a>>,
}

async fn rooms(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    let report = state.services.health.rooms(&caller.0).await?;
    Ok(HttpResponse::Ok().json(ReportView {
        at: report.at,
        counts: report.counts,
        listeners: report
            .listeners
            .iter()
            .map(|l| ListenerView {
                listener_service_id: l.listener_id.as_str(),
                name: &l.name,
                health: l.health.as_str(),
                counts: l.counts,
            })
            .collect(),
        rooms: report
            .rooms
            .iter()
            .map(|r| RoomView {
                name: &r.name,
                health: &r.health,
            })
            .collect(),
    }))
}

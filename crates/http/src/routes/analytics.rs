//! `GET /api/analytics/usage` (figures per room, day, hour or weekday) and
//! `GET /api/analytics/sessions` (the call sessions behind them, as CSV).

use super::audit::time_param;
use crate::AppState;
use crate::caller::{Caller, single_query_param};
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_domain::ErrorKind as E;
use roomlink_domain::access::Operation as Op;
use roomlink_domain::error::Error;
use roomlink_domain::usage::{SESSIONS_CSV_HEADER, UsageGroup, UsageGrouping, UsageQuery};
use serde::Serialize;

pub(super) const USAGE: Operation = Operation {
    method: Method::Get,
    path: "/api/analytics/usage",
    handler: |route| route.to(usage),
    access: Access::Caller(Op::ReadUsage),
    doc: Doc::Described(Description {
        id: "analytics.usage",
        tag: Tag::Analytics,
        summary: "Room usage",
        description: "Minutes in call, calls and days used, per room, day, hour of the day or \
            day of the week (`groupBy`, default `room`; times in UTC), over the period \
            `from`..`to` (default: the 30 days before now; at most 366 days). Counted from call \
            sessions: a session is open while a room's last observed status (a command's \
            answer or a status poll) has a call active, so its start and end are exact to one \
            observation. The part of a call inside the period counts, a call still going up \
            to now, in the group where that part starts.",
        params: &[
            Param::Query("from"),
            Param::Query("to"),
            Param::Query("groupBy"),
        ],
        body: Body::None,
        success: Success::Json("Usage"),
        errors: &[E::Invalid],
    }),
};

pub(super) const SESSIONS: Operation = Operation {
    method: Method::Get,
    path: "/api/analytics/sessions",
    handler: |route| route.to(sessions),
    access: Access::Caller(Op::ListCallSessions),
    doc: Doc::Described(Description {
        id: "analytics.sessions",
        tag: Tag::Analytics,
        summary: "Call sessions as CSV",
        description: "Every call session overlapping the period `from`..`to` (default: the 30 \
            days before now; at most 366 days), oldest first, as a CSV attachment: \
            `endpointId,startedAt,endedAt,durationSeconds,source`, times in UTC (RFC 3339), end \
            and duration empty for a call still going; `source` is how the call came about \
            (`api`, `autoJoin`, or `device`: started on the room system). A period holding more \
            than 100000 sessions is refused (ask for a shorter one).",
        params: &[Param::Query("from"), Param::Query("to")],
        body: Body::None,
        success: Success::Other("text/csv"),
        errors: &[E::Invalid],
    }),
};

/// The period the request asks for (`from`, `to`), its defaults the use case's.
fn period(
    req: &HttpRequest,
    state: &AppState,
    grouping: UsageGrouping,
) -> Result<UsageQuery, Error> {
    let from = time_param(req, "from")?;
    let to = time_param(req, "to")?;
    state.services.usage.period(from, to, grouping)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UsageView<'a> {
    from: i64,
    to: i64,
    group_by: &'static str,
    at: i64,
    calls: u64,
    minutes_in_call: f64,
    groups: &'a [UsageGroup],
}

async fn usage(
    caller: Caller,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let grouping = match single_query_param(&req, "groupBy")? {
        None => UsageGrouping::Room,
        Some(text) => UsageGrouping::parse(&text)?,
    };
    let query = period(&req, &state, grouping)?;
    let report = state.services.usage.usage(&caller.0, query).await?;
    Ok(HttpResponse::Ok().json(UsageView {
        from: report.query.from,
        to: report.query.to,
        group_by: report.query.group_by.name(),
        at: report.at,
        calls: report.calls,
        minutes_in_call: report.minutes_in_call,
        groups: &report.groups,
    }))
}

async fn sessions(
    caller: Caller,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let query = period(&req, &state, UsageGrouping::Room)?;
    let sessions = state.services.usage.sessions(&caller.0, query).await?;
    let mut body = String::with_capacity(SESSIONS_CSV_HEADER.len() + sessions.len() * 96);
    body.push_str(SESSIONS_CSV_HEADER);
    for session in &sessions {
        session.write_csv(&mut body);
    }
    Ok(HttpResponse::Ok()
        .insert_header((header::CONTENT_TYPE, "text/csv; charset=utf-8"))
        .insert_header((
            header::CONTENT_DISPOSITION,
            "attachment; filename=\"call-sessions.csv\"",
        ))
        .body(body))
}

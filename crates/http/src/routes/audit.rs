//! `GET /api/auditlog`: the enterprise's audit trail, newest first, one page per request
//! (continued through `X-Next-Cursor` and `Link`, as the endpoint list's pages).

use crate::AppState;
use crate::caller::{Caller, query_param, single_query_param};
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_domain::ErrorKind as E;
use roomlink_domain::access::Operation as Op;
use roomlink_domain::audit::{AuditFilter, AuditRecord, MAX_AUDIT_PAGE};
use roomlink_domain::endpoint::page::ListPosition;
use roomlink_domain::error::Error;
use serde::Serialize;

/// Entries per page when the request names no `limit`.
const DEFAULT_PAGE: usize = 100;

const FILTERS: [&str; 4] = ["targetId", "actor", "from", "to"];

pub(super) const LIST: Operation = Operation {
    method: Method::Get,
    path: "/api/auditlog",
    handler: |route| route.to(list),
    access: Access::Caller(Op::ListAuditLog),
    doc: Doc::Described(Description {
        id: "auditlog.list",
        tag: Tag::Enterprise,
        summary: "The audit trail",
        description: "Who changed which record and who drove which room: every write, token \
            creation or deletion, listener change and control command of the enterprise, \
            with its outcome, newest first. One page per request (`limit`, default 100); the \
            next page's cursor is in the `X-Next-Cursor` and `Link` headers, absent on the \
            last page. Filters combine.",
        params: &[
            Param::Query("limit"),
            Param::Query("cursor"),
            Param::Query("targetId"),
            Param::Query("actor"),
            Param::Query("from"),
            Param::Query("to"),
        ],
        body: Body::None,
        success: Success::JsonList("AuditEntry"),
        errors: &[E::Invalid],
    }),
};

/// An entry as answered: its position is its id (and the cursor after it).
#[derive(Serialize)]
struct EntryView<'a> {
    id: String,
    #[serde(flatten)]
    entry: &'a roomlink_domain::audit::AuditEntry,
}

impl<'a> From<&'a AuditRecord> for EntryView<'a> {
    fn from(record: &'a AuditRecord) -> Self {
        EntryView {
            id: record.position.to_cursor(),
            entry: &record.entry,
        }
    }
}

async fn list(
    caller: Caller,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let limit = match single_query_param(&req, "limit")? {
        None => DEFAULT_PAGE,
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_AUDIT_PAGE).contains(n))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "limit: expected a whole number from 1 to {MAX_AUDIT_PAGE}"
                ))
            })?,
    };
    let before = single_query_param(&req, "cursor")?
        .as_deref()
        .map(ListPosition::from_cursor)
        .transpose()?;
    let filter = AuditFilter {
        target_id: query_param(&req, "targetId"),
        actor: query_param(&req, "actor"),
        from: time_param(&req, "from")?,
        to: time_param(&req, "to")?,
    };
    let page = state
        .services
        .audit_log
        .page(&caller.0, filter, before, limit)
        .await?;
    let mut response = HttpResponse::Ok();
    if let Some(next) = page.next {
        let cursor = next.to_cursor();
        response.insert_header(("X-Next-Cursor", cursor.as_str()));
        response.insert_header((header::LINK, next_link(&req, limit, &cursor)));
    }
    let entries: Vec<EntryView<'_>> = page.entries.iter().map(EntryView::from).collect();
    Ok(response.json(entries))
}

/// Milliseconds since the epoch; `Invalid` otherwise.
pub(super) fn time_param(req: &HttpRequest, name: &str) -> Result<Option<i64>, Error> {
    query_param(req, name)
        .map(|text| {
            text.parse::<i64>().ok().filter(|n| *n >= 0).ok_or_else(|| {
                Error::invalid(format!(
                    "{name}: expected milliseconds since the epoch (a whole number)"
                ))
            })
        })
        .transpose()
}

/// The next page's URL: the same filters, the new cursor.
fn next_link(req: &HttpRequest, limit: usize, cursor: &str) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    query.append_pair("limit", &limit.to_string());
    query.append_pair("cursor", cursor);
    for name in FILTERS {
        if let Some(value) = query_param(req, name) {
            query.append_pair(name, &value);
        }
    }
    format!("</api/auditlog?{}>; rel=\"next\"", query.finish())
}

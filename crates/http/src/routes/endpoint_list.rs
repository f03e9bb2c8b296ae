//! `GET /api/endpoints`: the whole list as one JSON array, streamed page by page so that
//! memory does not grow with the enterprise; or, with `limit` and/or `cursor`, one page whose
//! continuation is in the `X-Next-Cursor` and `Link` headers.

use crate::AppState;
use crate::caller::{Caller, single_query_param};
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::http::header::{self, ContentType};
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_app::auth::Principal;
use roomlink_app::endpoint_lists::CachedList;
use roomlink_app::endpoints::WholeList;
use roomlink_domain::ErrorKind as E;
use roomlink_domain::access::Operation as Op;
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::endpoint::page::{EndpointPage, ListPosition, MAX_PAGE_SIZE};
use roomlink_domain::error::Error;
use std::sync::Arc;

/// Endpoints fetched per database round trip while streaming the rest of a long list.
const STREAM_PAGE: usize = 500;

pub(super) const LIST: Operation = Operation {
    method: Method::Get,
    path: "/api/endpoints",
    handler: |route| route.to(list),
    access: Access::Caller(Op::ListEndpoints),
    doc: Doc::Described(Description {
        id: "endpoints.list",
        tag: Tag::Endpoints,
        summary: "List endpoints",
        description: "Every endpoint of the enterprise, as one JSON array. With `limit` and/or \
            `cursor`, one page in a stable order; the next page's cursor is in the \
            `X-Next-Cursor` and `Link` headers, absent on the last page.",
        params: &[Param::Query("limit"), Param::Query("cursor")],
        body: Body::None,
        success: Success::JsonList("Endpoint"),
        errors: &[E::Invalid],
    }),
};

pub(super) const LIST_SLASH: Operation = LIST.also_at(
    "/api/endpoints/",
    "endpoints.listSlash",
    "List endpoints (trailing slash)",
);

async fn list(
    caller: Caller,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let limit = single_query_param(&req, "limit")?;
    let cursor = single_query_param(&req, "cursor")?;
    if limit.is_none() && cursor.is_none() {
        return stream_all(caller.0, state).await;
    }
    let limit = match limit {
        None => MAX_PAGE_SIZE,
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_PAGE_SIZE).contains(n))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "limit: expected a whole number from 1 to {MAX_PAGE_SIZE}"
                ))
            })?,
    };
    let after = cursor
        .as_deref()
        .map(ListPosition::from_cursor)
        .transpose()?;
    let page = state
        .services
        .endpoints
        .page(&caller.0, after, limit)
        .await?;
    let mut response = HttpResponse::Ok();
    if let Some(next) = page.next {
        let cursor = next.to_cursor();
        response.insert_header(("X-Next-Cursor", cursor.as_str()));
        response.insert_header((
            header::LINK,
            format!("</api/endpoints?limit={limit}&cursor={cursor}>; rel=\"next\""),
        ));
    }
    Ok(response.json(page.endpoints))
}

/// Appends `endpoints` to a JSON array being written (`first` when nothing precedes them).
fn write_items(out: &mut Vec<u8>, endpoints: &[Endpoint], mut first: bool) -> Result<(), Error> {
    for e in endpoints {
        if !first {
            out.push(b',');
        }
        first = false;
        serde_json::to_writer(&mut *out, e)
            .map_err(|e| Error::internal(format!("endpoint serialization: {e}")))?;
    }
    Ok(())
}

/// A cached list's bytes as a response body, without copying them.
pub(super) struct ListBytes(pub Arc<CachedList>);

impl AsRef<[u8]> for ListBytes {
    fn as_ref(&self) -> &[u8] {
        self.0.json()
    }
}

struct Walk {
    principal: Principal,
    state: web::Data<AppState>,
    next: Option<ListPosition>,
}

async fn stream_all(principal: Principal, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    // The list is read (or found current in the cache) before answering, so that a refusal or
    // an unavailable database is still a catalog error; a list too long to cache is streamed
    // on from where that read stopped.
    let (head, next) = match state.services.endpoints.whole_list(&principal).await? {
        WholeList::Complete(list) => {
            return Ok(HttpResponse::Ok()
                .content_type(ContentType::json())
                .body(Bytes::from_owner(ListBytes(list))));
        }
        WholeList::Streaming { head, next } => (head, next),
    };
    let walk = Walk {
        principal,
        state,
        next: Some(next),
    };
    let rest = futures::stream::unfold(Some(walk), |walk| async move {
        let mut walk = walk?;
        let after = walk.next?;
        let page: Result<EndpointPage, Error> = walk
            .state
            .services
            .endpoints
            .page(&walk.principal, Some(after), STREAM_PAGE)
            .await;
        let page = match page {
            Ok(page) => page,
            Err(e) => {
                // Headers are gone: all that is left is to cut the response short.
                tracing::error!(error = %e, "endpoint list stream failed");
                return Some((
                    Err(actix_web::error::ErrorInternalServerError("list")),
                    None,
                ));
            }
        };
        let mut chunk = Vec::with_capacity(page.endpoints.len() * 512 + 2);
        if let Err(e) = write_items(&mut chunk, &page.endpoints, false) {
            tracing::error!(error = %e, "endpoint list stream failed");
            return Some((
                Err(actix_web::error::ErrorInternalServerError("list")),
                None,
            ));
        }
        walk.next = page.next;
        if walk.next.is_none() {
            chunk.push(b']');
        }
        Some((Ok::<_, actix_web::Error>(Bytes::from(chunk)), Some(walk)))
    });
    let head = futures::stream::once(async move { Ok::<_, actix_web::Error>(Bytes::from(head)) });
    Ok(HttpResponse::Ok()
        .content_type(ContentType::json())
        .streaming(futures::StreamExt::chain(head, rest)))
}

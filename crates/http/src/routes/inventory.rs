//! `GET /api/endpoints/{id}/inventory` (what one room system said about itself) and
//! `GET /api/inventory` (the fleet's, filtered, one page per request continued through
//! `X-Next-Cursor` and `Link` as the audit log's).

use crate::AppState;
use crate::caller::{Caller, query_param, single_query_param};
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_domain::ErrorKind as E;
use roomlink_domain::access::Operation as Op;
use roomlink_domain::error::Error;
use roomlink_domain::ids::{EndpointId, ListenerServiceId};
use roomlink_domain::inventory::{InventoryFilter, MAX_PAGE};
use serde_json::json;

pub(super) const GET: Operation = Operation {
    method: Method::Get,
    path: "/api/endpoints/{id}/inventory",
    handler: |route| route.to(get),
    access: Access::Caller(Op::GetInventory),
    doc: Doc::Described(Description {
        id: "inventory.get",
        tag: Tag::Fleet,
        summary: "What one room system says about itself",
        description: "Product, model, serial number, software version and release date, \
            uptime, network addresses and connected peripherals, as the room system reported \
            them at `readAt`, read through its listener (version 3.3.0 or later) during the \
            status poll rounds, every `inventory.refresh_minutes`. `lastFailure` says why the \
            last attempt failed (the last good read is kept); everything is `null` while no \
            read has been tried. `inventory.notReported` names what the room's driver cannot \
            read from that kind of device.",
        params: &[Param::ENDPOINT_ID],
        body: Body::None,
        success: Success::Json("EndpointInventory"),
        errors: &[E::NotFound],
    }),
};

pub(super) const LIST: Operation = Operation {
    method: Method::Get,
    path: "/api/inventory",
    handler: |route| route.to(list),
    access: Access::Caller(Op::ListInventory),
    doc: Doc::Described(Description {
        id: "inventory.list",
        tag: Tag::Fleet,
        summary: "The fleet's inventory",
        description: "Every room whose inventory was tried, in endpoint id order, one page per \
            request (`limit`, default 100); the next page's cursor is in the `X-Next-Cursor` \
            and `Link` headers, absent on the last page. Filters combine and match exactly: \
            `softwareVersion` and `model` (the platform, else the product name) on the last \
            good read, `listenerServiceId` on the room's listener now.",
        params: &[
            Param::Query("limit"),
            Param::Query("after"),
            Param::Query("softwareVersion"),
            Param::Query("model"),
            Param::Query("listenerServiceId"),
        ],
        body: Body::None,
        success: Success::JsonList("EndpointInventory"),
        errors: &[E::Invalid],
    }),
};

const FILTERS: [&str; 3] = ["softwareVersion", "model", "listenerServiceId"];

async fn get(
    caller: Caller,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(&id)?;
    let record = state
        .services
        .inventory
        .endpoint_inventory(&caller.0, &id)
        .await?;
    Ok(match record {
        // Every field present, `null` when unknown.
        Some(record) => HttpResponse::Ok().json(&record),
        None => HttpResponse::Ok().json(json!({
            "endpointId": id.as_str(), "listenerServiceId": null, "readAt": null,
            "attemptedAt": null, "inventory": null, "lastFailure": null,
        })),
    })
}

/// A whole number; its range is the use case's (`inventory::page_size`).
fn limit_param(req: &HttpRequest) -> Result<Option<usize>, Error> {
    single_query_param(req, "limit")?
        .map(|text| {
            text.parse::<usize>().map_err(|_| {
                Error::invalid(format!(
                    "limit: expected a whole number from 1 to {MAX_PAGE}"
                ))
            })
        })
        .transpose()
}

async fn list(
    caller: Caller,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let limit = limit_param(&req)?;
    let after = single_query_param(&req, "after")?
        .map(|text| {
            EndpointId::parse(&text)
                .map_err(|_| Error::invalid("after: expected an endpoint id (X-Next-Cursor)"))
        })
        .transpose()?;
    let listener = query_param(&req, "listenerServiceId")
        .map(|text| {
            ListenerServiceId::parse(&text)
                .map_err(|_| Error::invalid("listenerServiceId: expected a listener id"))
        })
        .transpose()?;
    let filter = InventoryFilter {
        software_version: query_param(&req, "softwareVersion"),
        model: query_param(&req, "model"),
        listener,
    };
    let page = state
        .services
        .inventory
        .page(&caller.0, &filter, after, limit)
        .await?;
    let mut response = HttpResponse::Ok();
    if let Some(next) = &page.next {
        let limit = limit.unwrap_or(roomlink_domain::inventory::DEFAULT_PAGE);
        response.insert_header(("X-Next-Cursor", next.as_str()));
        response.insert_header((header::LINK, next_link(&req, limit, next.as_str())));
    }
    Ok(response.json(&page.records))
}

/// The next page's URL: the same filters, after the page's last room.
fn next_link(req: &HttpRequest, limit: usize, after: &str) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    query.append_pair("limit", &limit.to_string());
    query.append_pair("after", after);
    for name in FILTERS {
        if let Some(value) = query_param(req, name) {
            query.append_pair(name, &value);
        }
    }
    format!("</api/inventory?{}>; rel=\"next\"", query.finish())
}

//! `GET /api/endpoints/csv`: every endpoint of the enterprise as a CSV file that the bulk load
//! (`PUT /api/endpoints/csv`) reads back unchanged. The format and its formula guard are the
//! domain's (`rules::csv::export`); this handler only pages through the list and streams it.

use crate::AppState;
use crate::caller::{Caller, single_query_param};
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::http::header;
use actix_web::web::Bytes;
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_app::auth::Principal;
use roomlink_domain::access::Operation as Op;
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::endpoint::page::ListPosition;
use roomlink_domain::error::{Error, ErrorKind as E};
use roomlink_domain::rules::csv::export as csv_export;

/// Endpoints fetched per database round trip, as the JSON list does.
const PAGE: usize = 500;

struct Walk {
    principal: Principal,
    state: web::Data<AppState>,
    next: Option<ListPosition>,
    with_inventory: bool,
}

/// The rows of one page of endpoints, with their inventory records when asked.
async fn rows(
    state: &AppState,
    principal: &Principal,
    endpoints: &[Endpoint],
    with_inventory: bool,
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    let inventories = if with_inventory {
        let ids: Vec<_> = endpoints.iter().map(|e| e.id().clone()).collect();
        Some(
            state
                .services
                .inventory
                .of_endpoints(principal, &ids)
                .await?,
        )
    } else {
        None
    };
    csv_export::write_rows(out, endpoints, inventories.as_ref())
}

/// `include=inventory` adds what each room last reported; nothing else can be included.
fn with_inventory(req: &HttpRequest) -> Result<bool, Error> {
    match single_query_param(req, "include")?.as_deref() {
        None => Ok(false),
        Some("inventory") => Ok(true),
        Some(_) => Err(Error::invalid(
            "include: the export can include `inventory` only",
        )),
    }
}

pub(super) const EXPORT: Operation = Operation {
    method: Method::Get,
    path: "/api/endpoints/csv",
    handler: |route| route.to(export),
    access: Access::Caller(Op::ExportEndpoints),
    doc: Doc::Described(Description {
        id: "endpoints.exportCsv",
        tag: Tag::Endpoints,
        summary: "Export endpoints as CSV",
        description: "Every endpoint as a CSV attachment that `PUT /api/endpoints/csv` reads \
            back unchanged (passwords blank). Cells a spreadsheet would run as a formula get a \
            leading apostrophe. With `include=inventory`, read-only `inventory.*` columns \
            follow: what each room reported at its last inventory read (the upload ignores \
            them).",
        params: &[Param::Query("include")],
        body: Body::None,
        success: Success::Other("text/csv"),
        errors: &[E::Invalid],
    }),
};

async fn export(
    caller: Caller,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let principal = caller.0;
    let with_inventory = with_inventory(&req)?;
    // The first page is read before answering, so that a refusal or an unavailable database
    // is still a catalog error.
    let first = state
        .services
        .endpoints
        .export_page(&principal, None, PAGE)
        .await?;
    let mut head = csv_export::header(with_inventory).into_bytes();
    rows(
        &state,
        &principal,
        &first.endpoints,
        with_inventory,
        &mut head,
    )
    .await?;
    let mut response = HttpResponse::Ok();
    response
        .insert_header((header::CONTENT_TYPE, csv_export::CONTENT_TYPE))
        .insert_header((
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{}\"", csv_export::FILE_NAME),
        ));
    if first.next.is_none() {
        return Ok(response.body(head));
    }
    let walk = Walk {
        principal,
        state,
        next: first.next,
        with_inventory,
    };
    let rest = futures::stream::unfold(Some(walk), |walk| async move {
        let mut walk = walk?;
        let after = walk.next?;
        let chunk = async {
            let page = walk
                .state
                .services
                .endpoints
                .export_page(&walk.principal, Some(after), PAGE)
                .await?;
            let mut chunk = Vec::with_capacity(page.endpoints.len() * 256);
            rows(
                &walk.state,
                &walk.principal,
                &page.endpoints,
                walk.with_inventory,
                &mut chunk,
            )
            .await?;
            Ok::<_, Error>((chunk, page.next))
        };
        match chunk.await {
            Ok((chunk, next)) => {
                walk.next = next;
                Some((Ok(Bytes::from(chunk)), Some(walk)))
            }
            Err(e) => {
                // Headers are gone: all that is left is to cut the response short.
                tracing::error!(error = %e, "endpoint CSV export stream failed");
                Some((
                    Err(actix_web::error::ErrorInternalServerError("export")),
                    None,
                ))
            }
        }
    });
    let head = futures::stream::once(async move { Ok::<_, actix_web::Error>(Bytes::from(head)) });
    Ok(response.streaming(futures::StreamExt::chain(head, rest)))
}

//! The route table. Each operation is declared once, beside its handler, in its area's module
//! (the types: [`crate::table`]); [`TABLE`] orders them, [`configure`] registers them with actix and `openapi` describes
//! them. A path answers its own methods; any other method is `MethodNotAllowed` naming the
//! allowed ones, and any unknown path is `NotFound`.

mod control;
mod csv_export;
mod docs;
mod endpoint_list;
mod endpoints;
mod enterprise;
mod listeners;
mod pairing;
mod probes;
#[cfg(test)]
mod tests;
mod tokens;

use crate::error::ApiError;
use crate::table::Operation;
use actix_web::{HttpRequest, HttpResponse, Resource, web};
use roomlink_domain::{Error, ErrorKind};
use std::sync::Arc;

/// Every operation, in registration order. actix tries resources in the order they are
/// registered, so a path comes before any pattern that also matches it
/// (`/api/endpoints/status` and `/api/endpoints/csv` before `/api/endpoints/{id}`). A path's
/// operations, in this order, are the `allowed` list of its `MethodNotAllowed`.
pub(crate) const TABLE: &[Operation] = &[
    probes::HEALTHZ,
    probes::READYZ,
    crate::metrics::SERVE,
    docs::DOCUMENT,
    docs::REFERENCE_ROOT,
    docs::REFERENCE_FILE,
    tokens::LIST,
    tokens::CREATE,
    tokens::GET,
    tokens::DELETE,
    endpoint_list::LIST,
    endpoints::INSERT,
    endpoint_list::LIST_SLASH,
    endpoints::INSERT_SLASH,
    control::STATUSES,
    csv_export::EXPORT,
    endpoints::BULK_PUT,
    endpoints::BULK_POST,
    endpoints::GET,
    endpoints::REPLACE,
    endpoints::PATCH,
    endpoints::DELETE,
    control::STATUS,
    control::JOIN,
    control::SEND_DTMF,
    control::HANG_UP,
    control::MUTE,
    control::UNMUTE,
    pairing::CURRENT,
    pairing::VIEW,
    pairing::PAIRED,
    control::FAILURES,
    control::FAILURES_SLASH,
    enterprise::GET_SELF,
    enterprise::UPDATE_SELF,
    listeners::LIST,
    listeners::CREATE,
    listeners::GET,
    listeners::REPLACE,
    listeners::DELETE,
];

/// The table grouped by path, paths in first-seen order and each path's operations in table
/// order: one actix resource per path.
pub(crate) fn by_path() -> Vec<(&'static str, Vec<&'static Operation>)> {
    let mut paths: Vec<(&'static str, Vec<&'static Operation>)> = Vec::new();
    for op in TABLE {
        match paths.iter_mut().find(|(path, _)| *path == op.path) {
            Some((_, ops)) => ops.push(op),
            None => paths.push((op.path, vec![op])),
        }
    }
    paths
}

/// A resource at `path` that refuses methods other than those routed, listing them.
fn resource(path: &str, allowed: Vec<&'static str>) -> Resource {
    let allowed: Arc<[&'static str]> = allowed.into();
    web::resource(path).default_service(web::to(move |req: HttpRequest| {
        let allowed = allowed.clone();
        async move {
            let method = req.method().to_string();
            Err::<HttpResponse, _>(ApiError(
                Error::new(
                    ErrorKind::MethodNotAllowed,
                    format!("{method} is not allowed here; use {}.", allowed.join(", ")),
                )
                .with("method", method)
                .with("allowed", allowed.to_vec()),
            ))
        }
    }))
}

/// Any path no route matches.
/// The path is not echoed: it may hold a token (/api/auth/accesstokens/{token}).
pub async fn not_found() -> Result<HttpResponse, ApiError> {
    Err(ApiError(Error::not_found(
        "Resource",
        "(the requested path)",
    )))
}

pub fn configure(cfg: &mut web::ServiceConfig) {
    for (path, ops) in by_path() {
        let allowed = ops.iter().map(|op| op.method.as_str()).collect();
        let resource = ops.iter().fold(resource(path, allowed), |resource, op| {
            resource.route((op.handler)(web::method(op.method.actix())))
        });
        cfg.service(resource);
    }
}

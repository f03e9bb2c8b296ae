//! The OpenAPI 3.1 description of the HTTP interface, built from code with utoipa's builders.
//!
//! Nothing here lists the operations: they are the route table's (`routes::TABLE`), each
//! described beside its handler. What can drift is generated: the endpoint schemas come from
//! the domain's field table, the enumerations from the domain's value lists, every error
//! response from the catalog (`ErrorKind`: status, code, name) and the roles of each operation
//! from the domain's access rules. `tests/openapi.rs` checks `docs/openapi.json` against
//! [`document_json`].

mod errors;
mod operation;
mod params;
mod primitives;
mod roles;
mod schemas;
mod security;
#[cfg(test)]
mod tests;

use crate::table::{Description, Operation, Tag};
use std::collections::BTreeMap;
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{InfoBuilder, OpenApi, OpenApiBuilder, Paths};

/// Where the document is served (no authentication), and the browsable reference.
pub const DOCUMENT_PATH: &str = "/api/openapi.json";
pub const REFERENCE_PATH: &str = "/api/docs/";

const INTRODUCTION: &str = "Provisioning and remote control of video-conferencing room \
systems (endpoints), access tokens and Zero Touch pairing.\n\n\
**Authentication.** An access token in the `X-Access-Token` header or the `accesstoken` query \
parameter, or Basic credentials (slower: a password hash per request). Tokens come from \
`POST /api/auth/accesstokens`.\n\n\
**Errors.** Every failure is an `ErrorBody` whose status, `errorCode` and `errorName` are fixed \
per catalog entry (see the `ErrorBody` schema). Each operation lists, per status, the catalog \
entries it can answer. Any path not described here is `NotFound` (404); a described path with \
another method is `MethodNotAllowed` (405).";

/// The described operations of `table`, in its order (the hidden ones left out).
fn described(
    table: &'static [Operation],
) -> impl Iterator<Item = (&'static Operation, &'static Description)> {
    table
        .iter()
        .filter_map(|op| op.description().map(|description| (op, description)))
}

/// The whole document of `table` (the route table: `routes::TABLE`, handed in by the crate
/// root so that the routes can serve the document without a circle between the two).
pub fn document(table: &'static [Operation]) -> OpenApi {
    let mut paths = Paths::new();
    let mut error_responses = BTreeMap::new();
    for (op, description) in described(table) {
        paths.add_path_operation(
            op.path,
            vec![operation::http_method(op.method)],
            operation::operation(op, description, table, &mut error_responses),
        );
    }
    OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("roomlink")
                .version(env!("CARGO_PKG_VERSION"))
                .description(Some(INTRODUCTION))
                .build(),
        )
        .paths(paths)
        .components(Some(schemas::components(error_responses)))
        .security(Some(security::caller_security()))
        .tags(Some(Tag::ALL.map(|tag| {
            TagBuilder::new()
                .name(tag.name())
                .description(Some(tag.description()))
                .build()
        })))
        .build()
}

/// The document as pretty JSON with a final newline, as `docs/openapi.json` holds it (and as
/// it is served). The builders keep declaration order, so the text only changes when the
/// interface does.
pub fn document_json(table: &'static [Operation]) -> String {
    let text = serde_json::to_string_pretty(&document(table)).unwrap_or_else(|e| {
        // Serializing plain maps and strings cannot fail; say so rather than panic.
        format!("{{\"error\": \"the OpenAPI document could not be serialized: {e}\"}}")
    });
    // utoipa 5 writes a Link's `operationId` in snake case, which no tool reads. The key
    // occurs nowhere else; renamed in the text because a `serde_json::Value` would lose the
    // declaration order.
    let mut text = text.replace("\"operation_id\": ", "\"operationId\": ");
    text.push('\n');
    text
}

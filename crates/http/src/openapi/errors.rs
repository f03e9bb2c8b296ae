//! Error responses, all from the catalog (`ErrorKind`: status, code, name): the `ErrorBody`
//! schema, and per operation the catalog entries it can answer, grouped by status.

use super::primitives::{enumeration, integer, json_content, object, prop, reference, string};
use crate::table::{Access, Body, Description};
use roomlink_domain::ErrorKind as E;
use std::collections::BTreeMap;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::schema::{AllOfBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::{Ref, RefOr, Response, ResponseBuilder};

/// The catalog errors an operation can answer, by status: its own, plus those of its access
/// and body, plus those any request can meet (rate limits, header size, an unexpected failure).
pub(super) fn errors_of(access: Access, description: &Description) -> BTreeMap<u16, Vec<E>> {
    let mut kinds: Vec<E> = description.errors.to_vec();
    match access {
        Access::Public => {}
        // Token look-ups and password checks read the store.
        Access::Caller(_) | Access::TokenCreation => kinds.extend([
            E::NotAuthenticated,
            E::BadCredentialsException,
            E::Forbidden,
            E::StorageUnavailable,
        ]),
        Access::ListenerSecret => kinds.extend([
            E::NotAuthenticated,
            E::BadCredentialsException,
            E::StorageUnavailable,
        ]),
    }
    match description.body {
        Body::None => {}
        Body::Json(_) => kinds.extend([
            E::UnsupportedMediaType,
            E::PayloadTooLarge,
            E::JsonParseException,
            E::JsonMappingException,
            E::Invalid,
        ]),
        Body::Csv => kinds.extend([E::UnsupportedMediaType, E::PayloadTooLarge]),
    }
    kinds.extend([
        E::TooManyRequests,
        E::RequestHeaderFieldsTooLarge,
        E::InternalError,
    ]);
    let mut by_status: BTreeMap<u16, Vec<E>> = BTreeMap::new();
    for kind in kinds {
        let list = by_status.entry(kind.status()).or_default();
        if !list.contains(&kind) {
            list.push(kind);
        }
    }
    for list in by_status.values_mut() {
        list.sort_by_key(|k| k.name());
    }
    by_status
}

/// The error responses of an operation, by status. Each is a shared component
/// (`error_responses`), one per status and set of catalog entries, so that the many operations
/// answering the same errors refer to one description.
pub(super) fn error_references(
    access: Access,
    description: &Description,
    error_responses: &mut BTreeMap<String, Response>,
) -> Vec<(u16, RefOr<Response>)> {
    errors_of(access, description)
        .into_iter()
        .map(|(status, kinds)| {
            let names: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
            let name = format!("Error{status}_{}", names.join("_"));
            error_responses
                .entry(name.clone())
                .or_insert_with(|| error_response(status, &kinds));
            (status, RefOr::Ref(Ref::from_response_name(name)))
        })
        .collect()
}

/// An error response: the `ErrorBody` schema, its `errorName` narrowed to `kinds`.
fn error_response(status: u16, kinds: &[E]) -> Response {
    let mut description = String::from("Catalog errors with this status:");
    for kind in kinds {
        description += &format!("\n- `{}` (errorCode {})", kind.name(), kind.code());
    }
    let narrowed = ObjectBuilder::new().property(
        "errorName",
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(kinds.iter().map(|k| k.name()))),
    );
    let schema = AllOfBuilder::new()
        .item(reference("ErrorBody"))
        .item(narrowed)
        .build();
    let mut response = ResponseBuilder::new().description(description).content(
        "application/json",
        json_content(Schema::from(schema).into()),
    );
    if status == 401 {
        response = response.header(
            "WWW-Authenticate",
            HeaderBuilder::new()
                .schema(string())
                .description(Some("`Basic realm=\"roomlink\"`"))
                .build(),
        );
    }
    if status == 429 {
        response = response.header(
            "Retry-After",
            HeaderBuilder::new()
                .schema(ObjectBuilder::new().schema_type(Type::Integer))
                .description(Some("Seconds until a retry can succeed."))
                .build(),
        );
    }
    response.build()
}

/// The body of every failure, with the whole catalog as a table.
pub(super) fn error_body() -> Schema {
    let mut table = String::from(
        "The body of every failure. Status, `errorCode` and `errorName` are fixed per catalog \
         entry:\n\n| errorName | status | errorCode |\n|---|---|---|",
    );
    for kind in E::ALL {
        table += &format!(
            "\n| {} | {} | {} |",
            kind.name(),
            kind.status(),
            kind.code()
        );
    }
    object(
        &table,
        vec![
            prop("errorCode", integer(false), true),
            prop(
                "errorName",
                enumeration(&E::ALL.iter().map(|k| k.name()).collect::<Vec<_>>(), false),
                true,
            ),
            prop("errorMessage", string(), true),
            prop(
                "errorDetails",
                ObjectBuilder::new()
                    .schema_type(Type::Object)
                    .description(Some("Keys depend on the error (see the catalog).")),
                true,
            ),
        ],
    )
}

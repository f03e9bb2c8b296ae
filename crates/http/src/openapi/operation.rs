//! One entry of the route table as an OpenAPI operation: parameters, request body, success
//! and error responses, the roles it needs, and links to the operations that take what it
//! creates.

use super::errors::error_references;
use super::params::parameter;
use super::primitives::{SPACE, SPACE_IN_LINE, json_content, reference, string};
use super::roles::{roles_allowed, roles_sentence};
use super::security::security_of;
use crate::table::{Access, Body, Description, Method, Operation, Param, Success};
use roomlink_domain::endpoint::Field;
use serde_json::Value;
use std::collections::BTreeMap;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::link::{Link, LinkBuilder};
use utoipa::openapi::path::{HttpMethod, OperationBuilder};
use utoipa::openapi::request_body::{RequestBody, RequestBodyBuilder};
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
use utoipa::openapi::{ContentBuilder, Required, Response, ResponseBuilder, ResponsesBuilder};

pub(super) fn http_method(method: Method) -> HttpMethod {
    match method {
        Method::Get => HttpMethod::Get,
        Method::Post => HttpMethod::Post,
        Method::Put => HttpMethod::Put,
        Method::Patch => HttpMethod::Patch,
        Method::Delete => HttpMethod::Delete,
    }
}

/// The operation `op` describes; its error responses go to the shared `error_responses`.
pub(super) fn operation(
    op: &Operation,
    description: &Description,
    table: &'static [Operation],
    error_responses: &mut BTreeMap<String, Response>,
) -> utoipa::openapi::path::Operation {
    let mut text = description.description.to_owned();
    let mut builder = OperationBuilder::new()
        .operation_id(Some(description.id))
        .tag(description.tag.name())
        .summary(Some(description.summary));
    if let Access::Caller(domain_op) = op.access {
        let roles = roles_allowed(domain_op);
        text = format!("{text}\n\n{}", roles_sentence(domain_op, &roles));
        let names: Vec<&str> = roles.iter().map(|r| r.as_str()).collect();
        builder = builder.extensions(Some(ExtensionsBuilder::new().add("x-roles", names).build()));
    }
    builder = builder.description(Some(text));
    if let Some(security) = security_of(op.access) {
        builder = builder.securities(Some(security));
    }
    for param in description.params {
        builder = builder.parameter(parameter(*param));
    }
    if let Some(body) = request_body(description.body) {
        builder = builder.request_body(Some(body));
    }
    let mut responses = ResponsesBuilder::new().response(
        success_status(description.success),
        success(description, table),
    );
    for (status, response) in error_references(op.access, description, error_responses) {
        responses = responses.response(status.to_string(), response);
    }
    builder.responses(responses.build()).build()
}

fn request_body(body: Body) -> Option<RequestBody> {
    match body {
        Body::None => None,
        Body::Json(schema) => Some(
            RequestBodyBuilder::new()
                .required(Some(Required::True))
                .content(
                    "application/json",
                    ContentBuilder::new()
                        .schema(Some(reference(schema)))
                        .build(),
                )
                .build(),
        ),
        Body::Csv => {
            let text = ContentBuilder::new()
                .schema(Some(
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .description(Some(
                            "CSV text, UTF-8, at most 1 MiB. The first line is the header: \
                             endpoint field names, `id` and `password`, each at most once, in \
                             any case and order, optionally double-quoted. Rows follow; a row \
                             that cannot be applied is skipped, never refused.",
                        ))
                        .min_length(Some(1))
                        .max_length(Some(roomlink_domain::rules::csv::MAX_BYTES))
                        .pattern(Some(csv_pattern())),
                ))
                .example(Some(Value::String(
                    "id,name,ipaddress,port,password\r\n\"\",\"Huddle room\",\"10.1.2.3\",\"22\",\"room-secret\"\r\n"
                        .to_owned(),
                )))
                .build();
            let mut body = RequestBodyBuilder::new().required(Some(Required::True));
            for media in crate::body::CSV_TYPES {
                body = body.content(media, text.clone());
            }
            Some(body.build())
        }
    }
}

/// What `CsvUpload::parse` takes as a whole: an optional byte-order mark, a header of known
/// column names (each in any case, with blanks around it, or double-quoted), then anything
/// after a line end, since rows are skipped rather than refused. A column named twice is refused too, which a
/// pattern cannot say (the conformance hooks list it).
fn csv_pattern() -> String {
    let any_case = |name: &str| -> String {
        name.chars()
            .map(|c| format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase()))
            .collect()
    };
    let names: Vec<String> = ["id", "password"]
        .into_iter()
        .chain(Field::ALL.iter().map(|f| f.json_name()))
        .map(any_case)
        .collect();
    let name = format!("(?:{})", names.join("|"));
    // Names are trimmed as `str::trim` does; inside quotes, line ends are blanks too, and
    // what follows a closing quote joins the cell.
    let quoted = format!("\"[{SPACE}]*{name}[{SPACE}]*");
    let cell =
        format!("(?:{quoted}\"[{SPACE_IN_LINE}]*|[{SPACE_IN_LINE}]*{name}[{SPACE_IN_LINE}]*)");
    // The reader skips blank lines before the header, and a quote left open at the end of
    // the text closes there.
    format!("^\\uFEFF?[\\r\\n]*(?:{cell},)*(?:{cell}(?:[\\r\\n][\\s\\S]*)?|{quoted})$")
}

fn success_status(success: Success) -> &'static str {
    match success {
        Success::NoContent => "204",
        Success::Upgrade => "101",
        Success::Created(_) => "201",
        Success::Accepted(_) => "202",
        Success::Json(_) | Success::JsonList(_) | Success::Other(_) => "200",
    }
}

fn success(description: &Description, table: &'static [Operation]) -> Response {
    match description.success {
        Success::NoContent => ResponseBuilder::new().description("Done.").build(),
        Success::Upgrade => ResponseBuilder::new()
            .description("Switching Protocols: the connection is now the listener's WebSocket.")
            .build(),
        Success::Json(schema) | Success::Created(schema) | Success::Accepted(schema) => {
            let mut response = ResponseBuilder::new()
                .description("OK.")
                .content("application/json", json_content(reference(schema)));
            if let Success::Created(_) = description.success {
                response = response.description("Created.").header(
                    "Location",
                    HeaderBuilder::new()
                        .schema(string())
                        .description(Some("The new record's URL."))
                        .build(),
                );
            }
            if let Success::Accepted(_) = description.success {
                response = response.description("Accepted: the job runs on.").header(
                    "Location",
                    HeaderBuilder::new()
                        .schema(string())
                        .description(Some("The job's URL."))
                        .build(),
                );
            }
            for (name, link) in links_from(description.id, table) {
                response = response.link(name, link);
            }
            response.build()
        }
        Success::JsonList(schema) => {
            let mut response = ResponseBuilder::new().description("OK.").content(
                "application/json",
                json_content(ArrayBuilder::new().items(reference(schema)).into()),
            );
            if description.params.contains(&Param::Query("limit")) {
                response = response
                    .header(
                        "X-Next-Cursor",
                        HeaderBuilder::new()
                            .schema(string())
                            .description(Some(
                                "The cursor of the next page; absent on the last page.",
                            ))
                            .build(),
                    )
                    .header(
                        "Link",
                        HeaderBuilder::new()
                            .schema(string())
                            .description(Some("`<...>; rel=\"next\"`: the next page's URL."))
                            .build(),
                    );
            }
            response.build()
        }
        Success::Other(media) => ResponseBuilder::new()
            .description("OK.")
            .content(
                media,
                ContentBuilder::new()
                    .schema(Some(ObjectBuilder::new().schema_type(
                        if media == "application/json" {
                            Type::Object
                        } else {
                            Type::String
                        },
                    )))
                    .build(),
            )
            .build(),
    }
}

/// Links from an operation that creates a record to the operations taking its `id`: how
/// clients (and test generators) go on from a created endpoint, listener, token or code.
fn links_from(id: &str, table: &'static [Operation]) -> Vec<(&'static str, Link)> {
    let (param, takes_id): (&str, fn(&str) -> bool) = match id {
        "endpoints.insert" | "endpoints.insertSlash" => ("id", |path| {
            // `{id}/pairingcode` takes a pairing code's id, not the endpoint's.
            path.starts_with("/api/endpoints/{id}") && !path.ends_with("/pairingcode")
        }),
        "listenerServices.create" => ("id", |path| path == "/api/listenerservices/{id}"),
        "templates.create" => ("id", |path| path == "/api/templates/{id}"),
        "auth.createAccessToken" => ("token", |path| path == "/api/auth/accesstokens/{token}"),
        "endpoints.currentPairingCode" => ("id", |path| path == "/api/endpoints/{id}/pairingcode"),
        _ => return Vec::new(),
    };
    super::described(table)
        .filter(|(target, _)| takes_id(target.path))
        .map(|(_, target)| {
            let link = LinkBuilder::new()
                .operation_id(target.id)
                .parameter(param, "$response.body#/id")
                .build();
            (target.id, link)
        })
        .collect()
}

//! The listener-service schemas, with the value shapes `listener::decode_listener` reads.

use super::endpoint::shape_schema;
use crate::openapi::primitives::{
    NO_CONTROL_PATTERN, Prop, boolean, enumeration, integer, object, prop, string, text, type_of,
};
use roomlink_domain::endpoint::value::{FieldValue, HttpUrl};
use roomlink_domain::endpoint::{EmailText, LongText, ShortText};
use roomlink_domain::listener::{SECRET_MAX_CHARS, SECRET_MIN_CHARS};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{Schema, Type};

/// The fields of a listener service; in a response every one is present (and `id` first).
fn listener_fields(response: bool) -> Vec<Prop> {
    let mut props = vec![
        prop("name", shape_schema(ShortText::SHAPE, false), true),
        prop(
            "connection",
            enumeration(&["inbound", "outbound"], false).description(Some(
                "`inbound` (the default): roomlink sends requests to `baseUrl` (required). \
                 `outbound`: the listener connects to roomlink (GET /api/listenerservices/{id}/connect) and \
                 has no `baseUrl` (null).",
            )),
            response,
        ),
        // Required for an inbound listener, null for an outbound one (said under `connection`).
        prop("baseUrl", shape_schema(HttpUrl::SHAPE, true), response),
        prop("assetId", shape_schema(ShortText::SHAPE, true), response),
        prop("externalId", shape_schema(ShortText::SHAPE, true), response),
        prop("location", shape_schema(LongText::SHAPE, true), response),
        prop(
            "pointOfContact",
            shape_schema(EmailText::SHAPE, true),
            response,
        ),
    ];
    if response {
        props.insert(0, prop("id", string(), true));
    }
    props
}

/// What a response adds about an outbound listener's connection.
fn connection_fields() -> Vec<Prop> {
    vec![
        prop(
            "connected",
            boolean()
                .schema_type(type_of(Type::Boolean, true))
                .description(Some(
                    "Outbound listeners: whether a connection is open on any roomlink \
                     instance. Null for inbound listeners.",
                )),
            true,
        ),
        prop(
            "connectedSince",
            integer(true).description(Some(
                "When the open connection was made (milliseconds since the Unix epoch), or null.",
            )),
            true,
        ),
        prop(
            "listenerVersion",
            text(true).description(Some(
                "The connected listener's version (its X-Listener-Version), or null.",
            )),
            true,
        ),
    ]
}

pub(super) fn listener_schemas() -> Vec<(&'static str, RefOr<Schema>)> {
    let mut shown = listener_fields(true);
    shown.extend(connection_fields());
    let mut created = listener_fields(true);
    created.push(prop(
        "secret",
        string().description(Some(
            "The generated shared secret: only in the creation response, only when generated.",
        )),
        false,
    ));
    let mut input = listener_fields(false);
    input.push(prop(
        "secret",
        text(true)
            .min_length(Some(SECRET_MIN_CHARS))
            .max_length(Some(SECRET_MAX_CHARS))
            .pattern(Some(NO_CONTROL_PATTERN))
            .write_only(Some(true))
            .description(Some(
                "The shared secret roomlink authenticates to the listener with; omitted: \
                 generated (POST) or kept (PUT).",
            )),
        false,
    ));
    vec![
        (
            "ListenerService",
            object(
                "A listener service (never its secret) and, for an outbound one, its connection.",
                shown,
            )
            .into(),
        ),
        (
            "ListenerServiceCreated",
            object(
                "A listener service just registered, with its generated secret.",
                created,
            )
            .into(),
        ),
        (
            "ListenerServiceInput",
            object(
                "A listener service to register or its replacement. An `id` is accepted on \
                 PUT only, equal to the path's.",
                input,
            )
            .into(),
        ),
    ]
}

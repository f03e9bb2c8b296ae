//! The listener-service schemas, with the value shapes `listener::decode_listener` reads.

use super::endpoint::shape_schema;
use crate::openapi::primitives::{NO_CONTROL_PATTERN, Prop, object, prop, string, text};
use roomlink_domain::endpoint::value::{FieldValue, HttpUrl};
use roomlink_domain::endpoint::{EmailText, LongText, ShortText};
use roomlink_domain::listener::{SECRET_MAX_CHARS, SECRET_MIN_CHARS};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

/// The fields of a listener service; in a response every one is present (and `id` first).
fn listener_fields(response: bool) -> Vec<Prop> {
    let mut props = vec![
        prop("name", shape_schema(ShortText::SHAPE, false), true),
        prop("baseUrl", shape_schema(HttpUrl::SHAPE, false), true),
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

pub(super) fn listener_schemas() -> Vec<(&'static str, RefOr<Schema>)> {
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
                "A listener service (never its secret).",
                listener_fields(true),
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

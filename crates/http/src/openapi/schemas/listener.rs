//! The listener-service schemas, with the value shapes `listener::decode_listener` reads: an
//! inbound and an outbound body, one of which a request sends.

use super::endpoint::{Use, shape_schema};
use crate::openapi::primitives::{
    NO_CONTROL_PATTERN, Prop, boolean, enumeration, integer, object, prop, reference, string, text,
    type_of,
};
use roomlink_domain::endpoint::value::{FieldValue, HttpUrl};
use roomlink_domain::endpoint::{EmailText, LongText, ShortText};
use roomlink_domain::listener::{SECRET_MAX_CHARS, SECRET_MIN_CHARS};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, OneOfBuilder, Schema, Type};

/// The fields of a listener service as a response shows them (every one present, `id` first).
fn listener_fields() -> Vec<Prop> {
    let response = |shape, nullable| shape_schema(shape, nullable, Use::Response);
    vec![
        prop("id", string(), true),
        prop("name", response(ShortText::SHAPE, false), true),
        prop(
            "connection",
            enumeration(&["inbound", "outbound"], false).description(Some(
                "`inbound`: roomlink sends requests to `baseUrl`. `outbound`: the listener \
                 connects to roomlink (GET /api/listenerservices/{id}/connect) and has no \
                 `baseUrl` (null).",
            )),
            true,
        ),
        prop("baseUrl", response(HttpUrl::SHAPE, true), true),
        prop("assetId", response(ShortText::SHAPE, true), true),
        prop("externalId", response(ShortText::SHAPE, true), true),
        prop("location", response(LongText::SHAPE, true), true),
        prop("pointOfContact", response(EmailText::SHAPE, true), true),
    ]
}

/// A listener body of one connection kind: `connection` and `baseUrl` as that kind takes them,
/// the other fields alike.
fn listener_input(description: &str, connection: Prop, base_url: Prop) -> Schema {
    let input = |shape| shape_schema(shape, true, Use::Input);
    object(
        description,
        vec![
            prop(
                "name",
                shape_schema(ShortText::SHAPE, false, Use::Input),
                true,
            ),
            connection,
            base_url,
            prop(
                "secret",
                text(true)
                    .min_length(Some(SECRET_MIN_CHARS))
                    .max_length(Some(SECRET_MAX_CHARS))
                    .pattern(Some(NO_CONTROL_PATTERN))
                    .write_only(Some(true))
                    .description(Some(
                        "The shared secret roomlink authenticates to the listener with; \
                         omitted or null: generated (POST) or kept (PUT).",
                    )),
                false,
            ),
            prop("assetId", input(ShortText::SHAPE), false),
            prop("externalId", input(ShortText::SHAPE), false),
            prop("location", input(LongText::SHAPE), false),
            prop("pointOfContact", input(EmailText::SHAPE), false),
        ],
    )
}

/// What a response adds about the listener's reachability.
fn connection_fields() -> Vec<Prop> {
    vec![
        prop(
            "health",
            enumeration(&["online", "offline", "unknown"], false).description(Some(
                "Inbound listeners: `online` when the last check (GET /v1/info, once per \
                 status poll round) was answered, `offline` when it failed, `unknown` before \
                 the first check. Outbound listeners: `online` while a connection is open, \
                 else `offline`.",
            )),
            true,
        ),
        prop(
            "listenerVersion",
            text(true).description(Some(
                "The version the listener last reported (inbound: its last answered check; \
                 outbound: the open connection's X-Listener-Version), or null.",
            )),
            true,
        ),
        prop(
            "lastContact",
            integer(true).description(Some(
                "When roomlink last heard from the listener (milliseconds since the Unix \
                 epoch): its last answered check, or the open connection's last heartbeat; \
                 null if never, or if an outbound listener is not connected.",
            )),
            true,
        ),
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
            "checkedAt",
            integer(true).description(Some(
                "Inbound listeners: when the last check was made (milliseconds since the Unix \
                 epoch), or null. Null for outbound listeners.",
            )),
            true,
        ),
        prop("checkError", check_error(), true),
    ]
}

/// Why an inbound listener's last check failed, or null.
fn check_error() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(type_of(Type::Object, true))
        .description(Some(
            "Inbound listeners: why the last check failed, as the catalog names it (for \
             example ListenerOffline when it cannot be reached, ListenerServiceException when \
             it refused roomlink's secret); null when it was answered, and for outbound \
             listeners.",
        ))
        .additional_properties(Some(AdditionalProperties::FreeForm(false)))
        .property("errorName", string())
        .required("errorName")
        .property("message", string())
        .required("message")
        .into()
}

pub(super) fn listener_schemas() -> Vec<(&'static str, RefOr<Schema>)> {
    let mut shown = listener_fields();
    shown.extend(connection_fields());
    let mut created = listener_fields();
    created.push(prop(
        "secret",
        string().description(Some(
            "The generated shared secret: only in the creation response, only when generated.",
        )),
        false,
    ));
    let inbound = listener_input(
        "An inbound listener: roomlink sends requests to `baseUrl`.",
        prop(
            "connection",
            enumeration(&["inbound"], true)
                .description(Some("`inbound`, the default (also when null).")),
            false,
        ),
        prop(
            "baseUrl",
            shape_schema(HttpUrl::SHAPE, false, Use::Input),
            true,
        ),
    );
    let outbound = listener_input(
        "An outbound listener: it connects to roomlink, which never calls it.",
        prop("connection", enumeration(&["outbound"], false), true),
        prop(
            "baseUrl",
            text(true)
                .max_length(Some(0))
                .description(Some("None: null, \"\" or omitted.")),
            false,
        ),
    );
    let input = OneOfBuilder::new()
        .item(reference("ListenerServiceInbound"))
        .item(reference("ListenerServiceOutbound"))
        .description(Some(
            "A listener service to register or its replacement: inbound (with `baseUrl`) or \
             outbound (without). `connection` is matched case-insensitively. An `id` is \
             accepted on PUT only, equal to the path's.",
        ))
        .build();
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
        ("ListenerServiceInbound", inbound.into()),
        ("ListenerServiceOutbound", outbound.into()),
        ("ListenerServiceInput", Schema::from(input).into()),
    ]
}

//! The webhooks' schemas: a subscription, what a caller sends, and a delivery.

use crate::openapi::primitives::{enumeration, epoch_ms, integer, object, prop, string, text};
use roomlink_domain::webhook::{EventType, MAX_DESCRIPTION_CHARS, MAX_URL_CHARS};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ArrayBuilder, Schema};

pub(super) fn webhook_schemas() -> Vec<(&'static str, RefOr<Schema>)> {
    let names: Vec<&str> = EventType::SUBSCRIBABLE.iter().map(|t| t.as_str()).collect();
    let types = || {
        ArrayBuilder::new()
            .items(enumeration(&names, false))
            .min_items(Some(1))
            .max_items(Some(names.len()))
            .description(Some(
                "The event types delivered (docs/operations.md \"Webhooks\").",
            ))
    };
    let url = || {
        string()
            .max_length(Some(MAX_URL_CHARS))
            .pattern(Some("^[Hh][Tt][Tt][Pp][Ss]?://[^@#\\s]+$"))
            .description(Some(
                "Where events are POSTed: http or https, no user information.",
            ))
    };
    let description = || text(true).max_length(Some(MAX_DESCRIPTION_CHARS));
    let pause = object(
        "Why deliveries are stopped, and since when.",
        vec![prop("at", epoch_ms(), true), prop("reason", string(), true)],
    );
    let common = |extra: Vec<_>| {
        let mut props = vec![
            prop("id", string(), true),
            prop("url", url(), true),
            prop("eventTypes", types(), true),
            prop("description", description(), false),
            prop("createdAt", epoch_ms(), true),
            prop("updatedAt", epoch_ms(), true),
            prop(
                "paused",
                utoipa::openapi::schema::OneOfBuilder::new()
                    .item(pause.clone())
                    .item(
                        utoipa::openapi::schema::ObjectBuilder::new()
                            .schema_type(utoipa::openapi::schema::Type::Null),
                    ),
                true,
            ),
        ];
        props.extend(extra);
        props
    };
    vec![
        (
            "Webhook",
            object("A webhook subscription (never its secret).", common(vec![])).into(),
        ),
        (
            "WebhookCreated",
            object(
                "A subscription just created, with its signing secret: shown this once.",
                common(vec![prop(
                    "secret",
                    string()
                        .pattern(Some("^whsec_[A-Za-z0-9+/=]+$"))
                        .description(Some(
                            "`whsec_` and the base64 of the HMAC-SHA256 key: what Standard \
                         Webhooks libraries take to verify `webhook-signature`.",
                        )),
                    true,
                )]),
            )
            .into(),
        ),
        (
            "WebhookInput",
            object(
                "A subscription as a caller sends it.",
                vec![
                    prop("url", url(), true),
                    prop("eventTypes", types(), true),
                    prop("description", description(), false),
                ],
            )
            .into(),
        ),
        (
            "WebhookTestQueued",
            object(
                "The test event queued: its `webhook-id`.",
                vec![prop("eventId", string(), true)],
            )
            .into(),
        ),
        (
            "WebhookDelivery",
            object(
                "One event on its way to one subscription.",
                vec![
                    prop("id", integer(false).minimum(Some(1)), true),
                    prop(
                        "eventId",
                        string().description(Some(
                            "The `webhook-id` header: the same on every attempt.",
                        )),
                        true,
                    ),
                    prop(
                        "eventType",
                        enumeration(
                            &EventType::ALL
                                .iter()
                                .map(|t| t.as_str())
                                .collect::<Vec<_>>(),
                            false,
                        ),
                        true,
                    ),
                    prop("createdAt", epoch_ms(), true),
                    prop(
                        "state",
                        enumeration(&["pending", "delivered", "failed"], false),
                        true,
                    ),
                    prop("attempts", integer(false).minimum(Some(0)), true),
                    prop("nextAttemptAt", integer(true), true),
                    prop("lastAttemptAt", integer(true), true),
                    prop(
                        "lastStatus",
                        integer(true).description(Some("The last answer's HTTP status.")),
                        true,
                    ),
                    prop(
                        "lastError",
                        text(true).description(Some("Why the last attempt did not count.")),
                        true,
                    ),
                    prop("deliveredAt", integer(true), true),
                ],
            )
            .into(),
        ),
    ]
}

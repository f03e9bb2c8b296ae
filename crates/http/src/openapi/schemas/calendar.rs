//! The schemas of calendar accounts and of a room's meetings.

use super::endpoint::{Use, shape_schema};
use crate::openapi::primitives::{
    NO_CONTROL_PATTERN, boolean, enumeration, epoch_ms, object, prop, string, text, type_of,
};
use roomlink_domain::calendar::account::{READABLE, SECRET_MAX_CHARS};
use roomlink_domain::endpoint::ShortText;
use roomlink_domain::endpoint::value::{FieldValue, HttpUrl};
use roomlink_domain::enums::{Cluster, MeetingType};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema, Type};

pub(super) fn calendar_schemas() -> Vec<(&'static str, RefOr<Schema>)> {
    let readable: Vec<&str> = READABLE.iter().map(|t| t.as_str()).collect();
    let nullable_text = || text(true);
    vec![
        (
            "CalendarAccount",
            object(
                "Where the enterprise's room calendars of one type are read, and as whom \
                 (never the password).",
                vec![
                    prop("calendarType", enumeration(&readable, false), true),
                    prop(
                        "baseUrl",
                        shape_schema(HttpUrl::SHAPE, false, Use::Response),
                        true,
                    ),
                    prop("username", nullable_text(), true),
                    prop(
                        "tokenUrl",
                        nullable_text().description(Some(
                            "Microsoft 365 and Google: where access tokens are asked for.",
                        )),
                        true,
                    ),
                    prop(
                        "hasPassword",
                        boolean().description(Some("Whether a password is set.")),
                        true,
                    ),
                    prop("updated", epoch_ms(), true),
                ],
            )
            .into(),
        ),
        (
            "CalendarAccountInput",
            object(
                "A calendar account to set. CalDAV: each room's calendar is the collection \
                 `{baseUrl}/{calendarId}/`; `baseUrl` carries no credentials. The read-only properties of CalendarAccount are \
                 accepted and ignored.",
                vec![
                    prop("baseUrl", account_url(false), true),
                    prop(
                        "username",
                        shape_schema(ShortText::SHAPE, true, Use::Input),
                        false,
                    ),
                    prop(
                        "tokenUrl",
                        account_url(true).description(Some(
                            "Microsoft 365 and Google (required): the OAuth token endpoint. \
                             CalDAV accounts have none.",
                        )),
                        false,
                    ),
                    prop(
                        "password",
                        text(true)
                            .max_length(Some(SECRET_MAX_CHARS))
                            .pattern(Some(NO_CONTROL_PATTERN))
                            .description(Some(
                                "Omitted or null: keep the stored one; \"\": remove it.",
                            )),
                        false,
                    ),
                    prop("calendarType", string(), false),
                    prop("hasPassword", boolean(), false),
                    prop("updated", epoch_ms(), false),
                ],
            )
            .into(),
        ),
        (
            "Meeting",
            object(
                "An event of a room's calendar and what the room would dial for it.",
                vec![
                    prop("uid", string(), true),
                    prop("title", nullable_text(), true),
                    prop("start", epoch_ms(), true),
                    prop("end", epoch_ms(), true),
                    prop("dial", dial(), true),
                    prop(
                        "notDialable",
                        nullable_text().description(Some(
                            "Why the event's meeting link cannot be dialled, when it has one.",
                        )),
                        true,
                    ),
                ],
            )
            .into(),
        ),
    ]
}

/// What the room would dial: the parameters of `join`, or null.
fn dial() -> Schema {
    let props = [
        ("meetingId", text(true)),
        ("passcode", text(true)),
        ("meetingType", enumeration(MeetingType::NAMES, true)),
        ("cluster", enumeration(Cluster::NAMES, false)),
        (
            "foundIn",
            enumeration(&["conference", "location", "description"], false),
        ),
    ];
    let mut builder = ObjectBuilder::new()
        .schema_type(type_of(Type::Object, true))
        .description(Some(
            "The parameters of the join the room would make; null when nothing in the event \
             is dialable.",
        ))
        .additional_properties(Some(AdditionalProperties::FreeForm(false)));
    for (name, schema) in props {
        builder = builder.property(name, schema).required(name);
    }
    builder.into()
}

/// An account's `baseUrl`: an http(s) URL as endpoints take them, without credentials in it
/// (no `@` before the path).
fn account_url(nullable: bool) -> ObjectBuilder {
    text(nullable)
        .max_length(Some(HttpUrl::MAX))
        .pattern(Some(
            "^[Hh][Tt][Tt][Pp]([Ss])?://([^\\s\\u0000-\\u001f\\u007f-\\u009f@/?#]+\
             ([/?#][^\\s\\u0000-\\u001f\\u007f-\\u009f]*)?\
             |[/?#][^\\s\\u0000-\\u001f\\u007f-\\u009f]*)$",
        ))
        .description(Some("http:// or https://, without credentials in it."))
}

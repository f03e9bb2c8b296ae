//! A template's plan: the request choosing rooms and the answer per room and key
//! (`roomlink_domain::template::plan`).

use crate::openapi::primitives::{
    SPACE, boolean, enumeration, integer, object, prop, reference, string,
};
use roomlink_domain::template::SettingKey;
use roomlink_domain::template::plan::{MAX_LOCATION_CHARS, MAX_PLAN_ROOMS};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{
    AdditionalProperties, ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, Type,
};

/// A value as a room or a template holds it: a number or a text.
pub(super) fn value(description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::SchemaType::Array(vec![
            Type::Integer,
            Type::String,
        ]))
        .description(Some(description))
}

/// An id's shape (`roomlink_domain::ids`).
fn id() -> ObjectBuilder {
    string()
        .min_length(Some(1))
        .max_length(Some(roomlink_domain::ids::MAX_CHARS))
        .pattern(Some("^[A-Za-z0-9_-]+$"))
}

pub(super) fn count(description: &str) -> ObjectBuilder {
    integer(false)
        .minimum(Some(0.0))
        .description(Some(description))
}

pub(super) fn template_plan_schemas() -> Vec<(&'static str, RefOr<Schema>)> {
    let keys: Vec<&str> = SettingKey::ALL.iter().map(|k| k.name()).collect();
    vec![
        (
            "TemplatePlanInput",
            object(
                "The rooms to plan on.",
                vec![prop(
                    "rooms",
                    OneOfBuilder::new()
                        .description(Some(
                            "Exactly one of: endpoints (ids), listenerId, location, all (true).",
                        ))
                        .item(object(
                            "These rooms, in this order.",
                            vec![prop(
                                "endpoints",
                                ArrayBuilder::new()
                                    .items(id())
                                    .min_items(Some(1))
                                    .max_items(Some(MAX_PLAN_ROOMS)),
                                true,
                            )],
                        ))
                        .item(object(
                            "The rooms of this listener service, by name.",
                            vec![prop("listenerId", id(), true)],
                        ))
                        .item(object(
                            "The rooms whose location is this text (white space around it \
                             and case set aside), by name.",
                            vec![prop(
                                "location",
                                string()
                                    .min_length(Some(1))
                                    .max_length(Some(MAX_LOCATION_CHARS))
                                    // Something besides white space, as `trim` sees it.
                                    .pattern(Some(format!("[^{SPACE}]"))),
                                true,
                            )],
                        ))
                        .item(object(
                            "Every room of the enterprise, by name.",
                            vec![prop("all", boolean().enum_values(Some([true])), true)],
                        )),
                    true,
                )],
            )
            .into(),
        ),
        (
            "TemplateKeyPlan",
            object(
                "What applying the template would do to one setting of one room.",
                vec![
                    prop(
                        "plan",
                        enumeration(&["unchanged", "change", "unsupported", "unreadable"], false),
                        true,
                    ),
                    prop("value", value("unchanged: the value held."), false),
                    prop(
                        "from",
                        value("change: the value the room holds now."),
                        false,
                    ),
                    prop("to", value("change: the template's value."), false),
                    prop(
                        "reason",
                        string().description(Some(
                            "unsupported: why the room has no such setting; unreadable: the \
                             room's own message.",
                        )),
                        false,
                    ),
                ],
            )
            .into(),
        ),
        (
            "TemplatePlanRoom",
            object(
                "One room's plan: settings per key, or why the room could not be asked.",
                vec![
                    prop("endpointId", string(), true),
                    prop("name", string(), true),
                    prop(
                        "settings",
                        ObjectBuilder::new()
                            .schema_type(Type::Object)
                            .description(Some(format!(
                                "By setting key (one of {}, or a raw Cisco path 'cisco:…').",
                                keys.join(", ")
                            )))
                            .additional_properties(Some(AdditionalProperties::RefOr(reference(
                                "TemplateKeyPlan",
                            )))),
                        false,
                    ),
                    prop(
                        "unreachable",
                        object(
                            "The catalog error that kept the room from being read.",
                            vec![
                                prop("code", string(), true),
                                prop("message", string(), true),
                            ],
                        ),
                        false,
                    ),
                ],
            )
            .into(),
        ),
        (
            "TemplatePlan",
            object(
                "What applying a template would do, room by room (in the order asked, else by \
                 name).",
                vec![
                    prop(
                        "template",
                        object(
                            "The template planned.",
                            vec![prop("id", string(), true), prop("name", string(), true)],
                        ),
                        true,
                    ),
                    prop(
                        "summary",
                        object(
                            "Counts over the rooms and their settings.",
                            vec![
                                prop("rooms", count("Rooms planned."), true),
                                prop("roomsChanging", count("Rooms with a change."), true),
                                prop("unreachable", count("Rooms not read."), true),
                                prop("changes", count("Settings to change."), true),
                                prop("unchanged", count("Settings already so."), true),
                                prop("unsupported", count("Settings a room lacks."), true),
                                prop("unreadable", count("Settings a room kept."), true),
                            ],
                        ),
                        true,
                    ),
                    prop(
                        "rooms",
                        ArrayBuilder::new().items(reference("TemplatePlanRoom")),
                        true,
                    ),
                ],
            )
            .into(),
        ),
    ]
}

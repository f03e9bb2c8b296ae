//! The rooms a template is assigned to, with their drift, as the API answers them
//! (`roomlink_domain::template::drift`).

use super::template_plan::{count, value};
use crate::openapi::primitives::{enumeration, epoch_ms, integer, object, prop, reference, string};
use roomlink_domain::template::SettingKey;
use roomlink_domain::template::drift::DriftState;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ArrayBuilder, Schema};

pub(super) fn template_drift_schemas() -> Vec<(&'static str, RefOr<Schema>)> {
    let keys: Vec<&str> = SettingKey::ALL.iter().map(|k| k.name()).collect();
    let states: Vec<&str> = DriftState::ALL.iter().map(|s| s.name()).collect();
    let ms_or_null = |what: &str| {
        integer(true).description(Some(format!("Milliseconds since the epoch: {what}")))
    };
    vec![
        (
            "TemplateRoom",
            object(
                "A room assigned the template, with what its last check found.",
                vec![
                    prop("endpointId", string(), true),
                    prop("name", string(), true),
                    prop("assignedAt", epoch_ms(), true),
                    prop("state", enumeration(&states, false), true),
                    prop(
                        "checkedAt",
                        ms_or_null("the last check; null before the first."),
                        true,
                    ),
                    prop(
                        "readAt",
                        ms_or_null("the last check that read the room."),
                        true,
                    ),
                    prop(
                        "driftedSince",
                        ms_or_null("the first read that found the room drifted, while it is."),
                        true,
                    ),
                    prop(
                        "drifted",
                        ArrayBuilder::new().items(RefOr::T(object(
                            "A setting the room holds another value of than the template.",
                            vec![
                                prop(
                                    "key",
                                    string()
                                        .pattern(Some(super::template::key_pattern()))
                                        .description(Some(format!(
                                            "One of {}, or a raw Cisco path ('cisco:…').",
                                            keys.join(", ")
                                        ))),
                                    true,
                                ),
                                prop("held", value("What the room holds."), true),
                                prop("template", value("The template's value."), true),
                            ],
                        ))),
                        true,
                    ),
                    prop(
                        "error",
                        object(
                            "unreachable: why the last check could not ask the room.",
                            vec![
                                prop("errorName", string(), true),
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
            "TemplateRooms",
            object(
                "The rooms a template is assigned to, by name.",
                vec![
                    prop("templateId", string(), true),
                    prop(
                        "counts",
                        object(
                            "Rooms by the state of their last check.",
                            vec![
                                prop("assigned", count("Rooms assigned."), true),
                                prop("unchecked", count("Not checked yet."), true),
                                prop("inLine", count("Holding the template's values."), true),
                                prop("drifted", count("Holding other values."), true),
                                prop("unreachable", count("Not asked by the last check."), true),
                            ],
                        ),
                        true,
                    ),
                    prop(
                        "rooms",
                        ArrayBuilder::new().items(reference("TemplateRoom")),
                        true,
                    ),
                ],
            )
            .into(),
        ),
    ]
}

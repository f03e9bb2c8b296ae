//! A template job as the API answers it (`roomlink_domain::template::job`).

use super::template_plan::{count, value};
use crate::openapi::primitives::{
    enumeration, epoch_ms, integer, object, prop, reference, string, text,
};
use roomlink_domain::template::SettingKey;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{AdditionalProperties, ArrayBuilder, ObjectBuilder, Schema, Type};

pub(super) fn template_job_schemas() -> Vec<(&'static str, RefOr<Schema>)> {
    let keys: Vec<&str> = SettingKey::ALL.iter().map(|k| k.name()).collect();
    vec![
        (
            "TemplateJobSetting",
            object(
                "One setting of one room of a job: the value it writes, and once the room is \
                 done, how it ended.",
                vec![
                    prop("to", value("The value the job writes."), true),
                    prop(
                        "outcome",
                        enumeration(
                            &[
                                "applied",
                                "unchanged",
                                "unsupported",
                                "refused",
                                "unreadable",
                                "skipped",
                            ],
                            false,
                        ),
                        false,
                    ),
                    prop(
                        "from",
                        value("applied: the value the room held before."),
                        false,
                    ),
                    prop(
                        "reason",
                        string().description(Some(
                            "Why a setting was not applied: the room's own message (refused, \
                             unreadable), why it has no such setting (unsupported), or what \
                             it holds now (skipped by an undo).",
                        )),
                        false,
                    ),
                ],
            )
            .into(),
        ),
        (
            "TemplateJobRoom",
            object(
                "One room of a job.",
                vec![
                    prop("endpointId", string(), true),
                    prop(
                        "name",
                        string().description(Some("The endpoint's name when the job started.")),
                        true,
                    ),
                    prop(
                        "state",
                        enumeration(&["pending", "writing", "done"], false),
                        true,
                    ),
                    prop(
                        "settings",
                        ObjectBuilder::new()
                            .schema_type(Type::Object)
                            .description(Some(format!(
                                "By setting key (one of {}, or a raw Cisco path 'cisco:…').",
                                keys.join(", ")
                            )))
                            .additional_properties(Some(AdditionalProperties::RefOr(reference(
                                "TemplateJobSetting",
                            )))),
                        true,
                    ),
                    prop(
                        "unreachable",
                        object(
                            "The catalog error that kept the room from being read or written.",
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
            "TemplateJob",
            object(
                "A job applying a template to rooms, or undoing one.",
                vec![
                    prop("id", string(), true),
                    prop("templateId", string(), true),
                    prop(
                        "templateName",
                        string().description(Some("The template's name when the job started.")),
                        true,
                    ),
                    prop("kind", enumeration(&["apply", "undo"], false), true),
                    prop(
                        "undoes",
                        text(true).description(Some("undo: the apply job it undoes.")),
                        true,
                    ),
                    prop(
                        "state",
                        enumeration(&["running", "finished", "cancelled"], false),
                        true,
                    ),
                    prop(
                        "createdBy",
                        string().description(Some("Who started it: a username or token id.")),
                        true,
                    ),
                    prop("createdAt", epoch_ms(), true),
                    prop(
                        "finishedAt",
                        integer(true).description(Some(
                            "Milliseconds since the epoch (finished or cancelled); null while \
                             running.",
                        )),
                        true,
                    ),
                    prop(
                        "progress",
                        object(
                            "Counts over the rooms, and over the settings of the rooms done.",
                            vec![
                                prop("rooms", count("Rooms of the job."), true),
                                prop("done", count("Rooms done."), true),
                                prop("unreachable", count("Rooms not asked."), true),
                                prop("applied", count("Settings written."), true),
                                prop("unchanged", count("Settings already so."), true),
                                prop("unsupported", count("Settings a room lacks."), true),
                                prop("refused", count("Settings a room refused."), true),
                                prop("unreadable", count("Settings a room kept."), true),
                                prop("skipped", count("Settings an undo left."), true),
                            ],
                        ),
                        true,
                    ),
                    prop(
                        "rooms",
                        ArrayBuilder::new().items(reference("TemplateJobRoom")),
                        true,
                    ),
                ],
            )
            .into(),
        ),
    ]
}

//! The document's components: schemas, shared error responses and security schemes.

mod calendar;
mod endpoint;
mod inventory;
mod listener;
mod records;
mod template;
mod template_drift;
mod template_job;
mod template_plan;
mod webhook;

pub(super) use inventory::TICKET_PATTERN;

use super::errors::error_body;
use super::security;
use std::collections::BTreeMap;
use utoipa::openapi::{Components, ComponentsBuilder, Response};

pub(super) fn components(error_responses: BTreeMap<String, Response>) -> Components {
    let mut builder =
        security::with_schemes(ComponentsBuilder::new()).schema("ErrorBody", error_body());
    let schemas = records::record_schemas()
        .into_iter()
        .chain(listener::listener_schemas())
        .chain(endpoint::endpoint_schemas())
        .chain(calendar::calendar_schemas())
        .chain(inventory::inventory_schemas())
        .chain(webhook::webhook_schemas())
        .chain(template::template_schemas())
        .chain(template_plan::template_plan_schemas())
        .chain(template_job::template_job_schemas())
        .chain(template_drift::template_drift_schemas());
    for (name, schema) in schemas {
        builder = builder.schema(name, schema);
    }
    for (name, response) in error_responses {
        builder = builder.response(name, response);
    }
    builder.build()
}

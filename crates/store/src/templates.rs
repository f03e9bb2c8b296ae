//! TemplateStore: configuration templates, their settings kept as the JSON text the API shows.
//! Names are unique per enterprise by the index on `(enterprise_id, name_key)`; a write that
//! breaks it is `Conflict`, whichever of two racing writes loses.

use crate::DbStore;
use crate::error::{DbError, corrupt, is_unique_violation};
use crate::schema::templates as t;
use async_trait::async_trait;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use roomlink_domain::Result;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::error::Error;
use roomlink_domain::ids::{EnterpriseId, TemplateId};
use roomlink_domain::ports::TemplateStore;
use roomlink_domain::template::record::MAX_TEMPLATES;
use roomlink_domain::template::{Template, TemplateSettings};

type TemplateRow = (String, String, String, Option<String>, String, i64, i64);

macro_rules! template_columns {
    () => {
        (
            t::id,
            t::enterprise_id,
            t::name,
            t::description,
            t::settings,
            t::created_ms,
            t::updated_ms,
        )
    };
}

fn template(row: TemplateRow) -> Result<Template> {
    let (id, enterprise, name, description, settings, created, updated) = row;
    let settings = serde_json::from_str(&settings)
        .map_err(|e| corrupt(format!("template {id}: settings are not JSON: {e}")))
        .and_then(|json| {
            TemplateSettings::from_json(&json)
                .map_err(|e| corrupt(format!("template {id}: {}", e.message())))
        })?;
    Ok(Template {
        id: TemplateId::from_trusted(id),
        enterprise_id: EnterpriseId::from_trusted(enterprise),
        name,
        description,
        settings,
        created_at: created,
        updated_at: updated,
    })
}

/// A write's outcome with the name index's violation as `Conflict`.
fn name_taken<T>(template: &Template, result: QueryResult<T>) -> std::result::Result<T, DbError> {
    match result {
        Err(e) if is_unique_violation(&e, "templates_enterprise_name", "templates", "name_key") => {
            Err(Error::conflict(TemplateId::ENTITY_CLASS, &template.name).into())
        }
        other => Ok(other?),
    }
}

#[async_trait]
impl TemplateStore for DbStore {
    async fn insert_template(&self, template: &Template, audit: &AuditEntry) -> Result<()> {
        let settings = template.settings.to_json().to_string();
        let key = template.name_key();
        db_tx!(self, |c| {
            let held: i64 = t::table
                .filter(t::enterprise_id.eq(template.enterprise_id.as_str()))
                .count()
                .get_result(c)
                .await?;
            if usize::try_from(held).unwrap_or(usize::MAX) >= MAX_TEMPLATES {
                return Err(
                    Error::limit_reached(TemplateId::ENTITY_CLASS, MAX_TEMPLATES as u32).into(),
                );
            }
            let inserted = diesel::insert_into(t::table)
                .values((
                    t::id.eq(template.id.as_str()),
                    t::enterprise_id.eq(template.enterprise_id.as_str()),
                    t::name.eq(&template.name),
                    t::name_key.eq(&key),
                    t::description.eq(template.description.as_deref()),
                    t::settings.eq(&settings),
                    t::created_ms.eq(template.created_at),
                    t::updated_ms.eq(template.updated_at),
                ))
                .execute(c)
                .await;
            name_taken(template, inserted)?;
            append_audit!(c, audit)?;
            Ok(())
        })
    }

    async fn templates(&self, enterprise: &EnterpriseId) -> Result<Vec<Template>> {
        let rows: Vec<TemplateRow> = db_run!(self, |c| {
            Ok(t::table
                .filter(t::enterprise_id.eq(enterprise.as_str()))
                .order((t::name_key, t::id))
                .select(template_columns!())
                .load(c)
                .await?)
        })?;
        rows.into_iter().map(template).collect()
    }

    async fn template(
        &self,
        enterprise: &EnterpriseId,
        id: &TemplateId,
    ) -> Result<Option<Template>> {
        let row: Option<TemplateRow> = db_run!(self, |c| {
            Ok(t::table
                .filter(t::enterprise_id.eq(enterprise.as_str()))
                .filter(t::id.eq(id.as_str()))
                .select(template_columns!())
                .first(c)
                .await
                .optional()?)
        })?;
        row.map(template).transpose()
    }

    async fn replace_template(&self, template: &Template, audit: &AuditEntry) -> Result<bool> {
        let settings = template.settings.to_json().to_string();
        let key = template.name_key();
        db_tx!(self, |c| {
            let updated = diesel::update(
                t::table
                    .filter(t::enterprise_id.eq(template.enterprise_id.as_str()))
                    .filter(t::id.eq(template.id.as_str())),
            )
            .set((
                t::name.eq(&template.name),
                t::name_key.eq(&key),
                t::description.eq(template.description.as_deref()),
                t::settings.eq(&settings),
                t::updated_ms.eq(template.updated_at),
            ))
            .execute(c)
            .await;
            let n = name_taken(template, updated)?;
            if n > 0 {
                append_audit!(c, audit)?;
            }
            Ok(n > 0)
        })
    }

    async fn delete_template(
        &self,
        enterprise: &EnterpriseId,
        id: &TemplateId,
        audit: &AuditEntry,
    ) -> Result<bool> {
        db_tx!(self, |c| {
            let n = diesel::delete(
                t::table
                    .filter(t::enterprise_id.eq(enterprise.as_str()))
                    .filter(t::id.eq(id.as_str())),
            )
            .execute(c)
            .await?;
            if n > 0 {
                append_audit!(c, audit)?;
            }
            Ok(n > 0)
        })
    }
}

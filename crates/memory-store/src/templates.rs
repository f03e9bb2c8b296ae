//! TemplateStore of the in-memory store: names unique per enterprise as the database index
//! keeps them, checked under the one mutex.

use super::{MemoryStore, State};
use async_trait::async_trait;
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EnterpriseId, TemplateId};
use roomlink_domain::ports::TemplateStore;
use roomlink_domain::template::Template;
use roomlink_domain::template::record::MAX_TEMPLATES;

impl State {
    /// `Conflict` when another template of the enterprise has `template`'s name (as compared).
    fn check_template_name(&self, template: &Template) -> Result<()> {
        let key = template.name_key();
        let taken = self.templates.iter().any(|t| {
            t.enterprise_id == template.enterprise_id && t.id != template.id && t.name_key() == key
        });
        if taken {
            return Err(Error::conflict(TemplateId::ENTITY_CLASS, &template.name));
        }
        Ok(())
    }
}

#[async_trait]
impl TemplateStore for MemoryStore {
    async fn insert_template(&self, template: &Template, audit: &AuditEntry) -> Result<()> {
        let mut s = self.lock()?;
        let held = s
            .templates
            .iter()
            .filter(|t| t.enterprise_id == template.enterprise_id)
            .count();
        if held >= MAX_TEMPLATES {
            return Err(Error::limit_reached(
                TemplateId::ENTITY_CLASS,
                MAX_TEMPLATES as u32,
            ));
        }
        s.check_template_name(template)?;
        s.templates.push(template.clone());
        s.audit(audit);
        Ok(())
    }

    async fn templates(&self, enterprise: &EnterpriseId) -> Result<Vec<Template>> {
        let mut list: Vec<Template> = self
            .lock()?
            .templates
            .iter()
            .filter(|t| t.enterprise_id == *enterprise)
            .cloned()
            .collect();
        list.sort_by_cached_key(|t| (t.name_key(), t.id.clone()));
        Ok(list)
    }

    async fn template(
        &self,
        enterprise: &EnterpriseId,
        id: &TemplateId,
    ) -> Result<Option<Template>> {
        Ok(self
            .lock()?
            .templates
            .iter()
            .find(|t| t.enterprise_id == *enterprise && t.id == *id)
            .cloned())
    }

    async fn replace_template(&self, template: &Template, audit: &AuditEntry) -> Result<bool> {
        let mut s = self.lock()?;
        let Some(index) = s
            .templates
            .iter()
            .position(|t| t.enterprise_id == template.enterprise_id && t.id == template.id)
        else {
            return Ok(false);
        };
        s.check_template_name(template)?;
        let created_at = s.templates[index].created_at;
        s.templates[index] = Template {
            created_at,
            ..template.clone()
        };
        s.audit(audit);
        Ok(true)
    }

    async fn delete_template(
        &self,
        enterprise: &EnterpriseId,
        id: &TemplateId,
        audit: &AuditEntry,
    ) -> Result<bool> {
        let mut s = self.lock()?;
        let before = s.templates.len();
        s.templates
            .retain(|t| !(t.enterprise_id == *enterprise && t.id == *id));
        let deleted = s.templates.len() < before;
        if deleted {
            // Its assignments go with it, as by the database's ON DELETE CASCADE.
            s.template_assignments
                .retain(|(e, _), held| !(e == enterprise && held.template() == id));
            s.audit(audit);
        }
        Ok(deleted)
    }
}

//! Configuration templates: the `/api/templates` use cases. The rules of the bodies are
//! `roomlink_domain::template::record`; uniqueness of names and the count limit are the
//! store's, inside the write's transaction.

use super::audit::Auditor;
use super::auth::Principal;
use roomlink_domain::access::{Operation, Target};
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::error::Result;
use roomlink_domain::ids::TemplateId;
use roomlink_domain::ports::{Clock, IdGenerator, TemplateStore};
use roomlink_domain::template::{Template, TemplateDraft};
use serde_json::{Map, Value};
use std::sync::Arc;

pub struct TemplateService {
    pub store: Arc<dyn TemplateStore>,
    pub ids: Arc<dyn IdGenerator>,
    pub clock: Arc<dyn Clock>,
    pub audit: Arc<Auditor>,
}

/// The audit entry's detail: the fields and setting keys a write changed, never their values.
fn changed(entry: &AuditEntry, draft: &TemplateDraft, before: Option<&Template>) -> AuditEntry {
    let changes = draft.changes(before);
    if changes.is_empty() {
        entry.clone()
    } else {
        entry
            .clone()
            .detail(format!("fields: {}", changes.join(", ")))
    }
}

/// How a replace or a patch turns the stored template into its draft.
enum Change<'a> {
    Replace(&'a Map<String, Value>),
    Patch(&'a Map<String, Value>),
}

impl TemplateService {
    pub async fn list(&self, principal: &Principal) -> Result<Vec<Template>> {
        principal.authorize(Operation::ListTemplates, Target::Enterprise)?;
        self.store.templates(&principal.enterprise_id).await
    }

    pub async fn get(&self, principal: &Principal, id: &TemplateId) -> Result<Template> {
        principal.authorize(Operation::GetTemplate, Target::Enterprise)?;
        self.store
            .template(&principal.enterprise_id, id)
            .await?
            .ok_or_else(|| id.not_found())
    }

    /// The settings catalog (`roomlink_domain::template::settings_catalog`), for forms.
    pub fn settings_catalog(&self, principal: &Principal) -> Result<Value> {
        principal.authorize(Operation::ListTemplateSettings, Target::Enterprise)?;
        Ok(roomlink_domain::template::settings_catalog())
    }

    pub async fn create(
        &self,
        principal: &Principal,
        body: &Map<String, Value>,
    ) -> Result<Template> {
        let id = TemplateId::from_trusted(self.ids.entity_id());
        let audit = self
            .audit
            .op(principal, Operation::CreateTemplate, Some(id.as_str()));
        let result = async {
            principal.authorize(Operation::CreateTemplate, Target::Enterprise)?;
            let draft = TemplateDraft::from_body(body)?;
            let entry = changed(&audit, &draft, None);
            let template = Template::new(
                id,
                principal.enterprise_id.clone(),
                draft,
                self.clock.now_ms(),
            );
            self.store.insert_template(&template, &entry).await?;
            Ok(template)
        }
        .await;
        self.audit.settle(audit, result).await
    }

    /// PUT: every field from `body`, as a create takes them.
    pub async fn replace(
        &self,
        principal: &Principal,
        id: &TemplateId,
        body: &Map<String, Value>,
    ) -> Result<Template> {
        self.change(principal, id, Change::Replace(body)).await
    }

    /// PATCH: `body` is a JSON merge patch (`TemplateDraft::patched`).
    pub async fn patch(
        &self,
        principal: &Principal,
        id: &TemplateId,
        body: &Map<String, Value>,
    ) -> Result<Template> {
        self.change(principal, id, Change::Patch(body)).await
    }

    async fn change(
        &self,
        principal: &Principal,
        id: &TemplateId,
        change: Change<'_>,
    ) -> Result<Template> {
        let audit = self
            .audit
            .op(principal, Operation::UpdateTemplate, Some(id.as_str()));
        let result = async {
            principal.authorize(Operation::UpdateTemplate, Target::Enterprise)?;
            let current = self
                .store
                .template(&principal.enterprise_id, id)
                .await?
                .ok_or_else(|| id.not_found())?;
            let draft = match change {
                Change::Replace(body) => TemplateDraft::from_body(body)?,
                Change::Patch(body) => TemplateDraft::patched(&current, body)?,
            };
            let entry = changed(&audit, &draft, Some(&current));
            let template = current.replaced(draft, self.clock.now_ms());
            if self.store.replace_template(&template, &entry).await? {
                Ok(template)
            } else {
                // Deleted since it was read.
                Err(id.not_found())
            }
        }
        .await;
        self.audit.settle(audit, result).await
    }

    pub async fn delete(&self, principal: &Principal, id: &TemplateId) -> Result<()> {
        let audit = self
            .audit
            .op(principal, Operation::DeleteTemplate, Some(id.as_str()));
        let result = async {
            principal.authorize(Operation::DeleteTemplate, Target::Enterprise)?;
            if self
                .store
                .delete_template(&principal.enterprise_id, id, &audit)
                .await?
            {
                Ok(())
            } else {
                Err(id.not_found())
            }
        }
        .await;
        self.audit.settle(audit, result).await
    }
}

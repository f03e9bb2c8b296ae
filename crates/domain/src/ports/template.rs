//! Configuration templates: [`TemplateStore`].

use crate::audit::AuditEntry;
use crate::error::Result;
use crate::ids::{EnterpriseId, TemplateId};
use crate::template::Template;
use async_trait::async_trait;
#[cfg(feature = "mock")]
use mockall::automock;

/// An enterprise's templates. Names are unique per enterprise as
/// [`crate::template::record::name_key`] compares them: a write that would take another
/// template's name is `Conflict` (entity class `Template`), also when two writes race.
#[cfg_attr(feature = "mock", automock)]
#[async_trait]
pub trait TemplateStore: Send + Sync {
    /// `LimitReached` (entity class `Template`) when the enterprise holds
    /// [`crate::template::record::MAX_TEMPLATES`] already; `Conflict` for a taken name.
    async fn insert_template(&self, template: &Template, audit: &AuditEntry) -> Result<()>;
    /// By name (as compared), then id: the order a person scans a list in.
    async fn templates(&self, enterprise: &EnterpriseId) -> Result<Vec<Template>>;
    async fn template(
        &self,
        enterprise: &EnterpriseId,
        id: &TemplateId,
    ) -> Result<Option<Template>>;
    /// Replaces name, description, settings and `updated_at` of the template with this id in
    /// its enterprise; `false` if there is none. `Conflict` for a taken name.
    async fn replace_template(&self, template: &Template, audit: &AuditEntry) -> Result<bool>;
    async fn delete_template(
        &self,
        enterprise: &EnterpriseId,
        id: &TemplateId,
        audit: &AuditEntry,
    ) -> Result<bool>;
}

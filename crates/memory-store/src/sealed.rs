//! SealedSecretStore of the in-memory store.

use super::MemoryStore;
use async_trait::async_trait;
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::error::Result;
use roomlink_domain::ports::{SealedKind, SealedSecretStore, StoredSecret};
use roomlink_domain::secret::SealedSecret;

#[async_trait]
impl SealedSecretStore for MemoryStore {
    async fn sealed_not_under(
        &self,
        kind: SealedKind,
        key_id: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<StoredSecret>> {
        let s = self.lock()?;
        let held: Vec<(String, &SealedSecret)> = match kind {
            SealedKind::EndpointPassword => s
                .endpoints
                .iter()
                .filter_map(|e| e.password().map(|p| (e.id().as_str().to_owned(), p)))
                .collect(),
            SealedKind::ListenerSecret => s
                .listeners
                .iter()
                .map(|l| (l.id.as_str().to_owned(), &l.secret))
                .collect(),
            SealedKind::CalendarPassword => s
                .calendar_accounts
                .iter()
                .filter_map(|a| a.password.as_ref().map(|p| (a.holder_id(), p)))
                .collect(),
            SealedKind::WebhookSecret => s.webhook_secrets(),
        };
        let mut found: Vec<StoredSecret> = held
            .into_iter()
            .filter(|(id, sealed)| sealed.key_id != key_id && after.is_none_or(|a| id.as_str() > a))
            .map(|(id, sealed)| StoredSecret {
                id,
                sealed: sealed.clone(),
            })
            .collect();
        found.sort_by(|a, b| a.id.cmp(&b.id));
        found.truncate(limit);
        Ok(found)
    }

    async fn replace_sealed(
        &self,
        kind: SealedKind,
        id: &str,
        old: &SealedSecret,
        new: &SealedSecret,
    ) -> Result<bool> {
        let mut s = self.lock()?;
        match kind {
            SealedKind::EndpointPassword => {
                let Some(endpoint) = s
                    .endpoints
                    .iter_mut()
                    .find(|e| e.id().as_str() == id && e.password() == Some(old))
                else {
                    return Ok(false);
                };
                *endpoint = Endpoint::new(
                    endpoint.id().clone(),
                    endpoint.enterprise_id().clone(),
                    endpoint.profile().clone(),
                    Some(new.clone()),
                )?;
            }
            SealedKind::ListenerSecret => {
                let Some(listener) = s
                    .listeners
                    .iter_mut()
                    .find(|l| l.id.as_str() == id && l.secret == *old)
                else {
                    return Ok(false);
                };
                listener.secret = new.clone();
            }
            SealedKind::CalendarPassword => {
                let Some(account) = s
                    .calendar_accounts
                    .iter_mut()
                    .find(|a| a.holder_id() == id && a.password.as_ref() == Some(old))
                else {
                    return Ok(false);
                };
                account.password = Some(new.clone());
            }
            SealedKind::WebhookSecret => return Ok(s.replace_webhook_secret(id, old, new)),
        }
        Ok(true)
    }
}

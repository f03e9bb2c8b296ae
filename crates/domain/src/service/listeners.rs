//! Listener-service records: register, list, read, replace, delete.

use super::auth::Principal;
use crate::access::{Operation, Target};
use crate::error::Result;
use crate::ids::ListenerServiceId;
use crate::listener::{ListenerService, decode_listener};
use crate::ports::{IdGenerator, ListenerStore, SecretSealer};
use crate::secret::{Secret, SecretChange};
use serde_json::{Map, Value};
use std::sync::Arc;

pub struct ListenerAdmin {
    pub listeners: Arc<dyn ListenerStore>,
    pub sealer: Arc<dyn SecretSealer>,
    pub ids: Arc<dyn IdGenerator>,
}

/// A listener just registered. `generated_secret` is set when roomlink chose the secret: it is
/// shown once, in the creation response.
pub struct Registered {
    pub listener: ListenerService,
    pub generated_secret: Option<Secret>,
}

impl ListenerAdmin {
    pub async fn create(
        &self,
        principal: &Principal,
        body: &Map<String, Value>,
    ) -> Result<Registered> {
        principal.authorize(Operation::CreateListenerService, Target::ListenerService)?;
        let (profile, secret) = decode_listener(body)?;
        if body.get("id").is_some_and(|id| !id.is_null()) {
            return Err(crate::error::Error::invalid(
                "id: is assigned by the service; omit it",
            ));
        }
        let (secret, generated) = match secret {
            SecretChange::Set(s) => (s, None),
            SecretChange::Keep | SecretChange::Clear => {
                let s = self.ids.listener_secret();
                (s.clone(), Some(s))
            }
        };
        // Listener secrets are always sealed with the service key: roomlink must present them.
        let listener = ListenerService {
            id: ListenerServiceId::from_trusted(self.ids.entity_id()),
            enterprise_id: principal.enterprise_id.clone(),
            profile,
            secret: self.sealer.seal(&secret, None)?,
        };
        self.listeners.insert_listener(&listener).await?;
        Ok(Registered {
            listener,
            generated_secret: generated,
        })
    }

    pub async fn list(&self, principal: &Principal) -> Result<Vec<ListenerService>> {
        principal.authorize(Operation::ListListenerServices, Target::ListenerService)?;
        self.listeners
            .list_listeners(&principal.enterprise_id)
            .await
    }

    pub async fn get(
        &self,
        principal: &Principal,
        id: &ListenerServiceId,
    ) -> Result<ListenerService> {
        principal.authorize(Operation::GetListenerService, Target::ListenerService)?;
        self.listeners
            .listener(&principal.enterprise_id, id)
            .await?
            .ok_or_else(|| id.not_found())
    }

    /// PUT: replaces the fields; the secret changes only when the body has one.
    pub async fn replace(
        &self,
        principal: &Principal,
        id: &ListenerServiceId,
        body: &Map<String, Value>,
    ) -> Result<ListenerService> {
        principal.authorize(Operation::UpdateListenerService, Target::ListenerService)?;
        let (profile, secret) = decode_listener(body)?;
        if let Some(Value::String(body_id)) = body.get("id")
            && body_id != id.as_str()
        {
            return Err(crate::error::Error::unmodifiable(
                ListenerServiceId::ENTITY_CLASS,
                id.as_str(),
                "The id",
            ));
        }
        let current = self.get(principal, id).await?;
        let secret = match secret {
            SecretChange::Set(s) => self.sealer.seal(&s, None)?,
            SecretChange::Keep | SecretChange::Clear => current.secret,
        };
        let listener = ListenerService {
            profile,
            secret,
            ..current
        };
        if !self.listeners.update_listener(&listener).await? {
            return Err(id.not_found());
        }
        Ok(listener)
    }

    pub async fn delete(&self, principal: &Principal, id: &ListenerServiceId) -> Result<()> {
        principal.authorize(Operation::DeleteListenerService, Target::ListenerService)?;
        if self
            .listeners
            .delete_listener(&principal.enterprise_id, id)
            .await?
        {
            Ok(())
        } else {
            Err(id.not_found())
        }
    }
}

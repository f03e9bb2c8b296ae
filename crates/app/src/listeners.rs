//! Listener-service records: register, list, read, replace, delete.

use super::audit::Auditor;
use super::auth::Principal;
use super::control::listener_secret;
use roomlink_domain::access::{Operation, Target};
use roomlink_domain::audit::AuditEntry;
use roomlink_domain::cluster::{ClusterEvent, EventBus};
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EnterpriseId, ListenerServiceId};
use roomlink_domain::listener::{
    LinkPresence, ListenerConnection, ListenerContact, ListenerService, ListenerView,
    decode_listener,
};
use roomlink_domain::ports::{Clock, IdGenerator, LinkStore, ListenerStore, SecretSealer};
use roomlink_domain::secret::{Secret, SecretChange};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

pub struct ListenerAdmin {
    pub listeners: Arc<dyn ListenerStore>,
    pub links: Arc<dyn LinkStore>,
    pub sealer: Arc<dyn SecretSealer>,
    pub ids: Arc<dyn IdGenerator>,
    pub clock: Arc<dyn Clock>,
    pub events: Arc<dyn EventBus>,
    pub audit: Arc<Auditor>,
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
        let id = ListenerServiceId::from_trusted(self.ids.entity_id());
        let audit = self.audit.op(
            principal,
            Operation::CreateListenerService,
            Some(id.as_str()),
        );
        let result = self.create_audited(principal, body, id, &audit).await;
        self.audit.settle(audit, result).await
    }

    async fn create_audited(
        &self,
        principal: &Principal,
        body: &Map<String, Value>,
        id: ListenerServiceId,
        audit: &AuditEntry,
    ) -> Result<Registered> {
        principal.authorize(Operation::CreateListenerService, Target::ListenerService)?;
        let (profile, secret) = decode_listener(body)?;
        if body.get("id").is_some_and(|id| !id.is_null()) {
            return Err(roomlink_domain::error::Error::invalid(
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
            id,
            enterprise_id: principal.enterprise_id.clone(),
            profile,
            secret: self.sealer.seal(&secret, None)?,
        };
        self.listeners.insert_listener(&listener, audit).await?;
        Ok(Registered {
            listener,
            generated_secret: generated,
        })
    }

    pub async fn list(&self, principal: &Principal) -> Result<Vec<ListenerView>> {
        principal.authorize(Operation::ListListenerServices, Target::ListenerService)?;
        self.views(&principal.enterprise_id).await
    }

    /// Every listener of the enterprise with its reachability, for rounds that act for no
    /// caller (the fleet health gauges).
    pub async fn views(&self, enterprise: &EnterpriseId) -> Result<Vec<ListenerView>> {
        let listeners = self.listeners.list_listeners(enterprise).await?;
        self.with_links(enterprise, listeners).await
    }

    pub async fn get(&self, principal: &Principal, id: &ListenerServiceId) -> Result<ListenerView> {
        let listener = self.record(principal, id).await?;
        let mut views = self
            .with_links(&principal.enterprise_id, vec![listener])
            .await?;
        views.pop().ok_or_else(|| id.not_found())
    }

    async fn record(
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

    /// Adds what is known of each listener's reachability: outbound ones' live connections
    /// and inbound ones' last checks (one read each for all of them).
    async fn with_links(
        &self,
        enterprise: &EnterpriseId,
        listeners: Vec<ListenerService>,
    ) -> Result<Vec<ListenerView>> {
        let outbound = |l: &ListenerService| l.profile.connection == ListenerConnection::Outbound;
        let links = if listeners.iter().any(outbound) {
            self.links.links(enterprise).await?
        } else {
            Vec::new()
        };
        let checks = if listeners.iter().any(|l| !outbound(l)) {
            self.listeners.checks(enterprise).await?
        } else {
            Vec::new()
        };
        let now = self.clock.now_ms();
        // By listener, the first of each kept: a lookup per listener, not a scan (an
        // enterprise may have 10,000 outbound listeners).
        let mut links: HashMap<_, _> = links
            .into_iter()
            .filter(|l| l.is_live(now))
            .rev()
            .map(|l| (l.listener_id.clone(), l))
            .collect();
        let mut checks: HashMap<_, _> = checks
            .into_iter()
            .rev()
            .map(|c| (c.listener_id.clone(), c))
            .collect();
        Ok(listeners
            .into_iter()
            .map(|listener| {
                let contact = if outbound(&listener) {
                    ListenerContact::Linked(links.remove(&listener.id))
                } else {
                    ListenerContact::Checked(checks.remove(&listener.id))
                };
                ListenerView { listener, contact }
            })
            .collect())
    }

    /// PUT: replaces the fields; the secret changes only when the body has one.
    pub async fn replace(
        &self,
        principal: &Principal,
        id: &ListenerServiceId,
        body: &Map<String, Value>,
    ) -> Result<ListenerView> {
        let audit = self.audit.op(
            principal,
            Operation::UpdateListenerService,
            Some(id.as_str()),
        );
        let result = self.replace_audited(principal, id, body, &audit).await;
        self.audit.settle(audit, result).await
    }

    async fn replace_audited(
        &self,
        principal: &Principal,
        id: &ListenerServiceId,
        body: &Map<String, Value>,
        audit: &AuditEntry,
    ) -> Result<ListenerView> {
        principal.authorize(Operation::UpdateListenerService, Target::ListenerService)?;
        let (profile, secret) = decode_listener(body)?;
        if let Some(Value::String(body_id)) = body.get("id")
            && body_id != id.as_str()
        {
            return Err(roomlink_domain::error::Error::unmodifiable(
                ListenerServiceId::ENTITY_CLASS,
                id.as_str(),
                "The id",
            ));
        }
        let current = self.record(principal, id).await?;
        let new_secret = matches!(secret, SecretChange::Set(_));
        let secret = match secret {
            SecretChange::Set(s) => self.sealer.seal(&s, None)?,
            SecretChange::Keep | SecretChange::Clear => current.secret.clone(),
        };
        let drop_link = new_secret || profile.connection != ListenerConnection::Outbound;
        let listener = ListenerService {
            profile,
            secret,
            ..current
        };
        let audit = if new_secret {
            audit.clone().detail("secret replaced")
        } else {
            audit.clone()
        };
        if !self.listeners.update_listener(&listener, &audit).await? {
            return Err(id.not_found());
        }
        self.events.publish(ClusterEvent::ListenerChanged {
            listener: id.clone(),
            drop_link,
        });
        // The answer is shaped like GET's (a connection that stays open shows as such).
        let mut views = self
            .with_links(&principal.enterprise_id, vec![listener])
            .await?;
        views.pop().ok_or_else(|| id.not_found())
    }

    pub async fn delete(&self, principal: &Principal, id: &ListenerServiceId) -> Result<()> {
        let audit = self.audit.op(
            principal,
            Operation::DeleteListenerService,
            Some(id.as_str()),
        );
        let result = async {
            principal.authorize(Operation::DeleteListenerService, Target::ListenerService)?;
            if self
                .listeners
                .delete_listener(&principal.enterprise_id, id, &audit)
                .await?
            {
                self.events.publish(ClusterEvent::ListenerChanged {
                    listener: id.clone(),
                    drop_link: true,
                });
                Ok(())
            } else {
                Err(id.not_found())
            }
        }
        .await;
        self.audit.settle(audit, result).await
    }

    /// An outbound listener opening its connection: the listener whose id and secret these
    /// are. An unknown id and a wrong secret are the same `BadCredentialsException`; an
    /// inbound listener is `Invalid` (only once its secret matched).
    pub async fn authenticate_link(
        &self,
        id: &str,
        presented: Option<&str>,
    ) -> Result<ListenerService> {
        let Some(presented) = presented else {
            return Err(Error::not_authenticated());
        };
        let refused = Error::bad_credentials;
        let id = ListenerServiceId::parse(id).map_err(|_| refused())?;
        let listener = self
            .listeners
            .listener_by_id(&id)
            .await?
            .ok_or_else(refused)?;
        let secret = listener_secret(self.sealer.as_ref(), &listener)?;
        if !secret.matches(presented) {
            return Err(refused());
        }
        if listener.profile.connection != ListenerConnection::Outbound {
            return Err(Error::invalid(format!(
                "listener service {id} is registered as inbound: set \"connection\": \"outbound\" to let it connect"
            )));
        }
        Ok(listener)
    }

    /// A connection opened on `instance` (replacing the listener's previous one), now.
    pub async fn link_up(
        &self,
        listener: &ListenerServiceId,
        instance: &str,
        version: Option<String>,
    ) -> Result<LinkPresence> {
        let now = self.clock.now_ms();
        let presence = LinkPresence {
            listener_id: listener.clone(),
            instance: instance.to_owned(),
            since_ms: now,
            version,
            seen_ms: now,
        };
        self.links.link_up(&presence).await?;
        Ok(presence)
    }

    /// A connection closed on this instance.
    pub async fn link_down(&self, presence: &LinkPresence) -> Result<()> {
        self.links
            .link_down(&presence.listener_id, &presence.instance, presence.since_ms)
            .await
    }

    /// The holder's heartbeat for every connection it holds.
    pub async fn links_seen(&self, instance: &str) -> Result<()> {
        self.links.links_seen(instance, self.clock.now_ms()).await
    }
}

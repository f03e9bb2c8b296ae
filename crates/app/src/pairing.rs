//! Zero Touch pairing: each endpoint's current pairing code, the pairing-code view a companion
//! device reads, and who is paired right now.
//!
//! An endpoint's code is made on first request (`currentpairingcode`) and then kept: forever
//! when the endpoint's `zeroTouchType` is STATIC or unset, for `PairingPolicy::rotation_ms`
//! when it is ROTATING, after which the next request (or redemption attempt) finds it expired
//! and a new one replaces it. A code is redeemable only while it is the endpoint's current,
//! unexpired code.

use super::auth::Principal;
use roomlink_domain::access::{Operation, Target};
use roomlink_domain::endpoint::Endpoint;
use roomlink_domain::enums::EndpointCapability;
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::{EndpointId, EnterpriseId, PairingCodeId};
use roomlink_domain::pairing::{PairedStatus, PairingCode, PairingPolicy};
use roomlink_domain::ports::{
    Clock, CommandTarget, EndpointCredential, EndpointStore, IdGenerator, ListenerStore,
    ListenerTransport, PairingStore, SecretSealer,
};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::sync::Arc;

/// `GET /api/endpoints/{pairingCodeId}/pairingcode`: the code, its endpoint (password never
/// included) and the capabilities its listener reports.
pub struct PairingCodeView {
    pub code: PairingCode,
    pub endpoint: Endpoint,
    pub capabilities: Vec<EndpointCapability>,
}

impl Serialize for PairingCodeView {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("id", &self.code.id)?;
        m.serialize_entry("code", &self.code.code)?;
        m.serialize_entry("endpoint", &self.endpoint)?;
        m.serialize_entry("endpointCapabilities", &self.capabilities)?;
        m.end()
    }
}

pub struct PairingService {
    pub endpoints: Arc<dyn EndpointStore>,
    pub listeners: Arc<dyn ListenerStore>,
    pub pairing: Arc<dyn PairingStore>,
    pub transport: Arc<dyn ListenerTransport>,
    pub sealer: Arc<dyn SecretSealer>,
    pub ids: Arc<dyn IdGenerator>,
    pub clock: Arc<dyn Clock>,
    pub policy: PairingPolicy,
}

impl PairingService {
    /// The endpoint's current code (`{id, code}`), made or rotated as needed.
    pub async fn current_code(
        &self,
        principal: &Principal,
        id: &EndpointId,
    ) -> Result<PairingCode> {
        principal.authorize(Operation::CurrentPairingCode, Target::Endpoint(id))?;
        let endpoint = self.endpoint(&principal.enterprise_id, id).await?;
        let now = self.clock.now_ms();
        if let Some(code) = self
            .pairing
            .current_pairing_code(&principal.enterprise_id, id)
            .await?
            && self.policy.is_fresh(&code, &endpoint, now)
        {
            return Ok(code);
        }
        let code = PairingCode {
            id: PairingCodeId::from_trusted(self.ids.entity_id()),
            enterprise_id: principal.enterprise_id.clone(),
            endpoint_id: id.clone(),
            code: self.ids.pairing_code(),
            created_at: now,
        };
        // Reading the code is not audited; making a new one is (it ends the old one's use).
        let audit = super::audit::entry_of(
            principal,
            Operation::CurrentPairingCode.name(),
            Some(id.as_str()),
            now,
        )
        .detail("new pairing code");
        self.pairing.save_pairing_code(&code, &audit).await?;
        Ok(code)
    }

    /// A code given to token creation, if it is some endpoint's current, fresh code.
    pub async fn redeemable(&self, code: &str) -> Result<Option<PairingCode>> {
        let Some(found) = self.pairing.pairing_code_by_code(code).await? else {
            return Ok(None);
        };
        let Some(endpoint) = self
            .endpoints
            .endpoint(&found.enterprise_id, &found.endpoint_id)
            .await?
        else {
            return Ok(None);
        };
        Ok(self
            .policy
            .is_fresh(&found, &endpoint, self.clock.now_ms())
            .then_some(found))
    }

    /// The pairing code with its endpoint and capabilities. For a Zero Touch token this is a
    /// use: its PairedStatus is created or its heartbeat moves.
    pub async fn view(&self, principal: &Principal, id: &PairingCodeId) -> Result<PairingCodeView> {
        principal.authorize(Operation::PairingCode, Target::PairingCode(id))?;
        self.note_zero_touch_use(principal).await?;
        let enterprise = &principal.enterprise_id;
        let code = self
            .pairing
            .pairing_code(enterprise, id)
            .await?
            .ok_or_else(|| id.not_found())?;
        let endpoint = self.endpoint(enterprise, &code.endpoint_id).await?;
        if !self.policy.is_fresh(&code, &endpoint, self.clock.now_ms()) {
            return Err(id.not_found());
        }
        let capabilities = self.capabilities(enterprise, &endpoint).await;
        Ok(PairingCodeView {
            code,
            endpoint,
            capabilities,
        })
    }

    /// Who is paired to the endpoint now (heartbeat within the last minute).
    pub async fn paired(
        &self,
        principal: &Principal,
        id: &EndpointId,
    ) -> Result<Vec<PairedStatus>> {
        principal.authorize(Operation::Paired, Target::Endpoint(id))?;
        self.note_zero_touch_use(principal).await?;
        let enterprise = &principal.enterprise_id;
        self.endpoint(enterprise, id).await?;
        self.pairing
            .paired(enterprise, id, self.clock.now_ms())
            .await
    }

    async fn endpoint(&self, enterprise: &EnterpriseId, id: &EndpointId) -> Result<Endpoint> {
        self.endpoints
            .endpoint(enterprise, id)
            .await?
            .ok_or_else(|| id.not_found())
    }

    /// What the endpoint's listener reports; none when it has no listener or cannot be asked
    /// (the view is still useful without them; the reason is logged by the transport).
    async fn capabilities(
        &self,
        enterprise: &EnterpriseId,
        endpoint: &Endpoint,
    ) -> Vec<EndpointCapability> {
        let Some(listener_id) = endpoint.profile().listener() else {
            return Vec::new();
        };
        let Ok(Some(listener)) = self.listeners.listener(enterprise, &listener_id).await else {
            return Vec::new();
        };
        let Ok(Some(secret)) = self.sealer.open(&listener.secret) else {
            return Vec::new();
        };
        let target = CommandTarget {
            listener_id,
            route: listener.route(),
            listener_secret: secret,
            endpoint: endpoint.clone(),
            credential: EndpointCredential::None,
        };
        self.transport
            .capabilities(&target)
            .await
            .unwrap_or_default()
    }

    async fn note_zero_touch_use(&self, principal: &Principal) -> Result<()> {
        note_zero_touch_use(self.pairing.as_ref(), self.clock.as_ref(), principal).await
    }
}

/// A Zero Touch token's use of an operation naming its pairing code or endpoint: its
/// PairedStatus is created, or its heartbeat moves. Other callers are not tracked.
pub(crate) async fn note_zero_touch_use(
    pairing: &dyn PairingStore,
    clock: &dyn Clock,
    principal: &Principal,
) -> Result<()> {
    if let Some(token) = principal.token().filter(|t| t.pairing().is_some()) {
        pairing.touch_paired(token, clock.now_ms()).await?;
    }
    Ok(())
}

/// `Invalid` for a pairing code that is not redeemable.
pub fn wrong_code() -> Error {
    Error::invalid("code: the pairing code is wrong or no longer current")
}

//! Access-token use cases: create, list, inspect, delete.

use super::audit::Auditor;
use super::auth::{Authenticator, Principal, Subject};
use super::pairing::{PairingService, wrong_code};
use super::revocation::Revocation;
use roomlink_domain::access::{Operation, RoleSet, Target};
use roomlink_domain::audit::{AuditEntry, CREATE_ACCESS_TOKEN};
use roomlink_domain::enums::ClientDeviceType;
use roomlink_domain::error::{Error, ErrorKind, Result};
use roomlink_domain::ids::{EnterpriseId, TokenId};
use roomlink_domain::ports::{Clock, IdGenerator, PlatformIdentity, TokenStore};
use roomlink_domain::secret::Secret;
use roomlink_domain::token::{AccessToken, PairingGrant, TokenHash, TokenParts, lifetime_ms};
use serde::ser::{Serialize, SerializeMap, Serializer};
use std::sync::Arc;

/// Options of token creation, from the query string.
#[derive(Debug, Clone, Default)]
pub struct CreateOptions {
    pub duration: Option<String>,
    pub client_name: Option<String>,
    pub client_device_type: Option<ClientDeviceType>,
}

/// A token as answered: the value only at creation, never afterwards.
pub struct TokenView<'a> {
    pub token: &'a AccessToken,
    pub value: Option<&'a Secret>,
}

impl Serialize for TokenView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let p = self.token.parts();
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("accessToken", &self.value.map(Secret::expose))?;
        m.serialize_entry("id", &p.id)?;
        m.serialize_entry("enterpriseName", &p.enterprise_name)?;
        m.serialize_entry("creationDate", &p.creation_date)?;
        m.serialize_entry("expirationDate", &p.expiration_date)?;
        m.serialize_entry("roles", &p.roles)?;
        m.serialize_entry("clientName", &p.client_name)?;
        m.serialize_entry("creator", &p.creator)?;
        m.serialize_entry("firstName", &p.first_name)?;
        m.serialize_entry("lastName", &p.last_name)?;
        // The predecessor's fields the contract leaves out, for its clients: `username` is who
        // created the token (the service user, or the platform user's username, also for a
        // Zero Touch token), i.e. `creator`; `seamId` was the enterprise's id on the meeting
        // platform, which roomlink does not know, so it is null (the predecessor allowed null).
        m.serialize_entry("username", &p.creator)?;
        m.serialize_entry("seamId", &None::<String>)?;
        if let Some(platform_id) = p.platform_id {
            m.serialize_entry("platformId", &platform_id)?;
        }
        if let Some(g) = &p.pairing {
            m.serialize_entry("pairingCodeId", &g.pairing_code_id)?;
            m.serialize_entry("pairingCodeEndpointId", &g.endpoint_id)?;
            m.serialize_entry("clientDeviceType", &g.client_device_type)?;
        }
        m.end()
    }
}

/// A token just created, with its value (to be shown once).
pub struct NewToken {
    pub token: AccessToken,
    pub value: Secret,
}

impl NewToken {
    pub fn view(&self) -> TokenView<'_> {
        TokenView {
            token: &self.token,
            value: Some(&self.value),
        }
    }
}

pub struct TokenService {
    pub auth: Arc<Authenticator>,
    pub tokens: Arc<dyn TokenStore>,
    pub pairing: Arc<PairingService>,
    pub platform: Arc<dyn PlatformIdentity>,
    pub ids: Arc<dyn IdGenerator>,
    pub clock: Arc<dyn Clock>,
    pub revocation: Arc<Revocation>,
    pub audit: Arc<Auditor>,
}

/// Client names: at most 255 printable characters.
fn check_client_name(name: Option<&str>) -> Result<Option<String>> {
    match name.filter(|n| !n.is_empty()) {
        Some(n) if n.chars().count() > 255 || n.chars().any(char::is_control) => Err(
            Error::invalid("clientName: at most 255 printable characters are allowed"),
        ),
        other => Ok(other.map(str::to_owned)),
    }
}

impl TokenService {
    /// A token for a caller who presented Basic credentials (service or platform user).
    pub async fn create_with_password(
        &self,
        username: &str,
        password: Secret,
        options: &CreateOptions,
    ) -> Result<NewToken> {
        let principal = self.auth.by_password(username, password).await?;
        let audit = self.audit.entry(&principal, CREATE_ACCESS_TOKEN, None);
        let result = self.issue(&principal, options, None, &audit).await;
        self.audit.settle(audit, result).await
    }

    /// A token from a platform access token; with a pairing `code`, a Zero Touch token.
    pub async fn create_with_platform_token(
        &self,
        platform_token: &Secret,
        code: Option<&str>,
        options: &CreateOptions,
    ) -> Result<NewToken> {
        let user = self
            .platform
            .introspect(platform_token)
            .await?
            .ok_or_else(Error::bad_credentials)?;
        let principal = self.auth.platform_principal(user.clone()).await?;
        let audit = self.audit.entry(&principal, CREATE_ACCESS_TOKEN, None);
        let result = self
            .issue_for_platform(&principal, user.zero_touch, code, options, &audit)
            .await;
        self.audit.settle(audit, result).await
    }

    async fn issue_for_platform(
        &self,
        principal: &Principal,
        zero_touch: bool,
        code: Option<&str>,
        options: &CreateOptions,
        audit: &AuditEntry,
    ) -> Result<NewToken> {
        match code {
            None => self.issue(principal, options, None, audit).await,
            // An empty code is a pairing code that went missing on the way (an unset variable,
            // a blank field), not a request for the platform user's full-rights token.
            Some("") => Err(Error::invalid(
                "code is empty: give the room's pairing code, or leave code out for the platform user's own token",
            )),
            Some(code) => {
                if !zero_touch {
                    return Err(Error::new(
                        ErrorKind::Forbidden,
                        "Zero Touch is not enabled for this user on the platform.",
                    )
                    .with("operation", "auth.createAccessToken")
                    .with("roles", principal.roles.names()));
                }
                let pairing = self
                    .pairing
                    .redeemable(code.trim())
                    .await?
                    .filter(|p| p.enterprise_id == principal.enterprise_id)
                    .ok_or_else(wrong_code)?;
                let grant = PairingGrant {
                    pairing_code_id: pairing.id,
                    endpoint_id: pairing.endpoint_id,
                    client_device_type: options.client_device_type,
                };
                self.issue(principal, options, Some(grant), audit).await
            }
        }
    }

    async fn issue(
        &self,
        principal: &Principal,
        options: &CreateOptions,
        pairing: Option<PairingGrant>,
        audit: &AuditEntry,
    ) -> Result<NewToken> {
        let now = self.clock.now_ms();
        let lifetime = lifetime_ms(options.duration.as_deref(), pairing.is_some())?;
        let value = self.ids.access_token();
        let (platform_id, first_name, last_name) = match &principal.subject {
            Subject::PlatformUser(u) => (
                Some(u.platform_id),
                u.first_name.clone(),
                u.last_name.clone(),
            ),
            _ => (None, None, None),
        };
        let roles = if pairing.is_some() {
            RoleSet::pairing_code()
        } else {
            principal.roles
        };
        let token = AccessToken::new(TokenParts {
            id: TokenId::from_trusted(self.ids.entity_id()),
            hash: TokenHash::of(&value),
            enterprise_id: principal.enterprise_id.clone(),
            enterprise_name: principal.enterprise_name.clone(),
            creation_date: now,
            expiration_date: now.saturating_add(lifetime),
            roles,
            client_name: check_client_name(options.client_name.as_deref())?,
            creator: principal.username().map(str::to_owned),
            platform_id,
            first_name,
            last_name,
            pairing,
        })?;
        let audit = audit.clone().target(token.id().as_str());
        self.tokens.insert_token(&token, &audit).await?;
        Ok(NewToken { token, value })
    }

    /// The enterprise's live tokens (values never included).
    pub async fn list(&self, principal: &Principal) -> Result<Vec<AccessToken>> {
        principal.authorize(Operation::ListAccessTokens, Target::Enterprise)?;
        self.tokens
            .list_tokens(&principal.enterprise_id, self.clock.now_ms())
            .await
    }

    /// One token of the caller's enterprise, named by its value or its id. `NotFound` otherwise.
    pub async fn get(&self, principal: &Principal, key: &str) -> Result<AccessToken> {
        let token = self.find(&principal.enterprise_id, key).await?;
        principal.authorize(
            Operation::GetAccessToken,
            Target::Token {
                own: is_own(principal, &token),
            },
        )?;
        Ok(token)
    }

    /// Deletes a token (and its paired statuses). Anyone may delete their own token; deleting
    /// another caller's needs ROLE_READWRITE.
    pub async fn delete(&self, principal: &Principal, key: &str) -> Result<()> {
        // The key may be the token's value: the entry names the token by id, once found.
        let audit = self.audit.op(principal, Operation::DeleteAccessToken, None);
        let result = self.delete_found(principal, key, &audit).await;
        self.audit.settle(audit, result).await
    }

    async fn delete_found(
        &self,
        principal: &Principal,
        key: &str,
        audit: &AuditEntry,
    ) -> Result<()> {
        let token = self.find(&principal.enterprise_id, key).await?;
        let audit = audit.clone().target(token.id().as_str());
        principal.authorize(
            Operation::DeleteAccessToken,
            Target::Token {
                own: is_own(principal, &token),
            },
        )?;
        self.revocation.forget_here(token.hash());
        if !self
            .tokens
            .delete_token(&principal.enterprise_id, token.id(), &audit)
            .await?
        {
            return Err(Error::not_found(TokenId::ENTITY_CLASS, token.id().as_str()));
        }
        // Again after the deletion (a request between the first drop and the deletion may
        // have cached it anew), here and on every other instance.
        self.revocation.revoke(std::slice::from_ref(token.hash()));
        Ok(())
    }

    async fn find(&self, enterprise: &EnterpriseId, key: &str) -> Result<AccessToken> {
        let now = self.clock.now_ms();
        let not_found = || Error::not_found(TokenId::ENTITY_CLASS, "(the given token)");
        if let Some(t) = self
            .tokens
            .token_by_hash(&TokenHash::of(&Secret::new(key)), now)
            .await?
            .filter(|t| t.enterprise_id() == enterprise)
        {
            return Ok(t);
        }
        let Ok(id) = TokenId::parse(key) else {
            return Err(not_found());
        };
        self.tokens
            .token_by_id(enterprise, &id, now)
            .await?
            .ok_or_else(not_found)
    }
}

fn is_own(principal: &Principal, token: &AccessToken) -> bool {
    principal.token().is_some_and(|own| own.id() == token.id())
}

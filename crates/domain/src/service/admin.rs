//! Operator use cases behind `roomlink admin`: enterprises and service users.

use crate::access::Role;
use crate::enterprise::{
    DEFAULT_ENDPOINT_LIMIT, Enterprise, ServiceUser, check_enterprise_name, check_username,
};
use crate::error::{Error, Result};
use crate::ids::{EnterpriseId, UserId};
use crate::ports::{EnterpriseStore, IdGenerator, PasswordHasher, SecretSealer, UserStore};
use crate::secret::Secret;
use std::sync::Arc;

/// Service passwords: 8 to 1024 characters.
pub const SERVICE_PASSWORD_MIN_CHARS: usize = 8;

pub struct Admin {
    pub enterprises: Arc<dyn EnterpriseStore>,
    pub users: Arc<dyn UserStore>,
    pub hasher: Arc<dyn PasswordHasher>,
    pub sealer: Arc<dyn SecretSealer>,
    pub ids: Arc<dyn IdGenerator>,
}

impl Admin {
    /// Creates an enterprise; `Invalid` if the name is malformed or taken.
    pub async fn create_enterprise(
        &self,
        name: &str,
        endpoint_limit: Option<u32>,
    ) -> Result<Enterprise> {
        check_enterprise_name(name)?;
        let enterprise = Enterprise {
            id: EnterpriseId::from_trusted(self.ids.entity_id()),
            name: name.to_owned(),
            endpoint_limit: endpoint_limit.unwrap_or(DEFAULT_ENDPOINT_LIMIT),
            public_key: None,
        };
        self.enterprises.create_enterprise(&enterprise).await?;
        Ok(enterprise)
    }

    /// Creates a service user of a named enterprise with ROLE_READWRITE or ROLE_READONLY.
    pub async fn create_user(
        &self,
        enterprise_name: &str,
        username: &str,
        role: Role,
        password: Secret,
    ) -> Result<ServiceUser> {
        check_username(username)?;
        if role == Role::PairingCode {
            return Err(Error::invalid(
                "role: service users are ROLE_READWRITE or ROLE_READONLY",
            ));
        }
        let n = password.expose().chars().count();
        if !(SERVICE_PASSWORD_MIN_CHARS..=crate::rules::PASSWORD_MAX_CHARS).contains(&n) {
            return Err(Error::invalid(format!(
                "password: must be {SERVICE_PASSWORD_MIN_CHARS} to {} characters",
                crate::rules::PASSWORD_MAX_CHARS
            )));
        }
        let enterprise = self
            .enterprises
            .enterprise_by_name(enterprise_name)
            .await?
            .ok_or_else(|| {
                Error::invalid(format!(
                    "enterprise: no enterprise named '{enterprise_name}'"
                ))
            })?;
        let user = ServiceUser {
            id: UserId::from_trusted(self.ids.entity_id()),
            enterprise_id: enterprise.id,
            username: username.to_owned(),
            password_hash: self.hasher.hash(password).await?,
            role,
        };
        self.users.create_user(&user).await?;
        Ok(user)
    }
}

impl Admin {
    /// The caller's own enterprise (`GET /api/enterprises/self`).
    pub async fn enterprise_of(
        &self,
        principal: &crate::service::auth::Principal,
    ) -> Result<Enterprise> {
        principal.authorize(
            crate::access::Operation::GetEnterprise,
            crate::access::Target::Enterprise,
        )?;
        self.enterprises
            .enterprise(&principal.enterprise_id)
            .await?
            .ok_or_else(|| principal.enterprise_id.not_found())
    }
}

impl Admin {
    /// `PUT /api/enterprises/self`: registers (or, with `None`, removes) the public key that
    /// endpoint passwords are sealed to from now on. Passwords sealed before keep their old
    /// key, so commands for those endpoints answer `EncryptionUpdated` until the password is
    /// entered again.
    pub async fn set_public_key(
        &self,
        principal: &crate::service::auth::Principal,
        public_key: Option<String>,
    ) -> Result<Enterprise> {
        principal.authorize(
            crate::access::Operation::UpdateEnterprise,
            crate::access::Target::Enterprise,
        )?;
        let public_key = public_key
            .map(|k| k.trim().to_owned())
            .filter(|k| !k.is_empty());
        if let Some(key) = &public_key {
            // The sealer knows the key format; asking for its id validates it.
            self.sealer.current_key_id(Some(key))?;
        }
        if !self
            .enterprises
            .set_public_key(&principal.enterprise_id, public_key)
            .await?
        {
            return Err(principal.enterprise_id.not_found());
        }
        self.enterprise_of(principal).await
    }
}

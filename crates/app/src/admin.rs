//! Operator use cases behind `roomlink admin`: enterprises and service users.
//!
//! What happens to tokens (see `docs/operations.md`): disabling, deleting a user or setting
//! its password revokes every token the user created (tokens record their creator's username;
//! tokens made with such a token inherit it), so a leaked token dies with the credentials.
//! Deleting an enterprise revokes all of its tokens. Both go through [`Revocation`], so every
//! instance refuses them at once.
//! Enabling restores sign-in only, never tokens.

use crate::revocation::Revocation;
use roomlink_domain::access::Role;
use roomlink_domain::enterprise::{
    DEFAULT_ENDPOINT_LIMIT, Enterprise, EnterpriseUsage, ServiceUser, check_enterprise_name,
    check_username,
};
use roomlink_domain::error::{Error, ErrorKind, Result};
use roomlink_domain::ids::{EnterpriseId, UserId};
use roomlink_domain::ports::{
    EnterpriseStore, IdGenerator, PasswordHasher, SecretSealer, TokenStore, UserStore,
};
use roomlink_domain::secret::Secret;
use serde::Serialize;
use std::sync::Arc;

/// Service passwords: 8 to 1024 characters.
pub const SERVICE_PASSWORD_MIN_CHARS: usize = 8;

pub struct Admin {
    pub enterprises: Arc<dyn EnterpriseStore>,
    pub users: Arc<dyn UserStore>,
    pub tokens: Arc<dyn TokenStore>,
    pub hasher: Arc<dyn PasswordHasher>,
    pub sealer: Arc<dyn SecretSealer>,
    /// Tokens of disabled, deleted or re-passworded users and of deleted enterprises.
    pub revocation: Arc<Revocation>,
    pub ids: Arc<dyn IdGenerator>,
    pub audit: Arc<super::audit::Auditor>,
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
        check_service_password(&password)?;
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
            disabled: false,
        };
        self.users.create_user(&user).await?;
        Ok(user)
    }
}

/// `Invalid` unless the password has 8 to 1024 characters.
fn check_service_password(password: &Secret) -> Result<()> {
    let n = password.expose().chars().count();
    if (SERVICE_PASSWORD_MIN_CHARS..=roomlink_domain::rules::PASSWORD_MAX_CHARS).contains(&n) {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "password: must be {SERVICE_PASSWORD_MIN_CHARS} to {} characters",
            roomlink_domain::rules::PASSWORD_MAX_CHARS
        )))
    }
}

/// An enterprise and what it owns (`roomlink admin enterprise list|show`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnterpriseInfo {
    #[serde(flatten)]
    pub enterprise: Enterprise,
    pub usage: EnterpriseUsage,
}

/// A service user as an operator sees it: never its password hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserInfo {
    pub enterprise: String,
    pub username: String,
    pub role: &'static str,
    pub disabled: bool,
}

impl UserInfo {
    fn of(enterprise: &Enterprise, user: ServiceUser) -> UserInfo {
        UserInfo {
            enterprise: enterprise.name.clone(),
            username: user.username,
            role: user.role.as_str(),
            disabled: user.disabled,
        }
    }
}

/// What a user change did to the user's tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Revoked {
    pub tokens: u64,
}

/// The operator's enterprise commands.
impl Admin {
    /// The enterprise with this name; `NotFound` otherwise.
    pub async fn enterprise_named(&self, name: &str) -> Result<Enterprise> {
        self.enterprises
            .enterprise_by_name(name)
            .await?
            .ok_or_else(|| no_enterprise(name))
    }

    async fn info(&self, enterprise: Enterprise) -> Result<EnterpriseInfo> {
        let usage = self.enterprises.enterprise_usage(&enterprise.id).await?;
        Ok(EnterpriseInfo { enterprise, usage })
    }

    /// Every enterprise, by name, with its counts.
    pub async fn list_enterprises(&self) -> Result<Vec<EnterpriseInfo>> {
        let mut all = Vec::new();
        for enterprise in self.enterprises.list_enterprises().await? {
            all.push(self.info(enterprise).await?);
        }
        Ok(all)
    }

    pub async fn show_enterprise(&self, name: &str) -> Result<EnterpriseInfo> {
        let enterprise = self.enterprise_named(name).await?;
        self.info(enterprise).await
    }

    /// Sets the endpoint limit. `Invalid` below the endpoints the enterprise already has:
    /// a limit it already exceeds would refuse every insert with no way back but deletions.
    pub async fn set_endpoint_limit(&self, name: &str, limit: u32) -> Result<Enterprise> {
        let mut enterprise = self.enterprise_named(name).await?;
        let usage = self.enterprises.enterprise_usage(&enterprise.id).await?;
        if u64::from(limit) < usage.endpoints {
            return Err(Error::invalid(format!(
                "endpoint limit: {limit} is below the {} endpoints enterprise '{name}' has",
                usage.endpoints
            )));
        }
        if !self
            .enterprises
            .set_endpoint_limit(&enterprise.id, limit)
            .await?
        {
            return Err(no_enterprise(name));
        }
        enterprise.endpoint_limit = limit;
        Ok(enterprise)
    }

    /// Deletes the enterprise with everything it owns. While it has endpoints, only when
    /// `confirmed` (the operator said `--yes`); `Invalid` otherwise, and nothing is deleted.
    pub async fn delete_enterprise(&self, name: &str, confirmed: bool) -> Result<EnterpriseInfo> {
        let info = self.show_enterprise(name).await?;
        if info.usage.endpoints > 0 && !confirmed {
            return Err(Error::invalid(format!(
                "enterprise '{name}' still has {} endpoint(s); confirm (--yes) to delete them with it",
                info.usage.endpoints
            )));
        }
        let Some(tokens) = self
            .enterprises
            .delete_enterprise(&info.enterprise.id)
            .await?
        else {
            return Err(no_enterprise(name));
        };
        self.revocation.revoke(&tokens);
        Ok(info)
    }
}

/// The operator's service-user commands; users are named by enterprise and username.
impl Admin {
    /// The enterprise's users, or every enterprise's (by enterprise name, then username).
    pub async fn list_users(&self, enterprise: Option<&str>) -> Result<Vec<UserInfo>> {
        let enterprises = match enterprise {
            Some(name) => vec![self.enterprise_named(name).await?],
            None => self.enterprises.list_enterprises().await?,
        };
        let mut all = Vec::new();
        for e in enterprises {
            for user in self.users.list_users(&e.id).await? {
                all.push(UserInfo::of(&e, user));
            }
        }
        Ok(all)
    }

    /// Disables (and revokes the tokens of) or enables a user. Idempotent.
    pub async fn set_user_disabled(
        &self,
        enterprise: &str,
        username: &str,
        disabled: bool,
    ) -> Result<Revoked> {
        let e = self.enterprise_named(enterprise).await?;
        if !self
            .users
            .set_user_disabled(&e.id, username, disabled)
            .await?
        {
            return Err(no_user(enterprise, username));
        }
        self.revoke_if(disabled, &e.id, username).await
    }

    /// Replaces the password (hashed as at creation) and revokes the user's tokens.
    pub async fn set_user_password(
        &self,
        enterprise: &str,
        username: &str,
        password: Secret,
    ) -> Result<Revoked> {
        check_service_password(&password)?;
        let e = self.enterprise_named(enterprise).await?;
        let hash = self.hasher.hash(password).await?;
        if !self.users.set_user_password(&e.id, username, &hash).await? {
            return Err(no_user(enterprise, username));
        }
        self.revoke_if(true, &e.id, username).await
    }

    /// Deletes the user and revokes its tokens; nothing else of the enterprise changes.
    pub async fn delete_user(&self, enterprise: &str, username: &str) -> Result<Revoked> {
        let e = self.enterprise_named(enterprise).await?;
        if !self.users.delete_user(&e.id, username).await? {
            return Err(no_user(enterprise, username));
        }
        self.revoke_if(true, &e.id, username).await
    }

    async fn revoke_if(
        &self,
        revoke: bool,
        enterprise: &EnterpriseId,
        username: &str,
    ) -> Result<Revoked> {
        if !revoke {
            return Ok(Revoked { tokens: 0 });
        }
        let hashes = self.tokens.delete_user_tokens(enterprise, username).await?;
        self.revocation.revoke(&hashes);
        Ok(Revoked {
            tokens: hashes.len() as u64,
        })
    }
}

fn no_enterprise(name: &str) -> Error {
    Error::new(
        ErrorKind::NotFound,
        format!(
            "enterprise: no enterprise named '{}'",
            roomlink_domain::enums::shorten(name)
        ),
    )
}

fn no_user(enterprise: &str, username: &str) -> Error {
    Error::new(
        ErrorKind::NotFound,
        format!(
            "user: enterprise '{}' has no user '{}'",
            roomlink_domain::enums::shorten(enterprise),
            roomlink_domain::enums::shorten(username)
        ),
    )
}

impl Admin {
    /// The caller's own enterprise (`GET /api/enterprises/self`).
    pub async fn enterprise_of(&self, principal: &crate::auth::Principal) -> Result<Enterprise> {
        principal.authorize(
            roomlink_domain::access::Operation::GetEnterprise,
            roomlink_domain::access::Target::Enterprise,
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
        principal: &crate::auth::Principal,
        public_key: Option<String>,
    ) -> Result<Enterprise> {
        let audit = self.audit.op(
            principal,
            roomlink_domain::access::Operation::UpdateEnterprise,
            Some(principal.enterprise_id.as_str()),
        );
        let result = self
            .set_public_key_audited(principal, public_key, &audit)
            .await;
        self.audit.settle(audit, result).await
    }

    async fn set_public_key_audited(
        &self,
        principal: &crate::auth::Principal,
        public_key: Option<String>,
        audit: &roomlink_domain::audit::AuditEntry,
    ) -> Result<Enterprise> {
        principal.authorize(
            roomlink_domain::access::Operation::UpdateEnterprise,
            roomlink_domain::access::Target::Enterprise,
        )?;
        // Taken as written: "" removes the key like null; blanks around a key are refused
        // (the API document's pattern has none).
        let public_key = public_key.filter(|k| !k.is_empty());
        if public_key.as_ref().is_some_and(|k| k.trim() != k) {
            return Err(Error::invalid(
                "publicKey: must be an X25519 public key, 32 bytes in base64, without blanks",
            ));
        }
        if let Some(key) = &public_key {
            // The sealer knows the key format; asking for its id validates it.
            self.sealer.current_key_id(Some(key))?;
        }
        let audit = audit.clone().detail(if public_key.is_some() {
            "public key set"
        } else {
            "public key removed"
        });
        if !self
            .enterprises
            .set_public_key(&principal.enterprise_id, public_key, &audit)
            .await?
        {
            return Err(principal.enterprise_id.not_found());
        }
        self.enterprise_of(principal).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roomlink_domain::access::RoleSet;
    use roomlink_domain::cluster::{ClusterEvent, LocalBus, RecordedEvents};
    use roomlink_domain::ids::TokenId;
    use roomlink_domain::ports::{MockPasswordHasher, MockSecretSealer};
    use roomlink_domain::system::RandomIds;
    use roomlink_domain::token::{AccessToken, TokenHash, TokenParts};
    use roomlink_memory_store::MemoryStore;

    fn admin(store: &Arc<MemoryStore>) -> Admin {
        admin_on(store, Arc::new(LocalBus::default()))
    }

    /// An admin whose revocations are published on `bus`.
    fn admin_on(store: &Arc<MemoryStore>, bus: Arc<LocalBus>) -> Admin {
        let mut hasher = MockPasswordHasher::new();
        hasher
            .expect_hash()
            .returning(|p| Ok(format!("hashed:{}", p.expose())));
        Admin {
            enterprises: store.clone(),
            users: store.clone(),
            tokens: store.clone(),
            hasher: Arc::new(hasher),
            sealer: Arc::new(MockSecretSealer::new()),
            revocation: Arc::new(Revocation::new(Arc::default(), bus)),
            ids: Arc::new(RandomIds),
            audit: Arc::new(crate::audit::Auditor {
                store: store.clone(),
                clock: Arc::new(roomlink_domain::system::SystemClock),
            }),
        }
    }

    fn sample(enterprise: &Enterprise) -> roomlink_domain::audit::AuditEntry {
        roomlink_domain::audit::AuditEntry::sample(&enterprise.id, "test", 0)
    }

    fn token(enterprise: &Enterprise, creator: &str, platform_id: Option<i64>) -> AccessToken {
        let id = RandomIds.entity_id();
        AccessToken::new(TokenParts {
            id: TokenId::from_trusted(id.clone()),
            hash: TokenHash::of(&Secret::new(id)),
            enterprise_id: enterprise.id.clone(),
            enterprise_name: enterprise.name.clone(),
            creation_date: 0,
            expiration_date: 1_000,
            roles: RoleSet::read_write(),
            client_name: None,
            creator: Some(creator.into()),
            platform_id,
            first_name: None,
            last_name: None,
            pairing: None,
        })
        .unwrap()
    }

    async fn setup() -> (Arc<MemoryStore>, Admin, Enterprise) {
        let store = Arc::new(MemoryStore::new());
        let admin = admin(&store);
        let acme = admin.create_enterprise("acme", Some(5)).await.unwrap();
        admin
            .create_user("acme", "ops", Role::ReadWrite, Secret::new("password-1"))
            .await
            .unwrap();
        (store, admin, acme)
    }

    #[tokio::test]
    async fn enterprises_list_show_and_limit() {
        let (_store, admin, _) = setup().await;
        admin.create_enterprise("beta", None).await.unwrap();
        let all = admin.list_enterprises().await.unwrap();
        let names: Vec<_> = all.iter().map(|i| i.enterprise.name.as_str()).collect();
        assert_eq!(names, ["acme", "beta"]);
        assert_eq!(all[0].usage.users, 1);
        let shown = admin.show_enterprise("acme").await.unwrap();
        assert_eq!(shown.enterprise.endpoint_limit, 5);
        assert_eq!(
            admin.show_enterprise("nope").await.unwrap_err().kind(),
            ErrorKind::NotFound
        );
        let e = admin.set_endpoint_limit("acme", 0).await.unwrap();
        assert_eq!(e.endpoint_limit, 0);
        assert_eq!(
            admin
                .show_enterprise("acme")
                .await
                .unwrap()
                .enterprise
                .endpoint_limit,
            0
        );
    }

    #[tokio::test]
    async fn deleting_an_enterprise_takes_everything_it_owns() {
        let (store, admin, acme) = setup().await;
        store
            .insert_token(&token(&acme, "ops", None), &sample(&acme))
            .await
            .unwrap();
        let gone = admin.delete_enterprise("acme", false).await.unwrap();
        assert_eq!(gone.usage.tokens, 1);
        assert!(admin.list_enterprises().await.unwrap().is_empty());
        assert_eq!(store.user_by_username("ops").await.unwrap(), None);
        assert_eq!(
            store.enterprise_usage(&acme.id).await.unwrap(),
            EnterpriseUsage::default()
        );
        assert_eq!(
            admin
                .delete_enterprise("acme", true)
                .await
                .unwrap_err()
                .kind(),
            ErrorKind::NotFound
        );
    }

    #[tokio::test]
    async fn users_disable_enable_password_delete_and_their_tokens() {
        let (store, admin, acme) = setup().await;
        let own = token(&acme, "ops", None);
        let platform_namesake = token(&acme, "ops", Some(7));
        store.insert_token(&own, &sample(&acme)).await.unwrap();
        store
            .insert_token(&platform_namesake, &sample(&acme))
            .await
            .unwrap();

        let revoked = admin.set_user_disabled("acme", "ops", true).await.unwrap();
        assert_eq!(
            revoked.tokens, 1,
            "the platform user's token is not the user's"
        );
        assert!(
            store
                .user_by_username("ops")
                .await
                .unwrap()
                .unwrap()
                .disabled
        );
        let listed = admin.list_users(Some("acme")).await.unwrap();
        assert!(listed[0].disabled);
        assert_eq!(listed[0].role, "ROLE_READWRITE");
        assert_eq!(
            admin.set_user_disabled("acme", "ops", false).await.unwrap(),
            Revoked { tokens: 0 }
        );
        assert!(
            !store
                .user_by_username("ops")
                .await
                .unwrap()
                .unwrap()
                .disabled
        );

        store
            .insert_token(&token(&acme, "ops", None), &sample(&acme))
            .await
            .unwrap();
        let r = admin
            .set_user_password("acme", "ops", Secret::new("password-2"))
            .await
            .unwrap();
        assert_eq!(r.tokens, 1);
        let user = store.user_by_username("ops").await.unwrap().unwrap();
        assert_eq!(user.password_hash, "hashed:password-2");
        assert_eq!(
            admin
                .set_user_password("acme", "ops", Secret::new("short"))
                .await
                .unwrap_err()
                .kind(),
            ErrorKind::Invalid
        );

        assert_eq!(
            admin
                .delete_user("acme", "nobody")
                .await
                .unwrap_err()
                .kind(),
            ErrorKind::NotFound
        );
        admin.delete_user("acme", "ops").await.unwrap();
        assert!(admin.list_users(None).await.unwrap().is_empty());
        assert_eq!(store.enterprise_usage(&acme.id).await.unwrap().tokens, 1);
    }

    #[tokio::test]
    async fn users_are_addressed_within_their_enterprise() {
        let (_store, admin, _) = setup().await;
        admin.create_enterprise("beta", None).await.unwrap();
        assert_eq!(
            admin
                .set_user_disabled("beta", "ops", true)
                .await
                .unwrap_err()
                .kind(),
            ErrorKind::NotFound
        );
        assert_eq!(
            admin.list_users(Some("gamma")).await.unwrap_err().kind(),
            ErrorKind::NotFound
        );
    }

    fn deleted(tokens: &[&AccessToken]) -> Vec<ClusterEvent> {
        tokens
            .iter()
            .map(|t| ClusterEvent::TokenDeleted {
                hash: t.hash().clone(),
            })
            .collect()
    }

    #[tokio::test]
    async fn every_revocation_is_announced_to_every_instance() {
        let store = Arc::new(MemoryStore::new());
        let bus = Arc::new(LocalBus::default());
        let heard = Arc::new(RecordedEvents::default());
        bus.subscribe(heard.clone());
        let admin = admin_on(&store, bus);
        let acme = admin.create_enterprise("acme", Some(5)).await.unwrap();
        admin
            .create_user("acme", "ops", Role::ReadWrite, Secret::new("password-1"))
            .await
            .unwrap();
        let issue = || async {
            let t = token(&acme, "ops", None);
            store.insert_token(&t, &sample(&acme)).await.unwrap();
            t
        };

        let t = issue().await;
        admin.set_user_disabled("acme", "ops", true).await.unwrap();
        assert_eq!(heard.take(), deleted(&[&t]), "disabled");
        admin.set_user_disabled("acme", "ops", false).await.unwrap();
        assert_eq!(heard.take(), [], "enabling revokes nothing");

        let t = issue().await;
        admin
            .set_user_password("acme", "ops", Secret::new("password-2"))
            .await
            .unwrap();
        assert_eq!(heard.take(), deleted(&[&t]), "new password");

        let t = issue().await;
        admin.delete_user("acme", "ops").await.unwrap();
        assert_eq!(heard.take(), deleted(&[&t]), "user deleted");

        let (one, two) = (issue().await, issue().await);
        let platform = token(&acme, "someone", Some(7));
        store.insert_token(&platform, &sample(&acme)).await.unwrap();
        admin.delete_enterprise("acme", true).await.unwrap();
        let mut announced = heard.take();
        let mut expected = deleted(&[&one, &two, &platform]);
        let key = |e: &ClusterEvent| format!("{e:?}");
        announced.sort_by_key(key);
        expected.sort_by_key(key);
        assert_eq!(announced, expected, "every token of a deleted enterprise");
    }
}

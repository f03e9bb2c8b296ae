//! Authentication: from the credentials of a request to a [`Principal`].
//!
//! - An access token (header or query) is hashed and looked up, through a short-lived cache
//!   ([`TokenCache`]) that every revocation empties at once ([`crate::revocation`]).
//! - Basic credentials are tried as a service user first (bcrypt/argon2 verify, off the
//!   reactor), then as companion-platform credentials.
//!
//! Missing credentials are `NotAuthenticated`; wrong ones are `BadCredentialsException`.

use crate::revocation::TokenCache;
use roomlink_domain::access::{Operation, RoleSet, Target, ZeroTouchScope, authorize};
use roomlink_domain::enterprise::Enterprise;
use roomlink_domain::error::{Error, Result};
use roomlink_domain::ids::EnterpriseId;
use roomlink_domain::ports::{
    Clock, EnterpriseStore, PasswordHasher, PlatformIdentity, PlatformUser, TokenStore, UserStore,
};
use roomlink_domain::secret::Secret;
use roomlink_domain::token::{AccessToken, TokenHash};
use std::sync::Arc;

/// A bcrypt hash (cost 10) of a random string nobody knows, verified against when a username
/// is unknown.
pub const UNKNOWN_USER_HASH: &str = "$2b$10$Ro0CUfOqk6cMDc7OwfSJDuqRbnC4yKn.y8RAkn6AvJbwUoA3m4ALW";

/// What a request presented.
#[derive(Debug, Clone)]
pub enum Credentials {
    Basic { username: String, password: Secret },
    Token(Secret),
}

/// Who is calling.
#[derive(Debug, Clone)]
pub enum Subject {
    ServiceUser {
        username: String,
        /// A fingerprint of the password hash the caller was checked against: a different
        /// one later means the password was changed since ([`Authenticator::still_valid`]).
        stamp: u64,
    },
    PlatformUser(PlatformUser),
    Token(Box<AccessToken>),
    /// roomlink itself acting on a schedule, e.g. `auto-join` (never a caller of the API).
    Scheduler(&'static str),
}

/// An authenticated caller: an enterprise, roles, and who they are.
#[derive(Debug, Clone)]
pub struct Principal {
    pub enterprise_id: EnterpriseId,
    pub enterprise_name: String,
    pub roles: RoleSet,
    pub subject: Subject,
}

impl Principal {
    /// `Forbidden` unless the caller's roles allow `op` on `target`.
    pub fn authorize(&self, op: Operation, target: Target<'_>) -> Result<()> {
        authorize(self.roles, self.zero_touch_scope().as_ref(), op, target)
    }

    /// The caller holding `token` (a live one).
    pub fn of_token(token: AccessToken) -> Self {
        Principal {
            enterprise_id: token.enterprise_id().clone(),
            enterprise_name: token.parts().enterprise_name.clone(),
            roles: token.roles(),
            subject: Subject::Token(Box::new(token)),
        }
    }

    /// The token the caller authenticated with, if any.
    pub fn token(&self) -> Option<&AccessToken> {
        match &self.subject {
            Subject::Token(t) => Some(t),
            _ => None,
        }
    }

    pub fn zero_touch_scope(&self) -> Option<ZeroTouchScope> {
        self.token().and_then(AccessToken::zero_touch_scope)
    }

    /// The name of the person or service behind the call, for logs and the tokens they create.
    pub fn username(&self) -> Option<&str> {
        match &self.subject {
            Subject::ServiceUser { username, .. } => Some(username),
            Subject::PlatformUser(u) => Some(&u.username),
            Subject::Token(t) => t.parts().creator.as_deref(),
            Subject::Scheduler(_) => None,
        }
    }

    /// roomlink itself acting for `enterprise` on a schedule (`job` names it in the audit
    /// trail), with the rights of a read-write user.
    pub fn scheduler(
        enterprise_id: EnterpriseId,
        enterprise_name: String,
        job: &'static str,
    ) -> Self {
        Principal {
            enterprise_id,
            enterprise_name,
            roles: RoleSet::read_write(),
            subject: Subject::Scheduler(job),
        }
    }
}

/// A fingerprint of a stored password hash: enough to notice that it changed, and nothing
/// a log or a debug print of a principal could use (the hash itself stays in the store).
fn stamp_of(password_hash: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    password_hash.hash(&mut hasher);
    hasher.finish()
}

/// The roles a platform user gets: enterprise admins full rights, others read-only.
pub fn platform_roles(user: &PlatformUser) -> RoleSet {
    if user.enterprise_admin {
        RoleSet::read_write()
    } else {
        RoleSet::read_only()
    }
}

pub struct Authenticator {
    pub tokens: Arc<dyn TokenStore>,
    pub users: Arc<dyn UserStore>,
    pub enterprises: Arc<dyn EnterpriseStore>,
    pub hasher: Arc<dyn PasswordHasher>,
    pub platform: Arc<dyn PlatformIdentity>,
    pub clock: Arc<dyn Clock>,
    pub cache: Arc<TokenCache>,
}

impl Authenticator {
    /// The caller behind `credentials`; `NotAuthenticated` when there are none.
    pub async fn authenticate(&self, credentials: Option<Credentials>) -> Result<Principal> {
        match credentials {
            None => Err(Error::not_authenticated()),
            Some(Credentials::Token(token)) => self.by_token(&token).await,
            Some(Credentials::Basic { username, password }) => {
                self.by_password(&username, password).await
            }
        }
    }

    async fn by_token(&self, token: &Secret) -> Result<Principal> {
        let now = self.clock.now_ms();
        let hash = TokenHash::of(token);
        let token = match self.cache.get(&hash, now) {
            Some(t) => t,
            None => {
                let t = self
                    .tokens
                    .token_by_hash(&hash, now)
                    .await?
                    .ok_or_else(Error::bad_credentials)?;
                self.cache.put(t.clone(), now);
                t
            }
        };
        Ok(Principal::of_token(token))
    }

    /// Basic credentials: a service user, else a companion-platform user.
    pub async fn by_password(&self, username: &str, password: Secret) -> Result<Principal> {
        if let Some(user) = self.users.user_by_username(username).await? {
            let verified = self
                .hasher
                .verify(password, user.password_hash.clone())
                .await?;
            // A disabled user is refused after the same verify and with the same error as a
            // wrong password: nothing tells a caller the account exists but is disabled.
            if !verified || user.disabled {
                return Err(Error::bad_credentials());
            }
            let enterprise = self.enterprise(&user.enterprise_id).await?;
            return Ok(Principal {
                enterprise_id: enterprise.id,
                enterprise_name: enterprise.name,
                roles: RoleSet::granted_by(user.role),
                subject: Subject::ServiceUser {
                    stamp: stamp_of(&user.password_hash),
                    username: user.username,
                },
            });
        }
        match self.platform.verify_password(username, &password).await? {
            Some(user) => self.platform_principal(user).await,
            None => {
                // Spend one verify anyway, so a refusal takes as long whether or not the
                // username exists (no enumeration of service usernames by timing).
                let _ = self
                    .hasher
                    .verify(password, UNKNOWN_USER_HASH.to_owned())
                    .await;
                Err(Error::bad_credentials())
            }
        }
    }

    /// Whether a service user's Basic credentials, checked earlier, would still pass: the user
    /// is there, in the same enterprise, enabled, with the same password. For callers that
    /// hold a connection open (the live event stream); `true` for any other kind of caller,
    /// whose revocation reaches them otherwise (a token) or is not roomlink's (the platform).
    pub async fn still_valid(&self, principal: &Principal) -> Result<bool> {
        let Subject::ServiceUser { username, stamp } = &principal.subject else {
            return Ok(true);
        };
        Ok(self
            .users
            .user_by_username(username)
            .await?
            .is_some_and(|user| {
                user.enterprise_id == principal.enterprise_id
                    && !user.disabled
                    && stamp_of(&user.password_hash) == *stamp
            }))
    }

    /// A principal for a platform user, in the enterprise the platform names.
    pub async fn platform_principal(&self, user: PlatformUser) -> Result<Principal> {
        let enterprise = self
            .enterprises
            .enterprise_by_name(&user.enterprise_name)
            .await?
            // The platform vouches for a user of an enterprise roomlink does not serve.
            .ok_or_else(Error::bad_credentials)?;
        Ok(Principal {
            enterprise_id: enterprise.id,
            enterprise_name: enterprise.name,
            roles: platform_roles(&user),
            subject: Subject::PlatformUser(user),
        })
    }

    async fn enterprise(&self, id: &EnterpriseId) -> Result<Enterprise> {
        self.enterprises
            .enterprise(id)
            .await?
            .ok_or_else(|| Error::internal(format!("user of missing enterprise {id}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mockall::predicate::eq;
    use roomlink_domain::ErrorKind;
    use roomlink_domain::access::Role;
    use roomlink_domain::enterprise::ServiceUser;
    use roomlink_domain::ids::{TokenId, UserId};
    use roomlink_domain::ports::{
        MockEnterpriseStore, MockPasswordHasher, MockPlatformIdentity, MockTokenStore,
        MockUserStore,
    };
    use roomlink_domain::system::ManualClock;
    use roomlink_domain::token::TokenParts;

    fn enterprise() -> Enterprise {
        Enterprise {
            id: EnterpriseId::from_trusted("ent".into()),
            name: "acme".into(),
            endpoint_limit: 10,
            public_key: None,
        }
    }

    struct Mocks {
        tokens: MockTokenStore,
        users: MockUserStore,
        enterprises: MockEnterpriseStore,
        hasher: MockPasswordHasher,
        platform: MockPlatformIdentity,
    }

    impl Mocks {
        fn new() -> Self {
            Mocks {
                tokens: MockTokenStore::new(),
                users: MockUserStore::new(),
                enterprises: MockEnterpriseStore::new(),
                hasher: MockPasswordHasher::new(),
                platform: MockPlatformIdentity::new(),
            }
        }
        fn build(self, clock: Arc<ManualClock>) -> Authenticator {
            Authenticator {
                tokens: Arc::new(self.tokens),
                users: Arc::new(self.users),
                enterprises: Arc::new(self.enterprises),
                hasher: Arc::new(self.hasher),
                platform: Arc::new(self.platform),
                clock,
                cache: Arc::new(TokenCache::default()),
            }
        }
    }

    fn token(value: &str, expires: i64) -> AccessToken {
        AccessToken::new(TokenParts {
            id: TokenId::from_trusted("t1".into()),
            hash: TokenHash::of(&Secret::new(value)),
            enterprise_id: enterprise().id,
            enterprise_name: "acme".into(),
            creation_date: 0,
            expiration_date: expires,
            roles: RoleSet::read_only(),
            client_name: None,
            creator: Some("ops".into()),
            platform_id: None,
            first_name: None,
            last_name: None,
            pairing: None,
        })
        .unwrap()
    }

    #[tokio::test]
    async fn no_credentials_is_not_authenticated() {
        let auth = Mocks::new().build(Arc::new(ManualClock::at(0)));
        let e = auth.authenticate(None).await.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NotAuthenticated);
    }

    #[tokio::test]
    async fn service_user_with_the_right_password() {
        let mut m = Mocks::new();
        m.users
            .expect_user_by_username()
            .with(eq("ops"))
            .returning(|_| {
                Ok(Some(ServiceUser {
                    id: UserId::from_trusted("u".into()),
                    enterprise_id: enterprise().id,
                    username: "ops".into(),
                    password_hash: "$2b$hash".into(),
                    role: Role::ReadWrite,
                    disabled: false,
                }))
            });
        m.hasher
            .expect_verify()
            .times(2)
            .returning(|p, _| Ok(p.expose() == "right"));
        m.enterprises
            .expect_enterprise()
            .returning(|_| Ok(Some(enterprise())));
        let auth = m.build(Arc::new(ManualClock::at(0)));
        let ok = auth.by_password("ops", Secret::new("right")).await.unwrap();
        assert_eq!(ok.roles, RoleSet::read_write());
        assert_eq!(ok.username(), Some("ops"));
        let e = auth
            .by_password("ops", Secret::new("wrong"))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadCredentialsException);
    }

    #[tokio::test]
    async fn a_disabled_user_is_refused_like_a_wrong_password() {
        let mut m = Mocks::new();
        m.users.expect_user_by_username().returning(|_| {
            Ok(Some(ServiceUser {
                id: UserId::from_trusted("u".into()),
                enterprise_id: enterprise().id,
                username: "ops".into(),
                password_hash: "$2b$hash".into(),
                role: Role::ReadWrite,
                disabled: true,
            }))
        });
        // The verify still runs: a refusal takes as long as for a wrong password.
        m.hasher.expect_verify().times(1).returning(|_, _| Ok(true));
        let auth = m.build(Arc::new(ManualClock::at(0)));
        let e = auth
            .by_password("ops", Secret::new("right"))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadCredentialsException);
        assert_eq!(e.message(), Error::bad_credentials().message());
    }

    #[tokio::test]
    async fn unknown_usernames_cost_one_verify_too() {
        let mut m = Mocks::new();
        m.users.expect_user_by_username().returning(|_| Ok(None));
        m.platform
            .expect_verify_password()
            .returning(|_, _| Ok(None));
        m.hasher
            .expect_verify()
            .withf(|_, hash| hash == UNKNOWN_USER_HASH)
            .times(1)
            .returning(|_, _| Ok(false));
        let auth = m.build(Arc::new(ManualClock::at(0)));
        let e = auth
            .by_password("nobody", Secret::new("x"))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadCredentialsException);
    }

    #[tokio::test]
    async fn tokens_are_cached_briefly_and_dropped_on_revocation() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let lookups = Arc::new(AtomicUsize::new(0));
        let counter = lookups.clone();
        let mut m = Mocks::new();
        m.tokens.expect_token_by_hash().returning(move |_, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok(Some(token("abc", 1_000_000)))
        });
        let clock = Arc::new(ManualClock::at(1_000));
        let auth = m.build(clock.clone());
        let creds = || Some(Credentials::Token(Secret::new("abc")));
        auth.authenticate(creds()).await.unwrap();
        auth.authenticate(creds()).await.unwrap();
        assert_eq!(
            lookups.load(Ordering::SeqCst),
            1,
            "the second use comes from the cache"
        );
        clock.advance(crate::revocation::TokenCacheLifetime::default().0);
        auth.authenticate(creds()).await.unwrap();
        assert_eq!(
            lookups.load(Ordering::SeqCst),
            2,
            "an aged entry is looked up again"
        );
        crate::revocation::Revocation::new(
            auth.cache.clone(),
            Arc::new(roomlink_domain::cluster::LocalBus::default()),
        )
        .revoke(&[TokenHash::of(&Secret::new("abc"))]);
        auth.authenticate(creds()).await.unwrap();
        assert_eq!(
            lookups.load(Ordering::SeqCst),
            3,
            "a revoked entry is looked up again"
        );
    }

    #[tokio::test]
    async fn expired_cached_tokens_are_refused() {
        let mut m = Mocks::new();
        m.tokens
            .expect_token_by_hash()
            .returning(|_, now| Ok(Some(token("abc", 2_000)).filter(|t| t.is_live(now))));
        let clock = Arc::new(ManualClock::at(1_000));
        let auth = m.build(clock.clone());
        auth.authenticate(Some(Credentials::Token(Secret::new("abc"))))
            .await
            .unwrap();
        clock.set(2_000);
        let e = auth
            .authenticate(Some(Credentials::Token(Secret::new("abc"))))
            .await
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BadCredentialsException);
    }
}

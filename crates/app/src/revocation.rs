//! Revocation: "this token is no longer valid anywhere".
//!
//! Every way a token dies goes through [`Revocation::revoke`]: a token deleted through the API
//! (`tokens`), a service user disabled, deleted or given a new password, and an enterprise
//! deleted (`admin`). The store deletes the token rows first, so no instance can look the token
//! up again; then `revoke` drops it from this instance's [`TokenCache`] and publishes
//! [`ClusterEvent::TokenDeleted`] so that every other instance drops it from theirs.
//!
//! How long a revoked token can still be used somewhere:
//! - on the instance that revoked it: not at all;
//! - on another instance that hears the event (a cluster bus is configured and up): until the
//!   event arrives, a few milliseconds (`docs/cluster.md`);
//! - otherwise (no bus, the bus down, or an admin command that could not reach it): until its
//!   cache entry expires, at most its [`TokenCacheLifetime`] (`security.token_cache_ms`, 5 s
//!   by default).

use roomlink_domain::cluster::{ClusterEvent, EventBus};
use roomlink_domain::token::{AccessToken, TokenHash};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How long a looked-up token is kept, in milliseconds: the longest a token revoked where this
/// instance does not hear of it stays usable here. 0 reads every token from the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenCacheLifetime(pub i64);

impl Default for TokenCacheLifetime {
    fn default() -> Self {
        TokenCacheLifetime(5_000)
    }
}

/// Live tokens by hash, kept for their [`TokenCacheLifetime`] so that a request does not read
/// the store for its token. Bounded: when full, it is cleared.
#[derive(Default)]
pub struct TokenCache {
    lifetime: TokenCacheLifetime,
    entries: Mutex<HashMap<TokenHash, (AccessToken, i64)>>,
}

impl TokenCache {
    const MAX_ENTRIES: usize = 10_000;

    pub fn new(lifetime: TokenCacheLifetime) -> Self {
        TokenCache {
            lifetime,
            entries: Mutex::default(),
        }
    }

    pub(crate) fn get(&self, hash: &TokenHash, now: i64) -> Option<AccessToken> {
        let entries = self.entries.lock().ok()?;
        let (token, cached_at) = entries.get(hash)?;
        (now - cached_at < self.lifetime.0 && token.is_live(now)).then(|| token.clone())
    }

    pub(crate) fn put(&self, token: AccessToken, now: i64) {
        if self.lifetime.0 <= 0 {
            return;
        }
        if let Ok(mut entries) = self.entries.lock() {
            if entries.len() >= Self::MAX_ENTRIES {
                entries.clear();
            }
            entries.insert(token.hash().clone(), (token, now));
        }
    }

    /// Forgets a token here at once.
    fn forget(&self, hash: &TokenHash) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.remove(hash);
        }
    }
}

/// The one place that makes tokens invalid on every instance.
pub struct Revocation {
    cache: Arc<TokenCache>,
    events: Arc<dyn EventBus>,
}

impl Revocation {
    pub fn new(cache: Arc<TokenCache>, events: Arc<dyn EventBus>) -> Self {
        Revocation { cache, events }
    }

    /// Makes tokens whose rows the store has deleted invalid everywhere: dropped here, and
    /// announced to every other instance.
    pub fn revoke(&self, hashes: &[TokenHash]) {
        for hash in hashes {
            self.cache.forget(hash);
            self.events
                .publish(ClusterEvent::TokenDeleted { hash: hash.clone() });
        }
    }

    /// Drops a token here only: one another instance revoked, or one about to be deleted
    /// here (a request that arrives meanwhile reads the store instead of a cached copy;
    /// [`Revocation::revoke`] must follow).
    pub fn forget_here(&self, hash: &TokenHash) {
        self.cache.forget(hash);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roomlink_domain::access::RoleSet;
    use roomlink_domain::cluster::{LocalBus, RecordedEvents};
    use roomlink_domain::ids::{EnterpriseId, TokenId};
    use roomlink_domain::secret::Secret;
    use roomlink_domain::token::TokenParts;

    fn token(value: &str) -> AccessToken {
        AccessToken::new(TokenParts {
            id: TokenId::from_trusted(format!("id-{value}")),
            hash: TokenHash::of(&Secret::new(value)),
            enterprise_id: EnterpriseId::from_trusted("ent".into()),
            enterprise_name: "acme".into(),
            creation_date: 0,
            expiration_date: i64::MAX,
            roles: RoleSet::read_write(),
            client_name: None,
            creator: Some("ops".into()),
            platform_id: None,
            first_name: None,
            last_name: None,
            pairing: None,
        })
        .unwrap()
    }

    #[test]
    fn cached_tokens_expire_after_the_lifetime() {
        let cache = TokenCache::new(TokenCacheLifetime(5_000));
        let t = token("abc");
        cache.put(t.clone(), 1_000);
        assert!(cache.get(t.hash(), 5_999).is_some());
        assert!(cache.get(t.hash(), 6_000).is_none());
        let default = TokenCache::default();
        default.put(t.clone(), 0);
        assert!(default.get(t.hash(), 4_999).is_some(), "5 s by default");
        assert!(default.get(t.hash(), 5_000).is_none());
    }

    #[test]
    fn a_lifetime_of_zero_keeps_nothing() {
        let cache = TokenCache::new(TokenCacheLifetime(0));
        let t = token("abc");
        cache.put(t.clone(), 1_000);
        assert!(cache.get(t.hash(), 1_000).is_none());
    }

    #[test]
    fn revoking_forgets_here_and_tells_every_instance() {
        let cache = Arc::new(TokenCache::default());
        let bus = Arc::new(LocalBus::default());
        let heard = Arc::new(RecordedEvents::default());
        bus.subscribe(heard.clone());
        let revocation = Revocation::new(cache.clone(), bus);
        let (a, b, kept) = (token("a"), token("b"), token("kept"));
        for t in [&a, &b, &kept] {
            cache.put(t.clone(), 0);
        }

        revocation.revoke(&[a.hash().clone(), b.hash().clone()]);

        assert!(cache.get(a.hash(), 1).is_none());
        assert!(cache.get(b.hash(), 1).is_none());
        assert!(cache.get(kept.hash(), 1).is_some(), "only the revoked ones");
        assert_eq!(
            heard.all(),
            [
                ClusterEvent::TokenDeleted {
                    hash: a.hash().clone()
                },
                ClusterEvent::TokenDeleted {
                    hash: b.hash().clone()
                },
            ]
        );
    }

    #[test]
    fn a_revocation_heard_from_another_instance_forgets_the_token() {
        let cache = Arc::new(TokenCache::default());
        let revocation = Revocation::new(cache.clone(), Arc::new(LocalBus::default()));
        let t = token("elsewhere");
        cache.put(t.clone(), 0);
        revocation.forget_here(t.hash());
        assert!(cache.get(t.hash(), 1).is_none());
    }
}

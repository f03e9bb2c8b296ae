//! The failed-authentication throttle's shared half. One instance alone throttles in memory
//! (the HTTP adapter's limiter); instances of a cluster also count every failure in the shared
//! database ([`AuthFailureLedger`]), so that a guesser spreading attempts over them gets one
//! allowance in all, not one per instance. See [`roomlink_domain::throttle`] for the rule.
//!
//! The caller decides what to do when the database cannot be asked (`StorageUnavailable` and
//! the like): the adapter falls back to its own memory, so an outage costs the cluster-wide
//! count, not the service.

use roomlink_domain::error::Result;
use roomlink_domain::ports::{AuthFailureLedger, Clock};
use roomlink_domain::throttle::{Allowance, FailureKey, Guessed, retry_after_secs};
use std::net::IpAddr;
use std::sync::Arc;

/// What instances must agree on to share allowances: the allowance, and the key of the hash
/// that names each allowance (derived from the service key, which they share).
#[derive(Clone)]
pub struct SharedAllowances {
    pub allowance: Allowance,
    pub hash_key: [u8; 32],
}

impl std::fmt::Debug for SharedAllowances {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedAllowances")
            .field("allowance", &self.allowance)
            .field("hash_key", &"(redacted)")
            .finish()
    }
}

pub struct AuthFailures {
    pub ledger: Arc<dyn AuthFailureLedger>,
    pub clock: Arc<dyn Clock>,
    pub shared: SharedAllowances,
}

impl AuthFailures {
    /// The allowance that failures of `guessed` from `address` spend.
    pub fn key(&self, address: IpAddr, guessed: Guessed<'_>) -> FailureKey {
        FailureKey::new(&self.shared.hash_key, address, guessed)
    }

    /// `Some(retry_after_secs)` while `key`'s allowance is spent, on any instance. Spends
    /// nothing.
    pub async fn refused(&self, key: &FailureKey) -> Result<Option<u64>> {
        let tat = self.ledger.failure_tat(key).await?;
        let now = self.clock.now_ms();
        Ok(self
            .shared
            .allowance
            .refused_for_ms(tat, now)
            .map(retry_after_secs))
    }

    /// Counts a failure of `key`; `Some(retry_after_secs)` when it was already spent (nothing
    /// counted: the attempt is to be refused).
    pub async fn failed(&self, key: &FailureKey) -> Result<Option<u64>> {
        let now = self.clock.now_ms();
        let spent = self
            .ledger
            .spend_failure(key, now, self.shared.allowance)
            .await?;
        Ok((!spent.counted).then(|| {
            let wait = self
                .shared
                .allowance
                .refused_for_ms(Some(spent.tat_ms), now);
            retry_after_secs(wait.unwrap_or(1))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roomlink_domain::ports::{MockAuthFailureLedger, MockClock};
    use roomlink_domain::throttle::Spend;

    const NOW: i64 = 1_800_000_000_000;

    fn failures(ledger: MockAuthFailureLedger) -> AuthFailures {
        let mut clock = MockClock::new();
        clock.expect_now_ms().return_const(NOW);
        AuthFailures {
            ledger: Arc::new(ledger),
            clock: Arc::new(clock),
            shared: SharedAllowances {
                allowance: Allowance::per_minute(2).unwrap(),
                hash_key: [1; 32],
            },
        }
    }

    #[tokio::test]
    async fn a_spent_key_is_refused_with_the_time_to_its_refill() {
        let mut ledger = MockAuthFailureLedger::new();
        // Two failures a minute: spent once tat lies more than 30 s ahead.
        ledger
            .expect_failure_tat()
            .returning(|_| Ok(Some(NOW + 30_000 + 4_500)));
        ledger
            .expect_spend_failure()
            .returning(|_, now, allowance| {
                assert_eq!(allowance, Allowance::per_minute(2).unwrap());
                Ok(Spend {
                    tat_ms: now + 30_000 + 4_500,
                    counted: false,
                })
            });
        let f = failures(ledger);
        let key = f.key(IpAddr::from([127, 0, 0, 1]), Guessed::AccessToken);
        assert_eq!(f.refused(&key).await.unwrap(), Some(5));
        assert_eq!(f.failed(&key).await.unwrap(), Some(5));
    }

    #[tokio::test]
    async fn a_counted_failure_and_a_fresh_key_pass() {
        let mut ledger = MockAuthFailureLedger::new();
        ledger.expect_failure_tat().returning(|_| Ok(None));
        ledger.expect_spend_failure().returning(|_, now, _| {
            Ok(Spend {
                tat_ms: now + 30_000,
                counted: true,
            })
        });
        let f = failures(ledger);
        let key = f.key(IpAddr::from([127, 0, 0, 1]), Guessed::User("ops"));
        assert_eq!(f.refused(&key).await.unwrap(), None);
        assert_eq!(f.failed(&key).await.unwrap(), None);
    }
}

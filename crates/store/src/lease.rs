//! PollLease: which instance polls the inbound listeners' statuses.
//!
//! On PostgreSQL the lease is a session-level advisory lock, taken on a connection of its own
//! outside the pool: a pooled connection would serve other queries and be recycled, while the
//! lock must stay with one session for the life of the process. When the process dies its
//! session ends and the lock frees itself; another instance takes it at its next poll (the
//! failover). On SQLite one process owns the database: it always holds the lease.

use crate::DbStore;
use crate::config::Target;
use crate::pool::{error_chain, open_pg};
use async_trait::async_trait;
use diesel::QueryableByName;
use diesel::sql_types::{BigInt, Bool};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use roomlink_domain::Result;
use roomlink_domain::ports::PollLease;
use std::time::Duration;

/// The advisory lock key of the poll lease: "rlpoller" in ASCII. Distinct from the migration
/// lock ("roomlink", migrate.rs); advisory locks are per database, so only instances sharing a
/// database compete for it.
pub(crate) const POLL_LEASE_KEY: i64 = 0x726c_706f_6c6c_6572;

/// The lease's own connection, and whether its session holds the lock. A connection that did
/// not get the lock is kept too, to try again at the next poll without reconnecting.
pub(crate) struct LeaseConn {
    conn: AsyncPgConnection,
    held: bool,
}

#[derive(QueryableByName)]
struct Taken {
    #[diesel(sql_type = Bool)]
    taken: bool,
}

impl LeaseConn {
    /// Whether this session holds the lock: confirmed (`SELECT 1`, the session still lives)
    /// when it already did, else one more try at taking it. An error means the connection is
    /// unusable.
    async fn ask(&mut self, limit: Duration) -> std::result::Result<bool, String> {
        let asked = async {
            if self.held {
                diesel::sql_query("SELECT 1")
                    .execute(&mut self.conn)
                    .await
                    .map(|_| true)
            } else {
                diesel::sql_query("SELECT pg_try_advisory_lock($1) AS taken")
                    .bind::<BigInt, _>(POLL_LEASE_KEY)
                    .get_result::<Taken>(&mut self.conn)
                    .await
                    .map(|t| t.taken)
            }
        };
        match tokio::time::timeout(limit, asked).await {
            Ok(Ok(held)) => {
                self.held = held;
                Ok(held)
            }
            Ok(Err(e)) => Err(error_chain(&e)),
            // Half a query on the wire: the connection cannot be trusted any more.
            Err(_) => Err(format!("no answer within {limit:?}")),
        }
    }
}

#[async_trait]
impl PollLease for DbStore {
    async fn hold_poll_lease(&self) -> Result<bool> {
        let Target::Postgres(url) = &self.target else {
            return Ok(true);
        };
        // Callers queue here: one connection, one answer at a time.
        let mut lease = self.lease.lock().await;
        if let Some(kept) = lease.as_mut() {
            let had = kept.held;
            match kept.ask(self.timeout).await {
                Ok(held) => {
                    if held && !had {
                        tracing::info!(
                            "took the poll lease: this instance polls inbound listeners"
                        );
                    }
                    return Ok(held);
                }
                Err(reason) => {
                    // Its session, and any lock it held, is gone: try again on a new one.
                    tracing::warn!(
                        reason = %self.scrub(&reason),
                        "poll lease connection lost; reconnecting"
                    );
                    *lease = None;
                }
            }
        }
        // Not holding the lease is the safe answer: this round skips the inbound listeners.
        let conn = match tokio::time::timeout(self.timeout, open_pg(url.clone())).await {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => {
                tracing::warn!(
                    reason = %self.scrub(&error_chain(&e)),
                    "cannot connect for the poll lease; not polling this round"
                );
                return Ok(false);
            }
            Err(_) => {
                tracing::warn!(
                    timeout = ?self.timeout,
                    "cannot connect for the poll lease in time; not polling this round"
                );
                return Ok(false);
            }
        };
        let mut kept = LeaseConn { conn, held: false };
        match kept.ask(self.timeout).await {
            Ok(held) => {
                if held {
                    tracing::info!("took the poll lease: this instance polls inbound listeners");
                }
                *lease = Some(kept);
                Ok(held)
            }
            Err(reason) => {
                tracing::warn!(
                    reason = %self.scrub(&reason),
                    "cannot take the poll lease; not polling this round"
                );
                Ok(false)
            }
        }
    }
}

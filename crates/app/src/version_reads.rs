//! Reads of an enterprise's list version, shared by the requests that wait for one together
//! (docs/adr/0003-endpoint-list-cache.md, "Shared version reads").
//!
//! Every cached answer costs one version read, and under load many requests of one enterprise
//! want it at the same moment. A request may share a read only if that read is *sent after the
//! request arrived*: a read sent earlier could miss a write committed just before the request
//! came, and the cache would answer from before it. So while one read is in flight, newcomers
//! queue; when it returns, one of them sends the next read for all of them. That keeps the
//! never-stale argument of the ADR as it is, and turns N concurrent reads into at most two
//! round trips' wait for each and one read per round trip for the database.

use futures::channel::oneshot;
use roomlink_domain::error::Result;
use roomlink_domain::ids::EnterpriseId;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

/// Shared version reads, per enterprise.
#[derive(Default)]
pub struct VersionReads {
    slots: Mutex<HashMap<EnterpriseId, Slot>>,
}

/// One enterprise's read in flight and the requests waiting for the next one.
#[derive(Default)]
struct Slot {
    reading: bool,
    queued: Vec<oneshot::Sender<Turn>>,
}

/// What a queued request is told when the read before it returns.
enum Turn {
    /// The version, read after this request arrived.
    Read(Option<u64>),
    /// Send the next read, for these others too.
    Lead(Vec<oneshot::Sender<Turn>>),
    /// The shared read failed or was abandoned: read alone.
    Alone,
}

impl VersionReads {
    /// The list version of `enterprise` as `read` returns it, from a read sent after this call
    /// began (shared with the calls that queued beside it).
    pub async fn read<F, Fut>(&self, enterprise: &EnterpriseId, read: F) -> Result<Option<u64>>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<Option<u64>>>,
    {
        let waiting = {
            let Ok(mut slots) = self.slots.lock() else {
                return read().await;
            };
            let slot = slots.entry(enterprise.clone()).or_default();
            if slot.reading {
                let (tx, rx) = oneshot::channel();
                slot.queued.push(tx);
                Some(rx)
            } else {
                slot.reading = true;
                None
            }
        };
        let followers = match waiting {
            None => Vec::new(),
            Some(rx) => match rx.await {
                Ok(Turn::Read(version)) => return Ok(version),
                Ok(Turn::Lead(followers)) => followers,
                // A sender dropped unanswered cannot happen (every path answers), but reading
                // alone is always correct.
                Ok(Turn::Alone) | Err(oneshot::Canceled) => return read().await,
            },
        };
        let mut lead = Leading {
            reads: self,
            enterprise,
            followers,
            done: false,
        };
        let result = read().await;
        lead.finish(&result);
        result
    }

    /// The read of `enterprise` returned: the next queued request sends the next one, or the
    /// slot goes if nobody waits.
    fn hand_over(&self, enterprise: &EnterpriseId) {
        loop {
            let mut queued = {
                let Ok(mut slots) = self.slots.lock() else {
                    return;
                };
                let Some(slot) = slots.get_mut(enterprise) else {
                    return;
                };
                if slot.queued.is_empty() {
                    slots.remove(enterprise);
                    return;
                }
                std::mem::take(&mut slot.queued)
            };
            // Still `reading`: the lead passes to the first queued request still waiting.
            while !queued.is_empty() {
                let next = queued.remove(0);
                match next.send(Turn::Lead(queued)) {
                    Ok(()) => return,
                    // `send` gives back the turn it could not deliver.
                    Err(Turn::Lead(rest)) => queued = rest,
                    Err(_) => queued = Vec::new(),
                }
            }
            // Everyone queued had gone; look again for newcomers that queued meanwhile.
        }
    }
}

/// The request sending a read for itself and its followers. Dropped before it finishes (the
/// request was cancelled), it still releases the followers and hands the lead over, so nobody
/// waits for a read that will not come.
struct Leading<'a> {
    reads: &'a VersionReads,
    enterprise: &'a EnterpriseId,
    followers: Vec<oneshot::Sender<Turn>>,
    done: bool,
}

impl Leading<'_> {
    fn finish(&mut self, result: &Result<Option<u64>>) {
        for follower in self.followers.drain(..) {
            let turn = match result {
                Ok(version) => Turn::Read(*version),
                Err(_) => Turn::Alone,
            };
            // A follower that has gone does not need its answer.
            let _ = follower.send(turn);
        }
        self.done = true;
        self.reads.hand_over(self.enterprise);
    }
}

impl Drop for Leading<'_> {
    fn drop(&mut self) {
        if !self.done {
            for follower in self.followers.drain(..) {
                let _ = follower.send(Turn::Alone);
            }
            self.reads.hand_over(self.enterprise);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use roomlink_domain::error::Error;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use tokio::sync::Semaphore;

    /// A store whose reads wait for a permit, answering how many reads were sent before.
    #[derive(Clone)]
    struct Gate {
        sent: Arc<AtomicU64>,
        permits: Arc<Semaphore>,
        /// The read with this number fails (0: none does).
        failing: u64,
    }

    impl Gate {
        fn new() -> Self {
            Gate {
                sent: Arc::new(AtomicU64::new(0)),
                permits: Arc::new(Semaphore::new(0)),
                failing: 0,
            }
        }

        async fn read(&self) -> Result<Option<u64>> {
            let n = self.sent.fetch_add(1, Ordering::SeqCst) + 1;
            let permit = self
                .permits
                .acquire()
                .await
                .map_err(|_| Error::internal("closed"))?;
            permit.forget();
            if n == self.failing {
                return Err(Error::internal("database down"));
            }
            Ok(Some(n))
        }

        fn sent(&self) -> u64 {
            self.sent.load(Ordering::SeqCst)
        }
    }

    fn acme() -> EnterpriseId {
        EnterpriseId::from_trusted("acme".into())
    }

    /// Lets the other tasks run until `done` holds (each yield of the single-threaded test
    /// runtime runs every task that is ready): what the tests assert next is then observed,
    /// not hoped for after a number of steps.
    async fn until(what: &str, mut done: impl FnMut() -> bool) {
        for _ in 0..10_000 {
            if done() {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("never: {what}");
    }

    /// How many requests wait in a queue.
    fn queued(reads: &VersionReads) -> usize {
        let slots = reads.slots.lock().unwrap();
        slots.values().map(|slot| slot.queued.len()).sum()
    }

    /// A request reading `enterprise`'s version through `gate`, started and seen to have sent
    /// its read or taken its place in the queue.
    async fn start_read(
        reads: &Arc<VersionReads>,
        gate: &Gate,
        enterprise: EnterpriseId,
    ) -> tokio::task::JoinHandle<Result<Option<u64>>> {
        let before = gate.sent() + queued(reads) as u64;
        let task = {
            let (reads, gate) = (reads.clone(), gate.clone());
            tokio::spawn(async move { reads.read(&enterprise, || gate.read()).await })
        };
        until("the request reads or queues", || {
            gate.sent() + queued(reads) as u64 == before + 1
        })
        .await;
        task
    }

    #[tokio::test]
    async fn requests_arriving_during_a_read_share_the_next_one() {
        let reads = Arc::new(VersionReads::default());
        let gate = Gate::new();
        let mut tasks = Vec::new();
        for _ in 0..10 {
            tasks.push(start_read(&reads, &gate, acme()).await);
        }
        // The first read is in flight; the other nine queued behind it.
        assert_eq!((gate.sent(), queued(&reads)), (1, 9));
        gate.permits.add_permits(1);
        // The first answered; one queued request sent a second read for all nine.
        until("the queue handed over", || {
            queued(&reads) == 0 && gate.sent() == 2
        })
        .await;
        gate.permits.add_permits(1);
        let mut answers = Vec::new();
        for t in tasks {
            answers.push(t.await.unwrap().unwrap());
        }
        assert_eq!(answers[0], Some(1));
        // None of the nine got the read sent before they arrived.
        assert!(answers[1..].iter().all(|v| *v == Some(2)), "{answers:?}");
        assert!(reads.slots.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_cancelled_leader_hands_over() {
        let reads = Arc::new(VersionReads::default());
        let gate = Gate::new();
        let leader = start_read(&reads, &gate, acme()).await;
        let follower = start_read(&reads, &gate, acme()).await;
        leader.abort();
        // The queued request leads now; its read is the second.
        until("the follower leads", || gate.sent() == 2).await;
        assert_eq!(queued(&reads), 0);
        gate.permits.add_permits(2);
        assert_eq!(follower.await.unwrap().unwrap(), Some(2));
        assert!(reads.slots.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_failed_read_sends_its_followers_to_read_alone() {
        let reads = Arc::new(VersionReads::default());
        let gate = Gate {
            failing: 2,
            ..Gate::new()
        };
        let mut tasks = Vec::new();
        for _ in 0..3 {
            tasks.push(start_read(&reads, &gate, acme()).await);
        }
        gate.permits.add_permits(4);
        let answers: Vec<_> = futures::future::join_all(tasks).await;
        let answers: Vec<_> = answers.into_iter().map(|a| a.unwrap()).collect();
        assert_eq!(answers[0].as_ref().unwrap(), &Some(1));
        // The second read, sent by the second request for the third too, failed: the second
        // request gets the error, the third reads alone.
        let (second, third) = (&answers[1], &answers[2]);
        assert_eq!(
            [second.is_err(), third.is_err()]
                .iter()
                .filter(|e| **e)
                .count(),
            1
        );
        assert_eq!(gate.sent(), 3);
        assert!(reads.slots.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn enterprises_do_not_share() {
        let reads = Arc::new(VersionReads::default());
        let gate = Gate::new();
        let a = start_read(&reads, &gate, acme()).await;
        let b = start_read(&reads, &gate, EnterpriseId::from_trusted("globex".into())).await;
        // Both reads are in flight at once.
        assert_eq!(gate.sent(), 2);
        gate.permits.add_permits(2);
        let (a, b) = (a.await.unwrap().unwrap(), b.await.unwrap().unwrap());
        assert_eq!([a, b].iter().flatten().sum::<u64>(), 3);
    }
}

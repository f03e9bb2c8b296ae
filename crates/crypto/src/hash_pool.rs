//! The threads that compute password hashes: one per core, at the lowest CPU priority (nice 19).
//!
//! A hash takes tens of milliseconds of one core by design. Run at normal priority, a flood of
//! Basic-auth requests would take every core from the workers answering token requests; at
//! nice 19 the hashes mostly use what the workers leave. Linux's `SCHED_IDLE` policy was tried
//! instead, twice (docs/benchmarks.md, pair 6, rounds two and four), and never measured better:
//! on the reference machine any CPU-bound work on every core, at either priority and even in
//! another process, puts the token tail where the flood puts it, so the simpler policy stays.
//!
//! The queue is bounded: a job beyond [`HashPool::max_waiting`] is refused at once
//! ([`Refused::Busy`]) rather than queued for seconds. A job whose requester has gone (client
//! disconnected) is skipped instead of computed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send>;

/// Waiting jobs per hashing thread before new ones are refused: at about 70 ms a verify, a
/// full queue is about two seconds of work.
pub(crate) const WAITING_PER_THREAD: usize = 32;

/// Why a job was not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The queue is full; the job was not queued.
    Busy,
    /// The pool is gone (only after a panic in a job).
    Gone,
}

pub(crate) struct HashPool {
    jobs: Mutex<Sender<Job>>,
    /// Jobs queued and not yet started.
    waiting: Arc<AtomicUsize>,
    max_waiting: usize,
}

impl HashPool {
    /// The process's pool, started on first use.
    pub(crate) fn shared() -> &'static HashPool {
        static POOL: OnceLock<HashPool> = OnceLock::new();
        POOL.get_or_init(|| {
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            HashPool::start(threads, threads * WAITING_PER_THREAD)
        })
    }

    fn start(threads: usize, max_waiting: usize) -> HashPool {
        let (sender, receiver) = channel::<Job>();
        let receiver = Arc::new(Mutex::new(receiver));
        for n in 0..threads {
            let receiver = receiver.clone();
            let spawned = std::thread::Builder::new()
                .name(format!("roomlink-hash-{n}"))
                .spawn(move || work(&receiver));
            if let Err(e) = spawned {
                tracing::error!(error = %e, "cannot start a password-hashing thread");
            }
        }
        HashPool {
            jobs: Mutex::new(sender),
            waiting: Arc::default(),
            max_waiting,
        }
    }

    /// Runs `work` on a hashing thread, or refuses it when the queue is full.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Refused> {
        let admitted = self
            .waiting
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < self.max_waiting).then_some(n + 1)
            });
        if admitted.is_err() {
            return Err(Refused::Busy);
        }
        let waiting = self.waiting.clone();
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move || {
            waiting.fetch_sub(1, Ordering::AcqRel);
            if !reply.is_closed() {
                let _ = reply.send(work());
            }
        });
        let sent = self
            .jobs
            .lock()
            .map_err(|_| Refused::Gone)
            .and_then(|jobs| jobs.send(job).map_err(|_| Refused::Gone));
        if let Err(refused) = sent {
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            return Err(refused);
        }
        answer.await.map_err(|_| Refused::Gone)
    }
}

fn work(jobs: &Mutex<Receiver<Job>>) {
    if let Err(e) =
        thread_priority::set_current_thread_priority(thread_priority::ThreadPriority::Min)
    {
        tracing::warn!(error = ?e, "password hashing runs at normal CPU priority");
    }
    loop {
        // The lock is held only while waiting for the next job, not while running it.
        let job = match jobs.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        match job {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn jobs_run_and_answer_in_parallel() {
        let pool = HashPool::start(2, 8);
        let (a, b) = tokio::join!(pool.run(|| 1 + 1), pool.run(|| "two"));
        assert_eq!((a, b), (Ok(2), Ok("two")));
        let name = pool
            .run(|| std::thread::current().name().map(str::to_owned))
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        assert!(name.starts_with("roomlink-hash-"), "{name}");
    }

    #[tokio::test]
    async fn a_full_queue_refuses_at_once_and_admits_again_when_it_drains() {
        let pool = HashPool::start(1, 2);
        let (release, hold) = std::sync::mpsc::channel::<()>();
        let (started, running) = tokio::sync::oneshot::channel::<()>();
        // One job occupies the only thread until released...
        let busy = pool.run(move || {
            let _ = started.send(());
            let _ = hold.recv();
        });
        let (busy, ()) = tokio::join!(busy, async {
            let _ = running.await;
            // ...two more wait, and a fourth is refused without waiting.
            let waiting = tokio::join!(pool.run(|| 1), pool.run(|| 2), async {
                let refused = pool.run(|| 3).await;
                let _ = release.send(());
                refused
            });
            assert_eq!(waiting, (Ok(1), Ok(2), Err(Refused::Busy)));
        });
        assert_eq!(busy, Ok(()));
        assert_eq!(pool.run(|| 4).await, Ok(4), "admitted again once drained");
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn hashing_threads_run_at_the_lowest_priority() {
        let pool = HashPool::start(1, 1);
        // Field 19 of /proc/<tid>/stat is the nice value; fields 3.. follow the ")".
        let nice = pool
            .run(|| {
                let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
                let after = stat.rsplit_once(')').map(|(_, rest)| rest.to_owned());
                after.and_then(|rest| rest.split_whitespace().nth(16)?.parse::<i32>().ok())
            })
            .await
            .ok()
            .flatten();
        assert_eq!(nice, Some(19));
    }
}

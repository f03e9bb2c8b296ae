//! The threads that compute password hashes: one per core, at the lowest CPU priority.
//!
//! A hash takes tens of milliseconds of one core by design. Run at normal priority, a flood of
//! Basic-auth requests would take every core from the workers answering token requests; at
//! the lowest priority ("nice 19") the hashes use whatever CPU the workers leave, and a
//! token request still finds a core at once. Waiting jobs are a queue of closures; a job whose
//! requester has gone (client disconnected) is skipped instead of computed.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send>;

pub(crate) struct HashPool {
    jobs: Mutex<Sender<Job>>,
}

impl HashPool {
    /// The process's pool, started on first use.
    pub(crate) fn shared() -> &'static HashPool {
        static POOL: OnceLock<HashPool> = OnceLock::new();
        POOL.get_or_init(|| {
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            HashPool::start(threads)
        })
    }

    fn start(threads: usize) -> HashPool {
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
        }
    }

    /// Runs `work` on a hashing thread; `None` if the pool is gone (it never stops while the
    /// process runs, so only after a panic in `work`).
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let (reply, answer) = oneshot::channel();
        let job: Job = Box::new(move || {
            if !reply.is_closed() {
                let _ = reply.send(work());
            }
        });
        self.jobs.lock().ok()?.send(job).ok()?;
        answer.await.ok()
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
        let pool = HashPool::start(2);
        let (a, b) = tokio::join!(pool.run(|| 1 + 1), pool.run(|| "two"));
        assert_eq!((a, b), (Some(2), Some("two")));
        let name = pool
            .run(|| std::thread::current().name().map(str::to_owned))
            .await
            .flatten()
            .unwrap_or_default();
        assert!(name.starts_with("roomlink-hash-"), "{name}");
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn hashing_threads_run_at_the_lowest_priority() {
        let pool = HashPool::start(1);
        // Field 19 of /proc/<tid>/stat is the nice value; fields 3.. follow the ")".
        let nice = pool
            .run(|| {
                let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
                let after = stat.rsplit_once(')').map(|(_, rest)| rest.to_owned());
                after.and_then(|rest| rest.split_whitespace().nth(16)?.parse::<i32>().ok())
            })
            .await
            .flatten();
        assert_eq!(nice, Some(19));
    }
}

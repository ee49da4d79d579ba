//! A fixed set of threads that check plans for `mcp serve`: the solver pool.
//!
//! Checking is CPU work, and each thread that checks keeps a Z3 context of its own (about
//! 20 MB, made at its first query). Sent to tokio's blocking pool, every concurrent call would
//! get a new thread, pay for a new context while the call waits, and grow the process with the
//! number of clients. Here as many threads as the machine has cores take the calls in turn,
//! each keeping its context for the server's life: memory does not grow with the clients, and a
//! call waits in the queue rather than for a new solver.

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;

type Job = Box<dyn FnOnce() + Send>;

/// The pool's threads, fed through one queue.
#[derive(Clone, Debug)]
pub struct Pool {
    queue: mpsc::Sender<Job>,
}

impl Pool {
    /// A pool of one thread per core the process may use.
    pub fn per_core(name: &str) -> std::io::Result<Pool> {
        let threads = thread::available_parallelism().map_or(1, usize::from);
        Pool::new(name, threads)
    }

    /// A pool of `threads` threads, named `{name}-{i}`.
    pub fn new(name: &str, threads: usize) -> std::io::Result<Pool> {
        let (queue, jobs) = mpsc::channel::<Job>();
        let jobs = Arc::new(Mutex::new(jobs));
        for i in 0..threads.max(1) {
            let jobs = jobs.clone();
            thread::Builder::new().name(format!("{name}-{i}")).spawn(move || {
                loop {
                    // The lock is held only to take the next job, never while it runs.
                    let job = match jobs.lock() {
                        Ok(jobs) => jobs.recv(),
                        Err(_) => return,
                    };
                    match job {
                        Ok(job) => job(),
                        Err(mpsc::RecvError) => return,
                    }
                }
            })?;
        }
        Ok(Pool { queue })
    }

    /// Runs `work` on one of the pool's threads once one is free, and returns what it returned.
    /// `None` if the work panicked (its thread goes on with the next job).
    pub async fn run<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            let _ = answer.send(result.ok());
        });
        self.queue.send(job).ok()?;
        answered.await.ok().flatten()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use super::Pool;

    #[test]
    fn work_runs_on_the_pools_own_threads_and_a_panic_costs_only_its_call() {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let pool = Pool::new("test-pool", 2).unwrap();
        runtime.block_on(async {
            let names: Vec<String> = thread_names(&pool, 8).await;
            assert!(names.iter().all(|n| n == "test-pool-0" || n == "test-pool-1"), "{names:?}");
            assert_eq!(pool.run(|| -> u32 { panic!("a bug in one call") }).await, None);
            assert_eq!(pool.run(|| 7).await, Some(7));
        });
    }

    async fn thread_names(pool: &Pool, n: usize) -> Vec<String> {
        let mut names = Vec::new();
        for _ in 0..n {
            names.push(pool.run(|| std::thread::current().name().unwrap_or_default().to_string()).await.unwrap());
        }
        names
    }
}

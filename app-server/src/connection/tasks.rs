//! The handler tasks of one connection: requests whose handlers run in tasks of their own
//! (docs/architecture.md §4) are tracked here, bounded by `limits.max_running_requests`, and
//! drained when the connection closes and at shutdown: waited for up to a bound, then aborted.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tracing::Instrument;

/// Default for `limits.max_running_requests`.
pub const DEFAULT_MAX_RUNNING: usize = 256;

/// A request's handler could not be started: the connection already has as many running as
/// its bound allows. The router answers it `-32001` (docs/protocol.md §11.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overloaded;

/// The running handler tasks of one connection.
#[derive(Debug)]
pub struct HandlerTasks {
    set: Mutex<JoinSet<()>>,
    limit: usize,
    /// Tasks started and not finished (a finished task may still sit in the set until reaped).
    running: Arc<Running>,
}

#[derive(Debug, Default)]
struct Running {
    count: AtomicUsize,
    idle: Notify,
}

/// Counts one task as running until dropped (when the task ends or is aborted).
struct RunningGuard(Arc<Running>);

impl Drop for RunningGuard {
    fn drop(&mut self) {
        if self.0.count.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl HandlerTasks {
    /// No tasks yet; at most `limit` (at least one) at once.
    pub fn new(limit: usize) -> HandlerTasks {
        HandlerTasks {
            set: Mutex::new(JoinSet::new()),
            limit: limit.max(1),
            running: Arc::default(),
        }
    }

    /// Tasks running now.
    pub fn running(&self) -> usize {
        self.running.count.load(Ordering::Acquire)
    }

    /// Run `task` in a task of its own, in the current span, unless `limit` are running.
    pub fn spawn(&self, task: impl Future<Output = ()> + Send + 'static) -> Result<(), Overloaded> {
        let mut set = self.set.lock();
        while set.try_join_next().is_some() {}
        if self.running() >= self.limit {
            return Err(Overloaded);
        }
        self.running.count.fetch_add(1, Ordering::AcqRel);
        let guard = RunningGuard(self.running.clone());
        set.spawn(
            async move {
                task.await;
                drop(guard);
            }
            .in_current_span(),
        );
        Ok(())
    }

    /// Wait until no task runs, for at most `bound`; abort the ones still running then.
    /// Returns how many were aborted.
    pub async fn drain(&self, bound: Duration) -> usize {
        let idle = async {
            loop {
                let notified = self.running.idle.notified();
                tokio::pin!(notified);
                // Register before checking, so that no wake-up is missed.
                notified.as_mut().enable();
                if self.running() == 0 {
                    return;
                }
                notified.await;
            }
        };
        if tokio::time::timeout(bound, idle).await.is_ok() {
            return 0;
        }
        let left = self.running();
        tracing::warn!(
            left,
            ?bound,
            "requests still running when their connection closed; aborting them"
        );
        self.set.lock().abort_all();
        left
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_bound_refuses_one_more_and_frees_as_tasks_end() {
        let tasks = HandlerTasks::new(2);
        let (release, wait) = tokio::sync::watch::channel(false);
        for _ in 0..2 {
            let mut wait = wait.clone();
            assert_eq!(
                tasks.spawn(async move {
                    let _ = wait.wait_for(|go| *go).await;
                }),
                Ok(())
            );
        }
        assert_eq!(tasks.spawn(async {}), Err(Overloaded));
        release.send(true).unwrap();
        assert_eq!(tasks.drain(Duration::from_secs(5)).await, 0);
        assert_eq!(tasks.running(), 0);
        assert_eq!(tasks.spawn(async {}), Ok(()));
    }

    #[tokio::test]
    async fn a_drain_aborts_what_outlives_its_bound() {
        let tasks = HandlerTasks::new(4);
        tasks.spawn(std::future::pending()).unwrap();
        tasks.spawn(async {}).unwrap();
        assert_eq!(tasks.drain(Duration::from_millis(50)).await, 1);
        tokio::task::yield_now().await;
        assert_eq!(tasks.drain(Duration::from_secs(5)).await, 0);
    }
}

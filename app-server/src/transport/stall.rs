//! The stall clock, the writer's half of the slow-client rule (docs/protocol.md §2.5): a
//! connection whose socket or pipe takes nothing for `limits.outbound_stall_secs` while the
//! writer has something for it is closed. A client that reads, however slowly, keeps its
//! connection; only one that has stopped reading loses it. The transports count what their
//! socket takes in a [`Progress`]; the writer runs each write under [`watched`].

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Bytes a socket (or pipe) has taken, counted by the code that writes to it.
#[derive(Debug, Default)]
pub struct Progress(AtomicU64);

impl Progress {
    /// `n` more bytes were taken.
    pub fn record(&self, n: usize) {
        self.0.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Bytes taken so far.
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// The write was abandoned: nothing was taken for the stall time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stalled;

/// Ticks of the clock per stall time: a stall is seen between 1 and 1.25 stall times after
/// the last byte taken.
const TICKS: u32 = 4;

/// Run `write` to its end unless `progress` stays still for `stall`. A write that finishes
/// at once (the usual case: the socket has room) never starts a timer.
pub async fn watched<F: Future>(
    write: F,
    progress: &Progress,
    stall: Duration,
) -> Result<F::Output, Stalled> {
    tokio::pin!(write);
    if let std::task::Poll::Ready(output) = futures::poll!(&mut write) {
        return Ok(output);
    }
    let tick = (stall / TICKS).max(Duration::from_millis(1));
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + tick, tick);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut seen = progress.count();
    let mut still = 0;
    loop {
        tokio::select! {
            biased;
            output = &mut write => return Ok(output),
            _ = ticker.tick() => {
                let now = progress.count();
                if now == seen {
                    still += 1;
                    if still >= TICKS {
                        return Err(Stalled);
                    }
                } else {
                    seen = now;
                    still = 0;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[tokio::test]
    async fn a_write_that_takes_nothing_is_abandoned() {
        let progress = Progress::default();
        let never = std::future::pending::<()>();
        let stall = Duration::from_millis(100);
        assert_eq!(watched(never, &progress, stall).await, Err(Stalled));
    }

    #[tokio::test]
    async fn a_slow_write_that_keeps_taking_is_not() {
        let progress = Arc::new(Progress::default());
        // A byte every 50 ms for 1.5 s, under a stall time of 400 ms. (A late wake-up of the
        // runtime makes at most one tick, never four: the clock's ticks are delayed, not bunched.)
        let slow = {
            let progress = progress.clone();
            async move {
                for _ in 0..30 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    progress.record(1);
                }
                "done"
            }
        };
        let stall = Duration::from_millis(400);
        assert_eq!(watched(slow, &progress, stall).await, Ok("done"));
    }

    #[tokio::test]
    async fn a_ready_write_needs_no_timer() {
        let progress = Progress::default();
        assert_eq!(watched(async { 7 }, &progress, Duration::ZERO).await, Ok(7));
    }
}

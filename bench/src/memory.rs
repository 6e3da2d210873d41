//! Memory: the server's resident set (VmRSS) after start, and with 350 and 1,000 loaded idle
//! threads (started with `thread/start`, no turn run).

use std::time::Duration;

use anyhow::Result;

use crate::cli::Reps;
use crate::concurrency::start_threads;
use crate::procfs::rss_kib;
use crate::report::{Report, Unit};
use crate::stats::summarize;
use crate::target::{Session, Target};

pub const GROUP: &str = "Memory (VmRSS of the server)";
pub const AFTER_START: &str = "after start (initialized)";
pub const WITH_350: &str = "with 350 idle threads";
pub const WITH_1000: &str = "with 1,000 idle threads";
pub const PER_THREAD: &str = "per idle thread ((RSS@1,000 − RSS after start) / 1,000)";

/// Time for allocations freed after a burst of requests to settle before sampling.
const SETTLE: Duration = Duration::from_millis(500);

/// One fresh server: (RSS after start, with 350, with 1,000) in KiB.
async fn once(target: &Target) -> Result<(f64, f64, f64)> {
    let session = Session::start(target).await?;
    let pid = session.server.pid();
    tokio::time::sleep(SETTLE).await;
    let start = rss_kib(pid)?;
    start_threads(&session, target, 350).await?;
    tokio::time::sleep(SETTLE).await;
    let with_350 = rss_kib(pid)?;
    start_threads(&session, target, 650).await?;
    tokio::time::sleep(SETTLE).await;
    let with_1000 = rss_kib(pid)?;
    session.stop().await?;
    Ok((start as f64, with_350 as f64, with_1000 as f64))
}

pub async fn run(target: &Target, reps: &Reps, report: &mut Report) -> Result<()> {
    let (mut start, mut with_350, mut with_1000, mut per_thread) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps.memory {
        let (s, m, l) = once(target).await?;
        start.push(s / 1024.0);
        with_350.push(m / 1024.0);
        with_1000.push(l / 1024.0);
        per_thread.push((l - s) / 1000.0);
    }
    let kind = target.kind;
    for (label, unit, samples) in [
        (AFTER_START, Unit::MiB, &start),
        (WITH_350, Unit::MiB, &with_350),
        (WITH_1000, Unit::MiB, &with_1000),
        (PER_THREAD, Unit::KiB, &per_thread),
    ] {
        if let Some(s) = summarize(samples) {
            report.value(kind, GROUP, label, unit, s);
        }
    }
    Ok(())
}

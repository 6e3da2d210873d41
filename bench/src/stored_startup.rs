//! `stored-startup`: spawn → `initialize` answered with 0, 10,000 and 100,000 stored threads
//! (the reference: 0 and 10,000), made by [`crate::stored`] from one real thread.
//!
//! Per size: one start with no state DB (the index is rebuilt from the rollouts: "first
//! start"), warm starts (median, p90), then one start after every rollout's mtime was set to
//! now, so the DB is older than the rollouts ("rollouts touched"). For the first start and
//! the touched one, also spawn → the answer to a `thread/list {limit: 1}` sent right after
//! `initialize`: when the index is usable (Weft answers `initialize` before its state DB has
//! caught up with the rollouts; a list waits for it).

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Result;

use crate::cli::Reps;
use crate::report::{Report, Unit};
use crate::startup::start_once;
use crate::stats::summarize;
use crate::stored::stored_home;
use crate::target::{EXIT_TIMEOUT, Home, Kind, Target};
use crate::turns::thousands;

pub const GROUP: &str = "Stored threads: start-up (spawn → initialize answer)";
/// Issue 29: a full rebuild of 100,000 rollouts (no state DB) is done, and the index usable,
/// within this.
const REBUILD_100K_MS: f64 = 5_000.0;
/// How long a start that rebuilds the index may take.
const REBUILD_TIMEOUT: Duration = Duration::from_secs(900);

/// The sizes measured for each implementation.
pub fn sizes(kind: Kind) -> &'static [usize] {
    match kind {
        Kind::Weft => &[0, 10_000, 100_000],
        Kind::Reference => &[0, 10_000],
    }
}

/// Spawn, initialize, list one thread, stop; returns spawn → initialize answer and spawn →
/// list answer, in ms.
async fn start_and_list(target: &Target, home: &Home, timeout: Duration) -> Result<(f64, f64)> {
    let start = Instant::now();
    let server = target.spawn(home)?;
    let answered = server.initialize(timeout).await?;
    let (pending, _) = server
        .send("thread/list", serde_json::json!({"limit": 1}))
        .await?;
    let (_, listed) = pending.answer(timeout).await?;
    server.shutdown(EXIT_TIMEOUT).await?;
    let ms = |at: Instant| at.duration_since(start).as_secs_f64() * 1e3;
    Ok((ms(answered), ms(listed)))
}

/// Remove the state DB files (`state*.sqlite*`: Weft's `state.sqlite` and its WAL, the
/// reference's `state_N.sqlite`, …) from `home`; returns how many were removed.
pub fn remove_state_db(home: &Path) -> Result<usize> {
    let mut removed = 0;
    for entry in std::fs::read_dir(home)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("state") && name.contains(".sqlite") && entry.path().is_file() {
            std::fs::remove_file(entry.path())?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Set the mtime of every `*.jsonl` under `home` to now; returns how many.
fn touch_rollouts(home: &Path) -> Result<usize> {
    let now = SystemTime::now();
    let mut touched = 0;
    let mut stack = vec![home.join("sessions"), home.join("archived_sessions")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                std::fs::File::options()
                    .write(true)
                    .open(&path)?
                    .set_modified(now)?;
                touched += 1;
            }
        }
    }
    Ok(touched)
}

pub async fn run(target: &Target, reps: &Reps, report: &mut Report) -> Result<()> {
    for &n in sizes(target.kind) {
        let (home, _) = stored_home(target, n).await?;
        let size = format!("{} threads", thousands(n));
        remove_state_db(&home.dir)?;
        let (first, listed) = start_and_list(target, &home, REBUILD_TIMEOUT).await?;
        report.value(
            target.kind,
            GROUP,
            &format!("{size}: first start (no state DB: index rebuild)"),
            Unit::Ms,
            crate::stats::Summary::exact(first),
        );
        let rebuilt =
            format!("{size}: first start: spawn → first thread/list answered (index rebuilt)");
        report.value(
            target.kind,
            GROUP,
            &rebuilt,
            Unit::Ms,
            crate::stats::Summary::exact(listed),
        );
        if n == 100_000 && target.kind == Kind::Weft {
            report.budget(GROUP, &rebuilt, Unit::Ms, REBUILD_100K_MS, "issue 29");
        }
        let mut warm = Vec::new();
        for _ in 0..reps.startup {
            warm.push(start_once(target, &home, REBUILD_TIMEOUT).await?);
        }
        if let Some(s) = summarize(&warm) {
            report.value(target.kind, GROUP, &format!("{size}: warm"), Unit::Ms, s);
        }
        if n > 0 {
            let touched = touch_rollouts(&home.dir)?;
            let (ms, listed) = start_and_list(target, &home, REBUILD_TIMEOUT).await?;
            report.value(
                target.kind,
                GROUP,
                &format!("{size}: rollouts touched (DB older than the rollouts)"),
                Unit::Ms,
                crate::stats::Summary::exact(ms),
            );
            report.value(
                target.kind,
                GROUP,
                &format!("{size}: rollouts touched: spawn → first thread/list answered"),
                Unit::Ms,
                crate::stats::Summary::exact(listed),
            );
            eprintln!("[{}] touched {touched} rollouts", target.name());
        }
    }
    if target.kind == Kind::Reference {
        report.note(
            "stored-startup, reference: 0 and 10,000 stored threads only (its list and resume figures are taken at 10,000 too)",
        );
    }
    Ok(())
}

//! Loaded idle threads at scale: a fresh server, then 10,000 `thread/start`s (no turn), pipelined
//! with at most 64 unanswered. VmRSS after start and at 1,000 / 5,000 / 10,000 threads, the
//! per-thread cost, and the error answers; then `thread/start` latency and `turn/start` →
//! `turn/completed` latency (a reply of 10 deltas) at that load, against the same measured on
//! the same server before any thread was loaded (Weft ÷ itself, target within 2×).
//!
//! With `--idle-massif N`, Weft also runs under `valgrind --tool=massif` with N idle threads;
//! the peak snapshot (`ms_print`) names the allocation sites an idle thread costs.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::cli::Args;
use crate::concurrency::WINDOW;
use crate::fanout::{peak_rss_kib, under_valgrind};
use crate::procfs::rss_kib;
use crate::report::{Report, Unit};
use crate::stats::{Summary, summarize};
use crate::target::{Kind, REQUEST_TIMEOUT, Session, Target, thread_start_params};
use crate::turns::thousands;

pub const GROUP: &str = "Idle threads at scale (loaded, no turn)";
/// Time for allocations freed after a burst of requests to settle before sampling.
const SETTLE: Duration = Duration::from_millis(500);
const TURN_TIMEOUT: Duration = Duration::from_secs(300);

/// The thread counts at which RSS is read: 1,000, 5,000 and 10,000 where ≤ `n`, and `n`.
pub fn checkpoints(n: usize) -> Vec<usize> {
    let mut points: Vec<usize> = [1_000, 5_000, 10_000]
        .into_iter()
        .filter(|&p| p < n)
        .collect();
    if n > 0 {
        points.push(n);
    }
    points
}

/// `thread/start` latency (ms), `samples` times one after the other.
async fn thread_start_latency(
    session: &Session,
    target: &Target,
    samples: usize,
) -> Result<Vec<f64>> {
    let mut out = Vec::new();
    for _ in 0..samples {
        let (pending, sent) = session
            .server
            .send("thread/start", thread_start_params(target))
            .await?;
        let (answer, at) = pending.answer(REQUEST_TIMEOUT).await?;
        if let Err(error) = answer {
            bail!("thread/start failed: {error}");
        }
        out.push(at.duration_since(sent).as_secs_f64() * 1e3);
    }
    Ok(out)
}

/// `turn/start` → `turn/completed` (ms) for a reply of 10 deltas, each on a new thread.
async fn turn_latency(session: &mut Session, target: &Target, samples: usize) -> Result<Vec<f64>> {
    let mut out = Vec::new();
    for _ in 0..samples {
        let thread = session.thread_with_reply(target, 10).await?;
        let (pending, sent) = session.send_turn(&thread).await?;
        let done = session
            .server
            .wait_turn_completed(&thread, TURN_TIMEOUT)
            .await?;
        pending.result(REQUEST_TIMEOUT).await?;
        let status = done
            .params
            .pointer("/turn/status")
            .and_then(serde_json::Value::as_str);
        if status != Some("completed") {
            bail!("a probe turn ended {status:?}");
        }
        out.push(done.at.duration_since(sent).as_secs_f64() * 1e3);
    }
    Ok(out)
}

/// Load `count` more threads; returns the error answers.
async fn load(session: &mut Session, target: &Target, count: usize) -> Result<usize> {
    let params = (0..count).map(|_| thread_start_params(target));
    let answers = session
        .server
        .send_all("thread/start", params, WINDOW, REQUEST_TIMEOUT)
        .await?;
    // Nobody reads the thread/started broadcasts: drop them as they come.
    session.server.drain_notes();
    Ok(answers.iter().filter(|a| a.is_err()).count())
}

pub async fn run(target: &Target, args: &Args, report: &mut Report) -> Result<()> {
    let kind = target.kind;
    let n = match kind {
        Kind::Weft => args.idle.idle_threads,
        Kind::Reference => args.idle.idle_reference_threads,
    };
    let (thread_samples, turn_samples) = if args.quick { (10, 5) } else { (30, 10) };
    let mut session = Session::start(target).await?;
    let pid = session.server.pid();
    // On the empty daemon first (one unmeasured turn to warm up).
    turn_latency(&mut session, target, 1).await?;
    let empty_start = thread_start_latency(&session, target, thread_samples).await?;
    let empty_turn = turn_latency(&mut session, target, turn_samples).await?;
    tokio::time::sleep(SETTLE).await;
    let rss_start = rss_kib(pid)? as f64;
    report.value(
        kind,
        GROUP,
        "RSS after start (and a few probe threads)",
        Unit::MiB,
        Summary::exact(rss_start / 1024.0),
    );

    let mut loaded = 0;
    let mut errors = 0;
    let started = Instant::now();
    let mut last_rss = rss_start;
    for point in checkpoints(n) {
        eprintln!("  [{}] idle: {} threads", target.name(), thousands(point));
        errors += load(&mut session, target, point - loaded).await?;
        loaded = point;
        tokio::time::sleep(SETTLE).await;
        last_rss = rss_kib(pid)? as f64;
        report.value(
            kind,
            GROUP,
            &format!("RSS with {} idle threads", thousands(point)),
            Unit::MiB,
            Summary::exact(last_rss / 1024.0),
        );
    }
    let load_secs = started.elapsed().as_secs_f64();
    if n > 0 {
        report.value(
            kind,
            GROUP,
            &format!(
                "per idle thread ((RSS@{} − RSS after start) / N)",
                thousands(n)
            ),
            Unit::KiB,
            Summary::exact((last_rss - rss_start) / n as f64),
        );
    }
    report.value(
        kind,
        GROUP,
        "thread/start error answers while loading",
        Unit::Count,
        Summary::exact(errors as f64),
    );
    report.note(format!(
        "idle, {}: {} thread/starts in {load_secs:.1} s ({:.0} per second, ≤ {WINDOW} in flight)",
        target.name(),
        thousands(n),
        n as f64 / load_secs.max(1e-9),
    ));

    let loaded_start = thread_start_latency(&session, target, thread_samples).await?;
    let loaded_turn = turn_latency(&mut session, target, turn_samples).await?;
    let at = thousands(n);
    for (label, empty, loaded) in [
        ("thread/start", &empty_start, &loaded_start),
        (
            "turn/start → turn/completed (10 deltas)",
            &empty_turn,
            &loaded_turn,
        ),
    ] {
        let (Some(e), Some(l)) = (summarize(empty), summarize(loaded)) else {
            continue;
        };
        report.value(kind, GROUP, &format!("{label}, empty daemon"), Unit::Ms, e);
        report.value(
            kind,
            GROUP,
            &format!("{label}, with {at} idle threads"),
            Unit::Ms,
            l,
        );
        report.value(
            kind,
            GROUP,
            &format!("{label}: loaded ÷ empty (median, target ≤ 2×)"),
            Unit::Ratio,
            Summary::exact(l.median / e.median.max(1e-9)),
        );
    }
    report.value(
        kind,
        GROUP,
        "peak RSS (VmHWM)",
        Unit::MiB,
        Summary::exact(peak_rss_kib(pid)? as f64 / 1024.0),
    );
    if kind == Kind::Weft && n >= 10_000 {
        let mib = last_rss / 1024.0;
        let met = if mib <= 100.0 { "met" } else { "missed" };
        report.note(format!(
            "target {met}: RSS with {at} idle threads {mib:.1} MiB (≤ 100 MiB, Weft)"
        ));
    }
    if kind == Kind::Reference {
        report.note(format!(
            "idle, reference: measured at {at} threads, not 10,000 (about 570 KiB a thread: 10,000 would need about 5.5 GiB and many minutes)"
        ));
    }
    session.stop().await?;

    if kind == Kind::Weft && args.idle.idle_massif > 0 {
        eprintln!(
            "  [weft] idle under massif: {} threads",
            args.idle.idle_massif
        );
        match massif(target, args.idle.idle_massif).await {
            Ok((text, heap)) => report.note(format!(
                "massif, {} idle threads: peak heap {:.1} MiB ({:.1} KiB a thread); ms_print output: {}",
                args.idle.idle_massif,
                heap as f64 / 1048576.0,
                heap as f64 / 1024.0 / args.idle.idle_massif as f64,
                text.display()
            )),
            Err(err) => report.note(format!("massif: {err:#}")),
        }
    }
    Ok(())
}

/// The largest `mem_heap_B` of a massif output.
pub fn massif_peak_heap(text: &str) -> Option<u64> {
    text.lines()
        .filter_map(|line| line.strip_prefix("mem_heap_B="))
        .filter_map(|n| n.trim().parse().ok())
        .max()
}

/// Weft under massif with `n` idle threads; returns the `ms_print` text file and the peak heap.
async fn massif(target: &Target, n: usize) -> Result<(PathBuf, u64)> {
    let dir = target.scratch.join("massif");
    let out = dir.join("massif.out");
    let wrapped = under_valgrind(
        target,
        &dir,
        &[
            "--tool=massif".to_string(),
            "--threshold=0.5".to_string(),
            "--detailed-freq=1".to_string(),
            format!("--massif-out-file={}", out.display()),
        ],
    )?;
    let mut session = Session::start(&wrapped).await?;
    let errors = load(&mut session, &wrapped, n).await?;
    if errors > 0 {
        bail!("{errors} thread/starts failed under massif");
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Valgrind writes its output at exit: give it time rather than kill it.
    session.server.shutdown(Duration::from_secs(300)).await?;
    let text = std::fs::read_to_string(&out).with_context(|| format!("read {}", out.display()))?;
    let heap = massif_peak_heap(&text).context("no snapshot in the massif output")?;
    let printed = std::process::Command::new("ms_print")
        .arg(&out)
        .output()
        .context("run ms_print")?;
    let txt = dir.join("massif.txt");
    std::fs::write(&txt, &printed.stdout)?;
    Ok((txt, heap))
}

#[cfg(test)]
mod tests {
    use super::{checkpoints, massif_peak_heap};

    #[test]
    fn checkpoints_up_to_n() {
        assert_eq!(checkpoints(10_000), vec![1_000, 5_000, 10_000]);
        assert_eq!(checkpoints(2_000), vec![1_000, 2_000]);
        assert_eq!(checkpoints(1_000), vec![1_000]);
        assert_eq!(checkpoints(20_000), vec![1_000, 5_000, 10_000, 20_000]);
        assert!(checkpoints(0).is_empty());
    }

    #[test]
    fn peak_heap_of_massif_output() {
        let text =
            "snapshot=0\nmem_heap_B=10\nsnapshot=1\nmem_heap_B=300\nsnapshot=2\nmem_heap_B=20\n";
        assert_eq!(massif_peak_heap(text), Some(300));
        assert_eq!(massif_peak_heap(""), None);
    }
}

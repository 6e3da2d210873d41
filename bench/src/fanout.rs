//! The per-delta path: server CPU per streamed delta with 1 and with 10 subscribers of the same
//! thread (WebSocket, one connection per subscriber), and with 1 subscriber over stdio.
//!
//! Per repetition and K (1,000 and 10,000 deltas, interleaved): connection 0 starts a thread,
//! connections 1–9 `thread/resume` it (so they are subscribed), the mock gets a reply of K
//! deltas, connection 0 sends `turn/start`; the span ends when every connection has read
//! `turn/completed`, and every connection must have received exactly K deltas (a frame counts
//! for each scripted delta it carries: since issue 24 a connection whose queue fills gets
//! consecutive deltas merged instead of being dropped). The CPU per delta is the slope of the
//! median CPU over K, as in `turns.rs`. CPU time comes from `/proc/PID/task/*/schedstat`
//! (nanoseconds), not the 10 ms ticks of `/proc/PID/stat`. The WebSocket series also run at
//! K = 1,000 / 3,000, under Weft's per-connection queue of 4,096 messages, where nothing is
//! merged (before issue 24, a burst of 10,000 deltas made Weft drop some of ten subscribers).
//!
//! With `--callgrind`, Weft also runs under `valgrind --tool=callgrind`: the counters are zeroed
//! before and dumped after a K = 1,000 and a K = 3,000 turn, so instructions per delta =
//! (I(3,000) − I(1,000)) / 2,000, a figure that does not move with the machine's load.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::json;

use crate::cli::Args;
use crate::procfs::{clock_ticks_per_second, cpu_ticks};
use crate::report::{Report, Unit};
use crate::stats::{Summary, slope, summarize};
use crate::target::{
    Kind, REQUEST_TIMEOUT, Session, Target, reply_of_deltas, thread_id, thread_start_params,
    turn_start_params,
};
use crate::turns::thousands;
use crate::ws_client::{WsClient, WsServer};

pub const GROUP: &str = "Fan-out: server CPU per streamed delta (slope over K)";
/// The sizes of the slope, as in `turns.rs`.
const KS: [usize; 2] = [1_000, 10_000];
/// Smaller sizes, under Weft's per-connection queue of 4,096 messages: a burst of 10,000
/// deltas overflows it on some of ten WebSocket connections, and over stdio this client (it
/// parses every line) falls so far behind that Weft merges deltas into fewer notifications, so
/// the stdio slope, a cost per notification, is taken over these.
const KS_UNDER_QUEUE: [usize; 2] = [1_000, 3_000];
const TURN_TIMEOUT: Duration = Duration::from_secs(300);

// ---- CPU time in nanoseconds ----

/// A reading of a process's CPU time: per thread (`/proc/PID/task/TID/schedstat`, ns on CPU)
/// and in clock ticks (`/proc/PID/stat`, which also counts threads that have exited).
pub struct CpuMark {
    threads: HashMap<u32, u64>,
    ticks: u64,
}

fn thread_times(pid: u32) -> Result<HashMap<u32, u64>> {
    let mut times = HashMap::new();
    let dir = format!("/proc/{pid}/task");
    for entry in std::fs::read_dir(&dir).with_context(|| format!("read {dir}"))? {
        let entry = entry?;
        let Some(tid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(entry.path().join("schedstat")) else {
            continue; // exited between the listing and the read
        };
        if let Some(ns) = text.split_whitespace().next().and_then(|s| s.parse().ok()) {
            times.insert(tid, ns);
        }
    }
    Ok(times)
}

pub fn cpu_mark(pid: u32) -> Result<CpuMark> {
    Ok(CpuMark {
        threads: thread_times(pid)?,
        ticks: cpu_ticks(pid)?,
    })
}

/// CPU time used since `mark`, in ms: from the per-thread nanoseconds when no thread of the
/// mark has exited since (new threads count in full), else from the clock ticks.
pub fn cpu_ms_since(pid: u32, mark: &CpuMark) -> Result<f64> {
    let now = thread_times(pid)?;
    let ticks = cpu_ticks(pid)?;
    Ok(cpu_ms_between(mark, &now, ticks, clock_ticks_per_second()))
}

fn cpu_ms_between(mark: &CpuMark, now: &HashMap<u32, u64>, ticks: u64, per_second: u64) -> f64 {
    if mark.threads.keys().all(|tid| now.contains_key(tid)) {
        let ns: u64 = now
            .iter()
            .map(|(tid, &ns)| ns.saturating_sub(mark.threads.get(tid).copied().unwrap_or(0)))
            .sum();
        ns as f64 / 1e6
    } else {
        ticks.saturating_sub(mark.ticks) as f64 * 1e3 / per_second as f64
    }
}

/// `VmHWM` (peak resident set) of `pid` itself, in KiB.
pub fn peak_rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmHWM in /proc/PID/status")
}

/// Start a thread on `clients[0]` and subscribe every other connection with `thread/resume`.
/// With more than one connection, the thread first runs a one-delta turn: the reference writes
/// a thread's rollout with its first turn and cannot resume a thread before that ("no rollout
/// found"); Weft gets the same turn so both do the same work.
pub async fn shared_thread(
    server: &WsServer,
    target: &Target,
    clients: &mut [WsClient],
) -> Result<String> {
    let first = clients.first_mut().context("no connection")?;
    let result = first
        .request("thread/start", thread_start_params(target), REQUEST_TIMEOUT)
        .await?;
    let thread = thread_id(&result)?;
    if clients.len() > 1 {
        let first = &mut clients[0];
        server.mock.push(reply_of_deltas(1).responses());
        first
            .request(
                "turn/start",
                turn_start_params(&thread, "hello"),
                REQUEST_TIMEOUT,
            )
            .await?;
        first
            .wait_note("turn/completed", Instant::now() + TURN_TIMEOUT, |note| {
                note.method == "turn/completed" && note.thread_id() == Some(thread.as_str())
            })
            .await?;
    }
    for client in &clients[1..] {
        client
            .request(
                "thread/resume",
                json!({"threadId": thread}),
                REQUEST_TIMEOUT,
            )
            .await
            .context("thread/resume from another connection")?;
    }
    Ok(thread)
}

/// One turn of `k` deltas watched by every client: (wall ms, server CPU ms).
async fn ws_turn(
    server: &WsServer,
    clients: &mut [WsClient],
    target: &Target,
    k: usize,
) -> Result<(f64, f64)> {
    let thread = shared_thread(server, target, clients).await?;
    server.mock.push(reply_of_deltas(k).responses());
    for client in clients.iter_mut() {
        client.drain_notes();
        client.reset_deltas(); // the one-delta turn of shared_thread
    }
    let mark = cpu_mark(server.pid())?;
    let (pending, sent) = clients[0]
        .send("turn/start", turn_start_params(&thread, "hello"))
        .await?;
    let deadline = Instant::now() + TURN_TIMEOUT;
    let mut last = sent;
    for i in 0..clients.len() {
        let waited = clients[i]
            .wait_note("turn/completed", deadline, |note| {
                note.method == "turn/completed" && note.thread_id() == Some(thread.as_str())
            })
            .await;
        match waited {
            Ok(done) => last = last.max(done.at),
            Err(err) => {
                let dropped = clients.iter().filter(|c| c.dropped()).count();
                if dropped > 0 {
                    bail!(
                        "the server dropped {dropped} of {} connections during a turn of {} deltas",
                        clients.len(),
                        thousands(k)
                    );
                }
                return Err(err);
            }
        }
    }
    let cpu = cpu_ms_since(server.pid(), &mark)?;
    pending.result(REQUEST_TIMEOUT).await?;
    for (i, client) in clients.iter().enumerate() {
        let got = client.deltas_of(&thread);
        if got != k as u64 {
            bail!("connection {i} received {got} of {k} deltas");
        }
    }
    Ok((last.duration_since(sent).as_secs_f64() * 1e3, cpu))
}

/// One turn of `k` deltas over stdio: (wall ms, server CPU ms).
async fn stdio_turn(session: &mut Session, target: &Target, k: usize) -> Result<(f64, f64)> {
    let thread = session.thread_with_reply(target, k).await?;
    let pid = session.server.pid();
    let mark = cpu_mark(pid)?;
    let (pending, sent) = session.send_turn(&thread).await?;
    let (done, deltas) = session
        .wait_turn_counting_deltas(&thread, Instant::now() + TURN_TIMEOUT)
        .await?;
    let cpu = cpu_ms_since(pid, &mark)?;
    pending.result(REQUEST_TIMEOUT).await?;
    if deltas.notifications != k {
        bail!(
            "expected {k} deltas over stdio, got {} (the client fell behind: deltas merged)",
            deltas.notifications
        );
    }
    Ok((done.at.duration_since(sent).as_secs_f64() * 1e3, cpu))
}

/// How a series of turns is watched.
#[derive(Debug, Clone, Copy)]
enum Mode {
    Stdio,
    Ws(usize),
}

impl Mode {
    fn label(self) -> String {
        match self {
            Mode::Stdio => "stdio, 1 subscriber".to_string(),
            Mode::Ws(1) => "WebSocket, 1 subscriber".to_string(),
            Mode::Ws(n) => format!("WebSocket, {n} subscribers (connections)"),
        }
    }
}

/// Median CPU ms (and wall ms) per K, over `reps` repetitions with the sizes interleaved.
async fn series(
    target: &Target,
    mode: Mode,
    ks: [usize; 2],
    reps: usize,
) -> Result<Vec<(Summary, Summary)>> {
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); ks.len()];
    let mut wall: Vec<Vec<f64>> = vec![Vec::new(); ks.len()];
    match mode {
        Mode::Stdio => {
            let mut session = Session::start(target).await?;
            stdio_turn(&mut session, target, 10).await?; // warm-up
            for _ in 0..reps {
                for (i, &k) in ks.iter().enumerate() {
                    let (w, c) = stdio_turn(&mut session, target, k).await?;
                    wall[i].push(w);
                    cpu[i].push(c);
                }
            }
            session.stop().await?;
        }
        Mode::Ws(n) => {
            let server = WsServer::start(target).await?;
            let mut clients = Vec::new();
            for _ in 0..n {
                clients.push(server.connect().await?);
            }
            ws_turn(&server, &mut clients, target, 10).await?; // warm-up
            for _ in 0..reps {
                for (i, &k) in ks.iter().enumerate() {
                    let (w, c) = ws_turn(&server, &mut clients, target, k).await?;
                    wall[i].push(w);
                    cpu[i].push(c);
                }
            }
            if let Some(i) = clients.iter().position(WsClient::dropped) {
                bail!("connection {i} was dropped by the server");
            }
            server.stop().await?;
        }
    }
    let mut out = Vec::new();
    for i in 0..ks.len() {
        match (summarize(&cpu[i]), summarize(&wall[i])) {
            (Some(c), Some(w)) => out.push((c, w)),
            _ => bail!("no samples"),
        }
    }
    Ok(out)
}

pub async fn run(target: &Target, args: &Args, report: &mut Report) -> Result<()> {
    let reps = args.reps.unwrap_or(if args.quick { 3 } else { 7 }).max(1);
    let kind = target.kind;
    if kind == Kind::Weft {
        // Issue 29 goal 4: server CPU per streamed delta over stdio, one subscriber.
        let label = format!(
            "{}, K = {} / {}: CPU per delta",
            Mode::Stdio.label(),
            thousands(KS_UNDER_QUEUE[0]),
            thousands(KS_UNDER_QUEUE[1])
        );
        report.budget(GROUP, &label, Unit::Us, 1.5, "issue 29");
    }
    let mut per_delta: Vec<(Mode, [usize; 2], f64)> = Vec::new();
    let plan = [
        (Mode::Stdio, KS_UNDER_QUEUE),
        (Mode::Ws(1), KS),
        (Mode::Ws(10), KS),
        (Mode::Ws(1), KS_UNDER_QUEUE),
        (Mode::Ws(10), KS_UNDER_QUEUE),
    ];
    for (mode, ks) in plan {
        let label = format!(
            "{}, K = {} / {}",
            mode.label(),
            thousands(ks[0]),
            thousands(ks[1])
        );
        eprintln!("  [{}] fanout: {label}", target.name());
        let medians = match series(target, mode, ks, reps).await {
            Ok(medians) => medians,
            Err(err) => {
                report.note(format!("fanout, {}, {label}: {err:#}", target.name()));
                continue;
            }
        };
        for (&k, (c, w)) in ks.iter().zip(&medians) {
            let what = format!("{}: K = {}", mode.label(), thousands(k));
            report.value(kind, GROUP, &format!("{what}, CPU"), Unit::Ms, *c);
            report.value(kind, GROUP, &format!("{what}, wall"), Unit::Ms, *w);
        }
        let points: Vec<(f64, f64)> = ks
            .iter()
            .zip(&medians)
            .map(|(&k, (c, _))| (k as f64, c.median))
            .collect();
        if let Some(s) = slope(&points) {
            let us = s * 1e3;
            report.value(
                kind,
                GROUP,
                &format!("{label}: CPU per delta"),
                Unit::Us,
                Summary::exact(us),
            );
            per_delta.push((mode, ks, us));
        }
    }
    for ks in [KS, KS_UNDER_QUEUE] {
        let find = |n: usize| {
            per_delta
                .iter()
                .find(|(m, k, _)| matches!(m, Mode::Ws(x) if *x == n) && *k == ks)
                .map(|(_, _, us)| *us)
        };
        if let (Some(one), Some(ten)) = (find(1), find(10))
            && one > 0.0
        {
            report.value(
                kind,
                GROUP,
                &format!(
                    "CPU per delta, 10 WebSocket subscribers ÷ 1, K = {} / {} (target well under 10×)",
                    thousands(ks[0]),
                    thousands(ks[1])
                ),
                Unit::Ratio,
                Summary::exact(ten / one),
            );
        }
    }
    if kind == Kind::Weft
        && let Some((_, _, us)) = per_delta.iter().find(|(m, _, _)| matches!(m, Mode::Stdio))
    {
        let met = if *us <= 1.5 { "met" } else { "missed" };
        report.note(format!(
            "target {met}: stdio CPU per delta {us:.2} µs (≤ 1.5 µs, Weft)"
        ));
    }
    if args.fanout.callgrind && kind == Kind::Weft {
        for mode in [Mode::Stdio, Mode::Ws(1), Mode::Ws(10)] {
            eprintln!("  [weft] fanout under callgrind: {}", mode.label());
            match callgrind(target, mode).await {
                Ok(profile) => {
                    report.value(
                        kind,
                        GROUP,
                        &format!("{}: instructions per delta (callgrind)", mode.label()),
                        Unit::Count,
                        Summary::exact(profile.per_delta),
                    );
                    report.note(format!(
                        "callgrind, {}: {:.0} instructions per delta (K = 1,000 / 3,000); the K = 3,000 turn's profile is {}",
                        mode.label(),
                        profile.per_delta,
                        profile.dump.display()
                    ));
                }
                Err(err) => report.note(format!("callgrind, {}: {err:#}", mode.label())),
            }
        }
    }
    Ok(())
}

// ---- callgrind ----

struct Profile {
    per_delta: f64,
    /// The dump of the larger turn, for `callgrind_annotate`.
    dump: PathBuf,
}

/// `target` run under `valgrind TOOL_ARGS…` (through [`valgrind_wrapper`]'s script in `dir`),
/// with `dir` as its scratch directory, prepared.
pub fn under_valgrind(target: &Target, dir: &Path, tool_args: &[String]) -> Result<Target> {
    let script = valgrind_wrapper(dir, &target.binary, tool_args)?;
    let wrapped = Target {
        kind: target.kind,
        binary: script,
        scratch: dir.to_path_buf(),
    };
    wrapped.prepare()?;
    Ok(wrapped)
}

/// A shell script that runs `binary` under `valgrind` with `tool_args`: the bench spawns it as
/// it would the binary (valgrind keeps the pid across `exec`).
fn valgrind_wrapper(dir: &Path, binary: &Path, tool_args: &[String]) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let script = dir.join("under-valgrind.sh");
    let args = tool_args
        .iter()
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let text = format!(
        "#!/bin/sh\nexec valgrind -q {args} '{}' \"$@\"\n",
        binary.display()
    );
    std::fs::write(&script, text)?;
    let status = std::process::Command::new("chmod")
        .arg("+x")
        .arg(&script)
        .status()?;
    if !status.success() {
        bail!("chmod +x {}", script.display());
    }
    Ok(script)
}

fn callgrind_control(args: &[&str]) -> Result<()> {
    let out = std::process::Command::new("callgrind_control")
        .args(args)
        .output()
        .context("run callgrind_control")?;
    if !out.status.success() {
        bail!(
            "callgrind_control {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// The total instruction count (`summary:` or `totals:` line) of a callgrind dump.
pub fn callgrind_total(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| {
            line.strip_prefix("summary:")
                .or_else(|| line.strip_prefix("totals:"))
        })
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
}

/// Newest file in `dir` whose name starts with `prefix`, that is not in `seen`.
fn new_dump(dir: &Path, prefix: &str, seen: &[PathBuf]) -> Result<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
                && !seen.contains(p)
        })
        .collect();
    found.sort();
    found.pop().context("callgrind wrote no dump")
}

async fn callgrind(target: &Target, mode: Mode) -> Result<Profile> {
    let tag = match mode {
        Mode::Stdio => "stdio".to_string(),
        Mode::Ws(n) => format!("ws{n}"),
    };
    let dir = target.scratch.join(format!("callgrind-{tag}"));
    let out_prefix = dir.join("callgrind.out");
    let wrapped = under_valgrind(
        target,
        &dir,
        &[
            "--tool=callgrind".to_string(),
            format!("--callgrind-out-file={}.%p", out_prefix.display()),
        ],
    )?;
    let mut totals = Vec::new();
    let mut seen = Vec::new();
    let mut dumps = Vec::new();
    match mode {
        Mode::Stdio => {
            let mut session = Session::start(&wrapped).await?;
            stdio_turn(&mut session, &wrapped, 10).await?;
            let pid = session.server.pid().to_string();
            for k in KS_UNDER_QUEUE {
                callgrind_control(&["--zero", &pid])?;
                stdio_turn(&mut session, &wrapped, k).await?;
                callgrind_control(&["--dump", &pid])?;
                let dump = new_dump(&dir, "callgrind.out", &seen)?;
                seen.push(dump.clone());
                dumps.push(dump);
            }
            session.stop().await?;
        }
        Mode::Ws(n) => {
            let server = WsServer::start(&wrapped).await?;
            let mut clients = Vec::new();
            for _ in 0..n {
                clients.push(server.connect().await?);
            }
            ws_turn(&server, &mut clients, &wrapped, 10).await?;
            let pid = server.pid().to_string();
            for k in KS_UNDER_QUEUE {
                // The thread start and resumes happen inside ws_turn: zero after them would be
                // better, but their cost is the same for both K and cancels in the difference.
                callgrind_control(&["--zero", &pid])?;
                ws_turn(&server, &mut clients, &wrapped, k).await?;
                callgrind_control(&["--dump", &pid])?;
                let dump = new_dump(&dir, "callgrind.out", &seen)?;
                seen.push(dump.clone());
                dumps.push(dump);
            }
            server.stop().await?;
        }
    }
    for dump in &dumps {
        let text = std::fs::read_to_string(dump)?;
        totals.push(callgrind_total(&text).context("no totals in the callgrind dump")?);
    }
    let (small, large) = match totals.as_slice() {
        [small, large] => (*small as f64, *large as f64),
        _ => bail!("expected two dumps"),
    };
    Ok(Profile {
        per_delta: (large - small) / (KS_UNDER_QUEUE[1] - KS_UNDER_QUEUE[0]) as f64,
        dump: dumps.pop().context("no dump")?,
    })
}

#[cfg(test)]
mod tests;

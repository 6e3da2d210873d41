//! `big-resume`: one rollout of about 1 GiB (`--big-resume-mib`), resumed and paged in fresh
//! processes: latency and the server's peak RSS (`VmHWM`).
//!
//! The rollout is grown from a real thread: one plain turn (the head), then a block of
//! [`TURNS_PER_BLOCK`] turns whose model calls the shell tool with a command printing 64 KiB,
//! and a `thread/compact/start` (so the block ends with a `compacted` record, as a long thread
//! compacted many times has). The block is repeated with renumbered UUIDs (turn, item and call
//! ids) until the file has the size asked for.

use std::io::Write as _;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use weft_mock_model::Reply;

use crate::client::Server;
use crate::list::initialize_experimental;
use crate::report::{Cell, Report, Unit};
use crate::rollout_lines::{find_rollout, read_lines};
use crate::stats::{Summary, summarize};
use crate::stored::{SEED_PROMPT, grow_pattern, uuid_v7};
use crate::target::{EXIT_TIMEOUT, Home, Kind, REQUEST_TIMEOUT, Session, Target};

pub const GROUP: &str =
    "Stored threads: big rollout (fresh process, request written → answer read)";
/// Turns between two compactions in the repeated block.
const TURNS_PER_BLOCK: usize = 3;
/// What the tool's command prints: 64 KiB.
const COMMAND: &str = "yes 'weft-bench 64 KiB of command output: 0123456789 abcdefghijklmnopqrstuvwxyz' | head -c 65536";
/// Targets of issue 15.
const FIRST_PAGE_MS: f64 = 200.0;
const PEAK_RSS_MIB: f64 = 150.0;

/// Sizes and caps from the command line.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Size of Weft's rollout, MiB.
    pub weft_mib: u64,
    /// Size of the reference's rollout, MiB.
    pub reference_mib: u64,
    /// How long a full (unpaged) resume may take.
    pub full_timeout: Duration,
    /// The full resume is killed when the server's RSS passes this, MiB.
    pub rss_cap_mib: u64,
}

/// Peak resident set size of `pid` (`VmHWM`), MiB.
fn peak_rss_mib(pid: u32) -> Result<f64> {
    status_mib(pid, "VmHWM:")
}

/// A `kB` field of `/proc/PID/status` (the process itself, not its children), MiB.
fn status_mib(pid: u32, field: &str) -> Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .with_context(|| format!("no {field} in /proc/{pid}/status"))?;
    Ok(kib / 1024.0)
}

/// The shell tool the server offers the model and the arguments that run `command` with it.
fn shell_call(tools: &[Value], command: &str) -> Result<(String, String)> {
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .collect();
    let args = if names.contains(&"exec_command") {
        ("exec_command", json!({"cmd": command}))
    } else if names.contains(&"shell_command") {
        ("shell_command", json!({"command": command}))
    } else if names.contains(&"shell") {
        ("shell", json!({"command": ["bash", "-lc", command]}))
    } else {
        bail!("no shell tool among the tools offered: {names:?}");
    };
    Ok((args.0.to_string(), args.1.to_string()))
}

/// Run the real thread; returns the home, the thread, the head lines and the block lines.
async fn seed(target: &Target) -> Result<(Home, String, Vec<String>, Vec<String>)> {
    let mut session = Session::start(target).await?;
    let params = json!({
        "cwd": target.workspace(),
        "approvalPolicy": "never",
        "sandbox": "danger-full-access",
    });
    let result = session
        .server
        .request("thread/start", params, REQUEST_TIMEOUT)
        .await?;
    let thread = crate::target::thread_id(&result)?;
    session.mock.push(Reply::new().text("Ready.").responses());
    run_turn(&mut session, &thread, SEED_PROMPT).await?;
    let tools = session
        .mock
        .requests()
        .last()
        .map(|r| r.tools().to_vec())
        .unwrap_or_default();
    let (tool, args) = shell_call(&tools, COMMAND)?;
    let home = session.home.clone();
    let rollout = find_rollout(&home.dir, &thread)?.context("no rollout after the first turn")?;
    let head = read_lines(&rollout)?;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)?
        .as_millis() as u64;
    for i in 0..TURNS_PER_BLOCK {
        let call = format!("call_{}", uuid_v7(now_ms, i as u64 + 1));
        session
            .mock
            .push(Reply::new().function_call(&call, &tool, &args).responses());
        session
            .mock
            .push(Reply::new().text("The command printed 64 KiB.").responses());
        run_turn(
            &mut session,
            &thread,
            &format!("print the big output, step {i}"),
        )
        .await?;
    }
    session.mock.push(
        Reply::new()
            .text("Summary: three commands printed 64 KiB each.")
            .responses(),
    );
    session
        .server
        .request(
            "thread/compact/start",
            json!({"threadId": thread}),
            REQUEST_TIMEOUT,
        )
        .await?;
    session
        .server
        .wait_turn_completed(&thread, REQUEST_TIMEOUT)
        .await?;
    session.stop().await?;
    let all = read_lines(&rollout)?;
    if !all.starts_with(&head) || all.len() <= head.len() {
        bail!("the block did not append to {}", rollout.display());
    }
    let block = all[head.len()..].to_vec();
    if !block.iter().any(|l| l.contains("\"compacted\"")) {
        bail!(
            "the compaction left no `compacted` record in {}",
            rollout.display()
        );
    }
    Ok((home, thread, head, block))
}

/// One turn; fails unless it completes.
async fn run_turn(session: &mut Session, thread: &str, text: &str) -> Result<()> {
    let done = session.run_turn(thread, text).await?;
    let status = done.params.pointer("/turn/status").cloned();
    if status != Some(json!("completed")) {
        bail!("a seed turn ended {status:?}: {}", done.params);
    }
    Ok(())
}

/// What one request cost: its latency, and the bytes the server read (`rchar`) while it
/// answered, beside the answer's own size.
struct Cost {
    ms: f64,
    read: Option<u64>,
    answer_bytes: usize,
}

/// One request: its cost and answer.
async fn timed(
    server: &Server,
    method: &str,
    params: Value,
    timeout: Duration,
) -> Result<(Cost, std::result::Result<Value, String>)> {
    let before = crate::procfs::read_chars(server.pid()).ok();
    let (pending, sent) = server.send(method, params).await?;
    let (answer, at) = pending.answer(timeout).await?;
    let ms = at.duration_since(sent).as_secs_f64() * 1e3;
    let after = crate::procfs::read_chars(server.pid()).ok();
    let read = before.zip(after).map(|(b, a)| a.saturating_sub(b));
    let answer_bytes = match &answer {
        Ok(value) => value.to_string().len(),
        Err(_) => 0,
    };
    let answer = answer.map_err(|e| {
        e.get("message")
            .and_then(Value::as_str)
            .unwrap_or("error")
            .chars()
            .take(100)
            .collect()
    });
    Ok((
        Cost {
            ms,
            read,
            answer_bytes,
        },
        answer,
    ))
}

/// Samples of one figure: latency, peak RSS and bytes read per repetition.
#[derive(Default)]
struct Figure {
    ms: Vec<f64>,
    rss: Vec<f64>,
    /// KiB read by the server while answering.
    read_kib: Vec<f64>,
    /// Bytes read ÷ bytes of the answer.
    read_per_answer: Vec<f64>,
    error: Option<String>,
}

/// The label of a figure's bytes-read row.
fn read_label(label: &str) -> String {
    format!("{label}: bytes read by the server (rchar)")
}

/// The label of a figure's bytes-read ÷ answer-size row.
fn read_ratio_label(label: &str) -> String {
    format!("{label}: bytes read ÷ bytes of the answer")
}

impl Figure {
    fn add(&mut self, pid: u32, cost: &Cost, answer: &std::result::Result<Value, String>) {
        match answer {
            Ok(_) => {
                self.ms.push(cost.ms);
                if let Ok(rss) = peak_rss_mib(pid) {
                    self.rss.push(rss);
                }
                if let Some(read) = cost.read {
                    self.read_kib.push(read as f64 / 1024.0);
                    self.read_per_answer
                        .push(read as f64 / cost.answer_bytes.max(1) as f64);
                }
            }
            Err(message) => self.error = Some(message.clone()),
        }
    }

    fn record(&self, report: &mut Report, kind: Kind, label: &str) {
        let (ms, rss) = (summarize(&self.ms), summarize(&self.rss));
        let rss_label = format!("{label}: server peak RSS (VmHWM)");
        match (&self.error, ms, rss) {
            (None, Some(ms), Some(rss)) => {
                report.value(kind, GROUP, label, Unit::Ms, ms);
                report.value(kind, GROUP, &rss_label, Unit::MiB, rss);
                if let (Some(read), Some(ratio)) =
                    (summarize(&self.read_kib), summarize(&self.read_per_answer))
                {
                    report.value(kind, GROUP, &read_label(label), Unit::KiB, read);
                    report.value(kind, GROUP, &read_ratio_label(label), Unit::Ratio, ratio);
                }
            }
            (error, _, _) => {
                let why = error.clone().unwrap_or_else(|| "no sample".into());
                report.record(kind, GROUP, label, Unit::Ms, Cell::Skipped(why.clone()));
                report.record(kind, GROUP, &rss_label, Unit::MiB, Cell::Skipped(why));
            }
        }
    }
}

pub async fn run(target: &Target, reps: usize, limits: Limits, report: &mut Report) -> Result<()> {
    let (home, thread, head, block) = seed(target).await?;
    let mib = match target.kind {
        Kind::Weft => limits.weft_mib,
        Kind::Reference => limits.reference_mib,
    };
    let rollout = find_rollout(&home.dir, &thread)?.context("the seed rollout is gone")?;
    let started = Instant::now();
    let (bytes, blocks) = {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&rollout)?);
        let grown = grow_pattern(&mut out, &head, &block, &thread, mib << 20)?;
        out.flush()?;
        grown
    };
    let file_mib = bytes as f64 / (1 << 20) as f64;
    let turns = blocks as usize * (TURNS_PER_BLOCK + 1) + 1;
    report.note(format!(
        "big-resume, {}: {file_mib:.0} MiB rollout, {} lines per block ({TURNS_PER_BLOCK} turns of 64 KiB command output + 1 compaction), {blocks} blocks ≈ {turns} turns and {blocks} `compacted` records; written in {:.1} s",
        target.name(),
        block.len(),
        started.elapsed().as_secs_f64()
    ));
    let size = format!("{file_mib:.0} MiB");

    // The first daemon to page the grown file has no on-disk index of it yet (nor has one
    // after an older Weft, or a kill -9 before it indexed what it wrote): it reads the file.
    let resume_params = json!({"threadId": thread, "excludeTurns": true,
        "initialTurnsPage": {"limit": 10, "sortDirection": "desc", "itemsView": "summary"}});
    let mut first = Figure::default();
    {
        let server = target.spawn(&home)?;
        initialize_experimental(&server).await?;
        let (cost, answer) = timed(
            &server,
            "thread/resume",
            resume_params.clone(),
            limits.full_timeout,
        )
        .await?;
        first.add(server.pid(), &cost, &answer);
        server.shutdown(EXIT_TIMEOUT).await?;
    }
    first.record(
        report,
        target.kind,
        &format!("{size}: thread/resume, initialTurnsPage 10 turns, excludeTurns, first daemon (no on-disk index)"),
    );

    // Paged resume, then pages with the index warm, in one process per repetition.
    let mut resume = Figure::default();
    let (mut turns_page, mut items_page, mut read) =
        (Figure::default(), Figure::default(), Figure::default());
    for _ in 0..reps {
        let server = target.spawn(&home)?;
        initialize_experimental(&server).await?;
        let pid = server.pid();
        let params = resume_params.clone();
        let (cost, answer) = timed(&server, "thread/resume", params, limits.full_timeout).await?;
        resume.add(pid, &cost, &answer);
        if let Ok(result) = &answer {
            let turns_cursor = result.get("turnsBackwardsCursor").cloned();
            let items_cursor = result.get("itemsBackwardsCursor").cloned();
            let params = json!({"threadId": thread, "cursor": turns_cursor,
                "sortDirection": "desc", "itemsView": "notLoaded", "limit": 25});
            let (cost, answer) =
                timed(&server, "thread/turns/list", params, REQUEST_TIMEOUT).await?;
            turns_page.add(pid, &cost, &answer);
            let params = json!({"threadId": thread, "cursor": items_cursor,
                "sortDirection": "desc", "limit": 100});
            let (cost, answer) =
                timed(&server, "thread/items/list", params, REQUEST_TIMEOUT).await?;
            items_page.add(pid, &cost, &answer);
            let params = json!({"threadId": thread, "includeTurns": false});
            let (cost, answer) = timed(&server, "thread/read", params, REQUEST_TIMEOUT).await?;
            read.add(pid, &cost, &answer);
        }
        server.shutdown(EXIT_TIMEOUT).await?;
    }
    resume.record(
        report,
        target.kind,
        &format!("{size}: thread/resume, initialTurnsPage 10 turns, excludeTurns"),
    );

    // The same resume once the daemon's start-up is over (its first `thread/list` answered,
    // as before the fork below): what the request itself reads, without the start-up's
    // one-time work (opening the state DB's connections, the catch-up) that runs beside a
    // first request.
    let mut settled = Figure::default();
    for _ in 0..reps {
        let server = target.spawn(&home)?;
        initialize_experimental(&server).await?;
        settle(&server, limits.full_timeout).await?;
        let params = resume_params.clone();
        let (cost, answer) = timed(&server, "thread/resume", params, limits.full_timeout).await?;
        settled.add(server.pid(), &cost, &answer);
        server.shutdown(EXIT_TIMEOUT).await?;
    }
    settled.record(report, target.kind, &settled_label(&size));
    turns_page.record(
        report,
        target.kind,
        &format!("{size}: then thread/turns/list 25 (notLoaded)"),
    );
    items_page.record(
        report,
        target.kind,
        &format!("{size}: then thread/items/list 100"),
    );
    read.record(
        report,
        target.kind,
        &format!("{size}: then thread/read (no turns)"),
    );

    // Pages of the thread not loaded, each the first request of a fresh process.
    let cold: [(&str, &str, Value); 3] = [
        (
            "thread/turns/list 25 (summary)",
            "thread/turns/list",
            json!({"threadId": thread, "limit": 25, "sortDirection": "desc", "itemsView": "summary"}),
        ),
        (
            "thread/items/list 100",
            "thread/items/list",
            json!({"threadId": thread, "limit": 100, "sortDirection": "desc"}),
        ),
        (
            "thread/read (no turns)",
            "thread/read",
            json!({"threadId": thread, "includeTurns": false}),
        ),
    ];
    for (label, method, params) in cold {
        let mut figure = Figure::default();
        for _ in 0..reps {
            let server = target.spawn(&home)?;
            initialize_experimental(&server).await?;
            let (cost, answer) =
                timed(&server, method, params.clone(), limits.full_timeout).await?;
            figure.add(server.pid(), &cost, &answer);
            server.shutdown(EXIT_TIMEOUT).await?;
        }
        figure.record(
            report,
            target.kind,
            &format!("{size}: {label}, fresh process, not loaded"),
        );
    }

    // A fork of the thread (not loaded) in a fresh process; the copy is removed after each
    // repetition (its rollout and, for Weft, its on-disk index).
    let mut fork = Figure::default();
    for _ in 0..reps {
        let server = target.spawn(&home)?;
        initialize_experimental(&server).await?;
        // The previous copy's removal changed its day directory, so Weft's start-up re-reads
        // that directory's rollouts after `initialize`; a first `thread/list` waits for that,
        // which keeps it out of the fork's figures.
        settle(&server, limits.full_timeout).await?;
        let params = json!({"threadId": thread, "excludeTurns": true});
        let (cost, answer) = timed(&server, "thread/fork", params, limits.full_timeout).await?;
        fork.add(server.pid(), &cost, &answer);
        server.shutdown(EXIT_TIMEOUT).await?;
        if let Some(path) = answer.as_ref().ok().and_then(|a| a.pointer("/thread/path")) {
            let path = std::path::PathBuf::from(path.as_str().unwrap_or_default());
            if let Some(name) = path.file_name() {
                for suffix in [".idx", ".idx.tail"] {
                    let mut index = name.to_os_string();
                    index.push(suffix);
                    let _ = std::fs::remove_file(home.dir.join("rollout-index").join(index));
                }
            }
            let _ = std::fs::remove_file(&path);
        }
    }
    fork.record(
        report,
        target.kind,
        &format!("{size}: thread/fork (excludeTurns), fresh process, not loaded"),
    );

    // The full, unpaged resume: once, capped in time and RSS.
    let full_label = format!("{size}: full thread/resume (all turns)");
    match full_resume(target, &home, &thread, limits).await? {
        Ok((ms, rss)) => {
            let mut exact = |label: &str, unit: Unit, value: f64| {
                report.value(target.kind, GROUP, label, unit, Summary::exact(value));
            };
            exact(&full_label, Unit::Ms, ms);
            let rss_label = format!("{full_label}: server peak RSS (VmHWM)");
            exact(&rss_label, Unit::MiB, rss);
            let per = format!("{full_label}: peak RSS per MiB of rollout (KiB)");
            exact(&per, Unit::KiB, rss * 1024.0 / file_mib);
        }
        Err(why) => report.record(
            target.kind,
            GROUP,
            &full_label,
            Unit::Ms,
            Cell::Skipped(why),
        ),
    }

    if target.kind == Kind::Weft {
        // Issue 29: the first page flat in the file's size, and only what it returns read.
        let page_ms = if mib <= 512 { 20.0 } else { 25.0 };
        let resume_label =
            format!("{size}: thread/resume, initialTurnsPage 10 turns, excludeTurns");
        report.budget(GROUP, &resume_label, Unit::Ms, page_ms, "issue 29");
        for label in [
            settled_label(&size),
            format!("{size}: then thread/turns/list 25 (notLoaded)"),
            format!("{size}: then thread/items/list 100"),
        ] {
            report.budget(
                GROUP,
                &read_ratio_label(&label),
                Unit::Ratio,
                4.0,
                "issue 29",
            );
        }
        let first = report.median(
            target.kind,
            GROUP,
            &format!("{size}: thread/resume, initialTurnsPage 10 turns, excludeTurns"),
        );
        let rss = report.median(target.kind, GROUP, &format!("{size}: thread/resume, initialTurnsPage 10 turns, excludeTurns: server peak RSS (VmHWM)"));
        if let (Some(ms), Some(rss)) = (first, rss) {
            let met = |ok: bool| if ok { "met" } else { "missed" };
            report.note(format!(
                "target {}: paged resume's first answer in {ms:.0} ms (≤ {FIRST_PAGE_MS} ms); target {}: its peak RSS {rss:.0} MiB (≤ {PEAK_RSS_MIB} MiB) (Weft, {size})",
                met(ms <= FIRST_PAGE_MS),
                met(rss <= PEAK_RSS_MIB)
            ));
        }
    }
    Ok(())
}

/// The label of the paged resume asked once start-up is over.
fn settled_label(size: &str) -> String {
    format!(
        "{size}: thread/resume, initialTurnsPage 10 turns, excludeTurns, after the daemon's first thread/list"
    )
}

/// Wait until the server answered a first `thread/list` (its start-up's work is done).
async fn settle(server: &Server, timeout: Duration) -> Result<()> {
    let (listed, _) = server.send("thread/list", json!({"limit": 1})).await?;
    if let (Err(err), _) = listed.answer(timeout).await? {
        bail!("a first thread/list: {err}");
    }
    Ok(())
}

/// A full `thread/resume` in a fresh process, killed past the RSS cap or the timeout:
/// Ok((ms, peak RSS MiB)) or Err(why not).
async fn full_resume(
    target: &Target,
    home: &Home,
    thread: &str,
    limits: Limits,
) -> Result<std::result::Result<(f64, f64), String>> {
    let server = target.spawn(home)?;
    initialize_experimental(&server).await?;
    let pid = server.pid();
    let cap = limits.rss_cap_mib as f64;
    let killed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = killed.clone();
    let watchdog = tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            match status_mib(pid, "VmRSS:") {
                Ok(mib) if mib > cap => {
                    // Only the server this bench started, by its pid.
                    let _ = std::process::Command::new("kill")
                        .args(["-KILL", &pid.to_string()])
                        .status();
                    flag.store(true, std::sync::atomic::Ordering::SeqCst);
                    return;
                }
                Ok(_) => {}
                Err(_) => return,
            }
        }
    });
    let params = json!({"threadId": thread});
    let outcome = timed(&server, "thread/resume", params, limits.full_timeout)
        .await
        .map(|(cost, answer)| (cost.ms, answer));
    let rss = peak_rss_mib(pid).ok();
    watchdog.abort();
    let killed = killed.load(std::sync::atomic::Ordering::SeqCst);
    let result = match outcome {
        Ok((ms, Ok(_))) => Ok((ms, rss.unwrap_or(0.0))),
        Ok((_, Err(message))) => Err(message),
        Err(_) if killed => Err(format!("killed: RSS over {} MiB", limits.rss_cap_mib)),
        Err(err) => Err(format!("{err:#}")),
    };
    let _ = server.shutdown(EXIT_TIMEOUT).await;
    Ok(result)
}

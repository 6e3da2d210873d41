//! weft-bench: Weft's app-server against the reference `codex app-server`, side by side.
//!
//! Each server under test runs on stdio with its own in-process mock model (behind a
//! timestamping TCP proxy) on 127.0.0.1. See bench/README.md for what each figure measures.

mod big_resume;
mod cli;
mod client;
mod concurrency;
mod fanout;
mod file_search;
mod fleet;
mod idle;
mod list;
mod mcp;
mod memory;
mod netns;
mod premodel;
mod procfs;
mod proxy;
mod report;
mod resume;
mod rollout_lines;
mod rpc;
mod startup;
mod stats;
mod stored;
mod stored_startup;
mod target;
mod turns;
mod ws_client;

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::Parser;

use crate::cli::{Args, Measure, Reps};
use crate::report::{Goal, Report};
use crate::target::{Kind, Target};

fn main() -> ExitCode {
    let mut args = Args::parse();
    let mut early_notes = Vec::new();
    if args.reference.is_some() && !netns::loopback_only() {
        if netns::reexecuted() {
            early_notes.push(
                "the reference was skipped: the namespace made for it still has interfaces other than lo"
                    .to_string(),
            );
            args.reference = None;
        } else if let Some(why) = netns::unavailable() {
            early_notes.push(format!(
                "the reference was skipped: no loopback-only network namespace ({why}); it never runs with network access"
            ));
            args.reference = None;
        } else {
            return match netns::reexec() {
                Ok(status) if status.success() => ExitCode::SUCCESS,
                Ok(_) => ExitCode::FAILURE,
                Err(err) => {
                    eprintln!("weft-bench: cannot re-run inside unshare -n: {err}");
                    ExitCode::FAILURE
                }
            };
        }
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("weft-bench: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args, early_notes)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("weft-bench: {err:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args, early_notes: Vec<String>) -> Result<()> {
    let reps = args.reps();
    let (scratch, _guard) = target::scratch_root(args.scratch.as_deref())?;
    let mut targets = vec![Target {
        kind: Kind::Weft,
        binary: absolute(&args.weft)?,
        scratch: scratch.join("weft"),
    }];
    if let Some(reference) = &args.reference {
        targets.push(Target {
            kind: Kind::Reference,
            binary: absolute(&resolve_reference(reference))?,
            scratch: scratch.join("reference"),
        });
    }
    for target in &targets {
        target.prepare()?;
    }

    let mut report = Report::default();
    for note in early_notes {
        report.note(note);
    }
    let header = header(&args, &targets);
    eprintln!("{header}");

    let measures = [
        Measure::Startup,
        Measure::PreModel,
        Measure::Turns,
        Measure::Concurrency,
        Measure::Memory,
        Measure::Resume,
        Measure::Mcp,
        Measure::Idle,
        Measure::Fanout,
        Measure::Fleet,
    ];
    for measure in measures.into_iter().filter(|&m| args.runs(m)) {
        // Both implementations back to back, so drift in machine load hits both alike.
        for target in &targets {
            eprintln!("[{}] {measure:?} …", target.name());
            let outcome = match measure {
                Measure::Startup => startup::run(target, &reps, &mut report).await,
                Measure::PreModel => premodel::run(target, &reps, &mut report).await,
                Measure::Turns => turns::run(target, &reps, &mut report).await,
                Measure::Concurrency => concurrency::run(target, &reps, &mut report).await,
                Measure::Memory => memory::run(target, &reps, &mut report).await,
                Measure::Resume => resume::run(target, &reps, &mut report).await,
                Measure::Mcp => mcp::run(target, &reps, &mut report).await,
                Measure::Idle => idle::run(target, &args, &mut report).await,
                Measure::Fanout => fanout::run(target, &args, &mut report).await,
                Measure::Fleet => fleet::run(target, &args, &mut report).await,
                scale => run_stored_scenario(scale, target, &args, &reps, &mut report).await,
            };
            if let Err(err) = outcome {
                report.note(format!("{measure:?} failed for {}: {err:#}", target.name()));
            }
        }
    }
    // Issue 15's scenarios run only when `--only` names them.
    for measure in STORED_SCENARIOS
        .into_iter()
        .filter(|m| args.only.contains(m))
    {
        for target in &targets {
            eprintln!("[{}] {measure:?} …", target.name());
            let outcome = run_stored_scenario(measure, target, &args, &reps, &mut report).await;
            if let Err(err) = outcome {
                report.note(format!("{measure:?} failed for {}: {err:#}", target.name()));
            }
        }
    }
    // Issue 28's file search runs only when `--only` names it.
    if args.only.contains(&Measure::FileSearch) {
        for target in &targets {
            eprintln!("[{}] FileSearch …", target.name());
            let reps = if args.quick { 3 } else { 7 };
            if let Err(err) = file_search::run(target, reps, &mut report).await {
                report.note(format!("FileSearch failed for {}: {err:#}", target.name()));
            }
        }
    }
    absolute_targets(&mut report);
    report.note(format!(
        "load average (1, 5, 15 min) at the end of the run: {}",
        load_average()
    ));

    let text = format!("{header}\n{}", report.render(&goals()));
    println!("{text}");
    if let Some(path) = &args.markdown {
        std::fs::write(path, &text).with_context(|| format!("write {}", path.display()))?;
    }
    let missed = report.missed_budgets();
    if args.check_budgets && !missed.is_empty() {
        let names: Vec<String> = missed
            .iter()
            .map(|b| format!("{}: {}", b.group, b.label))
            .collect();
        bail!("over budget: {}", names.join("; "));
    }
    Ok(())
}

/// The scenarios of issue 15, in the order they run; each only when `--only` names it.
const STORED_SCENARIOS: [Measure; 3] = [Measure::StoredStartup, Measure::List, Measure::BigResume];

/// Run one scenario of issue 15 for `target`.
async fn run_stored_scenario(
    measure: Measure,
    target: &Target,
    args: &Args,
    reps: &Reps,
    report: &mut Report,
) -> Result<()> {
    match measure {
        Measure::StoredStartup => stored_startup::run(target, reps, report).await,
        Measure::List => list::run(target, reps, report).await,
        Measure::BigResume => {
            let limits = big_resume::Limits {
                weft_mib: args
                    .big_resume_mib
                    .unwrap_or(if args.quick { 256 } else { 1024 }),
                reference_mib: args.big_resume_reference_mib,
                full_timeout: Duration::from_secs(args.full_resume_timeout_s),
                rss_cap_mib: args.full_resume_rss_cap_mib,
            };
            big_resume::run(target, reps.resume, limits, report).await
        }
        other => bail!("{other:?} is not a stored-threads scenario"),
    }
}

fn absolute(path: &std::path::Path) -> Result<std::path::PathBuf> {
    if !path.is_file() {
        bail!("{} is not a file (build it first)", path.display());
    }
    Ok(std::fs::canonicalize(path)?)
}

/// `--reference` may name the npm install directory (`bench/.reference`): then the native binary
/// it vendors, not the Node launcher in `node_modules/.bin` (which would add Node's start-up and
/// a second process to every figure).
fn resolve_reference(path: &std::path::Path) -> std::path::PathBuf {
    if !path.is_dir() {
        return path.to_path_buf();
    }
    let vendor = path.join("node_modules/@openai/codex-linux-x64/vendor");
    let found = std::fs::read_dir(&vendor).ok().and_then(|entries| {
        entries
            .flatten()
            .map(|entry| entry.path().join("bin/codex"))
            .find(|binary| binary.is_file())
    });
    found.unwrap_or_else(|| path.to_path_buf())
}

/// The targets of issues 7 and 29 that are ratios against the reference.
fn goals() -> Vec<Goal> {
    vec![
        Goal::same("warm start-up", (startup::GROUP, startup::WARM), 8),
        Goal::same("empty-home start-up", (startup::GROUP, startup::EMPTY), 8),
        Goal::same("pre-model latency", (premodel::GROUP, premodel::LABEL), 20),
        Goal::same(
            "server CPU per delta",
            (turns::GROUP, turns::CPU_PER_DELTA),
            20,
        ),
        Goal::same(
            "100 concurrent one-turn threads, wall",
            (concurrency::GROUP, "N = 100: wall"),
            20,
        ),
        Goal {
            text: "RSS with 1,000 idle threads ≤ 1/10 of the reference's with 350".to_string(),
            weft: (memory::GROUP, memory::WITH_1000),
            reference: (memory::GROUP, memory::WITH_350),
            at_most: 1.0 / 10.0,
        },
        // Issue 29: the mixed load, both at the reference's fleet size.
        Goal::same(
            "fleet's peak RSS",
            (fleet::GROUP, fleet::PEAK_RSS_AT_REFERENCE_SIZE),
            10,
        ),
    ]
}

/// The targets that are not ratios: 1,000 concurrent threads without errors, resume of
/// 100,000 items under a second.
fn absolute_targets(report: &mut Report) {
    report.budget(
        concurrency::GROUP,
        "N = 1,000: failed turns",
        report::Unit::Count,
        0.0,
        "issue 7",
    );
    report.budget(
        resume::GROUP,
        "rollout of 100,000 items",
        report::Unit::Ms,
        1000.0,
        "issue 7",
    );
    let failed = report.median(Kind::Weft, concurrency::GROUP, "N = 1,000: failed turns");
    match failed {
        Some(0.0) => {
            report.note("target met: 1,000 concurrent threads complete without errors (Weft)")
        }
        Some(n) => report.note(format!(
            "target missed: {n} of 1,000 concurrent turns failed (Weft)"
        )),
        None => {}
    }
    let resume = report.median(Kind::Weft, resume::GROUP, "rollout of 100,000 items");
    if let Some(ms) = resume {
        let met = if ms < 1000.0 { "met" } else { "missed" };
        report.note(format!(
            "target {met}: resume of 100,000 items in {ms:.0} ms (< 1 s)"
        ));
    }
}

/// The first three fields of `/proc/loadavg`: other work on the machine skews the figures.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|text| {
            text.split_whitespace()
                .take(3)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// Machine, date and command, for the README.
fn header(args: &Args, targets: &[Target]) -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| info.lines().next().map(str::to_string))
        .unwrap_or_default();
    let date = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .unwrap_or_default();
    let command: Vec<String> = std::env::args().collect();
    let mut text = format!(
        "## weft-bench results\n\n- date: {date}\n- machine: {cores} cores, {}, Linux {}\n- load average at the start: {}\n- command: `{}`\n- mode: {}\n",
        memory.split_whitespace().collect::<Vec<_>>().join(" "),
        kernel.trim(),
        load_average(),
        command.join(" "),
        if args.quick { "--quick" } else { "full" },
    );
    for target in targets {
        text.push_str(&format!(
            "- {}: {}\n",
            target.name(),
            target.binary.display()
        ));
    }
    if targets.len() == 1 {
        text.push_str("- reference: not run (pass --reference PATH)\n");
    }
    text
}

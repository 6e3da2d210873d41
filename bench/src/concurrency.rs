//! N concurrent threads, each running one turn: the first `turn/start` sent → the last
//! `turn/completed` read, in wall time and server CPU time. Every thread is started before the
//! clock starts; the turns are sent back to back (at most [`WINDOW`] unanswered requests).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use serde_json::Value;

use crate::cli::Reps;
use crate::procfs::{clock_ticks_per_second, cpu_ticks};
use crate::report::{Report, Unit};
use crate::stats::summarize;
use crate::target::{
    REQUEST_TIMEOUT, Session, Target, reply_of_deltas, thread_id, thread_start_params,
    turn_start_params,
};
use crate::turns::thousands;

pub const GROUP: &str = "N concurrent threads, one turn each (reply of 10 deltas)";
pub const NS: [usize; 4] = [1, 10, 100, 1_000];
/// Unanswered requests at a time: below Weft's request queue (128), like a polite client.
pub const WINDOW: usize = 64;

pub fn wall_label(n: usize) -> String {
    format!("N = {}: wall", thousands(n))
}

/// Start `n` threads (not timed); returns their ids.
pub async fn start_threads(session: &Session, target: &Target, n: usize) -> Result<Vec<String>> {
    let params = (0..n).map(|_| thread_start_params(target));
    let answers = session
        .server
        .send_all("thread/start", params, WINDOW, REQUEST_TIMEOUT)
        .await?;
    answers
        .into_iter()
        .map(|answer| match answer {
            Ok(result) => thread_id(&result),
            Err(error) => bail!("thread/start failed: {error}"),
        })
        .collect()
}

struct Outcome {
    wall_ms: f64,
    cpu_ms: f64,
    errors: usize,
}

async fn once(target: &Target, n: usize, tick_ms: f64) -> Result<Outcome> {
    let mut session = Session::start(target).await?;
    let threads = start_threads(&session, target, n).await?;
    session
        .mock
        .push_all((0..n).map(|_| reply_of_deltas(10).responses()));
    session.server.drain_notes();
    let pid = session.server.pid();
    let cpu_before = cpu_ticks(pid)?;
    let start = Instant::now();
    let params = threads
        .iter()
        .map(|thread| turn_start_params(thread, "hello"));
    let answers = session
        .server
        .send_all("turn/start", params, WINDOW, REQUEST_TIMEOUT)
        .await?;
    let mut errors = answers.iter().filter(|answer| answer.is_err()).count();
    let mut waiting: HashSet<&str> = threads.iter().map(String::as_str).collect();
    // Turns whose turn/start failed never complete.
    for (thread, answer) in threads.iter().zip(&answers) {
        if answer.is_err() {
            waiting.remove(thread.as_str());
        }
    }
    let deadline = Instant::now() + Duration::from_secs(60 + n as u64);
    let mut last = start;
    while !waiting.is_empty() {
        let note = session
            .server
            .wait_note("turn/completed", deadline, |note| {
                note.method == "turn/completed"
            })
            .await?;
        if let Some(thread) = note.thread_id()
            && waiting.remove(thread)
        {
            last = note.at;
            let status = note.params.pointer("/turn/status").and_then(Value::as_str);
            if status != Some("completed") {
                errors += 1;
            }
        }
    }
    let cpu_after = cpu_ticks(pid)?;
    session.stop().await?;
    Ok(Outcome {
        wall_ms: last.duration_since(start).as_secs_f64() * 1e3,
        cpu_ms: (cpu_after - cpu_before) as f64 * tick_ms,
        errors,
    })
}

pub async fn run(target: &Target, reps: &Reps, report: &mut Report) -> Result<()> {
    let tick_ms = 1e3 / clock_ticks_per_second() as f64;
    let kind = target.kind;
    for n in NS {
        let runs = if n >= 1_000 {
            reps.concurrency_1000
        } else {
            reps.concurrency
        };
        let mut wall = Vec::new();
        let mut cpu = Vec::new();
        let mut errors = Vec::new();
        for _ in 0..runs {
            eprintln!("  [{}] N = {n}", target.name());
            let outcome = once(target, n, tick_ms).await?;
            wall.push(outcome.wall_ms);
            cpu.push(outcome.cpu_ms);
            errors.push(outcome.errors as f64);
        }
        let n_text = thousands(n);
        if let Some(s) = summarize(&wall) {
            report.value(kind, GROUP, &wall_label(n), Unit::Ms, s);
        }
        if let Some(s) = summarize(&cpu) {
            report.value(
                kind,
                GROUP,
                &format!("N = {n_text}: server CPU"),
                Unit::Ms,
                s,
            );
        }
        if let Some(s) = summarize(&errors) {
            report.value(
                kind,
                GROUP,
                &format!("N = {n_text}: failed turns"),
                Unit::Count,
                s,
            );
        }
    }
    Ok(())
}

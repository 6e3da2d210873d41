//! Resume: `thread/resume` sent → its answer read, in a fresh process, for rollouts of 100,
//! 10,000 and 100,000 items (JSONL records).
//!
//! Each implementation writes its own rollout format, so the bench does not write one from
//! scratch: it runs one real turn on a thread, stops the server, finds the thread's rollout file
//! (a `*.jsonl` under the home whose name holds the thread id), then resumes the thread in a new
//! process and runs a second turn. The lines that second process appended are one turn's worth;
//! the file is grown to N lines by repeating them. In each copy, UUIDs other than the thread id
//! get the copy number as the last 8 hex digits ([`renumber_uuids`]), so turn and item ids stay
//! unique.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

use crate::cli::Reps;
use crate::report::{Cell, Report, Unit};
use crate::rollout_lines::{find_rollout, read_lines, renumber_ordinal, renumber_uuids};
use crate::stats::summarize;
use crate::target::Home;
use crate::target::{EXIT_TIMEOUT, REQUEST_TIMEOUT, Session, Target, reply_of_deltas};
use crate::turns::thousands;

pub const GROUP: &str = "Resume (thread/resume sent → answer read, fresh process)";
const SIZES: [usize; 3] = [100, 10_000, 100_000];
const RESUME_TIMEOUT: Duration = Duration::from_secs(300);

fn label(size: usize) -> String {
    format!("rollout of {} items", thousands(size))
}

/// Whether a JSON-RPC error says the method is not served (the reference's unknown-method
/// error: `-32600 Invalid request: unknown variant `thread/resume`, …`).
fn is_unknown_method(error: &Value) -> bool {
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    let code = error.get("code").and_then(Value::as_i64);
    code == Some(-32601) || message.contains("unknown variant")
}

pub async fn run(target: &Target, reps: &Reps, report: &mut Report) -> Result<()> {
    let mut session = Session::start(target).await?;
    let thread = session.start_thread(target).await?;
    session.mock.push(reply_of_deltas(10).responses());
    session.run_turn(&thread, "hello").await?;
    // Probe: does the server serve thread/resume at all?
    let (pending, _) = session
        .server
        .send("thread/resume", json!({"threadId": thread}))
        .await?;
    if let (Err(error), _) = pending.answer(REQUEST_TIMEOUT).await?
        && is_unknown_method(&error)
    {
        session.stop().await?;
        for size in SIZES {
            let why = "thread/resume not served yet".to_string();
            report.record(
                target.kind,
                GROUP,
                &label(size),
                Unit::Ms,
                Cell::Skipped(why),
            );
        }
        report.note(format!(
            "resume skipped for {}: it answers thread/resume with the unknown-method error ({})",
            target.name(),
            error.get("message").and_then(Value::as_str).unwrap_or("?")
        ));
        return Ok(());
    }
    let home = session.home.clone();
    session.stop().await?;

    // The lines after one turn, then the lines a resume and a second turn add.
    let rollout = find_rollout(&home.dir, &thread)?.with_context(|| {
        format!(
            "no rollout file (*{thread}*.jsonl) under {}",
            home.dir.display()
        )
    })?;
    let first = read_lines(&rollout)?;
    let mut session = Session::resume(target, home.clone(), &thread).await?;
    session.mock.push(reply_of_deltas(10).responses());
    session.run_turn(&thread, "hello again").await?;
    session.stop().await?;
    let both = read_lines(&rollout)?;
    if both.len() <= first.len() || !both.starts_with(&first) {
        bail!(
            "the second turn did not append to the rollout {}",
            rollout.display()
        );
    }
    let (head, turn) = both.split_at(first.len());

    let mut turns_seen = Vec::new();
    for size in SIZES {
        let grown = grow(head, turn, &thread, size);
        let mut samples = Vec::new();
        // The first resume of each size warms the page cache; not measured.
        for rep in 0..=reps.resume {
            std::fs::write(&rollout, &grown)?;
            let (ms, turns) = resume_once(target, &home, &thread).await?;
            if rep > 0 {
                samples.push(ms);
            } else {
                turns_seen.push(format!("{} → {turns} turns", thousands(size)));
            }
        }
        if let Some(s) = summarize(&samples) {
            report.value(target.kind, GROUP, &label(size), Unit::Ms, s);
        }
    }
    report.note(format!(
        "resume, {}: {} lines per repeated turn; rollout items → turns in the answer: {}",
        target.name(),
        turn.len(),
        turns_seen.join(", ")
    ));
    Ok(())
}

/// Start the server on `home`, resume `thread`; returns the request → answer time in ms and
/// the number of turns in the answer.
async fn resume_once(target: &Target, home: &Home, thread: &str) -> Result<(f64, usize)> {
    let server = target.spawn(home)?;
    server.initialize(REQUEST_TIMEOUT).await?;
    let params = json!({"threadId": thread});
    let (pending, sent) = server.send("thread/resume", params).await?;
    let (answer, at) = pending.answer(RESUME_TIMEOUT).await?;
    let result = match answer {
        Ok(result) => result,
        Err(error) => bail!("thread/resume failed: {error}"),
    };
    let turns = result
        .pointer("/thread/turns")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    server.shutdown(EXIT_TIMEOUT).await?;
    Ok((at.duration_since(sent).as_secs_f64() * 1e3, turns))
}

/// `head` (the rollout after the first turn), then `turn` (the lines a later turn adds)
/// repeated, up to `size` lines in all. Copies after the first get fresh UUIDs (all but the
/// thread's) and, where lines carry one, a renumbered `"ordinal"`.
fn grow(head: &[String], turn: &[String], thread: &str, size: usize) -> String {
    let average = turn.iter().map(String::len).sum::<usize>() / turn.len().max(1) + 1;
    let mut out = String::with_capacity(size * average);
    for line in head.iter().take(size) {
        out.push_str(line);
        out.push('\n');
    }
    for i in 0..size.saturating_sub(head.len()) {
        let copy = i / turn.len();
        let line = &turn[i % turn.len()];
        let line = if copy == 0 {
            line.clone()
        } else {
            renumber_uuids(line, thread, copy as u64)
        };
        out.push_str(&renumber_ordinal(&line, head.len() + i));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::grow;

    const THREAD: &str = "01a22910-326b-75c2-9010-53f5cc9d8fbf";

    #[test]
    fn grows_to_the_size() {
        let lines = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let text = grow(&lines(&["h"]), &lines(&["a", "b", "c"]), THREAD, 10);
        assert_eq!(text.lines().count(), 10);
        assert!(text.starts_with("h\na\nb\nc\na\n"));
    }
}

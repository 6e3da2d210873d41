//! Fuzzy file search on a 100,000-file tree (issue 28, docs/protocol.md §7.33), only when
//! `--only file-search` names it.
//!
//! The tree: 1,000 directories of 100 files (`d123/src/file_0456_alpha.rs`, …) and a
//! `.gitignore`, built once per target in its scratch directory. Each repetition is a fresh
//! server (a cold index, a warm page cache): `fuzzyFileSearch/sessionStart` over the tree and
//! `fuzzyFileSearch/sessionUpdate` with a query written back to back, then
//! - **first results**: `sessionStart` written → the first `fuzzyFileSearch/sessionUpdated` of
//!   that query with at least one file (the figure the issue targets: ≤ 50 ms);
//! - **completed**: the same → `fuzzyFileSearch/sessionCompleted` (the whole tree walked and
//!   ranked);
//! - **next keystroke**: after completion, one more character: written → its first results
//!   (the index is built; only ranking is left);
//! - **stable search**: `fuzzyFileSearch` written → its answer, on the same server (a walk of
//!   its own).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::{Value, json};

use crate::client::Server;
use crate::report::{Report, Unit};
use crate::rpc::Note;
use crate::stats::summarize;
use crate::target::{REQUEST_TIMEOUT, Target};

pub const GROUP: &str = "Fuzzy file search, 100,000 files";
const DIRECTORIES: usize = 1_000;
const FILES_PER_DIRECTORY: usize = 100;
const WORDS: [&str; 8] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
];
/// The query typed: matches files all over the tree.
const QUERY: &str = "file_0042";
/// The next keystroke.
const NEXT_QUERY: &str = "file_0042_";
const SEARCH_TIMEOUT: Duration = Duration::from_secs(20);

/// Builds the tree under `root` (once: a finished tree has its marker).
fn build_tree(root: &Path) -> Result<()> {
    let marker = root.join(".tree-complete");
    if marker.exists() {
        return Ok(());
    }
    std::fs::create_dir_all(root.join(".git"))?;
    std::fs::write(root.join(".gitignore"), "target/\n*.log\n")?;
    for d in 0..DIRECTORIES {
        let dir = root.join(format!("d{d:03}/src"));
        std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
        for f in 0..FILES_PER_DIRECTORY {
            let word = WORDS[(d + f) % WORDS.len()];
            std::fs::write(dir.join(format!("file_{f:04}_{word}.rs")), b"")?;
        }
    }
    std::fs::write(marker, b"")?;
    Ok(())
}

/// Spawns a fresh server opted into the experimental API (the sessions are experimental).
async fn server(target: &Target) -> Result<Server> {
    let home = target.new_home("http://127.0.0.1:9/v1")?;
    let server = target.spawn(&home)?;
    let params = json!({
        "clientInfo": {"name": "weft-bench", "title": "Weft benchmarks", "version": "0.1.0"},
        "capabilities": {"experimentalApi": true}
    });
    server
        .request("initialize", params, REQUEST_TIMEOUT)
        .await?;
    server.notify("initialized").await?;
    Ok(server)
}

fn files_of(note: &Note) -> usize {
    note.params
        .get("files")
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

/// Waits, after `sent`, for the first `sessionUpdated` of `query` with at least one file and
/// for a `sessionCompleted` (in whichever order they come): ms from `sent` to each.
async fn first_results_and_completion(
    server: &mut Server,
    query: &str,
    sent: Instant,
) -> Result<(f64, f64)> {
    let deadline = Instant::now() + SEARCH_TIMEOUT;
    let (mut first, mut completed) = (None, None);
    while first.is_none() || completed.is_none() {
        let note = server
            .wait_note("sessionUpdated / sessionCompleted", deadline, |note| {
                note.method.starts_with("fuzzyFileSearch/session")
            })
            .await?;
        let ms = note.at.duration_since(sent).as_secs_f64() * 1e3;
        if note.method == "fuzzyFileSearch/sessionUpdated"
            && note.params["query"] == query
            && files_of(&note) > 0
        {
            first.get_or_insert(ms);
        } else if note.method == "fuzzyFileSearch/sessionCompleted" && first.is_some() {
            completed.get_or_insert(ms);
        }
    }
    Ok((first.unwrap_or_default(), completed.unwrap_or_default()))
}

/// Types `query` into session `id`: (ms to its first results, ms to the session's completion
/// after them).
async fn keystroke(server: &mut Server, id: &str, query: &str) -> Result<(f64, f64)> {
    let (pending, sent) = server
        .send(
            "fuzzyFileSearch/sessionUpdate",
            json!({"sessionId": id, "query": query}),
        )
        .await?;
    pending.result(REQUEST_TIMEOUT).await?;
    first_results_and_completion(server, query, sent).await
}

/// The samples of one figure each: first results, completion, next keystroke, stable search.
type Samples = [Vec<f64>; 4];

/// One repetition on a fresh `server`, its figures pushed onto `samples`.
async fn repetition(
    server: &mut Server,
    rep: usize,
    root: &str,
    samples: &mut Samples,
) -> Result<()> {
    let id = format!("bench-{rep}");
    // As the TUI does on `@` and the first letters: the start and the query back to back, on a
    // cold index (nothing walked yet).
    let (started, sent) = server
        .send(
            "fuzzyFileSearch/sessionStart",
            json!({"sessionId": id, "roots": [root]}),
        )
        .await?;
    let (updated, _) = server
        .send(
            "fuzzyFileSearch/sessionUpdate",
            json!({"sessionId": id, "query": QUERY}),
        )
        .await?;
    started
        .result(REQUEST_TIMEOUT)
        .await
        .map_err(|err| anyhow!("sessionStart: {err:#}"))?;
    updated.result(REQUEST_TIMEOUT).await?;
    let (to_first, to_completed) = first_results_and_completion(server, QUERY, sent).await?;
    let (to_next, _) = keystroke(server, &id, NEXT_QUERY).await?;
    let (pending, sent) = server
        .send("fuzzyFileSearch", json!({"query": QUERY, "roots": [root]}))
        .await?;
    let (answer, at) = pending.answer(SEARCH_TIMEOUT).await?;
    let answer = answer.map_err(|err| anyhow!("fuzzyFileSearch failed: {err}"))?;
    if answer["files"].as_array().is_none_or(Vec::is_empty) {
        bail!("fuzzyFileSearch found nothing for {QUERY}");
    }
    samples[0].push(to_first);
    samples[1].push(to_completed);
    samples[2].push(to_next);
    samples[3].push(at.duration_since(sent).as_secs_f64() * 1e3);
    Ok(())
}

pub async fn run(target: &Target, reps: usize, report: &mut Report) -> Result<()> {
    let tree: PathBuf = target.scratch.join("file-search-tree");
    eprintln!("  building {} files …", DIRECTORIES * FILES_PER_DIRECTORY);
    build_tree(&tree)?;
    let root = tree.display().to_string();
    let mut samples: Samples = Default::default();
    let mut failures = Vec::new();
    for rep in 0..reps.max(1) {
        let mut server = server(target).await?;
        if let Err(err) = repetition(&mut server, rep, &root, &mut samples).await {
            failures.push(format!("repetition {rep}: {err:#}"));
        }
        server.shutdown(Duration::from_secs(10)).await?;
    }
    if !failures.is_empty() {
        report.note(format!(
            "FileSearch, {}: {} of {} repetitions failed and are left out of the figures: {}",
            target.name(),
            failures.len(),
            reps.max(1),
            failures.join("; ")
        ));
    }
    let labels = [
        "session: start + query → first results",
        "session: start + query → completed (whole tree)",
        "session: next keystroke, first results",
        "fuzzyFileSearch answer",
    ];
    for (label, samples) in labels.into_iter().zip(&samples) {
        if let Some(summary) = summarize(samples) {
            report.value(target.kind, GROUP, label, Unit::Ms, summary);
        }
    }
    Ok(())
}

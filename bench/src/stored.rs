//! Stored threads at scale (issue 15): the data the `stored-startup`, `list` and `big-resume`
//! scenarios run on.
//!
//! Nothing here invents a rollout format. A real thread is run through the server under test
//! (a turn against the mock), the server is stopped, and its rollout file is the *seed*:
//!
//! - [`write_copies`] writes N copies of the seed under a new home, each with a fresh UUIDv7
//!   thread id (in the file name and everywhere the seed's id appears, header included), a
//!   creation time spread over a year, and a varied cwd, provider, source, preview and name,
//!   so that `thread/list`'s filters have something to select;
//! - [`grow_pattern`] repeats a block of lines (turns …, a compaction) with renumbered UUIDs,
//!   for one very large rollout.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use weft_core::time::utc_parts;

use crate::rollout_lines::{find_rollout, read_lines, renumber_ordinal, renumber_uuids};
use crate::target::{Home, Kind, Session, Target};

/// The prompt of a seed thread's turn; each copy replaces it with its own preview.
pub const SEED_PROMPT: &str = "weft-bench seed prompt";
/// The word a few previews hold (`searchTerm` that hits).
pub const NEEDLE: &str = "zebrafish";
/// The providers the copies are spread over (`modelProviders` filter: the rare one).
pub const PROVIDERS: [&str; 3] = ["mock", "openai", "ollama"];
/// The cwds the copies are spread over (`cwd` filter: the first one).
pub const CWDS: usize = 50;
/// Unix seconds of the first copy's creation (2025-01-01T00:00:00Z): every copy's times,
/// file mtimes included, stay in the past (a future mtime would make Weft rebuild its index at
/// every start).
const BASE_SECS: i64 = 1_735_689_600;
/// The copies' creation times are spread over this many seconds (about a year).
const SPREAD_SECS: i64 = 365 * 86_400;

/// The rollout of one real thread.
#[derive(Debug, Clone)]
pub struct Seed {
    pub thread: String,
    /// Non-empty lines, header first.
    pub lines: Vec<String>,
}

/// Run one real turn (prompt [`SEED_PROMPT`]) on a new thread, stop the server, return its
/// rollout.
pub async fn seed(target: &Target) -> Result<Seed> {
    let mut session = Session::start(target).await?;
    let thread = session.start_thread(target).await?;
    session.mock.push(
        weft_mock_model::Reply::new()
            .text("Done: the seed thread's answer.")
            .responses(),
    );
    session.run_turn(&thread, SEED_PROMPT).await?;
    let home = session.home.clone();
    session.stop().await?;
    let path = find_rollout(&home.dir, &thread)?
        .with_context(|| format!("no rollout of {thread} under {}", home.dir.display()))?;
    Ok(Seed {
        thread,
        lines: read_lines(&path)?,
    })
}

/// What makes one copy different from the others.
#[derive(Debug, Clone, PartialEq)]
pub struct CopySpec {
    pub id: String,
    /// Unix seconds.
    pub created_at: i64,
    /// Seconds from creation to the last line (so `updated_at` orders differently).
    pub active_for: i64,
    pub cwd: String,
    pub provider: &'static str,
    /// `cli`, `vscode`, `exec`, or `subAgent` (a spawned child of `parent`).
    pub source: &'static str,
    pub parent: Option<String>,
    pub preview: String,
    pub name: Option<String>,
    pub archived: bool,
}

/// A small deterministic generator (SplitMix64), so every run writes the same data.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// UUIDv7 text for Unix milliseconds `ms`; `unique` fills the low random bits, so distinct
/// values give distinct ids whatever `ms` is.
pub fn uuid_v7(ms: u64, unique: u64) -> String {
    let r = mix(unique);
    format!(
        "{:08x}-{:04x}-7{:03x}-{:04x}-{:012x}",
        (ms >> 16) & 0xffff_ffff,
        ms & 0xffff,
        r & 0xfff,
        0x8000 | ((r >> 12) & 0x3fff),
        unique & 0xffff_ffff_ffff
    )
}

/// The `i`-th of `n` copies. Roughly: creation times spread evenly over a year (with jitter);
/// provider `mock` 90 %, `openai` 9 %, `ollama` 1 %; source `vscode` 60 %, `cli` 30 %, `exec`
/// 8 %, spawned sub-agents 2 % (children of the copy 7 before); 50 cwds; 1 % of previews hold
/// [`NEEDLE`]; 10 % are named; 5 % archived.
pub fn copy_spec(i: usize, n: usize, home_tag: &str) -> CopySpec {
    let r = mix(i as u64 ^ 0x5eed);
    let step = SPREAD_SECS / n.max(1) as i64;
    let created_at = BASE_SECS + step * i as i64 + (r % step.max(1) as u64) as i64 / 2;
    let id = uuid_v7(created_at as u64 * 1000 + (r >> 40) % 1000, i as u64);
    let provider = match r % 100 {
        0 => PROVIDERS[2],
        1..=9 => PROVIDERS[1],
        _ => PROVIDERS[0],
    };
    let (source, parent) = match (r >> 8) % 100 {
        0..=59 => ("vscode", None),
        60..=89 => ("cli", None),
        90..=97 => ("exec", None),
        _ if i >= 7 => ("subAgent", Some(copy_spec(i - 7, n, home_tag).id)),
        _ => ("exec", None),
    };
    let needle = if (r >> 16).is_multiple_of(100) {
        NEEDLE
    } else {
        "fish"
    };
    let preview = format!(
        "task {i}: fix the {needle} parser in module {}",
        (r >> 24) % 997
    );
    let name = (r >> 32)
        .is_multiple_of(10)
        .then(|| format!("named thread {i}"));
    CopySpec {
        id,
        created_at,
        active_for: ((r >> 20) % (30 * 86_400)) as i64,
        cwd: format!("/work/{home_tag}/project-{:02}", (r >> 28) % CWDS as u64),
        provider,
        source,
        parent,
        preview,
        name,
        archived: (r >> 36).is_multiple_of(20),
    }
}

/// `rollout-YYYY-MM-DDTHH-MM-SS-<id>.jsonl` under `root/YYYY/MM/DD/` (UTC), the layout both
/// implementations use.
pub fn rollout_path(root: &Path, created_at: i64, id: &str) -> PathBuf {
    let ((year, month, day), (hour, minute, second)) = utc_parts(created_at);
    root.join(format!("{year:04}"))
        .join(format!("{month:02}"))
        .join(format!("{day:02}"))
        .join(format!(
            "rollout-{year:04}-{month:02}-{day:02}T{hour:02}-{minute:02}-{second:02}-{id}.jsonl"
        ))
}

/// `YYYY-MM-DDTHH:MM:SS.000Z`.
pub fn iso_time(secs: i64) -> String {
    let ((year, month, day), (hour, minute, second)) = utc_parts(secs);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.000Z")
}

/// The header line of a copy, from the seed's header.
fn copy_header(kind: Kind, header: &str, copy: &CopySpec) -> Result<String> {
    let mut line: Value = serde_json::from_str(header).context("parse the seed's header")?;
    if line.get("type").and_then(Value::as_str) != Some("session_meta") {
        bail!("the seed's first line is not session_meta");
    }
    let payload = line
        .get_mut("payload")
        .and_then(Value::as_object_mut)
        .context("the seed's header has no payload")?;
    payload.insert("id".into(), json!(copy.id));
    payload.insert("cwd".into(), json!(copy.cwd));
    payload.insert("model_provider".into(), json!(copy.provider));
    // The sub-agent source's key: `subAgent` in Weft's rollouts, `subagent` in the reference's.
    let sub_agent = match kind {
        Kind::Weft => "subAgent",
        Kind::Reference => "subagent",
    };
    let source = match &copy.parent {
        Some(parent) => json!({sub_agent: {"thread_spawn": {
            "parent_thread_id": parent, "depth": 1,
            "agent_nickname": "bench", "agent_role": "worker"}}}),
        None => json!(copy.source),
    };
    payload.insert("source".into(), source);
    match kind {
        Kind::Weft => {
            payload.insert("created_at".into(), json!(copy.created_at));
            line["ts"] = json!(copy.created_at * 1000);
        }
        Kind::Reference => {
            payload.insert("timestamp".into(), json!(iso_time(copy.created_at)));
            line["timestamp"] = json!(iso_time(copy.created_at));
        }
    }
    Ok(line.to_string())
}

/// Add `delta` to the integer after every `"key":` in `line` (text level; JSON numbers only).
pub fn shift_numbers(line: &str, key: &str, delta: i64) -> String {
    let needle = format!("\"{key}\":");
    let mut out = String::with_capacity(line.len() + 8);
    let mut rest = line;
    while let Some(at) = rest.find(&needle) {
        let start = at + needle.len();
        out.push_str(&rest[..start]);
        let digits = rest[start..]
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'-')
            .count();
        match rest[start..start + digits].parse::<i64>() {
            Ok(value) if digits > 0 => out.push_str(&(value + delta).to_string()),
            _ => out.push_str(&rest[start..start + digits]),
        }
        rest = &rest[start + digits..];
    }
    out.push_str(rest);
    out
}

/// The text of one copy's rollout: the header rewritten, the seed's id and prompt replaced,
/// Weft's timestamps moved to the copy's creation time (and its last line to
/// `created_at + active_for`), a `thread_name_set` line for named Weft copies.
pub fn copy_text(kind: Kind, seed: &Seed, copy: &CopySpec) -> Result<String> {
    let header = seed.lines.first().context("the seed rollout is empty")?;
    let meta: Value = serde_json::from_str(header).context("parse the seed's header")?;
    let field = |name: &str| meta.pointer(&format!("/payload/{name}")).cloned();
    let seed_created = match kind {
        Kind::Weft => field("created_at")
            .and_then(|v| v.as_i64())
            .unwrap_or(copy.created_at),
        Kind::Reference => copy.created_at,
    };
    // The turn contexts (and the environment context) repeat the cwd and the provider.
    let text = |name: &str| field(name).and_then(|v| v.as_str().map(str::to_string));
    let cwd = text("cwd").filter(|cwd| !cwd.is_empty());
    let provider = text("model_provider").map(|p| {
        (
            format!("\"model_provider\":\"{p}\""),
            format!("\"model_provider\":\"{}\"", copy.provider),
        )
    });
    let delta_s = copy.created_at - seed_created;
    let mut out = copy_header(kind, header, copy)?;
    out.push('\n');
    let body = &seed.lines[1..];
    for (i, line) in body.iter().enumerate() {
        let mut line = line
            .replace(&seed.thread, &copy.id)
            .replace(SEED_PROMPT, &copy.preview);
        if let Some(cwd) = &cwd {
            line = line.replace(cwd.as_str(), &copy.cwd);
        }
        if let Some((from, to)) = &provider {
            line = line.replace(from.as_str(), to);
        }
        if kind == Kind::Weft {
            let last = i + 1 == body.len();
            let extra = if last { copy.active_for } else { 0 };
            line = shift_numbers(&line, "ts", (delta_s + extra) * 1000);
            line = shift_numbers(&line, "started_at", delta_s);
            line = shift_numbers(&line, "completed_at", delta_s + extra);
        }
        out.push_str(&line);
        out.push('\n');
    }
    if kind == Kind::Weft
        && let Some(name) = &copy.name
    {
        let ts = (copy.created_at + copy.active_for) * 1000;
        let line = json!({"ts": ts, "type": "thread_name_set", "payload": {"name": name}});
        out.push_str(&line.to_string());
        out.push('\n');
    }
    Ok(out)
}

/// Write `n` copies of `seed` into `home` (`sessions/…`, archived ones under
/// `archived_sessions/…`), each file's mtime its last activity. Returns the copies.
pub fn write_copies(kind: Kind, seed: &Seed, home: &Home, n: usize) -> Result<Vec<CopySpec>> {
    let tag = home
        .dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("home")
        .to_string();
    let mut copies = Vec::with_capacity(n);
    for i in 0..n {
        let copy = copy_spec(i, n, &tag);
        let tree = if copy.archived {
            "archived_sessions"
        } else {
            "sessions"
        };
        let path = rollout_path(&home.dir.join(tree), copy.created_at, &copy.id);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, copy_text(kind, seed, &copy)?)
            .with_context(|| format!("write {}", path.display()))?;
        let mtime = SystemTime::UNIX_EPOCH
            + Duration::from_secs((copy.created_at + copy.active_for).max(0) as u64);
        std::fs::File::options()
            .write(true)
            .open(&path)?
            .set_modified(mtime)?;
        copies.push(copy);
    }
    Ok(copies)
}

/// A home with `n` copies of a fresh seed of `target`, made once per scratch directory and
/// reused by the scenarios after the first (a `.stored-complete` marker says it is whole).
/// Returns the home and the copies.
pub async fn stored_home(target: &Target, n: usize) -> Result<(Home, Vec<CopySpec>)> {
    let dir = target.scratch.join(format!("stored-{n}"));
    let home = Home {
        user_home: target.scratch.join(format!("stored-{n}-user-home")),
        dir: dir.clone(),
    };
    let marker = dir.join(".stored-complete");
    let tag = dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("home")
        .to_string();
    if marker.is_file() {
        return Ok((home, (0..n).map(|i| copy_spec(i, n, &tag)).collect()));
    }
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    std::fs::create_dir_all(&home.user_home)?;
    // No model is needed after the seed: the provider points at a closed port.
    target.write_config(&home, "http://127.0.0.1:9/v1")?;
    let seed = seed(target).await?;
    let started = std::time::Instant::now();
    let copies = write_copies(target.kind, &seed, &home, n)?;
    eprintln!(
        "[{}] wrote {n} stored threads in {:.1} s",
        target.name(),
        started.elapsed().as_secs_f64()
    );
    std::fs::write(&marker, b"")?;
    Ok((home, copies))
}

/// `head`, then `block` repeated (UUIDs but `thread` renumbered per repetition, the
/// reference's `"ordinal"` line counter renumbered) until the text is at least `bytes` long;
/// written to `out`. Returns (bytes written, repetitions).
pub fn grow_pattern(
    out: &mut impl std::io::Write,
    head: &[String],
    block: &[String],
    thread: &str,
    bytes: u64,
) -> Result<(u64, u64)> {
    if block.is_empty() {
        bail!("nothing to repeat");
    }
    let mut written = 0u64;
    let mut line_no = 0usize;
    for line in head {
        writeln!(out, "{line}")?;
        written += line.len() as u64 + 1;
        line_no += 1;
    }
    let mut reps = 0u64;
    while written < bytes {
        for line in block {
            let line = if reps == 0 {
                line.clone()
            } else {
                renumber_uuids(line, thread, reps)
            };
            let line = renumber_ordinal(&line, line_no);
            writeln!(out, "{line}")?;
            written += line.len() as u64 + 1;
            line_no += 1;
        }
        reps += 1;
    }
    Ok((written, reps))
}

#[cfg(test)]
mod tests;

//! MCP servers as tools (docs/mcp.md): a daemon with three stdio servers configured
//! (`[mcp_servers.a]`, `.b`, `.c`), each the FastMCP test server
//! `tests/mcp/servers/weft_test_server.py` run by the virtualenv `tests/mcp/install.sh` makes.
//!
//! Per fresh daemon: five threads started one after the other, each waited for until its three
//! `mcpServer/startupStatus/updated` `ready` notifications were read. Timed: `thread/start`
//! written → its answer read, and → the third `ready` read, for the first thread (the servers
//! start) and the later ones (Weft shares the running servers, docs/mcp.md §1; the reference
//! starts them again). Then the MCP server processes under the server, the RSS of the server
//! and its descendants, and the CPU time of the five thread starts (server + descendants).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use serde_json::Value;

use crate::cli::Reps;
use crate::procfs::{clock_ticks_per_second, cpu_ticks, descendants_matching, rss_kib};
use crate::report::{Report, Unit};
use crate::stats::summarize;
use crate::target::{REQUEST_TIMEOUT, Session, Target, thread_id, thread_start_params};

pub const STARTUP_GROUP: &str =
    "Thread start-up with 3 MCP servers (thread/start sent → third `ready` read)";
pub const PROCESS_GROUP: &str =
    "5 threads with 3 MCP servers configured (each waited for until its servers are ready)";

pub const FIRST_READY: &str = "first thread of a fresh daemon: → third `ready`";
pub const LATER_READY: &str = "later thread (2nd–5th) of the same daemon: → third `ready`";
pub const FIRST_ANSWER: &str = "first thread: thread/start → its answer";
pub const LATER_ANSWER: &str = "later thread: thread/start → its answer";
pub const PROCESSES: &str = "MCP server processes under the server (`weft_test_server.py`)";
pub const RSS: &str = "RSS, server + descendants (0.5 s after the 5th thread's servers are ready)";
pub const CPU: &str = "CPU time of the 5 thread starts, server + descendants";

const SERVERS: [&str; 3] = ["a", "b", "c"];
const THREADS: usize = 5;
const STATUS: &str = "mcpServer/startupStatus/updated";
/// What identifies an MCP server process in `/proc/PID/cmdline`.
const SCRIPT_NAME: &str = "weft_test_server.py";
/// `startup_timeout_sec` of each server: generous, Python's start-up is slow on a loaded machine.
const STARTUP_TIMEOUT_SEC: u64 = 60;
/// How long one thread may take until its servers are ready.
const READY_TIMEOUT: Duration = Duration::from_secs(STARTUP_TIMEOUT_SEC + 30);
/// Time for the start-up burst to settle before RSS is sampled.
const SETTLE: Duration = Duration::from_millis(500);

/// The interpreter and script of the MCP test server, as `tests/mcp/install.sh --paths` says.
pub struct McpServer {
    python: PathBuf,
    script: PathBuf,
}

impl McpServer {
    /// Ask `tests/mcp/install.sh --paths` (which installs nothing) where the server is.
    pub fn locate() -> Result<McpServer> {
        let install = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/mcp/install.sh");
        let out = std::process::Command::new(install)
            .arg("--paths")
            .output()
            .with_context(|| format!("run {install} --paths"))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let path = |key: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(key))
                .map(PathBuf::from)
                .with_context(|| format!("{install} --paths printed no {key}"))
        };
        let server = McpServer {
            python: path("WEFT_MCP_PYTHON=")?,
            script: path("WEFT_MCP_TEST_SERVER=")?,
        };
        if !server.python.is_file() || !server.script.is_file() {
            bail!(
                "{} or {} is missing: run tests/mcp/install.sh first",
                server.python.display(),
                server.script.display()
            );
        }
        Ok(server)
    }

    /// The `[mcp_servers.*]` entries, in keys both implementations read (docs/mcp.md §2).
    fn config(&self) -> String {
        // A JSON string is a valid TOML basic string.
        let quote = |path: &PathBuf| Value::from(path.display().to_string()).to_string();
        SERVERS
            .iter()
            .map(|name| {
                format!(
                    "\n[mcp_servers.{name}]\ncommand = {}\nargs = [{}]\nstartup_timeout_sec = {STARTUP_TIMEOUT_SEC}\n",
                    quote(&self.python),
                    quote(&self.script),
                )
            })
            .collect()
    }
}

/// One `thread/start`, waited for until its servers are ready.
struct ThreadStart {
    answer_ms: f64,
    ready_ms: f64,
    /// `mcpServer/startupStatus/updated` read for this thread up to the third `ready`.
    statuses: usize,
    /// Of those, how many came before the `thread/start` answer.
    before_answer: usize,
}

async fn start_thread(session: &mut Session, target: &Target) -> Result<ThreadStart> {
    session.server.drain_notes();
    let (pending, sent) = session
        .server
        .send("thread/start", thread_start_params(target))
        .await?;
    let (answer, answered) = pending.answer(REQUEST_TIMEOUT).await?;
    let result = answer.map_err(|error| anyhow!("thread/start failed: {error}"))?;
    let thread = thread_id(&result)?;
    // The notifications were stamped when read, so those read before the answer keep their time.
    let deadline = sent + READY_TIMEOUT;
    let mut ready = BTreeSet::new();
    let (mut statuses, mut before_answer, mut last) = (0, 0, sent);
    while ready.len() < SERVERS.len() {
        let note = session
            .server
            .wait_note("three MCP servers ready", deadline, |note| {
                note.method == STATUS && note.thread_id() == Some(thread.as_str())
            })
            .await?;
        statuses += 1;
        if note.at < answered {
            before_answer += 1;
        }
        let field = |key| note.params.get(key).and_then(Value::as_str).unwrap_or("");
        match field("status") {
            // The first `ready` of each server; a repeated one changes nothing.
            "ready" if ready.insert(field("name").to_string()) => last = note.at,
            "failed" => bail!("MCP server {} failed: {}", field("name"), note.params),
            _ => {}
        }
    }
    let ms = |at: Instant| at.duration_since(sent).as_secs_f64() * 1e3;
    Ok(ThreadStart {
        answer_ms: ms(answered),
        ready_ms: ms(last),
        statuses,
        before_answer,
    })
}

/// One fresh daemon: its five thread starts, then processes, RSS and CPU.
struct Outcome {
    threads: Vec<ThreadStart>,
    processes: usize,
    rss_kib: u64,
    cpu_ms: f64,
}

async fn once(target: &Target, config: &str, tick_ms: f64) -> Result<Outcome> {
    let mut session = Session::start_with(target, config).await?;
    let pid = session.server.pid();
    let cpu_before = cpu_ticks(pid)?;
    let mut threads = Vec::new();
    for _ in 0..THREADS {
        threads.push(start_thread(&mut session, target).await?);
    }
    let cpu_after = cpu_ticks(pid)?;
    tokio::time::sleep(SETTLE).await;
    let processes = descendants_matching(pid, SCRIPT_NAME);
    let rss_kib = rss_kib(pid)?;
    session.stop().await?;
    Ok(Outcome {
        threads,
        processes,
        rss_kib,
        cpu_ms: cpu_after.saturating_sub(cpu_before) as f64 * tick_ms,
    })
}

pub async fn run(target: &Target, reps: &Reps, report: &mut Report) -> Result<()> {
    let server = McpServer::locate()?;
    let config = server.config();
    let tick_ms = 1e3 / clock_ticks_per_second() as f64;
    let (mut first_ready, mut first_answer, mut later_ready, mut later_answer) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut processes, mut rss, mut cpu) = (Vec::new(), Vec::new(), Vec::new());
    let mut shapes = BTreeSet::new();
    for rep in 0..reps.mcp {
        eprintln!("  [{}] daemon {}", target.name(), rep + 1);
        let outcome = once(target, &config, tick_ms).await?;
        for (i, thread) in outcome.threads.iter().enumerate() {
            let (ready, answer) = if i == 0 {
                (&mut first_ready, &mut first_answer)
            } else {
                (&mut later_ready, &mut later_answer)
            };
            ready.push(thread.ready_ms);
            answer.push(thread.answer_ms);
            shapes.insert((i == 0, thread.statuses, thread.before_answer));
        }
        processes.push(outcome.processes as f64);
        rss.push(outcome.rss_kib as f64 / 1024.0);
        cpu.push(outcome.cpu_ms);
    }
    let kind = target.kind;
    let rows = [
        (STARTUP_GROUP, FIRST_READY, Unit::Ms, &first_ready),
        (STARTUP_GROUP, LATER_READY, Unit::Ms, &later_ready),
        (STARTUP_GROUP, FIRST_ANSWER, Unit::Ms, &first_answer),
        (STARTUP_GROUP, LATER_ANSWER, Unit::Ms, &later_answer),
        (PROCESS_GROUP, PROCESSES, Unit::Count, &processes),
        (PROCESS_GROUP, RSS, Unit::MiB, &rss),
        (PROCESS_GROUP, CPU, Unit::Ms, &cpu),
    ];
    for (group, label, unit, samples) in rows {
        if let Some(s) = summarize(samples) {
            report.value(kind, group, label, unit, s);
        }
    }
    // The first thread's shape first.
    for (first, statuses, before_answer) in shapes.into_iter().rev() {
        let which = if first {
            "first thread"
        } else {
            "later thread"
        };
        report.note(format!(
            "mcp, {}, {which}: {statuses} `{STATUS}` up to the third `ready`, {before_answer} of them read before the thread/start answer",
            target.name()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::McpServer;

    #[test]
    fn configures_three_servers_with_quoted_paths() {
        let server = McpServer {
            python: "/venv/bin/python".into(),
            script: "/repo/tests/mcp/servers/weft_test_server.py".into(),
        };
        let config = server.config();
        for name in ["a", "b", "c"] {
            assert!(config.contains(&format!("\n[mcp_servers.{name}]\n")));
        }
        assert_eq!(
            config.matches("command = \"/venv/bin/python\"\n").count(),
            3
        );
        assert!(config.contains("args = [\"/repo/tests/mcp/servers/weft_test_server.py\"]\n"));
    }
}

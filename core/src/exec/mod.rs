//! Unified exec (engine.md §4.3): `exec_command` starts a command through the user's shell and
//! waits until it exits or its yield time passes; a command still running then keeps running
//! as a numbered session that `write_stdin` writes to and polls.
//!
//! * Commands get pipes, not a terminal: `stdin` is a pipe kept open for `write_stdin`;
//!   `stdout` and `stderr` share one pipe, so their output interleaves in the order it was
//!   written. Programs that need a TTY see none (`isatty` is false).
//! * Each command runs in its own process group; killing it kills the group. When a command's
//!   shell exits, whatever it left running in its group is killed too.
//! * Sessions belong to one thread ([`ExecSessions`]). They survive `turn/interrupt` and end
//!   with [`ExecSessions::shutdown`] or when the [`ExecSessions`] is dropped. At most
//!   [`MAX_SESSIONS`] processes run at once; the least recently used session is killed to make
//!   room (the model is told).
//! * A command that is still in the foreground (no session id returned yet) is killed when the
//!   turn is interrupted or when the `exec_command` future is dropped.

mod buffer;
mod process;
mod spec;
#[cfg(test)]
mod tests;
mod truncate;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;

use crate::sandbox::{SandboxSpec, sandbox_support};
use buffer::OutputBuffer;
use process::{Process, Spawn, Waited};

pub use spec::{
    ArgsError, EXEC_COMMAND_TOOL, ExecCommandArgs, SandboxPermissions, WRITE_STDIN_TOOL,
    WriteStdinArgs, exec_command_tool_spec, exec_command_tool_spec_with_escalation,
    parse_exec_command_args, parse_write_stdin_args, write_stdin_tool_spec,
};
pub use truncate::{
    APPROX_BYTES_PER_TOKEN, TruncationPolicy, approx_token_count, formatted_truncate_output,
    truncate_output,
};

/// `exec_command`'s default yield time.
pub const DEFAULT_EXEC_YIELD_MS: u64 = 10_000;
/// `write_stdin`'s default yield time.
pub const DEFAULT_WRITE_STDIN_YIELD_MS: u64 = 250;
/// Shortest wait of a call that starts a command or writes input.
pub const MIN_YIELD_MS: u64 = 250;
/// Longest wait of a call that starts a command or writes input.
pub const MAX_YIELD_MS: u64 = 30_000;
/// Shortest wait of an empty `write_stdin` poll.
pub const MIN_EMPTY_POLL_YIELD_MS: u64 = 5_000;
/// Longest wait of an empty `write_stdin` poll.
pub const MAX_EMPTY_POLL_YIELD_MS: u64 = 300_000;
/// Default output budget for the model, in tokens.
pub const DEFAULT_MAX_OUTPUT_TOKENS: usize = 10_000;
/// Most processes one thread may have running.
pub const MAX_SESSIONS: usize = 64;
/// From this many processes on, the model is warned.
pub const WARN_SESSIONS: usize = 60;
/// Output bytes kept per process between polls, and per call (head + tail).
pub const OUTPUT_BUFFER_CAP: usize = 1024 * 1024;
/// How long an interrupted or closed command gets between SIGTERM and SIGKILL.
pub const TERMINATE_GRACE: Duration = Duration::from_millis(200);

/// A command to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecRequest {
    /// The shell script.
    pub cmd: String,
    /// Working directory (absolute).
    pub workdir: PathBuf,
    /// Shell binary; `$SHELL`, then `/bin/bash`, when `None`.
    pub shell: Option<String>,
    /// Run as a login shell (`-lc` instead of `-c`).
    pub login: bool,
    /// How long to wait before returning (clamped to 250…30 000 ms).
    pub yield_time_ms: u64,
    /// Output budget in tokens (default [`DEFAULT_MAX_OUTPUT_TOKENS`]).
    pub max_output_tokens: Option<usize>,
}

impl ExecRequest {
    /// The argv that runs the command: `[shell, "-lc" | "-c", cmd]`.
    pub fn argv(&self) -> Vec<String> {
        let shell = self
            .shell
            .clone()
            .filter(|s| !s.trim().is_empty())
            .or_else(|| std::env::var("SHELL").ok().filter(|s| !s.trim().is_empty()))
            .unwrap_or_else(|| "/bin/bash".to_string());
        let flag = if self.login { "-lc" } else { "-c" };
        vec![shell, flag.to_string(), self.cmd.clone()]
    }

    /// The argv as one shell-quoted line (`/bin/bash -lc 'echo hi'`), for the
    /// `commandExecution` item's `command`.
    pub fn display_command(&self) -> String {
        shell_join(&self.argv())
    }
}

/// The result of a call that did not fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutput {
    /// Random 6-hex-digit id of this output.
    pub chunk_id: String,
    /// Time spent in this call.
    pub wall_time: Duration,
    /// The exit code, when the process exited (128 + n when killed by signal n).
    pub exit_code: Option<i32>,
    /// The session id, when the process is still running.
    pub session_id: Option<u64>,
    /// The output of this call, truncated for the model (with the `Total output lines:`
    /// header when cut).
    pub output: String,
    /// The output of this call for display (capped at [`OUTPUT_BUFFER_CAP`], untruncated
    /// below that): the `commandExecution` item's `aggregatedOutput`.
    pub aggregated_output: String,
    /// Approximate tokens of the output before truncation.
    pub original_token_count: usize,
    /// Notes for the model (a session was evicted, the session limit is near, stdin is closed).
    pub warnings: Vec<String>,
}

/// Why a call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    /// The turn was interrupted while waiting. A foreground command was killed; a session
    /// keeps running.
    #[error("aborted by user")]
    Aborted {
        /// Time spent in the call.
        wall_time: Duration,
    },
    /// The policy asks for a sandbox this kernel cannot enforce; nothing was run.
    #[error("{0}")]
    SandboxUnavailable(String),
    /// The sandbox could not be set up for this command; nothing was run.
    #[error("failed to set up the sandbox: {0}")]
    Sandbox(String),
    /// The command could not be started.
    #[error("failed to start the command: {0}")]
    Spawn(String),
    /// `write_stdin` to a session that does not exist (or already ended and was collected).
    #[error(
        "Unknown session ID {0}: there is no running exec_command session with this ID (it may have exited and been reported already). Start a new command with exec_command."
    )]
    UnknownSession(u64),
    /// The sessions were shut down (thread unloaded, daemon stopping).
    #[error("the thread's command sessions are shut down")]
    ShutDown,
}

/// The text sent to the model for an `exec_command` / `write_stdin` result (engine.md §4.3):
///
/// ```text
/// Chunk ID: 3fa2c1
/// Wall time: 0.0123 seconds
/// Process exited with code 0          (or: Process running with session ID 7)
/// Original token count: 1
/// Output:
/// hi
/// ```
///
/// Warnings, if any, come as `Warning: …` lines right before `Output:`.
pub fn format_for_model(output: &ExecOutput) -> String {
    let mut text = format!(
        "Chunk ID: {}\nWall time: {:.4} seconds\n",
        output.chunk_id,
        output.wall_time.as_secs_f64()
    );
    if let Some(code) = output.exit_code {
        text.push_str(&format!("Process exited with code {code}\n"));
    } else if let Some(id) = output.session_id {
        text.push_str(&format!("Process running with session ID {id}\n"));
    }
    text.push_str(&format!(
        "Original token count: {}\n",
        output.original_token_count
    ));
    for warning in &output.warnings {
        text.push_str(&format!("Warning: {warning}\n"));
    }
    text.push_str("Output:\n");
    text.push_str(&output.output);
    text
}

/// The output the model gets for an interrupted exec call (engine.md §7.5):
/// `Wall time: 1.2 seconds\naborted by user` (at least 0.1 s).
pub fn format_aborted_for_model(wall_time: Duration) -> String {
    format!(
        "Wall time: {:.1} seconds\naborted by user",
        wall_time.as_secs_f64().max(0.1)
    )
}

/// The unified-exec processes of one thread.
pub struct ExecSessions {
    table: Mutex<Table>,
    next_id: AtomicU64,
}

#[derive(Default)]
struct Table {
    entries: BTreeMap<u64, Entry>,
    closed: bool,
}

struct Entry {
    process: Arc<Process>,
    /// Returned to the model as a session (not owned by a running `exec_command` call).
    background: bool,
    last_used: Instant,
    command: String,
}

impl Default for ExecSessions {
    fn default() -> Self {
        ExecSessions::new()
    }
}

impl std::fmt::Debug for ExecSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecSessions")
            .field("sessions", &self.session_ids())
            .finish()
    }
}

impl ExecSessions {
    /// No sessions yet.
    pub fn new() -> ExecSessions {
        ExecSessions {
            table: Mutex::new(Table::default()),
            next_id: AtomicU64::new(1),
        }
    }

    /// Runs `req.cmd` under `sandbox`, streaming output to `on_output`, until it exits, the
    /// yield time passes (it then keeps running as a session) or `cancel` fires (it is then
    /// killed and [`ExecError::Aborted`] returned).
    pub async fn exec_command(
        &self,
        req: ExecRequest,
        sandbox: &SandboxSpec,
        on_output: impl Fn(&str) + Send + Sync,
        cancel: &CancellationToken,
    ) -> Result<ExecOutput, ExecError> {
        let started = Instant::now();
        if self.lock().closed {
            return Err(ExecError::ShutDown);
        }
        sandbox_support()
            .check(sandbox)
            .map_err(ExecError::SandboxUnavailable)?;
        if !req.workdir.is_dir() {
            return Err(ExecError::Spawn(format!(
                "working directory {} does not exist or is not a directory",
                req.workdir.display()
            )));
        }
        #[cfg(target_os = "linux")]
        let child_sandbox =
            crate::sandbox::prepare_child_sandbox(sandbox).map_err(ExecError::Sandbox)?;
        let argv = req.argv();
        let mut env = vec![
            ("NO_COLOR".to_string(), "1".to_string()),
            ("TERM".to_string(), "dumb".to_string()),
            ("PAGER".to_string(), "cat".to_string()),
            ("GIT_PAGER".to_string(), "cat".to_string()),
            ("GH_PAGER".to_string(), "cat".to_string()),
        ];
        if !sandbox.network_allowed() {
            env.push(("WEFT_SANDBOX_NETWORK_DISABLED".to_string(), "1".to_string()));
        }
        let process = Process::spawn(Spawn {
            program: &argv[0],
            args: &argv[1..],
            workdir: &req.workdir,
            env: &env,
            buffer_cap: OUTPUT_BUFFER_CAP,
            #[cfg(target_os = "linux")]
            sandbox: child_sandbox,
        })
        .map_err(|e| {
            if sandbox.is_confined() && e.kind() == std::io::ErrorKind::PermissionDenied {
                ExecError::Sandbox(format!("`{}`: {e}", argv[0]))
            } else {
                ExecError::Spawn(format!("`{}`: {e}", argv[0]))
            }
        })?;
        let process = Arc::new(process);
        let (id, mut warnings) = self.register(Arc::clone(&process), req.display_command())?;
        let mut guard = ForegroundGuard {
            sessions: self,
            id,
            armed: true,
        };

        let deadline = tokio::time::Instant::from_std(started)
            + Duration::from_millis(req.yield_time_ms.clamp(MIN_YIELD_MS, MAX_YIELD_MS));
        let mut out = OutputBuffer::new(OUTPUT_BUFFER_CAP);
        let waited = process
            .collect(deadline, &on_output, cancel, &mut out)
            .await;
        let (exit_code, session_id) = match waited {
            Waited::Exited(code) => {
                guard.armed = false;
                self.remove(id);
                (Some(code), None)
            }
            Waited::Yielded => {
                guard.armed = false;
                self.mark_background(id);
                (None, Some(id))
            }
            Waited::Cancelled => {
                // Answer the interrupt now; the group gets SIGTERM at once and SIGKILL after
                // the grace period, from a task that owns the process (its drop kills too).
                guard.armed = false;
                drop(self.remove(id));
                process.term_now();
                tokio::spawn(async move { process.terminate(TERMINATE_GRACE).await });
                return Err(ExecError::Aborted {
                    wall_time: started.elapsed(),
                });
            }
        };
        if session_id.is_some() {
            let running = self.running_count();
            if running >= WARN_SESSIONS {
                warnings.push(format!(
                    "{running} processes are running in this thread; at {MAX_SESSIONS} the least recently used session is killed to make room. Let sessions you no longer need finish."
                ));
            }
        }
        Ok(finish(
            started,
            exit_code,
            session_id,
            &mut out,
            req.max_output_tokens,
            warnings,
        ))
    }

    /// Writes `chars` to session `session_id` (nothing when empty: a poll), then collects its
    /// output until it exits or the yield time passes (`chars` non-empty: 250…30 000 ms;
    /// empty: 5 000…300 000 ms). `cancel` stops the wait without killing the session.
    pub async fn write_stdin(
        &self,
        session_id: u64,
        chars: String,
        yield_time_ms: u64,
        max_output_tokens: Option<usize>,
        on_output: impl Fn(&str) + Send + Sync,
        cancel: &CancellationToken,
    ) -> Result<ExecOutput, ExecError> {
        let started = Instant::now();
        let process = {
            let mut table = self.lock();
            if table.closed {
                return Err(ExecError::ShutDown);
            }
            match table.entries.get_mut(&session_id) {
                Some(entry) if entry.background => {
                    entry.last_used = Instant::now();
                    Arc::clone(&entry.process)
                }
                _ => return Err(ExecError::UnknownSession(session_id)),
            }
        };
        let yield_ms = if chars.is_empty() {
            yield_time_ms.clamp(MIN_EMPTY_POLL_YIELD_MS, MAX_EMPTY_POLL_YIELD_MS)
        } else {
            yield_time_ms.clamp(MIN_YIELD_MS, MAX_YIELD_MS)
        };
        let deadline = tokio::time::Instant::from_std(started) + Duration::from_millis(yield_ms);
        let mut warnings = Vec::new();
        if !chars.is_empty() && process.exit_code().is_none() {
            let written = tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    return Err(ExecError::Aborted { wall_time: started.elapsed() });
                }
                written = process.write_stdin(&chars, deadline) => written,
            };
            if let Err(error) = written {
                warnings.push(format!(
                    "the input could not be written to session {session_id}: {error}"
                ));
            }
        } else if !chars.is_empty() {
            warnings.push(format!(
                "session {session_id} has already exited; the input was not delivered"
            ));
        }
        let mut out = OutputBuffer::new(OUTPUT_BUFFER_CAP);
        let waited = process
            .collect(deadline, &on_output, cancel, &mut out)
            .await;
        let (exit_code, session) = match waited {
            Waited::Exited(code) => {
                self.remove(session_id);
                (Some(code), None)
            }
            Waited::Yielded => (None, Some(session_id)),
            Waited::Cancelled => {
                return Err(ExecError::Aborted {
                    wall_time: started.elapsed(),
                });
            }
        };
        Ok(finish(
            started,
            exit_code,
            session,
            &mut out,
            max_output_tokens,
            warnings,
        ))
    }

    /// Kills every process (SIGTERM, then SIGKILL after a short grace) and refuses new ones.
    /// For thread unload and daemon shutdown.
    pub async fn shutdown(&self) {
        let entries: Vec<Entry> = {
            let mut table = self.lock();
            table.closed = true;
            std::mem::take(&mut table.entries).into_values().collect()
        };
        futures::future::join_all(
            entries
                .iter()
                .map(|entry| entry.process.terminate(TERMINATE_GRACE)),
        )
        .await;
    }

    /// The ids of the running sessions (background processes), in id order.
    pub fn session_ids(&self) -> Vec<u64> {
        self.lock()
            .entries
            .iter()
            .filter(|(_, entry)| entry.background)
            .map(|(id, _)| *id)
            .collect()
    }

    /// The pids of every process this thread has running (foreground and sessions).
    pub fn pids(&self) -> Vec<i32> {
        self.lock()
            .entries
            .values()
            .filter(|entry| entry.process.exit_code().is_none())
            .map(|entry| entry.process.pid())
            .collect()
    }

    fn running_count(&self) -> usize {
        self.lock()
            .entries
            .values()
            .filter(|entry| entry.process.exit_code().is_none())
            .count()
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock()
    }

    /// Adds a started process, evicting the least recently used session if the table is full.
    fn register(
        &self,
        process: Arc<Process>,
        command: String,
    ) -> Result<(u64, Vec<String>), ExecError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut warnings = Vec::new();
        let evicted = {
            let mut table = self.lock();
            if table.closed {
                drop(table);
                process.kill_now();
                return Err(ExecError::ShutDown);
            }
            let evicted = if table.entries.len() >= MAX_SESSIONS {
                let victim = table
                    .entries
                    .iter()
                    .filter(|(_, entry)| entry.background)
                    .min_by_key(|(_, entry)| (entry.process.exit_code().is_none(), entry.last_used))
                    .map(|(id, _)| *id);
                victim.and_then(|victim| table.entries.remove(&victim).map(|e| (victim, e)))
            } else {
                None
            };
            table.entries.insert(
                id,
                Entry {
                    process,
                    background: false,
                    last_used: Instant::now(),
                    command,
                },
            );
            evicted
        };
        if let Some((victim, entry)) = evicted {
            entry.process.kill_now();
            warnings.push(format!(
                "session {victim} (`{}`) was killed because this thread reached the limit of {MAX_SESSIONS} running processes",
                entry.command
            ));
        }
        Ok((id, warnings))
    }

    fn remove(&self, id: u64) -> Option<Arc<Process>> {
        self.lock().entries.remove(&id).map(|entry| entry.process)
    }

    fn mark_background(&self, id: u64) {
        if let Some(entry) = self.lock().entries.get_mut(&id) {
            entry.background = true;
            entry.last_used = Instant::now();
        }
    }
}

impl Drop for ExecSessions {
    fn drop(&mut self) {
        let table = self.table.get_mut();
        for entry in table.entries.values() {
            entry.process.kill_now();
        }
        table.entries.clear();
    }
}

/// Kills a command whose `exec_command` call was dropped before it returned (the turn was
/// hard-aborted): only a command that was handed to the model as a session may outlive it.
struct ForegroundGuard<'a> {
    sessions: &'a ExecSessions,
    id: u64,
    armed: bool,
}

impl Drop for ForegroundGuard<'_> {
    fn drop(&mut self) {
        if self.armed
            && let Some(process) = self.sessions.remove(self.id)
        {
            process.kill_now();
        }
    }
}

fn finish(
    started: Instant,
    exit_code: Option<i32>,
    session_id: Option<u64>,
    out: &mut OutputBuffer,
    max_output_tokens: Option<usize>,
    warnings: Vec<String>,
) -> ExecOutput {
    let policy = TruncationPolicy::Tokens(max_output_tokens.unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS));
    let original_token_count = out.total_bytes().div_ceil(APPROX_BYTES_PER_TOKEN);
    let aggregated_output = out.display_text();
    let output = out.truncated(policy).formatted();
    ExecOutput {
        chunk_id: chunk_id(),
        wall_time: started.elapsed(),
        exit_code,
        session_id,
        output,
        aggregated_output,
        original_token_count,
        warnings,
    }
}

/// Six random hex digits (from a v7 UUID's random tail).
fn chunk_id() -> String {
    let uuid = uuid::Uuid::now_v7();
    let bytes = uuid.as_bytes();
    format!("{:02x}{:02x}{:02x}", bytes[13], bytes[14], bytes[15])
}

/// Joins argv into one line a POSIX shell would split back into the same words.
fn shell_join(argv: &[String]) -> String {
    argv.iter()
        .map(|arg| shell_quote(arg))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./=:,+@%".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r#"'"'"'"#))
    }
}

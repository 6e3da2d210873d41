//! [`ExecSessions`]: the unified-exec processes of one thread — starting a command, writing to
//! and polling a session, evicting the least recently used one, and killing what is left.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;

use super::buffer::OutputBuffer;
use super::environment::ShellEnvironmentPolicy;
use super::process::{Process, Spawn, Waited};
use super::{
    APPROX_BYTES_PER_TOKEN, DEFAULT_MAX_OUTPUT_TOKENS, ExecError, ExecOutput, ExecRequest,
    MAX_EMPTY_POLL_YIELD_MS, MAX_SESSIONS, MAX_YIELD_MS, MIN_EMPTY_POLL_YIELD_MS, MIN_YIELD_MS,
    OUTPUT_BUFFER_CAP, TERMINATE_GRACE, TruncationPolicy, WARN_SESSIONS, chunk_id,
};
use crate::sandbox::{SandboxSpec, sandbox_support};

/// The unified-exec processes of one thread.
pub struct ExecSessions {
    table: Mutex<Table>,
    next_id: AtomicU64,
    /// Which of the daemon's variables a command gets.
    environment: ShellEnvironmentPolicy,
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
    /// No sessions yet; commands get the default environment policy.
    pub fn new() -> ExecSessions {
        ExecSessions::with_environment(ShellEnvironmentPolicy::default())
    }

    /// No sessions yet; commands get the environment `environment` gives them.
    pub fn with_environment(environment: ShellEnvironmentPolicy) -> ExecSessions {
        ExecSessions {
            table: Mutex::new(Table::default()),
            next_id: AtomicU64::new(1),
            environment,
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
        let process = Arc::new(self.spawn(&req, sandbox)?);
        let (id, mut warnings) = self.register(Arc::clone(&process), req.display_command())?;
        let mut guard = ForegroundGuard {
            sessions: self,
            id,
            armed: true,
        };

        let deadline = tokio::time::Instant::from_std(started)
            + Duration::from_millis(req.yield_time_ms.clamp(MIN_YIELD_MS, MAX_YIELD_MS));
        let (waited, mut out) = process.collect(deadline, &on_output, cancel).await;
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
                guard.armed = false;
                self.abort(id, process);
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

    /// Starts `req` under `sandbox` with the thread's environment (not registered yet).
    pub(super) fn spawn(
        &self,
        req: &ExecRequest,
        sandbox: &SandboxSpec,
    ) -> Result<Process, ExecError> {
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
        // The policy's variables, then Weft's own on top (docs/architecture.md §8.2).
        let mut env = self.environment.environment();
        env.extend([
            ("NO_COLOR".to_string(), "1".to_string()),
            ("TERM".to_string(), "dumb".to_string()),
            ("PAGER".to_string(), "cat".to_string()),
            ("GIT_PAGER".to_string(), "cat".to_string()),
            ("GH_PAGER".to_string(), "cat".to_string()),
        ]);
        if !sandbox.network_allowed() {
            env.push(("WEFT_SANDBOX_NETWORK_DISABLED".to_string(), "1".to_string()));
        }
        Process::spawn(Spawn {
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
        })
    }

    /// Ends a foreground command whose wait was cancelled or ran out: out of the table at
    /// once, SIGTERM to its group now and SIGKILL after the grace period, from a task that
    /// owns the process (its drop kills too), so the caller can answer at once.
    pub(super) fn abort(&self, id: u64, process: Arc<Process>) {
        drop(self.remove(id));
        process.term_now();
        tokio::spawn(async move { process.terminate(TERMINATE_GRACE).await });
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
        let (waited, mut out) = process.collect(deadline, &on_output, cancel).await;
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

    /// The background sessions whose process still runs, in id order: `(id, pid)`.
    pub fn running_sessions(&self) -> Vec<(u64, i32)> {
        self.lock()
            .entries
            .iter()
            .filter(|(_, entry)| entry.background && entry.process.exit_code().is_none())
            .map(|(id, entry)| (*id, entry.process.pid()))
            .collect()
    }

    /// End one background session (SIGTERM, then SIGKILL after a short grace). `false` when
    /// there is no such session or its process had already exited.
    pub async fn terminate_session(&self, id: u64) -> bool {
        let process = {
            let mut table = self.lock();
            match table.entries.get(&id) {
                Some(entry) if entry.background => table.entries.remove(&id).map(|e| e.process),
                _ => None,
            }
        };
        let Some(process) = process else {
            return false;
        };
        let running = process.exit_code().is_none();
        process.terminate(TERMINATE_GRACE).await;
        running
    }

    /// End every background session; commands still owned by a running call stay. The ids
    /// of the sessions ended.
    pub async fn terminate_sessions(&self) -> Vec<u64> {
        let ended: Vec<(u64, Arc<Process>)> = {
            let mut table = self.lock();
            let ids: Vec<u64> = table
                .entries
                .iter()
                .filter(|(_, entry)| entry.background)
                .map(|(id, _)| *id)
                .collect();
            ids.into_iter()
                .filter_map(|id| table.entries.remove(&id).map(|e| (id, e.process)))
                .collect()
        };
        futures::future::join_all(
            ended
                .iter()
                .map(|(_, process)| process.terminate(TERMINATE_GRACE)),
        )
        .await;
        ended.into_iter().map(|(id, _)| id).collect()
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
    pub(super) fn register(
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

    pub(super) fn remove(&self, id: u64) -> Option<Arc<Process>> {
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
pub(super) struct ForegroundGuard<'a> {
    pub(super) sessions: &'a ExecSessions,
    pub(super) id: u64,
    pub(super) armed: bool,
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

pub(super) fn finish(
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

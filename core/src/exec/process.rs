//! One running command: the child in its own process group, a driver task that reads its
//! merged output and reaps it, and the shared state consumers wait on.

use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use parking_lot::{Mutex, MutexGuard};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;
use tokio::process::{Child, ChildStdin};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::OUTPUT_BUFFER_CAP;
use super::buffer::{OutputBuffer, Taken};

/// After the command's leader exits, how long output already in flight is still read.
const DRAIN_LIMIT: Duration = Duration::from_millis(500);
/// Read size of the output pipe.
const READ_CHUNK: usize = 8 * 1024;

/// What to start.
pub(crate) struct Spawn<'a> {
    pub program: &'a str,
    pub args: &'a [String],
    pub workdir: &'a Path,
    /// The whole environment (nothing of the daemon's is inherited beyond it).
    pub env: &'a [(String, String)],
    /// Bytes of unread output kept (head + tail).
    pub buffer_cap: usize,
    #[cfg(target_os = "linux")]
    pub sandbox: Option<crate::sandbox::ChildSandbox>,
}

/// A running (or finished, not yet collected) command.
pub(crate) struct Process {
    pid: i32,
    shared: Arc<Shared>,
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    /// Held by whoever is collecting output, so two calls never split one stream.
    consumer: tokio::sync::Mutex<()>,
    driver: JoinHandle<()>,
}

struct Shared {
    state: Mutex<State>,
    version: watch::Sender<u64>,
}

struct State {
    /// Output not yet handed to a consumer.
    pending: OutputBuffer,
    /// Set once the leader has been reaped and its output drained.
    exit_code: Option<i32>,
    /// The leader was reaped: its pid (our process group id) may be reused, never signal it.
    reaped: bool,
}

/// Why [`Process::collect`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Waited {
    /// The process exited with this code (128 + signal when killed by a signal).
    Exited(i32),
    /// The deadline passed; the process is still running.
    Yielded,
    /// The cancellation token fired.
    Cancelled,
}

impl Process {
    /// Starts the command: `stdin` piped, `stdout` and `stderr` on one pipe (so their relative
    /// order is preserved), in a new process group, killed if everything else fails.
    pub fn spawn(spec: Spawn<'_>) -> io::Result<Process> {
        let (reader, writer) = io::pipe()?;
        let writer_for_stderr = writer.try_clone()?;
        let mut command = tokio::process::Command::new(spec.program);
        command
            .args(spec.args)
            .current_dir(spec.workdir)
            .env_clear()
            .envs(spec.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::piped())
            .stdout(Stdio::from(writer))
            .stderr(Stdio::from(writer_for_stderr))
            .process_group(0)
            .kill_on_drop(true);
        #[cfg(target_os = "linux")]
        if let Some(sandbox) = spec.sandbox {
            crate::sandbox::install_in_command(&mut command, sandbox);
        }
        let spawned = command.spawn();
        // Closes our copies of the pipe's write end (and the sandbox's ruleset fd).
        drop(command);
        let mut child = spawned?;
        let pid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .ok_or_else(|| io::Error::other("the child exited before it could be tracked"))?;
        let stdin = child.stdin.take();
        let output = match pipe::Receiver::from_owned_fd(OwnedFd::from(reader)) {
            Ok(output) => output,
            Err(error) => {
                // Not reaped yet (the `Child` is alive), so the group id is still ours.
                let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
                return Err(error);
            }
        };
        let (version, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                pending: OutputBuffer::new(spec.buffer_cap),
                exit_code: None,
                reaped: false,
            }),
            version,
        });
        let driver = tokio::spawn(drive(child, output, Arc::clone(&shared), pid));
        Ok(Process {
            pid,
            shared,
            stdin: tokio::sync::Mutex::new(stdin),
            consumer: tokio::sync::Mutex::new(()),
            driver,
        })
    }

    /// The leader's pid (also the process group id).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The exit code, once the process has exited and its output was drained.
    pub fn exit_code(&self) -> Option<i32> {
        self.shared.lock().exit_code
    }

    /// Writes `chars` to the process's stdin, giving up at `deadline`.
    pub async fn write_stdin(&self, chars: &str, deadline: tokio::time::Instant) -> io::Result<()> {
        let mut stdin = self.stdin.lock().await;
        let Some(pipe) = stdin.as_mut() else {
            return Err(io::Error::new(io::ErrorKind::BrokenPipe, "stdin is closed"));
        };
        let write = async {
            pipe.write_all(chars.as_bytes()).await?;
            pipe.flush().await
        };
        match tokio::time::timeout_at(deadline, write).await {
            Ok(result) => result,
            Err(_) => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the process did not read its input in time",
            )),
        }
    }

    /// Hands new output to `on_output` until the process exits, `deadline` passes or `cancel`
    /// fires, and returns how the wait ended with the call's output (capped at
    /// [`OUTPUT_BUFFER_CAP`]). Output buffered while nobody was collecting comes first.
    pub async fn collect(
        &self,
        deadline: tokio::time::Instant,
        on_output: &(dyn Fn(&str) + Send + Sync),
        cancel: &CancellationToken,
    ) -> (Waited, OutputBuffer) {
        let mut out = OutputBuffer::new(OUTPUT_BUFFER_CAP);
        let waited = self.wait_into(deadline, on_output, cancel, &mut out).await;
        (waited, out)
    }

    async fn wait_into(
        &self,
        deadline: tokio::time::Instant,
        on_output: &(dyn Fn(&str) + Send + Sync),
        cancel: &CancellationToken,
        out: &mut OutputBuffer,
    ) -> Waited {
        let _consumer = tokio::select! {
            biased;
            () = cancel.cancelled() => return Waited::Cancelled,
            consumer = self.consumer.lock() => consumer,
        };
        let mut changes = self.shared.version.subscribe();
        loop {
            if let Some(code) = self.take_into(on_output, out) {
                return Waited::Exited(code);
            }
            tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    self.take_into(on_output, out);
                    return Waited::Cancelled;
                }
                _ = changes.changed() => {}
                () = tokio::time::sleep_until(deadline) => {
                    return match self.take_into(on_output, out) {
                        Some(code) => Waited::Exited(code),
                        None => Waited::Yielded,
                    };
                }
            }
        }
    }

    /// Moves pending output to the consumer; returns the exit code once all output is in.
    fn take_into(
        &self,
        on_output: &(dyn Fn(&str) + Send + Sync),
        out: &mut OutputBuffer,
    ) -> Option<i32> {
        let (taken, exit_code): (Taken, Option<i32>) = {
            let mut state = self.shared.lock();
            (state.pending.take(), state.exit_code)
        };
        if !taken.is_empty() {
            for part in [&taken.head, &taken.tail] {
                if !part.is_empty() {
                    on_output(part);
                }
            }
            out.push_taken(&taken);
        }
        exit_code
    }

    /// Waits until the process has exited (and its output was drained), at most `limit`.
    pub async fn wait_exit(&self, limit: Duration) -> Option<i32> {
        let mut changes = self.shared.version.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(code) = self.exit_code() {
                return Some(code);
            }
            tokio::select! {
                _ = changes.changed() => {}
                () = tokio::time::sleep_until(deadline) => return self.exit_code(),
            }
        }
    }

    /// SIGTERM to the whole group, then SIGKILL if it is still alive after `grace`; returns
    /// once the leader is reaped (bounded).
    pub async fn terminate(&self, grace: Duration) {
        if self.exit_code().is_some() {
            return;
        }
        self.signal_group(Signal::SIGTERM);
        if self.wait_exit(grace).await.is_some() {
            return;
        }
        self.signal_group(Signal::SIGKILL);
        self.wait_exit(Duration::from_secs(2)).await;
    }

    /// SIGTERM to the whole group, now.
    pub fn term_now(&self) {
        self.signal_group(Signal::SIGTERM);
    }

    /// SIGKILL to the whole group, now.
    pub fn kill_now(&self) {
        self.signal_group(Signal::SIGKILL);
    }

    fn signal_group(&self, signal: Signal) {
        let state = self.shared.lock();
        if !state.reaped {
            // ESRCH (already gone) is fine.
            let _ = killpg(Pid::from_raw(self.pid), signal);
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill_now();
        // Dropping the driver's `Child` (kill_on_drop) lets tokio reap the leader.
        self.driver.abort();
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    fn push(&self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.lock().pending.push(text);
        self.version.send_modify(|v| *v = v.wrapping_add(1));
    }
}

/// Reads the output pipe until the leader exits, kills whatever is left of its process group,
/// drains the pipe, then publishes the exit code.
async fn drive(mut child: Child, mut output: pipe::Receiver, shared: Arc<Shared>, pid: i32) {
    let mut buf = vec![0u8; READ_CHUNK];
    let mut decoder = Utf8Decoder::default();
    let mut eof = false;
    let status = loop {
        tokio::select! {
            status = child.wait() => break status,
            read = output.read(&mut buf), if !eof => match read {
                Ok(0) | Err(_) => eof = true,
                Ok(n) => shared.push(&decoder.decode(&buf[..n])),
            },
        }
    };
    // Background jobs the command left behind die with it: a command that should keep running
    // stays in the foreground and becomes a session instead.
    {
        let mut state = shared.lock();
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        state.reaped = true;
    }
    if !eof {
        let deadline = tokio::time::Instant::now() + DRAIN_LIMIT;
        while let Ok(Ok(n)) = tokio::time::timeout_at(deadline, output.read(&mut buf)).await {
            if n == 0 {
                break;
            }
            shared.push(&decoder.decode(&buf[..n]));
        }
    }
    shared.push(&decoder.finish());
    let code = match status {
        Ok(status) => exit_code(status),
        Err(_) => -1,
    };
    shared.lock().exit_code = Some(code);
    shared.version.send_modify(|v| *v = v.wrapping_add(1));
}

/// The exit code, or 128 + the signal number for a process killed by a signal (as shells do).
fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
        .unwrap_or(-1)
}

/// Lossy UTF-8 decoding of a byte stream that never splits a character across chunks: an
/// incomplete sequence at the end of a chunk is carried into the next one.
#[derive(Debug, Default)]
pub(crate) struct Utf8Decoder {
    carry: Vec<u8>,
}

impl Utf8Decoder {
    /// Decodes the next chunk.
    pub fn decode(&mut self, bytes: &[u8]) -> String {
        let joined;
        let mut rest: &[u8] = if self.carry.is_empty() {
            bytes
        } else {
            let mut carry = std::mem::take(&mut self.carry);
            carry.extend_from_slice(bytes);
            joined = carry;
            &joined
        };
        let mut out = String::with_capacity(rest.len());
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    out.push_str(valid);
                    return out;
                }
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    out.push_str(&String::from_utf8_lossy(valid));
                    match error.error_len() {
                        Some(len) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[len..];
                        }
                        None => {
                            self.carry = after.to_vec();
                            return out;
                        }
                    }
                }
            }
        }
    }

    /// Whatever incomplete sequence is left at the end of the stream.
    pub fn finish(&mut self) -> String {
        let carry = std::mem::take(&mut self.carry);
        String::from_utf8_lossy(&carry).into_owned()
    }
}

/// Whether a process with this pid exists (used by tests to check nothing leaked).
#[cfg(test)]
pub(crate) fn pid_alive(pid: i32) -> bool {
    // A zombie still exists, but counts as gone for our purpose.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

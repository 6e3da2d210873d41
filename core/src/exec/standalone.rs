//! A command run outside any thread (`command/exec`, docs/protocol.md §7.32,
//! docs/architecture.md §8.2): an argv vector, no shell, started under a [`SandboxSpec`] like
//! `exec_command`'s commands (the same pre-exec confinement), with either
//!
//! * pipes: stdin a pipe when the client may write to it (else `/dev/null`), stdout and
//!   stderr on two pipes of their own, each read into its own channel of byte chunks; or
//! * a pseudo-terminal (`pty.rs`): the slave is its stdin, stdout and stderr and its
//!   controlling terminal, everything it prints arrives on the stdout channel.
//!
//! The command leads its own process group (with a PTY, its own session); killing it kills the
//! group, and whatever the leader left running in it is killed when the leader exits. Output
//! a consumer no longer wants (its receiver dropped) is still read and thrown away, so a
//! command never blocks on a full pipe. Dropping the [`StandaloneProcess`] kills the group.

mod pty;

use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use parking_lot::Mutex;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Child;
use tokio::sync::{mpsc, watch};

use super::ExecError;
use crate::sandbox::{SandboxSpec, sandbox_support};

/// The terminal's default end-of-file character (`^D`), sent when a PTY's input is closed.
const VEOF: u8 = 0x04;
/// Read size of an output stream.
const READ_CHUNK: usize = 8 * 1024;
/// Chunks of output buffered per stream before the reader waits for its consumer.
const OUTPUT_CHANNEL: usize = 64;
/// Writes queued for a command's stdin before more are refused ([`StdinError::Full`]).
pub const STDIN_CHANNEL: usize = 256;

/// A terminal's size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TerminalSize {
    /// Height.
    pub rows: u16,
    /// Width.
    pub cols: u16,
}

impl Default for TerminalSize {
    /// 24 rows of 80 columns.
    fn default() -> Self {
        TerminalSize { rows: 24, cols: 80 }
    }
}

/// What to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandaloneCommand {
    /// The program and its arguments (not empty).
    pub argv: Vec<String>,
    /// Working directory (absolute).
    pub cwd: PathBuf,
    /// The whole environment (nothing of the daemon's is inherited beyond it).
    pub env: Vec<(String, String)>,
    /// Give the command a stdin pipe the caller writes to (else `/dev/null`; a PTY always
    /// has input).
    pub stdin: bool,
    /// Run it in a pseudo-terminal of this size.
    pub tty: Option<TerminalSize>,
}

/// Why a write to a command's input failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StdinError {
    /// The command was started without input for the caller.
    #[error("stdin is not available")]
    NotPiped,
    /// The input was closed (by the caller, or because the command stopped reading).
    #[error("stdin is already closed")]
    Closed,
    /// [`STDIN_CHANNEL`] writes are queued: the command is not reading its input.
    #[error("stdin is full: the command is not reading its input")]
    Full,
}

/// The output channels of a started command: stdout (with a PTY, the terminal) and stderr
/// (`None` with a PTY).
pub struct StandaloneOutput {
    /// Chunks of stdout, or of the terminal.
    pub stdout: mpsc::Receiver<Vec<u8>>,
    /// Chunks of stderr (pipes only).
    pub stderr: Option<mpsc::Receiver<Vec<u8>>>,
}

/// A started command.
pub struct StandaloneProcess {
    pid: i32,
    /// Set once the leader was reaped: its pid (our group id) may be reused, never signal it.
    reaped: Arc<Mutex<bool>>,
    stdin: Mutex<Option<mpsc::Sender<Vec<u8>>>>,
    piped_stdin: bool,
    pty: Option<Arc<AsyncFd<OwnedFd>>>,
    exit: watch::Receiver<Option<i32>>,
}

impl std::fmt::Debug for StandaloneProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StandaloneProcess")
            .field("pid", &self.pid)
            .field("tty", &self.pty.is_some())
            .finish()
    }
}

impl StandaloneProcess {
    /// Starts `command` under `sandbox`; its output comes on the returned channels.
    pub fn spawn(
        command: &StandaloneCommand,
        sandbox: &SandboxSpec,
    ) -> Result<(StandaloneProcess, StandaloneOutput), ExecError> {
        let Some((program, args)) = command.argv.split_first() else {
            return Err(ExecError::Spawn("the command is empty".to_string()));
        };
        sandbox_support()
            .check(sandbox)
            .map_err(ExecError::SandboxUnavailable)?;
        #[cfg(target_os = "linux")]
        let child_sandbox =
            crate::sandbox::prepare_child_sandbox(sandbox).map_err(ExecError::Sandbox)?;
        let mut builder = tokio::process::Command::new(program);
        builder
            .args(args)
            .current_dir(&command.cwd)
            .env_clear()
            .envs(command.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .kill_on_drop(true);
        let pair = match command.tty {
            Some(size) => {
                let pair = pty::open(size).map_err(|e| ExecError::Spawn(format!("PTY: {e}")))?;
                let slave = |pair: &pty::Pair| {
                    pair.slave
                        .try_clone()
                        .map(Stdio::from)
                        .map_err(|e| ExecError::Spawn(format!("PTY: {e}")))
                };
                builder
                    .stdin(slave(&pair)?)
                    .stdout(slave(&pair)?)
                    .stderr(slave(&pair)?);
                pty::install_session(&mut builder);
                Some(pair)
            }
            None => {
                let stdin = if command.stdin {
                    Stdio::piped()
                } else {
                    Stdio::null()
                };
                builder
                    .stdin(stdin)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .process_group(0);
                None
            }
        };
        #[cfg(target_os = "linux")]
        if let Some(child_sandbox) = child_sandbox {
            crate::sandbox::install_in_command(&mut builder, child_sandbox);
        }
        let spawned = builder.spawn();
        // Closes our copies of the slave (and the sandbox's ruleset fd).
        drop(builder);
        let mut child = spawned.map_err(|e| {
            if sandbox.is_confined() && e.kind() == io::ErrorKind::PermissionDenied {
                ExecError::Sandbox(format!("`{program}`: {e}"))
            } else {
                // The OS's words alone (a missing program or cwd: `No such file or
                // directory (os error 2)`), as the reference reports them.
                ExecError::Spawn(e.to_string())
            }
        })?;
        let pid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .ok_or_else(|| {
                ExecError::Spawn("the child exited before it could be tracked".into())
            })?;
        let reaped = Arc::new(Mutex::new(false));
        let (stdout_tx, stdout) = mpsc::channel(OUTPUT_CHANNEL);
        let (stdin_tx, stdin_rx) = mpsc::channel::<Vec<u8>>(STDIN_CHANNEL);
        let mut stderr = None;
        let mut pty_master = None;
        let piped_stdin;
        match pair {
            Some(pair) => {
                drop(pair.slave);
                let master = match pty::register(pair.master) {
                    Ok(master) => Arc::new(master),
                    Err(error) => {
                        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
                        return Err(ExecError::Spawn(format!("PTY: {error}")));
                    }
                };
                tokio::spawn(read_pty(Arc::clone(&master), stdout_tx));
                tokio::spawn(write_pty(Arc::clone(&master), stdin_rx));
                pty_master = Some(master);
                piped_stdin = true;
            }
            None => {
                if let Some(out) = child.stdout.take() {
                    tokio::spawn(read_stream(out, stdout_tx));
                }
                if let Some(err) = child.stderr.take() {
                    let (stderr_tx, stderr_rx) = mpsc::channel(OUTPUT_CHANNEL);
                    tokio::spawn(read_stream(err, stderr_tx));
                    stderr = Some(stderr_rx);
                }
                piped_stdin = match child.stdin.take() {
                    Some(stdin) => {
                        tokio::spawn(write_pipe(stdin, stdin_rx));
                        true
                    }
                    None => false,
                };
            }
        }
        let (exit_tx, exit) = watch::channel(None);
        tokio::spawn(reap(child, pid, Arc::clone(&reaped), exit_tx));
        let process = StandaloneProcess {
            pid,
            reaped,
            stdin: Mutex::new(piped_stdin.then_some(stdin_tx)),
            piped_stdin,
            pty: pty_master,
            exit,
        };
        Ok((process, StandaloneOutput { stdout, stderr }))
    }

    /// The leader's pid (also its process group id).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Whether it runs in a pseudo-terminal.
    pub fn is_tty(&self) -> bool {
        self.pty.is_some()
    }

    /// Queues `bytes` for its input, in order with earlier writes, without waiting: a command
    /// that does not read its input fills the queue and the write is refused.
    pub fn try_write(&self, bytes: Vec<u8>) -> Result<(), StdinError> {
        if !self.piped_stdin {
            return Err(StdinError::NotPiped);
        }
        let stdin = self.stdin.lock();
        let sender = stdin.as_ref().ok_or(StdinError::Closed)?;
        sender.try_send(bytes).map_err(|error| match error {
            mpsc::error::TrySendError::Full(_) => StdinError::Full,
            mpsc::error::TrySendError::Closed(_) => StdinError::Closed,
        })
    }

    /// Closes its input once what was queued is written: a pipe is closed (the command reads
    /// end of file); a terminal is sent its end-of-file character (`^D`) and takes no more
    /// writes.
    pub fn close_stdin(&self) {
        if let Some(sender) = self.stdin.lock().take()
            && self.pty.is_some()
        {
            let _ = sender.try_send(vec![VEOF]);
        }
    }

    /// Resizes its terminal; an error for a command without one.
    pub fn resize(&self, size: TerminalSize) -> io::Result<()> {
        match &self.pty {
            Some(master) => pty::resize(master.get_ref(), size),
            None => Err(io::Error::other("process is not attached to a PTY")),
        }
    }

    /// Its terminal's size (`None` without one).
    pub fn terminal_size(&self) -> Option<TerminalSize> {
        self.pty
            .as_ref()
            .and_then(|master| pty::size(master.get_ref()).ok())
    }

    /// Kills its process group (SIGKILL), unless it was already reaped.
    pub fn kill(&self) {
        let reaped = self.reaped.lock();
        if !*reaped {
            let _ = killpg(Pid::from_raw(self.pid), Signal::SIGKILL);
        }
    }

    /// The exit code, once it exited (128 + n when killed by signal n).
    pub fn exit_code(&self) -> Option<i32> {
        *self.exit.borrow()
    }

    /// Waits for it to exit: its exit code (128 + n when killed by signal n).
    pub async fn wait(&self) -> i32 {
        let mut exit = self.exit.clone();
        match exit.wait_for(Option::is_some).await {
            Ok(code) => code.unwrap_or(-1),
            Err(_) => -1,
        }
    }
}

impl Drop for StandaloneProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Waits for the leader, kills what it left in its group, publishes the exit code.
async fn reap(
    mut child: Child,
    pid: i32,
    reaped: Arc<Mutex<bool>>,
    exit: watch::Sender<Option<i32>>,
) {
    let status = child.wait().await;
    {
        let mut reaped = reaped.lock();
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        *reaped = true;
    }
    let code = match status {
        Ok(status) => exit_code(status),
        Err(_) => -1,
    };
    let _ = exit.send(Some(code));
}

/// The exit code, or 128 + the signal number for a process killed by a signal (as shells do).
fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|signal| 128 + signal))
        .unwrap_or(-1)
}

/// Reads a pipe to its end into `tx`; once `tx`'s receiver is gone, reads and discards.
async fn read_stream(mut stream: impl AsyncRead + Unpin, tx: mpsc::Sender<Vec<u8>>) {
    let mut buf = vec![0u8; READ_CHUNK];
    let mut wanted = true;
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if wanted && tx.send(buf[..n].to_vec()).await.is_err() {
                    wanted = false;
                }
            }
        }
    }
}

/// [`read_stream`] for a PTY's master.
async fn read_pty(master: Arc<AsyncFd<OwnedFd>>, tx: mpsc::Sender<Vec<u8>>) {
    let mut buf = vec![0u8; READ_CHUNK];
    let mut wanted = true;
    loop {
        match pty::read(&master, &mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => {
                if wanted && tx.send(buf[..n].to_vec()).await.is_err() {
                    wanted = false;
                }
            }
        }
    }
}

/// Writes queued input to a stdin pipe; closes it when the queue is closed.
async fn write_pipe(mut stdin: tokio::process::ChildStdin, mut rx: mpsc::Receiver<Vec<u8>>) {
    while let Some(bytes) = rx.recv().await {
        if stdin.write_all(&bytes).await.is_err() || stdin.flush().await.is_err() {
            // The command closed its input: later writes fail.
            rx.close();
            return;
        }
    }
}

/// Writes queued input to a PTY's master.
async fn write_pty(master: Arc<AsyncFd<OwnedFd>>, mut rx: mpsc::Receiver<Vec<u8>>) {
    while let Some(bytes) = rx.recv().await {
        if pty::write_all(&master, &bytes).await.is_err() {
            rx.close();
            return;
        }
    }
}

#[cfg(test)]
mod tests;

//! Unified exec (docs/architecture.md §8.2): `exec_command` starts a command through the user's shell and
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
//! * A command's environment is the daemon's, filtered by `[shell_environment_policy]`
//!   (`environment.rs`; secrets and the providers' API keys are left out by default), plus
//!   Weft's own `NO_COLOR=1`, `TERM=dumb`, `PAGER`/`GIT_PAGER`/`GH_PAGER=cat`.
//! * A command that is still in the foreground (no session id returned yet) is killed when the
//!   turn is interrupted or when the `exec_command` future is dropped.
//!
//! Layout: this file holds the request, output and error types and the model-facing text;
//! `sessions.rs` the session table ([`ExecSessions`]), `foreground.rs` a command run to its end
//! (the user's shell command), `process.rs` one running command,
//! `buffer.rs` its output, `environment.rs` its environment, `spec.rs` the tool definitions and arguments, `truncate.rs` output
//! truncation; `standalone.rs` a command run outside any thread (`command/exec`: argv, pipes or a PTY).

mod buffer;
mod environment;
mod foreground;
mod process;
mod sessions;
mod spec;
mod standalone;
#[cfg(test)]
mod tests;
mod truncate;

use std::path::PathBuf;
use std::time::Duration;

pub use environment::{
    CORE_VARS, DEFAULT_EXCLUDES, Inherit, ShellEnvironmentPolicy, ShellEnvironmentPolicyToml,
};
pub use foreground::ForegroundEnd;
pub use sessions::ExecSessions;
pub use spec::{
    ArgsError, EXEC_COMMAND_TOOL, ExecCommandArgs, SandboxPermissions, WRITE_STDIN_TOOL,
    WriteStdinArgs, exec_command_tool_spec, exec_command_tool_spec_with_escalation,
    parse_exec_command_args, parse_write_stdin_args, write_stdin_tool_spec,
};
pub use standalone::{
    StandaloneCommand, StandaloneOutput, StandaloneProcess, StdinError, TerminalSize,
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
        Quoting::COMMAND.join(&self.argv())
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

/// The text sent to the model for an `exec_command` / `write_stdin` result (docs/architecture.md §8.2):
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

/// The output the model gets for an interrupted exec call (docs/architecture.md §8.6):
/// `Wall time: 1.2 seconds\naborted by user` (at least 0.1 s).
pub fn format_aborted_for_model(wall_time: Duration) -> String {
    format!(
        "Wall time: {:.1} seconds\naborted by user",
        wall_time.as_secs_f64().max(0.1)
    )
}

/// Six random hex digits (from a v7 UUID's random tail).
fn chunk_id() -> String {
    let uuid = uuid::Uuid::now_v7();
    let bytes = uuid.as_bytes();
    format!("{:02x}{:02x}{:02x}", bytes[13], bytes[14], bytes[15])
}

/// How words are written back into one line a POSIX shell would split into the same words:
/// a word of alphanumerics and `plain` characters stays bare, any other is single-quoted,
/// with each `'` inside written as `quote`.
pub(crate) struct Quoting {
    /// The characters besides alphanumerics a bare word may hold.
    pub plain: &'static str,
    /// What a `'` inside a quoted word becomes.
    pub quote: &'static str,
}

impl Quoting {
    /// A command's own line (`commandExecution.command`).
    pub(crate) const COMMAND: Quoting = Quoting {
        plain: "_-./=:,+@%",
        quote: r#"'"'"'"#,
    };

    /// The words joined into one line.
    pub(crate) fn join(&self, argv: &[String]) -> String {
        argv.iter()
            .map(|word| self.word(word))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn word(&self, word: &str) -> String {
        let plain = !word.is_empty()
            && word
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || self.plain.contains(c));
        if plain {
            word.to_string()
        } else {
            format!("'{}'", word.replace('\'', self.quote))
        }
    }
}

//! Stop hooks: user commands that run when a turn is about to end and may send the model back
//! to work (block) or end the turn for good (stop).
//!
//! # Config
//!
//! ```toml
//! [[hooks.stop]]
//! command = "./scripts/check.sh"        # run as `sh -c <command>`
//! timeout = 30                          # seconds; default 60
//!
//! [[hooks.stop]]
//! command = ["python3", "hooks/stop.py"] # argv, run without a shell
//! ```
//!
//! # Protocol
//!
//! Every hook runs in the turn's cwd, concurrently with the others. It receives one JSON object
//! on stdin (then EOF), keys in snake_case:
//!
//! ```json
//! {"hook_event_name":"Stop","thread_id":"…","turn_id":"…","cwd":"/repo",
//!  "last_agent_message":"…" | null,"stop_hook_active":false}
//! ```
//!
//! `stop_hook_active` is true once a stop hook has blocked earlier in the same turn; hooks use it
//! to converge (there is no built-in cap on repeated blocks).
//!
//! It answers on stdout and exits 0:
//! - nothing, `{}`, or any other object → allow the turn to end;
//! - `{"decision":"block","reason":"…"}` → block: the reason becomes a prompt and the turn
//!   continues; a block with an empty or missing reason is reported as a warning and ignored;
//! - `{"continue":false,"stopReason":"…"}` → stop (`stopReason` optional); takes precedence over
//!   `decision`;
//! - a string `systemMessage` in the object is reported as a warning.
//!
//! A hook that cannot be started, exits non-zero, runs past its timeout or prints something
//! other than a JSON object produces a warning and counts as allow. A hook still running when
//! the cancellation token fires is killed and ignored. Killing a hook kills the process Weft
//! started (the shell for string commands); processes it spawned itself are not tracked.
//!
//! Aggregation (docs/architecture.md §6.4): stop if any hook says stop (the first stop reason in config
//! order wins); otherwise continue if any hook blocks (one prompt per blocking hook, in config
//! order); otherwise allow.

pub mod config;
pub mod listing;

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;
use weft_protocol::HookPromptFragment;

/// Timeout of a stop hook whose config sets none, in seconds.
pub const DEFAULT_STOP_HOOK_TIMEOUT_SECS: u64 = 60;

/// Longest stderr excerpt quoted in a warning, in bytes.
const STDERR_EXCERPT_BYTES: usize = 500;

/// Longest command text quoted in a warning, in bytes.
const COMMAND_DISPLAY_BYTES: usize = 120;

/// One `[[hooks.stop]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StopHookConfig {
    /// What to run: a string for `sh -c`, or an argv array.
    pub command: HookCommand,
    /// Timeout in seconds (config key `timeout`); [`DEFAULT_STOP_HOOK_TIMEOUT_SECS`] when unset.
    #[serde(default, rename = "timeout")]
    pub timeout_secs: Option<u64>,
}

impl StopHookConfig {
    /// The effective timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs.unwrap_or(DEFAULT_STOP_HOOK_TIMEOUT_SECS))
    }
}

/// A hook's command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookCommand {
    /// Run through `sh -c`.
    Shell(String),
    /// Program and arguments, run directly (the program is looked up in `PATH`).
    Argv(Vec<String>),
}

impl fmt::Display for HookCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HookCommand::Shell(command) => f.write_str(command),
            HookCommand::Argv(argv) => f.write_str(&argv.join(" ")),
        }
    }
}

impl<'de> Deserialize<'de> for HookCommand {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;

        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = HookCommand;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a command string or a non-empty array of strings")
            }

            fn visit_str<E: serde::de::Error>(self, value: &str) -> Result<HookCommand, E> {
                if value.trim().is_empty() {
                    return Err(E::custom("hook command must not be empty"));
                }
                Ok(HookCommand::Shell(value.to_string()))
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<HookCommand, A::Error> {
                let mut argv = Vec::new();
                while let Some(arg) = seq.next_element::<String>()? {
                    argv.push(arg);
                }
                if argv.first().is_none_or(|program| program.is_empty()) {
                    return Err(serde::de::Error::custom(
                        "hook command array must start with a program name",
                    ));
                }
                Ok(HookCommand::Argv(argv))
            }
        }

        deserializer.deserialize_any(Visitor)
    }
}

/// What a stop hook is told (serialized on its stdin; format in the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StopHookInput {
    /// The thread's id.
    pub thread_id: String,
    /// The id of the turn that is about to end.
    pub turn_id: String,
    /// The turn's working directory (also the hook's working directory).
    #[serde(serialize_with = "serialize_path_lossy")]
    pub cwd: PathBuf,
    /// Text of the model's last agent message in this turn, if any.
    pub last_agent_message: Option<String>,
    /// Whether a stop hook already blocked earlier in this turn.
    pub stop_hook_active: bool,
}

/// The stdin payload: the input plus the event name, so one script can serve several events.
#[derive(Serialize)]
struct StopHookPayload<'a> {
    hook_event_name: &'static str,
    #[serde(flatten)]
    input: &'a StopHookInput,
}

/// What the turn loop should do after the stop hooks ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopHookDecision {
    /// Let the turn end.
    Allow,
    /// Record these prompts as a `hookPrompt` item and sample again in the same turn: each is
    /// the hook's `reason` (the continuation prompt) with the id of its run (UUIDv7, unique per
    /// hook per invocation).
    Continue {
        /// One per blocking hook, in config order; never empty.
        prompts: Vec<HookPromptFragment>,
    },
    /// End the turn now.
    Stop {
        /// The first `stopReason` given, if any.
        reason: Option<String>,
    },
}

/// Aggregated result of [`run_stop_hooks`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopHookOutcome {
    /// The aggregated decision.
    pub decision: StopHookDecision,
    /// Problems to report as `warning` notifications, in config order.
    pub warnings: Vec<String>,
}

/// Runs every hook concurrently with `input` on stdin and aggregates their answers.
///
/// Never fails: problems with individual hooks become warnings. When `cancel` fires, hooks still
/// running are killed and ignored; the decision then only reflects hooks that had finished, and
/// the caller is expected to check the token itself.
pub async fn run_stop_hooks(
    hooks: &[StopHookConfig],
    input: &StopHookInput,
    cancel: &CancellationToken,
) -> StopHookOutcome {
    if hooks.is_empty() {
        return StopHookOutcome {
            decision: StopHookDecision::Allow,
            warnings: Vec::new(),
        };
    }
    let payload = match serde_json::to_vec(&StopHookPayload {
        hook_event_name: "Stop",
        input,
    }) {
        Ok(payload) => payload,
        Err(err) => {
            return StopHookOutcome {
                decision: StopHookDecision::Allow,
                warnings: vec![format!(
                    "stop hooks not run: cannot encode their input: {err}"
                )],
            };
        }
    };
    let runs = hooks
        .iter()
        .map(|hook| run_one(hook, &payload, &input.cwd, cancel));
    aggregate(futures::future::join_all(runs).await)
}

/// The result of one hook run.
#[derive(Debug)]
struct HookResult {
    verdict: Verdict,
    warnings: Vec<String>,
}

#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Allow,
    Block(HookPromptFragment),
    Stop(Option<String>),
}

fn aggregate(results: Vec<HookResult>) -> StopHookOutcome {
    let mut warnings = Vec::new();
    let mut stop: Option<Option<String>> = None;
    let mut prompts = Vec::new();
    for result in results {
        warnings.extend(result.warnings);
        match result.verdict {
            Verdict::Allow => {}
            Verdict::Block(fragment) => prompts.push(fragment),
            Verdict::Stop(reason) => {
                if stop.as_ref().is_none_or(Option::is_none) {
                    stop = Some(reason);
                }
            }
        }
    }
    let decision = match stop {
        Some(reason) => StopHookDecision::Stop { reason },
        None if !prompts.is_empty() => StopHookDecision::Continue { prompts },
        None => StopHookDecision::Allow,
    };
    StopHookOutcome { decision, warnings }
}

async fn run_one(
    hook: &StopHookConfig,
    payload: &[u8],
    cwd: &Path,
    cancel: &CancellationToken,
) -> HookResult {
    let name = command_display(&hook.command);
    let timeout = hook.timeout();
    let run = tokio::time::timeout(timeout, spawn_and_wait(&hook.command, payload, cwd));
    let fail = |message: String| HookResult {
        verdict: Verdict::Allow,
        warnings: vec![message],
    };
    tokio::select! {
        biased;
        () = cancel.cancelled() => HookResult { verdict: Verdict::Allow, warnings: Vec::new() },
        finished = run => match finished {
            Err(_elapsed) => fail(format!(
                "stop hook `{name}` timed out after {}s and was killed",
                timeout.as_secs_f64()
            )),
            Ok(Err(err)) => fail(format!("stop hook `{name}` could not run: {err}")),
            Ok(Ok(output)) => interpret(&name, output),
        }
    }
}

/// Captured result of a finished hook process.
struct HookOutput {
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

/// Spawns the hook, feeds it `payload`, and waits for it to exit. Dropping the future kills the
/// child (`kill_on_drop`), which is how timeout and cancellation stop it.
async fn spawn_and_wait(
    command: &HookCommand,
    payload: &[u8],
    cwd: &Path,
) -> std::io::Result<HookOutput> {
    let mut cmd = match command {
        HookCommand::Shell(script) => {
            let mut cmd = Command::new("sh");
            cmd.arg("-c").arg(script);
            cmd
        }
        HookCommand::Argv(argv) => {
            let Some((program, args)) = argv.split_first() else {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "empty command",
                ));
            };
            let mut cmd = Command::new(program);
            cmd.args(args);
            cmd
        }
    };
    cmd.current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn()?;
    let stdin = child.stdin.take();
    // Write stdin while the child's output is being read: a hook that prints a lot before
    // reading must not deadlock against a full pipe.
    let feed = async move {
        if let Some(mut stdin) = stdin {
            // A hook may exit without reading its input (broken pipe): that is its choice.
            if let Err(err) = stdin.write_all(payload).await {
                tracing::debug!(error = %err, "stop hook did not take its input");
            }
            // Dropping stdin closes it, so the hook sees EOF.
        }
    };
    let ((), output) = tokio::join!(feed, child.wait_with_output());
    let output = output?;
    Ok(HookOutput {
        status: output.status,
        stdout: output.stdout,
        stderr: output.stderr,
    })
}

/// Turns a finished hook's exit status and output into a verdict.
fn interpret(name: &str, output: HookOutput) -> HookResult {
    let fail = |message: String| HookResult {
        verdict: Verdict::Allow,
        warnings: vec![message],
    };
    if !output.status.success() {
        let status = match output.status.code() {
            Some(code) => format!("exit code {code}"),
            None => format!("{}", output.status),
        };
        let stderr = excerpt(&output.stderr);
        return fail(if stderr.is_empty() {
            format!("stop hook `{name}` failed with {status}")
        } else {
            format!("stop hook `{name}` failed with {status}: {stderr}")
        });
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stdout = stdout.trim();
    if stdout.is_empty() {
        return HookResult {
            verdict: Verdict::Allow,
            warnings: Vec::new(),
        };
    }
    let answer = match serde_json::from_str::<serde_json::Value>(stdout) {
        Ok(serde_json::Value::Object(answer)) => answer,
        Ok(_) => {
            return fail(format!(
                "stop hook `{name}` printed JSON that is not an object"
            ));
        }
        Err(err) => return fail(format!("stop hook `{name}` printed invalid JSON: {err}")),
    };

    let mut warnings = Vec::new();
    if let Some(message) = answer.get("systemMessage").and_then(|v| v.as_str())
        && !message.trim().is_empty()
    {
        warnings.push(format!("stop hook `{name}`: {}", message.trim()));
    }
    let text = |key: &str| {
        answer
            .get(key)
            .and_then(|v| v.as_str())
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let verdict = if answer.get("continue") == Some(&serde_json::Value::Bool(false)) {
        Verdict::Stop(text("stopReason"))
    } else if answer.get("decision").and_then(|v| v.as_str()) == Some("block") {
        match text("reason") {
            Some(reason) => Verdict::Block(HookPromptFragment {
                hook_run_id: uuid::Uuid::now_v7().to_string(),
                text: reason,
            }),
            None => {
                warnings.push(format!(
                    "stop hook `{name}` blocked without a reason; ignoring the block"
                ));
                Verdict::Allow
            }
        }
    } else {
        Verdict::Allow
    };
    HookResult { verdict, warnings }
}

fn command_display(command: &HookCommand) -> String {
    shortened(&command.to_string(), COMMAND_DISPLAY_BYTES)
}

fn excerpt(bytes: &[u8]) -> String {
    shortened(&String::from_utf8_lossy(bytes), STDERR_EXCERPT_BYTES)
}

/// `text` trimmed, and cut to at most `max` bytes (on a character boundary) with `…` after.
fn shortened(text: &str, max: usize) -> String {
    let text = text.trim();
    if text.len() <= max {
        text.to_string()
    } else {
        format!("{}…", &text[..text.floor_char_boundary(max)])
    }
}

fn serialize_path_lossy<S: Serializer>(path: &Path, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&path.to_string_lossy())
}

#[cfg(test)]
mod tests;

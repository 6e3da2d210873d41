//! The user's own shell command (`thread/shellCommand`, docs/protocol.md §7.30; the kind's
//! place in the contract: docs/architecture.md §5.5). The command runs in the thread's shell
//! (`$SHELL -lc <command>`, so pipes, redirections and quoting are the shell's) and working
//! directory, under the turn's sandbox, with no approval asked: the user typed it. It runs to
//! its end in the foreground (`ExecSessions::run_foreground`), its merged output streamed as
//! the `outputDelta`s of a `commandExecution` item with `source: userShell`, until it exits,
//! its timeout passes or the turn is interrupted (its process group is killed).
//!
//! On an idle thread it is a task of its own, [`UserShellTask`]: a turn of kind `Regular`
//! that records no context messages. While a turn runs, the actor runs it inside that turn
//! instead (`thread/actor/shell.rs`), with [`run_command`], as the reference does.
//!
//! Either way the model learns of it from a user message recorded in the history — the
//! command, its exit code, its duration and its output (truncated as `exec_command`'s is) in
//! the reference's `<user_shell_command>` block, so a model trained on Codex reads it as such:
//!
//! ```text
//! <user_shell_command>
//! <command>
//! ls | wc -l
//! </command>
//! <result>
//! Exit code: 0
//! Duration: 0.0042 seconds
//! Output:
//! 3
//! </result>
//! </user_shell_command>
//! ```

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use weft_protocol::{CommandExecutionSource, CommandExecutionStatus};

use super::{TaskKind, TaskStart, ThreadTask};
use crate::exec::{ExecError, ExecRequest, ExecSessions, ForegroundEnd};
use crate::model::ResponseItem;
use crate::sandbox::SandboxSpec;
use crate::time::{new_item_id, now_ms};
use crate::tools::command_actions::command_actions;
use crate::tools::context::ToolTurn;
use crate::tools::exec_tool::{CommandItem, with_deltas};
use crate::turn::{TurnContext, TurnEnd};

/// A command's timeout when the request names none: one hour.
pub const DEFAULT_USER_SHELL_TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// What the item shows, and the model is told, for a command the user interrupted.
pub const USER_SHELL_ABORTED: &str = "command aborted by user";

/// The user's command as the request gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserShellCommand {
    /// The script, trimmed (never empty).
    pub command: String,
    /// When it is killed; zero times out at once, without running it.
    pub timeout: Duration,
}

/// How a user's command ended: the message the model is given, and whether the turn it ran
/// in was interrupted.
#[derive(Debug)]
pub struct UserShellOutcome {
    /// The `<user_shell_command>` user message.
    pub record: ResponseItem,
    /// The command was stopped by an interrupt.
    pub aborted: bool,
}

/// The user's command as a task of its own (the thread was idle).
pub struct UserShellTask {
    command: UserShellCommand,
    exec: Arc<ExecSessions>,
}

impl UserShellTask {
    /// `command`, run among the thread's processes `exec`.
    pub fn new(command: UserShellCommand, exec: Arc<ExecSessions>) -> UserShellTask {
        UserShellTask { command, exec }
    }
}

impl ThreadTask for UserShellTask {
    fn kind(&self) -> TaskKind {
        TaskKind::Regular
    }

    fn span_name(&self) -> &'static str {
        "user_shell"
    }

    /// The model is not asked anything: no context messages (the next regular turn records
    /// them), as the reference's shell turn records none.
    fn start(&self) -> TaskStart {
        TaskStart {
            records_context: false,
            continuation: false,
        }
    }

    fn run<'a>(&'a self, ctx: &'a TurnContext) -> BoxFuture<'a, TurnEnd> {
        Box::pin(async move {
            let turn = ctx.item_tool_turn();
            let outcome = run_command(&self.exec, &self.command, &turn).await;
            ctx.history.lock().record(outcome.record);
            if outcome.aborted {
                TurnEnd::Interrupted
            } else {
                TurnEnd::Completed
            }
        })
    }
}

/// Run `command` in `turn` (its cwd, sandbox and cancellation): the `commandExecution` item
/// with its deltas through the turn's sink, and the record for the model.
pub async fn run_command(
    exec: &ExecSessions,
    command: &UserShellCommand,
    turn: &ToolTurn,
) -> UserShellOutcome {
    let request = ExecRequest {
        cmd: command.command.clone(),
        workdir: turn.cwd.clone(),
        shell: None,
        login: true,
        yield_time_ms: 0,
        max_output_tokens: None,
    };
    let sandbox = SandboxSpec::from_policy(&turn.sandbox, &turn.cwd);
    let item = CommandItem {
        id: new_item_id().to_string(),
        command: request.display_command(),
        cwd: turn.cwd.display().to_string(),
        source: CommandExecutionSource::UserShell,
        actions: command_actions(&command.command),
        process_id: None,
        started_at: now_ms(),
    };
    item.start(turn).await;
    let timeout = command.timeout;
    let (result, _seen) = with_deltas(turn, &item.id, |on_output| async move {
        exec.run_foreground(request, &sandbox, timeout, on_output, &turn.cancel)
            .await
    })
    .await;
    let ended = Ended::from(result, timeout);
    item.complete(
        turn,
        ended.status(),
        ended.shown.clone(),
        Some(ended.exit_code),
        ended.duration,
    )
    .await;
    UserShellOutcome {
        record: record(&command.command, &ended),
        aborted: ended.aborted,
    }
}

/// How the run ended, as the item shows it and the record tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Ended {
    exit_code: i32,
    duration: Option<Duration>,
    /// The item's `aggregatedOutput` (`None` when the command printed nothing).
    shown: Option<String>,
    /// What the model is told it printed (truncated as `exec_command`'s output).
    told: String,
    aborted: bool,
}

impl Ended {
    fn from(
        result: Result<(ForegroundEnd, crate::exec::ExecOutput), ExecError>,
        timeout: Duration,
    ) -> Ended {
        match result {
            Ok((ForegroundEnd::Exited(code), output)) => Ended {
                exit_code: code,
                duration: Some(output.wall_time),
                shown: Some(output.aggregated_output).filter(|text| !text.is_empty()),
                told: output.output,
                aborted: false,
            },
            Ok((ForegroundEnd::TimedOut, output)) => {
                let note = format!("command timed out after {} ms", timeout.as_millis());
                Ended {
                    // The reference's code for a command that did not exit.
                    exit_code: -1,
                    duration: Some(output.wall_time),
                    shown: Some(format!("{}{note}", with_newline(&output.aggregated_output))),
                    told: format!("{}{note}", with_newline(&output.output)),
                    aborted: false,
                }
            }
            Err(ExecError::Aborted { wall_time }) => Ended {
                exit_code: -1,
                duration: Some(wall_time),
                shown: Some(USER_SHELL_ABORTED.to_string()),
                told: USER_SHELL_ABORTED.to_string(),
                aborted: true,
            },
            Err(err) => {
                let message = format!("execution error: {err}");
                Ended {
                    exit_code: -1,
                    duration: None,
                    shown: Some(message.clone()),
                    told: message,
                    aborted: false,
                }
            }
        }
    }

    /// `completed` only for a command that exited with 0, as the reference's items.
    fn status(&self) -> CommandExecutionStatus {
        if self.exit_code == 0 {
            CommandExecutionStatus::Completed
        } else {
            CommandExecutionStatus::Failed
        }
    }
}

/// `text` followed by a line break, unless it is empty or ends with one.
fn with_newline(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    }
}

/// The user message that tells the model what the user ran (the module's doc shows it).
fn record(command: &str, ended: &Ended) -> ResponseItem {
    let seconds = ended.duration.unwrap_or_default().as_secs_f64();
    ResponseItem::user_text(format!(
        "<user_shell_command>\n<command>\n{command}\n</command>\n<result>\nExit code: {}\n\
         Duration: {seconds:.4} seconds\nOutput:\n{}\n</result>\n</user_shell_command>",
        ended.exit_code, ended.told
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::ExecOutput;

    fn output(aggregated: &str, told: &str, millis: u64) -> ExecOutput {
        ExecOutput {
            chunk_id: "abcdef".into(),
            wall_time: Duration::from_millis(millis),
            exit_code: None,
            session_id: None,
            output: told.into(),
            aggregated_output: aggregated.into(),
            original_token_count: 0,
            warnings: Vec::new(),
        }
    }

    fn text(item: &ResponseItem) -> String {
        serde_json::to_value(item).unwrap()["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn the_record_wraps_the_command_its_code_its_duration_and_what_the_model_is_told() {
        let ended = Ended::from(
            Ok((ForegroundEnd::Exited(0), output("HI\n", "HI\n", 1500))),
            DEFAULT_USER_SHELL_TIMEOUT,
        );
        assert_eq!(ended.status(), CommandExecutionStatus::Completed);
        assert_eq!(ended.shown.as_deref(), Some("HI\n"));
        let item = record("echo hi | tr a-z A-Z", &ended);
        assert_eq!(
            serde_json::to_value(&item).unwrap()["role"],
            serde_json::json!("user")
        );
        assert_eq!(
            text(&item),
            "<user_shell_command>\n<command>\necho hi | tr a-z A-Z\n</command>\n<result>\n\
             Exit code: 0\nDuration: 1.5000 seconds\nOutput:\nHI\n\n</result>\n\
             </user_shell_command>"
        );
    }

    #[test]
    fn a_failing_command_is_failed_and_empty_output_shows_as_none() {
        let ended = Ended::from(
            Ok((ForegroundEnd::Exited(3), output("", "", 5))),
            DEFAULT_USER_SHELL_TIMEOUT,
        );
        assert_eq!(ended.status(), CommandExecutionStatus::Failed);
        assert_eq!(ended.exit_code, 3);
        assert_eq!(ended.shown, None);
        assert!(text(&record("exit 3", &ended)).contains("Exit code: 3\n"));
    }

    #[test]
    fn a_timeout_keeps_the_output_so_far_and_says_so() {
        let ended = Ended::from(
            Ok((ForegroundEnd::TimedOut, output("before", "before", 500))),
            Duration::from_millis(500),
        );
        assert_eq!(ended.status(), CommandExecutionStatus::Failed);
        assert_eq!(ended.exit_code, -1);
        assert_eq!(
            ended.shown.as_deref(),
            Some("before\ncommand timed out after 500 ms")
        );
        assert!(!ended.aborted);
        let zero = Ended::from(
            Ok((ForegroundEnd::TimedOut, output("", "", 0))),
            Duration::ZERO,
        );
        assert_eq!(zero.shown.as_deref(), Some("command timed out after 0 ms"));
    }

    #[test]
    fn an_interrupt_and_a_start_failure_are_failed_with_their_reason() {
        let aborted = Ended::from(
            Err(ExecError::Aborted {
                wall_time: Duration::from_millis(20),
            }),
            DEFAULT_USER_SHELL_TIMEOUT,
        );
        assert!(aborted.aborted);
        assert_eq!(aborted.shown.as_deref(), Some(USER_SHELL_ABORTED));
        assert_eq!(aborted.exit_code, -1);
        let failed = Ended::from(
            Err(ExecError::Spawn("no such shell".into())),
            DEFAULT_USER_SHELL_TIMEOUT,
        );
        assert!(!failed.aborted);
        assert_eq!(
            failed.shown.as_deref(),
            Some("execution error: failed to start the command: no such shell")
        );
        assert!(text(&record("x", &failed)).contains("Output:\nexecution error:"));
    }
}

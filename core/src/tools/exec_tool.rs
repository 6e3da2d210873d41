//! `exec_command` and `write_stdin` as tools: approvals, the sandbox, the `commandExecution`
//! items and their output deltas, and the text the model gets.
//!
//! Items (docs/protocol.md §6.5), id = the call id, `source: unifiedExecStartup` as the reference
//! sends for `exec_command`:
//!
//! * a command that exits: `completed` (exit code 0) or `failed` (non-zero), with
//!   `aggregatedOutput`, `exitCode` and `durationMs`;
//! * a command still running at its yield time keeps running as a session, but its item
//!   completes now — every item ends before its turn does: status `completed`, `exitCode:
//!   null`, `processId` = the session id the model was given;
//! * interrupted: `failed` (the model gets `Wall time: … seconds\naborted by user`);
//! * declined or cancelled by the user: `declined`; a failed approval request: `failed`;
//! * a command that could not start (no sandbox on this kernel, bad working directory): `failed`
//!   with the reason as `aggregatedOutput`.
//!
//! `write_stdin` shows as a new `commandExecution` item of its own (id = its call id,
//! `source: unifiedExecInteraction`, the session's command and `processId`), streaming what
//! the session printed during the call; it completes `completed` while the session runs on,
//! and `completed`/`failed` by exit code when it ended. Writing to an unknown session
//! produces no item.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::mpsc;
use weft_protocol::server_requests::{
    CommandExecutionApprovalDecision, CommandExecutionApprovalKind,
    CommandExecutionRequestApprovalParams,
};
use weft_protocol::{
    CommandExecutionItem, CommandExecutionSource, CommandExecutionStatus, ItemId, SandboxPolicy,
    ThreadItem,
};

use super::approval::{self, ApprovalWaits, CommandPlan, Decision, Mode, SessionApprovals};
use super::command_actions::command_actions;
use super::context::{ToolCall, ToolTurn};
use super::tool::{Concurrency, Effects, Tool};
use crate::events::{ServerRequestParams, ThreadEvent};
use crate::exec::{
    EXEC_COMMAND_TOOL, ExecError, ExecOutput, ExecSessions, OUTPUT_BUFFER_CAP, WRITE_STDIN_TOOL,
    exec_command_tool_spec, exec_command_tool_spec_with_escalation, format_aborted_for_model,
    format_for_model, parse_exec_command_args, parse_write_stdin_args, write_stdin_tool_spec,
};
use crate::guardian::{ReviewRequest, Verdict};
use crate::model::ToolOutput;
use crate::sandbox::{SandboxSpec, looks_like_sandbox_denial};
use crate::time::now_ms;

/// What the model is told when the user declines or cancels a command (the reference's text).
pub const COMMAND_REJECTED: &str =
    "exec_command failed: CreateProcess { message: \"Rejected(\\\"rejected by user\\\")\" }";

/// What a model that asks for an escalation in Plan mode is told.
pub const PLAN_MODE_NO_ESCALATION: &str = "Plan mode is read-only: commands cannot run outside the read-only sandbox, so this escalation was refused and the command was not run. Investigate with read-only commands and put the change in your plan.";

/// A command the model left running as a session: what `write_stdin` items show.
#[derive(Debug, Clone)]
pub(crate) struct BackgroundCommand {
    /// The script (for `commandActions`).
    pub script: String,
    /// The display command line.
    pub display: String,
    /// Where it runs.
    pub cwd: String,
    /// The `commandExecution` item (the `exec_command` call) that started it.
    pub item_id: String,
    /// Started under a read-only sandbox: a read-only turn may write to it (see
    /// [`writable_from`]).
    pub read_only: bool,
}

/// Whether a turn under `sandbox` may send input to a session: a read-only turn (Plan mode, a
/// review) may only write to a session started read-only, never act through a process with
/// more permissions than its own; polling (no input) is always allowed.
fn writable_from(sandbox: &SandboxPolicy, session: Option<&BackgroundCommand>) -> bool {
    !matches!(sandbox, SandboxPolicy::ReadOnly { .. }) || session.is_some_and(|s| s.read_only)
}

/// Session id → the command that started it (outlives the turn, like the session).
pub(crate) type BackgroundCommands = Mutex<HashMap<u64, BackgroundCommand>>;

/// What `exec_command` and `write_stdin` share: the thread's sessions and approvals (they
/// outlive the turn), and the turn's mode.
pub(crate) struct ExecContext {
    /// The thread's unified-exec processes.
    pub exec: Arc<ExecSessions>,
    /// What started each session.
    pub sessions: Arc<BackgroundCommands>,
    /// `acceptForSession` grants.
    pub approvals: Arc<SessionApprovals>,
    /// Pending approvals (the `waitingOnApproval` flag).
    pub waits: Arc<ApprovalWaits>,
    /// Plan mode (docs/protocol.md §7.25): no escalation.
    pub plan_mode: bool,
}

/// One of the two exec tools, on their shared context.
pub(crate) struct ExecTool {
    /// The shared context.
    pub context: Arc<ExecContext>,
    /// Which tool it is.
    pub kind: ExecToolKind,
}

/// Which exec tool an [`ExecTool`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ExecToolKind {
    /// `exec_command`: runs beside other calls; `escalation` says whether the escalation
    /// parameters are offered (`on-request`, outside Plan mode).
    Command { escalation: bool },
    /// `write_stdin`: exclusive.
    WriteStdin,
}

#[async_trait]
impl Tool for ExecTool {
    fn name(&self) -> &str {
        match self.kind {
            ExecToolKind::Command { .. } => EXEC_COMMAND_TOOL,
            ExecToolKind::WriteStdin => WRITE_STDIN_TOOL,
        }
    }

    fn specs(&self) -> Vec<Value> {
        vec![match self.kind {
            ExecToolKind::Command { escalation: true } => exec_command_tool_spec_with_escalation(),
            ExecToolKind::Command { escalation: false } => exec_command_tool_spec(),
            ExecToolKind::WriteStdin => write_stdin_tool_spec(),
        }]
    }

    fn effects(&self) -> Effects {
        Effects {
            mutates: true,
            concurrency: match self.kind {
                ExecToolKind::Command { .. } => Concurrency::Parallel,
                ExecToolKind::WriteStdin => Concurrency::Exclusive,
            },
        }
    }

    fn aborted(&self, elapsed: Duration) -> String {
        format_aborted_for_model(elapsed)
    }

    /// A command known to only read (`ls`, `cat`, `rg`, …) does not mutate.
    fn mutates(&self, call: &ToolCall) -> bool {
        match self.kind {
            ExecToolKind::Command { .. } => {
                match crate::exec::parse_exec_command_args(call.arguments()) {
                    Ok(args) => !super::command_actions::is_known_safe(&args.cmd),
                    Err(_) => true,
                }
            }
            ExecToolKind::WriteStdin => true,
        }
    }

    async fn call(&self, call: &ToolCall, turn: &ToolTurn) -> ToolOutput {
        let (context, call_id, arguments) = (&*self.context, &call.call_id, call.arguments());
        ToolOutput::Text(match self.kind {
            ExecToolKind::Command { .. } => exec_command(context, call_id, arguments, turn).await,
            ExecToolKind::WriteStdin => write_stdin(context, call_id, arguments, turn).await,
        })
    }
}

/// A `commandExecution` item being built (also the user's shell command's, `task/user_shell.rs`).
pub(crate) struct CommandItem {
    pub(crate) id: String,
    pub(crate) command: String,
    pub(crate) cwd: String,
    pub(crate) source: CommandExecutionSource,
    pub(crate) actions: Vec<weft_protocol::CommandAction>,
    pub(crate) process_id: Option<String>,
    pub(crate) started_at: i64,
}

impl CommandItem {
    pub(crate) fn wire(
        &self,
        status: CommandExecutionStatus,
        output: Option<String>,
        exit_code: Option<i32>,
        duration: Option<Duration>,
    ) -> ThreadItem {
        let mut item = ThreadItem::from(CommandExecutionItem {
            id: ItemId::from(self.id.clone()),
            command: self.command.clone(),
            cwd: self.cwd.clone(),
            process_id: self.process_id.clone(),
            source: self.source,
            status,
            command_actions: self.actions.clone(),
            aggregated_output: output,
            exit_code,
            duration_ms: duration.map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX)),
            plugin_id: None,
            script_path: None,
        });
        item.started_at_ms = Some(self.started_at);
        if status != CommandExecutionStatus::InProgress {
            item.completed_at_ms = Some(now_ms());
        }
        item
    }

    pub(crate) async fn start(&self, turn: &ToolTurn) {
        let item = self.wire(CommandExecutionStatus::InProgress, None, None, None);
        turn.item_started(item).await;
    }

    pub(crate) async fn complete(
        &self,
        turn: &ToolTurn,
        status: CommandExecutionStatus,
        output: Option<String>,
        exit_code: Option<i32>,
        duration: Option<Duration>,
    ) {
        let item = self.wire(status, output, exit_code, duration);
        turn.item_completed(item).await;
    }
}

impl CommandItem {
    /// Complete the item the way the run ended and return the text for the model: the
    /// output, the aborted-by-user text, or `<tool> failed: …`.
    async fn finish(
        &self,
        turn: &ToolTurn,
        result: &Result<ExecOutput, ExecError>,
        seen: String,
        tool: &str,
    ) -> String {
        match result {
            Ok(output) => {
                self.complete(
                    turn,
                    status_for_exit(output.exit_code),
                    Some(output.aggregated_output.clone()),
                    output.exit_code,
                    Some(output.wall_time),
                )
                .await;
                format_for_model(output)
            }
            Err(ExecError::Aborted { wall_time }) => {
                self.complete(
                    turn,
                    CommandExecutionStatus::Failed,
                    Some(seen),
                    None,
                    Some(*wall_time),
                )
                .await;
                format_aborted_for_model(*wall_time)
            }
            Err(err) => {
                self.complete(
                    turn,
                    CommandExecutionStatus::Failed,
                    Some(err.to_string()),
                    None,
                    None,
                )
                .await;
                format!("{tool} failed: {err}")
            }
        }
    }
}

fn status_for_exit(exit_code: Option<i32>) -> CommandExecutionStatus {
    match exit_code {
        None | Some(0) => CommandExecutionStatus::Completed,
        Some(_) => CommandExecutionStatus::Failed,
    }
}

/// Runs `call` (the exec future, given the output callback) while forwarding its output to
/// the client as `outputDelta`s of `item_id`; every delta is emitted before this returns. Also
/// returns the output seen (capped), for an interrupted command's item.
pub(crate) async fn with_deltas<F, Fut>(
    turn: &ToolTurn,
    item_id: &str,
    call: F,
) -> (Fut::Output, String)
where
    F: FnOnce(Box<dyn Fn(&str) + Send + Sync>) -> Fut,
    Fut: std::future::Future,
{
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let on_output: Box<dyn Fn(&str) + Send + Sync> = Box::new(move |text: &str| {
        let _ = tx.send(text.to_string());
    });
    let run = call(on_output);
    let seen = Arc::new(Mutex::new(String::new()));
    let forward = {
        let seen = Arc::clone(&seen);
        async move {
            while let Some(delta) = rx.recv().await {
                {
                    let mut seen = seen.lock();
                    if seen.len() < OUTPUT_BUFFER_CAP {
                        seen.push_str(&delta);
                    }
                }
                turn.sink
                    .emit(
                        &turn.thread_id,
                        ThreadEvent::CommandOutputDelta {
                            turn_id: turn.turn_id.clone(),
                            item_id: item_id.to_string(),
                            delta,
                        },
                    )
                    .await;
            }
        }
    };
    let (result, ()) = tokio::join!(run, forward);
    let seen = seen.lock().clone();
    (result, seen)
}

/// `exec_command`.
async fn exec_command(rt: &ExecContext, call_id: &str, arguments: &str, turn: &ToolTurn) -> String {
    let args = match parse_exec_command_args(arguments) {
        Ok(args) => args,
        Err(err) => return err.to_string(),
    };
    if rt.plan_mode && args.wants_escalation() {
        return PLAN_MODE_NO_ESCALATION.to_string();
    }
    let request = args.to_request(&turn.cwd);
    let display = request.display_command();
    let policy_spec = SandboxSpec::from_policy(&turn.sandbox, &turn.cwd);
    let mode = Mode::of(&turn.approval_policy);
    let escalated_key = SessionApprovals::command_key(&display, &request.workdir, true);
    let sandboxed_key = SessionApprovals::command_key(&display, &request.workdir, false);
    let escalate = args.wants_escalation() && policy_spec.is_confined();
    let session_key = if escalate {
        &escalated_key
    } else {
        &sandboxed_key
    };
    let plan = approval::plan_command(
        mode,
        &request.argv(),
        escalate,
        args.justification.as_deref(),
        policy_spec.is_confined(),
        rt.approvals.command_approved(session_key),
    );
    let item = CommandItem {
        id: call_id.to_string(),
        command: display.clone(),
        cwd: request.workdir.display().to_string(),
        source: CommandExecutionSource::UnifiedExecStartup,
        actions: command_actions(&request.cmd),
        process_id: None,
        started_at: now_ms(),
    };
    let unconfined = match plan {
        CommandPlan::Refuse(text) => return text,
        CommandPlan::Run { unconfined } => {
            item.start(turn).await;
            unconfined
        }
        CommandPlan::Ask { unconfined, reason } => 'ask: {
            // With the guardian: the item, then its review; the user only if it cannot decide
            // (docs/protocol.md §9.8).
            if turn.reviewer.is_some() {
                item.start(turn).await;
                let review = ReviewRequest::command(
                    call_id,
                    &display,
                    &item.cwd,
                    reason.as_deref(),
                    unconfined,
                );
                match turn.guardian_review(review).await {
                    Some(Verdict::Approved) => break 'ask unconfined,
                    Some(Verdict::Denied(text)) => {
                        item.complete(turn, CommandExecutionStatus::Declined, None, None, None)
                            .await;
                        return text;
                    }
                    Some(Verdict::Cancelled) => {
                        item.complete(turn, CommandExecutionStatus::Declined, None, None, None)
                            .await;
                        return COMMAND_REJECTED.to_string();
                    }
                    Some(Verdict::AskUser) | None => {}
                }
            }
            // Reference order: the status flag, then the item, then the request.
            let wait = rt.waits.begin(turn).await;
            if turn.reviewer.is_none() {
                item.start(turn).await;
            }
            let params = CommandExecutionRequestApprovalParams {
                kind: CommandExecutionApprovalKind::Command,
                thread_id: turn.thread_id.clone(),
                turn_id: turn.turn_id.clone(),
                item_id: ItemId::from(call_id.to_string()),
                started_at_ms: now_ms(),
                approval_id: None,
                environment_id: Some("local".to_string()),
                command: Some(display.clone()),
                cwd: Some(item.cwd.clone()),
                command_actions: Some(item.actions.clone()),
                reason,
                network_approval_context: None,
                proposed_execpolicy_amendment: None,
                proposed_network_policy_amendments: None,
                // What Weft can do with the answer: run once, run and remember this exact
                // command for the thread (Weft has no exec-policy rules to amend), or stop the
                // turn (docs/protocol.md §9.2).
                available_decisions: Some(vec![
                    CommandExecutionApprovalDecision::Accept,
                    CommandExecutionApprovalDecision::AcceptForSession,
                    CommandExecutionApprovalDecision::Cancel,
                ]),
                additional_permissions: None,
            };
            let outcome =
                approval::ask(turn, ServerRequestParams::CommandApproval(Box::new(params))).await;
            match approval::command_decision(outcome) {
                Decision::Accept => {
                    wait.release().await;
                }
                Decision::AcceptForSession => {
                    rt.approvals.approve_command(session_key.clone());
                    wait.release().await;
                }
                Decision::Decline => {
                    item.complete(turn, CommandExecutionStatus::Declined, None, None, None)
                        .await;
                    wait.release().await;
                    return COMMAND_REJECTED.to_string();
                }
                Decision::Cancel => {
                    item.complete(turn, CommandExecutionStatus::Declined, None, None, None)
                        .await;
                    wait.release().await;
                    turn.cancel.cancel();
                    return COMMAND_REJECTED.to_string();
                }
                Decision::Failed(reason) => {
                    item.complete(turn, CommandExecutionStatus::Failed, None, None, None)
                        .await;
                    wait.release().await;
                    return format!(
                        "exec_command failed: the approval request failed ({reason}); the command was not run"
                    );
                }
            }
            unconfined
        }
    };
    let spec = if unconfined {
        SandboxSpec::unrestricted(&turn.cwd)
    } else {
        policy_spec
    };
    let (result, seen) = with_deltas(turn, call_id, |on_output| {
        rt.exec
            .exec_command(request.clone(), &spec, on_output, &turn.cancel)
    })
    .await;
    let mut result = result;
    let mut item = item;
    if let Ok(output) = &mut result {
        add_denial_hint(output, &spec, mode);
        if let Some(session) = output.session_id {
            item.process_id = Some(session.to_string());
            rt.sessions.lock().insert(
                session,
                BackgroundCommand {
                    script: request.cmd.clone(),
                    display: display.clone(),
                    cwd: item.cwd.clone(),
                    item_id: call_id.to_string(),
                    read_only: matches!(turn.sandbox, SandboxPolicy::ReadOnly { .. }),
                },
            );
        }
    }
    item.finish(turn, &result, seen, "exec_command").await
}

/// A note for the model when a confined command's failure looks like the sandbox refused it.
fn add_denial_hint(output: &mut ExecOutput, spec: &SandboxSpec, mode: Mode) {
    if !spec.is_confined()
        || !looks_like_sandbox_denial(&output.aggregated_output, output.exit_code)
    {
        return;
    }
    let next = match mode {
        Mode::OnRequest => {
            "If the command must write there or reach the network, run it again with `sandbox_permissions: \"require_escalated\"` and a one-sentence `justification`: the user will be asked to approve running it outside the sandbox."
        }
        Mode::Untrusted => {
            "Approving a command does not lift the sandbox; work inside the writable roots or ask the user to change the sandbox policy."
        }
        Mode::Never => {
            "The approval policy is `never`: nothing can run outside the sandbox. Work inside the writable roots, or tell the user what you could not do."
        }
    };
    output.warnings.push(format!(
        "the command may have been blocked by the sandbox ({}). {next}",
        spec.describe()
    ));
}

/// `write_stdin`.
async fn write_stdin(rt: &ExecContext, call_id: &str, arguments: &str, turn: &ToolTurn) -> String {
    let args = match parse_write_stdin_args(arguments) {
        Ok(args) => args,
        Err(err) => return err.to_string(),
    };
    let known = rt.sessions.lock().get(&args.session_id).cloned();
    if !args.chars.is_empty() && !writable_from(&turn.sandbox, known.as_ref()) {
        return format!(
            "write_stdin failed: this turn is read-only and session {} was started with more \
             permissions; it can only be polled (empty chars)",
            args.session_id
        );
    }
    let item = known.map(|command| CommandItem {
        id: call_id.to_string(),
        command: command.display,
        cwd: command.cwd,
        source: CommandExecutionSource::UnifiedExecInteraction,
        actions: command_actions(&command.script),
        process_id: Some(args.session_id.to_string()),
        started_at: now_ms(),
    });
    let Some(item) = item else {
        // No item for a session this thread never handed out (or already collected).
        let result = rt
            .exec
            .write_stdin(
                args.session_id,
                args.chars.clone(),
                args.yield_time_ms(),
                args.max_output_tokens(),
                |_| {},
                &turn.cancel,
            )
            .await;
        return match result {
            Ok(output) => format_for_model(&output),
            Err(ExecError::Aborted { wall_time }) => format_aborted_for_model(wall_time),
            Err(err) => format!("write_stdin failed: {err}"),
        };
    };
    item.start(turn).await;
    let (result, seen) = with_deltas(turn, call_id, |on_output| {
        rt.exec.write_stdin(
            args.session_id,
            args.chars.clone(),
            args.yield_time_ms(),
            args.max_output_tokens(),
            on_output,
            &turn.cancel,
        )
    })
    .await;
    let session_over = match &result {
        Ok(output) => output.exit_code.is_some(),
        Err(err) => matches!(err, ExecError::UnknownSession(_) | ExecError::ShutDown),
    };
    if session_over {
        rt.sessions.lock().remove(&args.session_id);
    }
    item.finish(turn, &result, seen, "write_stdin").await
}

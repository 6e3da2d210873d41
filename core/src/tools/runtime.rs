//! The per-thread tool dispatcher: which tools a step advertises, and how one call runs.
//!
//! The turn loop starts [`ToolRuntime::handle`] as soon as the model's call item is complete
//! (not after the stream ends), keeps the futures in call order, and records their outputs in
//! that order once the response is over.
//!
//! # Tools
//!
//! * `exec_command` / `write_stdin` (unified exec, [`crate::exec`]) — see `exec_tool.rs`;
//! * `apply_patch` ([`super::apply_patch`]) — see `patch_tool.rs`. The **function** variant is
//!   the one advertised (it works on both wire APIs, and the turn context does not say which
//!   one the provider speaks); a model that calls `apply_patch` as a custom (freeform) tool
//!   anyway is served too, and answered with a `custom_tool_call_output`;
//! * `update_plan` — see `plan_tool.rs`;
//! * `request_user_input` — see `user_input_tool.rs`, offered once a client chose a
//!   collaboration mode. In Plan mode `apply_patch` is neither offered nor served
//!   (docs/protocol.md §7.25).
//! * `get_goal`, `create_goal`, `update_goal` — see `goal_tool.rs`, offered on persistent
//!   threads while `[features] goals` is on (docs/protocol.md §7.26);
//! * the thread's client-defined tools ([`super::dynamic_tool`]): a call the built-in tools do
//!   not claim, naming one of them, becomes an `item/tool/call` request to the client.
//!
//! `exec_command` runs in parallel with other calls; `write_stdin`, `apply_patch`,
//! `update_plan`, the goal tools and client-defined tools are exclusive (docs/architecture.md §8.1): they wait until every other call of the
//! thread is done, and others wait for them. Every output is truncated to
//! 1.2 × [`DEFAULT_MAX_OUTPUT_TOKENS`] tokens before it enters history (docs/architecture.md §8.5).
//!
//! Approvals (`approval.rs`) and what outlives a turn — background command sessions, the
//! `acceptForSession` grants — live in the [`ToolRuntime`], one per thread.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use weft_protocol::TurnId;

use super::apply_patch::{self, TurnDiffTracker};
use super::approval::{ApprovalWaits, Mode, SessionApprovals};
use super::context::{ToolCall, ToolInput, ToolTurn};
use super::goal_tool::{self, GoalTools};
use super::user_input_tool::{self, REQUEST_USER_INPUT_TOOL};
use super::{dynamic_tool, exec_tool, mcp_tool, patch_tool, plan_tool};
use crate::exec::{
    DEFAULT_MAX_OUTPUT_TOKENS, EXEC_COMMAND_TOOL, ExecSessions, ShellEnvironmentPolicy,
    TruncationPolicy, WRITE_STDIN_TOOL, exec_command_tool_spec,
    exec_command_tool_spec_with_escalation, format_aborted_for_model, truncate_output,
    write_stdin_tool_spec,
};
use crate::model::{ResponseItem, ToolOutput};

/// The name of the plan tool.
pub const UPDATE_PLAN_TOOL: &str = "update_plan";

/// What a model that calls `apply_patch` in Plan mode is told.
pub const PLAN_MODE_NO_PATCH: &str = "apply_patch is not available in Plan mode: the workspace is read-only. Propose the change in your plan instead.";

/// What a model that asks for an escalation in Plan mode is told.
pub const PLAN_MODE_NO_ESCALATION: &str = "Plan mode is read-only: commands cannot run outside the read-only sandbox, so this escalation was refused and the command was not run. Investigate with read-only commands and put the change in your plan.";

/// Outputs are cut to this many tokens before they enter history (docs/architecture.md §8.5: the model's
/// budget × 1.2).
pub fn history_truncation() -> TruncationPolicy {
    TruncationPolicy::Tokens(DEFAULT_MAX_OUTPUT_TOKENS).scaled(1.2)
}

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
}

/// The tools of one thread. Shared by its turns; state that outlives a turn (background
/// command sessions, approvals granted for the session) lives here.
pub struct ToolRuntime {
    /// The thread's unified-exec processes.
    pub(crate) exec: ExecSessions,
    /// Session id → the command that started it.
    pub(crate) sessions: Mutex<HashMap<u64, BackgroundCommand>>,
    /// `acceptForSession` grants.
    pub(crate) approvals: SessionApprovals,
    /// Pending approvals (the `waitingOnApproval` flag).
    pub(crate) waits: ApprovalWaits,
    /// The running turn's aggregate diff.
    pub(crate) diff: Mutex<Option<(TurnId, TurnDiffTracker)>>,
    /// Parallel calls share it, exclusive ones take it alone.
    exclusive: tokio::sync::RwLock<()>,
    /// MCP tools approved for the session (`server\0tool`).
    pub(crate) mcp_grants: mcp_tool::SessionGrants,
}

impl Default for ToolRuntime {
    fn default() -> Self {
        ToolRuntime {
            exec: ExecSessions::new(),
            sessions: Mutex::new(HashMap::new()),
            approvals: SessionApprovals::default(),
            waits: ApprovalWaits::default(),
            diff: Mutex::new(None),
            exclusive: tokio::sync::RwLock::new(()),
            mcp_grants: mcp_tool::SessionGrants::default(),
        }
    }
}

impl std::fmt::Debug for ToolRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRuntime")
            .field("exec", &self.exec)
            .finish_non_exhaustive()
    }
}

/// Holds the runtime's call lock (shared or exclusive).
enum CallGuard<'a> {
    Shared(#[allow(dead_code)] tokio::sync::RwLockReadGuard<'a, ()>),
    Exclusive(#[allow(dead_code)] tokio::sync::RwLockWriteGuard<'a, ()>),
}

impl ToolRuntime {
    /// Whether a call of this thread is waiting for an approval (the thread status then
    /// carries `waitingOnApproval`).
    pub fn waiting_on_approval(&self) -> bool {
        self.waits.any()
    }

    /// A runtime for a new thread (commands get the default environment policy).
    pub fn new() -> Arc<ToolRuntime> {
        ToolRuntime::with_shell_environment(ShellEnvironmentPolicy::default())
    }

    /// A runtime for a new thread whose commands get the environment `policy` gives them.
    pub fn with_shell_environment(policy: ShellEnvironmentPolicy) -> Arc<ToolRuntime> {
        static LOGGED: std::sync::Once = std::sync::Once::new();
        LOGGED.call_once(|| {
            tracing::info!(
                "sandbox support: {}",
                crate::sandbox::sandbox_support().summary()
            );
        });
        Arc::new(ToolRuntime {
            exec: ExecSessions::with_environment(policy),
            ..ToolRuntime::default()
        })
    }

    /// The tool definitions a step advertises (Responses API format): `exec_command` (with
    /// the escalation parameters under `on-request`, outside Plan mode), `write_stdin`,
    /// `apply_patch` (function variant; not in Plan mode), `update_plan`, and
    /// `request_user_input` when the turn offers it, the multi-agent namespace when the turn
    /// offers it inline, the goal tools when the turn has them, then the thread's
    /// client-defined tools.
    pub fn specs(&self, turn: &ToolTurn) -> Vec<serde_json::Value> {
        let exec = if Mode::of(&turn.approval_policy) == Mode::OnRequest && !turn.plan_mode {
            exec_command_tool_spec_with_escalation()
        } else {
            exec_command_tool_spec()
        };
        let mut specs = vec![exec, write_stdin_tool_spec()];
        if !turn.plan_mode {
            specs.push(apply_patch::function_tool_spec());
        }
        specs.push(plan_tool::update_plan_tool_spec());
        if turn.user_input {
            specs.push(user_input_tool::request_user_input_tool_spec());
        }
        // The multi-agent namespace before the goal tools, where the reference puts v2's.
        specs.extend(super::agent_tool::inline_specs(turn));
        if matches!(turn.goals, GoalTools::On { .. }) {
            specs.extend(goal_tool::goal_tool_specs());
        }
        specs.extend(dynamic_tool::dynamic_tool_specs(&turn.dynamic_tools));
        specs
    }

    /// Run one call and return the output item for the model.
    pub async fn handle(self: Arc<Self>, call: ToolCall, turn: ToolTurn) -> ResponseItem {
        if let Some(text) = self.agent(&call, &turn).await {
            return call.output(truncate_output(&text, history_truncation()));
        }
        let served = match self.mcp(&call, &turn).await {
            Some(output) => Some(output),
            None => self.dynamic(&call, &turn).await,
        };
        if let Some(output) = served {
            let output = match output {
                ToolOutput::Text(text) => {
                    ToolOutput::Text(truncate_output(&text, history_truncation()))
                }
                ToolOutput::Content(parts) => ToolOutput::Content(
                    parts
                        .into_iter()
                        .map(|part| match part {
                            crate::model::ContentItem::InputText { text } => {
                                crate::model::ContentItem::InputText {
                                    text: truncate_output(&text, history_truncation()),
                                }
                            }
                            other => other,
                        })
                        .collect(),
                ),
            };
            return ResponseItem::function_call_output(&call.call_id, output);
        }
        let text = self.dispatch(&call, &turn).await;
        call.output(truncate_output(&text, history_truncation()))
    }

    /// Serve a call of an MCP tool or of a resource tool; `None` when the call names none.
    async fn mcp(&self, call: &ToolCall, turn: &ToolTurn) -> Option<ToolOutput> {
        let ToolInput::Function(args) = &call.input else {
            return None;
        };
        if call.namespace.is_none() && is_builtin(&call.name, turn) {
            return None;
        }
        let resource =
            call.namespace.is_none() && mcp_tool::is_resource_tool(&turn.mcp, &call.name);
        let target = if resource {
            None
        } else {
            Some(mcp_tool::resolve(
                &turn.mcp,
                call.namespace.as_deref(),
                &call.name,
            )?)
        };
        let started = Instant::now();
        // MCP calls run in parallel with each other and with commands.
        let _guard = tokio::select! {
            biased;
            () = turn.cancel.cancelled() => {
                return Some(ToolOutput::Text(aborted_text(&call.name, started)));
            }
            guard = self.lock(true) => guard,
        };
        let Some(target) = target else {
            return Some(ToolOutput::Text(
                mcp_tool::resource_tool(&turn.mcp, &call.name, args).await,
            ));
        };
        Some(
            mcp_tool::call(
                &turn.mcp,
                &self.mcp_grants,
                &self.waits,
                turn,
                &call.call_id,
                target,
                args,
            )
            .await,
        )
    }

    /// Serve a call of a multi-agent tool (in parallel with every other call: a wait must not
    /// hold up the thread's commands); `None` when the call names none.
    async fn agent(&self, call: &ToolCall, turn: &ToolTurn) -> Option<String> {
        if !super::agent_tool::is_agent_call(call) {
            return None;
        }
        let started = Instant::now();
        let _guard = tokio::select! {
            biased;
            () = turn.cancel.cancelled() => return Some(aborted_text(&call.name, started)),
            guard = self.lock(true) => guard,
        };
        super::agent_tool::handle(call, turn).await
    }

    /// Serve a call of a client-defined tool; `None` when the call names none (a built-in
    /// tool's name, without a namespace, is always the built-in's).
    async fn dynamic(&self, call: &ToolCall, turn: &ToolTurn) -> Option<ToolOutput> {
        let ToolInput::Function(args) = &call.input else {
            return None;
        };
        if call.namespace.is_none() && is_builtin(&call.name, turn) {
            return None;
        }
        let (namespace, tool) =
            dynamic_tool::resolve(&turn.dynamic_tools, call.namespace.as_deref(), &call.name)?;
        let started = Instant::now();
        let _guard = tokio::select! {
            biased;
            () = turn.cancel.cancelled() => {
                return Some(ToolOutput::Text(aborted_text(&call.name, started)));
            }
            guard = self.lock(false) => guard,
        };
        Some(dynamic_tool::call(turn, &call.call_id, namespace, tool, args).await)
    }

    async fn dispatch(&self, call: &ToolCall, turn: &ToolTurn) -> String {
        let started = Instant::now();
        let name = call.name.as_str();
        let known = matches!(
            (name, &call.input),
            (
                EXEC_COMMAND_TOOL | WRITE_STDIN_TOOL | UPDATE_PLAN_TOOL,
                ToolInput::Function(_)
            ) | (apply_patch::TOOL_NAME, _)
        ) || (turn.user_input
            && name == REQUEST_USER_INPUT_TOOL
            && matches!(call.input, ToolInput::Function(_)))
            || (goal_tool::is_goal_tool(name)
                && !matches!(turn.goals, GoalTools::Off)
                && matches!(call.input, ToolInput::Function(_)));
        if !known {
            return match call.input {
                ToolInput::Function(_) => format!("unsupported call: {name}"),
                ToolInput::Custom(_) => format!("unsupported custom tool call: {name}"),
            };
        }
        let _guard = tokio::select! {
            biased;
            () = turn.cancel.cancelled() => return aborted_text(name, started),
            guard = self.lock(name == EXEC_COMMAND_TOOL) => guard,
        };
        match (name, &call.input) {
            (EXEC_COMMAND_TOOL, ToolInput::Function(args)) => {
                exec_tool::exec_command(self, &call.call_id, args, turn).await
            }
            (WRITE_STDIN_TOOL, ToolInput::Function(args)) => {
                exec_tool::write_stdin(self, &call.call_id, args, turn).await
            }
            (UPDATE_PLAN_TOOL, ToolInput::Function(args)) => {
                plan_tool::update_plan(&call.call_id, args, turn).await
            }
            (REQUEST_USER_INPUT_TOOL, ToolInput::Function(args)) => {
                user_input_tool::request_user_input(&call.call_id, args, turn).await
            }
            (name, ToolInput::Function(args)) if goal_tool::is_goal_tool(name) => {
                goal_tool::call(name, args, turn).await
            }
            _ if turn.plan_mode => PLAN_MODE_NO_PATCH.to_string(),
            (_, ToolInput::Function(args)) => {
                match apply_patch::patch_from_function_arguments(args) {
                    Ok(patch) => {
                        patch_tool::apply_patch(
                            self,
                            &call.call_id,
                            &patch,
                            patch_tool::Variant::Function,
                            turn,
                        )
                        .await
                    }
                    Err(err) => format!("failed to parse function arguments: {err}"),
                }
            }
            (_, ToolInput::Custom(patch)) => {
                patch_tool::apply_patch(
                    self,
                    &call.call_id,
                    patch,
                    patch_tool::Variant::Freeform,
                    turn,
                )
                .await
            }
        }
    }

    async fn lock(&self, parallel: bool) -> CallGuard<'_> {
        if parallel {
            CallGuard::Shared(self.exclusive.read().await)
        } else {
            CallGuard::Exclusive(self.exclusive.write().await)
        }
    }

    /// The ids of the thread's running command sessions.
    pub fn session_ids(&self) -> Vec<u64> {
        self.exec.session_ids()
    }

    /// End everything the thread's tools keep running (background command sessions).
    pub async fn shutdown(&self) {
        self.exec.shutdown().await;
        self.sessions.lock().clear();
    }
}

/// Whether a tool name is one of Weft's own tools (the goal tools only where the turn has
/// them: otherwise a client-defined tool may have the name).
fn is_builtin(name: &str, turn: &ToolTurn) -> bool {
    matches!(
        name,
        EXEC_COMMAND_TOOL
            | WRITE_STDIN_TOOL
            | UPDATE_PLAN_TOOL
            | REQUEST_USER_INPUT_TOOL
            | apply_patch::TOOL_NAME
    ) || (goal_tool::is_goal_tool(name) && !matches!(turn.goals, GoalTools::Off))
}

/// The output of a call interrupted before it started (docs/architecture.md §8.6).
fn aborted_text(name: &str, started: Instant) -> String {
    if name == EXEC_COMMAND_TOOL || name == WRITE_STDIN_TOOL {
        format_aborted_for_model(started.elapsed())
    } else {
        format!(
            "aborted by user after {:.1}s",
            started.elapsed().as_secs_f64().max(0.1)
        )
    }
}

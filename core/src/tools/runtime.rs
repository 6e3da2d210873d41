//! The tools of one thread: what outlives a turn, and the one place a turn's [`ToolSet`] is
//! put together.
//!
//! The turn builds its set once ([`ToolRuntime::tool_set`]) from what it offers
//! ([`ToolOffer`]); the loop starts [`ToolSet::handle`] as soon as the model's call item is
//! complete (not after the stream ends), keeps the futures in call order, and records their
//! outputs in that order once the response is over.
//!
//! # Tools, in the order the model is shown them
//!
//! * `exec_command` / `write_stdin` (unified exec, [`crate::exec`]) — see `exec_tool.rs`;
//! * `apply_patch` ([`super::apply_patch`]) — see `patch_tool.rs`. The **function** variant is
//!   the one advertised (it works on both wire APIs, and the turn context does not say which
//!   one the provider speaks); a model that calls `apply_patch` as a custom (freeform) tool
//!   anyway is served too, and answered with a `custom_tool_call_output`. In Plan mode it is
//!   neither offered nor served (docs/protocol.md §7.25);
//! * `update_plan` — see `plan_tool.rs`;
//! * `request_user_input` — see `user_input_tool.rs`, offered once a client chose a
//!   collaboration mode;
//! * the multi-agent namespace ([`super::agent_tool`], docs/agents.md) when the turn offers it
//!   inline;
//! * `get_goal`, `create_goal`, `update_goal` — see `goal_tool.rs`, offered on persistent
//!   threads while `[features] goals` is on (docs/protocol.md §7.26);
//! * the thread's client-defined tools ([`super::dynamic_tool`]);
//! * the MCP servers' tools ([`super::mcp_tool`]), which each request lists anew.
//!
//! Which tool serves a call, and how calls share the thread, is [`super::tool`]'s (see its
//! docs and docs/architecture.md §8.1).

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use super::agent_tool::AgentTools;
use super::approval::{ApprovalWaits, Mode, SessionApprovals};
use super::context::ToolTurn;
use super::dynamic_tool::DynamicTools;
use super::exec_tool::{BackgroundCommands, ExecContext, ExecTool, ExecToolKind};
use super::goal_tool::{GOAL_TOOLS, GoalTool};
use super::mcp_tool::{McpTools, SessionGrants};
use super::offer::ToolOffer;
use super::patch_tool::{ApplyPatchTool, TurnDiff};
use super::plan_tool::update_plan_tool;
use super::tool::{CallLock, ToolSet};
use super::user_input_tool::{REQUEST_USER_INPUT_TOOL, request_user_input_tool};
use crate::exec::{ExecSessions, ShellEnvironmentPolicy};

/// The tools of one thread. Shared by its turns; what outlives a turn (background command
/// sessions, approvals granted for the session, the call lock) lives here, each part typed by
/// the tool that owns it.
pub struct ToolRuntime {
    /// The thread's unified-exec processes.
    pub(crate) exec: Arc<ExecSessions>,
    /// Session id → the command that started it.
    pub(crate) sessions: Arc<BackgroundCommands>,
    /// `acceptForSession` grants.
    approvals: Arc<SessionApprovals>,
    /// Pending approvals (the `waitingOnApproval` flag).
    waits: Arc<ApprovalWaits>,
    /// The running turn's aggregate diff.
    diff: Arc<TurnDiff>,
    /// Parallel calls share it, exclusive ones take it alone.
    lock: Arc<CallLock>,
    /// MCP tools approved for the session (`server\0tool`).
    mcp_grants: Arc<SessionGrants>,
}

impl Default for ToolRuntime {
    fn default() -> Self {
        ToolRuntime {
            exec: Arc::new(ExecSessions::new()),
            sessions: Arc::new(Mutex::new(HashMap::new())),
            approvals: Arc::default(),
            waits: Arc::default(),
            diff: Arc::new(Mutex::new(None)),
            lock: Arc::new(CallLock::new(())),
            mcp_grants: Arc::default(),
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
            exec: Arc::new(ExecSessions::with_environment(policy)),
            ..ToolRuntime::default()
        })
    }

    /// The tools of one turn, in the order the model is shown them (see the module docs).
    /// Adding a tool: implement [`super::tool::Tool`] in its own file and add it here.
    pub fn tool_set(&self, offer: &ToolOffer, turn: &ToolTurn) -> Arc<ToolSet> {
        let mut set = ToolSet::new(Arc::clone(&self.lock));
        let exec = Arc::new(ExecContext {
            exec: Arc::clone(&self.exec),
            sessions: Arc::clone(&self.sessions),
            approvals: Arc::clone(&self.approvals),
            waits: Arc::clone(&self.waits),
            plan_mode: offer.plan_mode,
        });
        set.builtin(Arc::new(ExecTool {
            context: Arc::clone(&exec),
            kind: ExecToolKind::Command {
                escalation: Mode::of(&turn.approval_policy) == Mode::OnRequest && !offer.plan_mode,
            },
        }));
        set.builtin(Arc::new(ExecTool {
            context: exec,
            kind: ExecToolKind::WriteStdin,
        }));
        set.builtin(Arc::new(ApplyPatchTool {
            approvals: Arc::clone(&self.approvals),
            waits: Arc::clone(&self.waits),
            diff: Arc::clone(&self.diff),
            plan_mode: offer.plan_mode,
        }));
        set.builtin(Arc::new(update_plan_tool(offer.plan_collaboration)));
        if offer.user_input {
            set.builtin(Arc::new(request_user_input_tool()));
        } else {
            set.reserve(REQUEST_USER_INPUT_TOOL);
        }
        // The multi-agent namespace before the goal tools, where the reference puts v2's.
        set.family(Arc::new(AgentTools {
            caller: offer.agents.clone(),
        }));
        // Without the feature the names are free for a client-defined tool.
        if offer.goals.served() {
            for name in GOAL_TOOLS {
                set.builtin(Arc::new(GoalTool {
                    name,
                    goals: offer.goals.clone(),
                }));
            }
        }
        set.family(Arc::new(McpTools {
            pool: Arc::clone(&offer.mcp),
            grants: Arc::clone(&self.mcp_grants),
            waits: Arc::clone(&self.waits),
        }));
        set.family(Arc::new(DynamicTools {
            tools: Arc::clone(&offer.dynamic_tools),
        }));
        Arc::new(set)
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

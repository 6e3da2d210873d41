//! The public face of a loaded thread: the [`ThreadHandle`] everyone holds, the [`Op`]s it
//! submits to the thread's actor, and the types those ops carry and answer with.

use std::path::PathBuf;
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};
use weft_protocol::{Thread, ThreadId, ThreadTokenUsage, Turn, TurnId, UserInput};

use super::error::CoreError;
use crate::events::Reply;
use crate::model::ResponseItem;
use crate::rollout::RolloutWriter;
use crate::settings::ThreadSettings;

/// How input is routed (docs/architecture.md §5.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputMode {
    /// `turn/start`: start a turn, or steer the running one.
    StartOrSteer,
    /// Start a turn only if the thread is idle.
    StartIfIdle,
    /// `turn/steer`: add to the running turn, which must have this id.
    Steer {
        /// The turn the client believes is running.
        expected_turn_id: String,
    },
}

/// Settings a `turn/start` may change. Thread-level ones stick for later turns.
#[derive(Debug, Clone, Default)]
pub struct TurnOverrides {
    /// Model.
    pub model: Option<String>,
    /// Working directory.
    pub cwd: Option<PathBuf>,
    /// Approval policy.
    pub approval_policy: Option<weft_protocol::AskForApproval>,
    /// Who reviews approvals (`approvalsReviewer`, docs/protocol.md §9.8).
    pub approvals_reviewer: Option<weft_protocol::ApprovalsReviewer>,
    /// Sandbox policy.
    pub sandbox: Option<weft_protocol::SandboxPolicy>,
    /// Reasoning effort.
    pub reasoning_effort: Option<weft_protocol::ReasoningEffort>,
    /// Reasoning summary.
    pub reasoning_summary: Option<weft_protocol::ReasoningSummary>,
    /// Collaboration mode (docs/protocol.md §7.25); its model and effort take precedence.
    pub collaboration_mode: Option<weft_protocol::CollaborationMode>,
    /// `permissions`: a built-in profile id; sets the sandbox (never given with `sandbox`).
    pub permission_profile: Option<String>,
    /// `runtimeWorkspaceRoots`: accepted when each is the thread's cwd.
    pub workspace_roots: Option<Vec<PathBuf>>,
    /// `outputSchema`: for the turn this request starts only (ignored when it steers).
    pub output_schema: Option<serde_json::Value>,
    /// The turn of the agent whose tool started this one (a sub-agent's turn): the new turn's
    /// `rootTurnId` (docs/agents.md §4). Not a wire field; only when a turn starts.
    pub root_turn_id: Option<TurnId>,
}

impl TurnOverrides {
    /// Check the overrides before any is applied: a `cwd` resolves as `thread/start`'s does
    /// (relative to the daemon's cwd; it must be an existing directory).
    pub(super) fn resolved(mut self) -> Result<TurnOverrides, CoreError> {
        if let Some(cwd) = self.cwd.take() {
            self.cwd = Some(super::options::resolve_cwd(Some(&cwd))?);
        }
        if let Some(profile) = &self.permission_profile {
            let mode = crate::permissions::profile_sandbox(profile)?;
            self.sandbox = Some(weft_protocol::SandboxPolicy::from_mode(mode));
        }
        Ok(self)
    }

    /// Check what depends on the thread's settings: the workspace roots against the cwd the
    /// turn will have.
    pub(super) fn check_against(&self, settings: &ThreadSettings) -> Result<(), CoreError> {
        let cwd = self.cwd.as_deref().unwrap_or(&settings.cwd);
        super::options::check_workspace_roots(self.workspace_roots.as_deref(), cwd)
    }

    /// Write the overrides that are set into `settings`.
    pub(super) fn apply(self, settings: &mut ThreadSettings) {
        if let Some(model) = self.model {
            settings.model = model;
        }
        if let Some(cwd) = self.cwd {
            settings.cwd = cwd;
        }
        if let Some(policy) = self.approval_policy {
            settings.approval_policy = policy;
        }
        if let Some(reviewer) = self.approvals_reviewer {
            settings.approvals_reviewer = reviewer;
        }
        if let Some(sandbox) = self.sandbox {
            settings.sandbox = sandbox;
            settings.permission_profile = self.permission_profile;
        }
        if let Some(effort) = self.reasoning_effort {
            settings.reasoning_effort = Some(effort);
        }
        if let Some(summary) = self.reasoning_summary {
            settings.reasoning_summary = Some(summary);
        }
        if let Some(mode) = self.collaboration_mode {
            settings.model = mode.settings.model.clone();
            if let Some(effort) = &mode.settings.reasoning_effort {
                settings.reasoning_effort = Some(effort.clone());
            }
            settings.collaboration_mode = Some(crate::collaboration::resolve(mode));
        }
    }
}

/// The routing decision for accepted input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submitted {
    /// A new turn started.
    Started(Box<Turn>),
    /// The input joined the running turn.
    Steered(TurnId),
}

/// A request to a thread's actor.
// Ops are built once, queued and consumed; boxing `Submit`'s overrides would only make
// construction and matching noisier.
#[allow(clippy::large_enum_variant)]
pub enum Op {
    /// User input (`turn/start`, `turn/steer`).
    Submit {
        /// The input.
        input: Vec<UserInput>,
        /// Routing mode.
        mode: InputMode,
        /// Settings for the turn (and the thread).
        overrides: TurnOverrides,
        /// `clientUserMessageId`.
        client_id: Option<String>,
        /// The answer.
        reply: Reply<Result<Submitted, CoreError>>,
    },
    /// `turn/interrupt`.
    Interrupt {
        /// The turn the client wants to stop.
        turn_id: String,
        /// The answer (delivered before the turn's `turn/completed`).
        reply: Reply<Result<(), CoreError>>,
    },
    /// Interrupt the running turn, whichever it is (`interrupt_agent`, `send_input` with
    /// `interrupt`).
    InterruptRunning {
        /// Whether a turn was running.
        reply: oneshot::Sender<bool>,
    },
    /// Hand the mail that has arrived to the running turn now (a v2 `wait_agent` that saw it
    /// arrive returns only once its turn will read it).
    DeliverMail {
        /// Answered once it is handed over.
        reply: oneshot::Sender<()>,
    },
    /// A snapshot of the thread (for responses).
    Snapshot {
        /// The answer.
        reply: oneshot::Sender<ThreadSnapshot>,
    },
    /// Sent by the running task when it has finished.
    TurnFinished {
        /// Which turn.
        turn_id: TurnId,
    },
    /// Set (or clear) the thread's name.
    SetName {
        /// The new name.
        name: Option<String>,
        /// Answered once the name is on disk.
        reply: oneshot::Sender<Result<(), CoreError>>,
    },
    /// The thread's tools (for its background terminals).
    Tools {
        /// The answer.
        reply: oneshot::Sender<std::sync::Arc<crate::tools::runtime::ToolRuntime>>,
    },
    /// Write everything recorded so far to the rollout.
    Flush {
        /// Answered once it is on disk.
        reply: oneshot::Sender<()>,
    },
    /// Whether the thread is idle (no turn) and since when.
    Idle {
        /// `Some(since)` when no turn is running.
        reply: oneshot::Sender<Option<Instant>>,
    },
    /// A client changed the thread's goal (`thread/goal/set`, stored): an active goal on an
    /// idle thread starts a continuation turn; a new objective is noted to a running one
    /// (docs/protocol.md §7.26).
    GoalChanged {
        /// The change.
        set: crate::state::GoalSet,
        /// The request's answer, delivered before the continuation turn starts.
        reply: Reply<()>,
    },
    /// `thread/approveGuardianDeniedAction`: the user allows one action the guardian denied
    /// (docs/protocol.md §9.8).
    ApproveGuardianDenial {
        /// The denied review.
        denial: crate::guardian::DeniedReview,
        /// Answered once the note is queued.
        reply: Reply<Result<(), CoreError>>,
    },
    /// `thread/settings/update`: settings for the next turns, without a turn
    /// (docs/protocol.md §7.34).
    UpdateSettings {
        /// The settings to change (`turn/start`'s overrides; nothing turn-only).
        overrides: TurnOverrides,
        /// Answered before `thread/settings/updated`.
        reply: Reply<Result<(), CoreError>>,
    },
    /// `thread/compact/start`.
    Compact {
        /// Answered at once (before the compaction turn starts).
        reply: Reply<Result<(), CoreError>>,
    },
    /// `thread/shellCommand`: the user's own command, in a turn of its own or inside the
    /// running one (docs/protocol.md §7.30).
    ShellCommand {
        /// The command, checked by the handler.
        command: crate::task::UserShellCommand,
        /// Answered before the command's item starts.
        reply: Reply<Result<(), CoreError>>,
    },
    /// `review/start`: a review turn (replacing a running turn), docs/protocol.md §7.28.
    Review {
        /// What to review, already checked and trimmed by the handler.
        target: weft_protocol::ReviewTarget,
        /// Answered with the review's turn before it starts.
        reply: Reply<Result<weft_protocol::Turn, CoreError>>,
    },
    /// `thread/revert`: cut the history before a turn (and restore the workspace, when
    /// asked); answered with the thread as it is then.
    Revert {
        /// The first turn left out.
        before_turn_id: TurnId,
        /// Weft's `restoreWorkspace`.
        restore_workspace: bool,
        /// The answer.
        reply: oneshot::Sender<Result<ThreadSnapshot, CoreError>>,
    },
    /// `thread/inject_items`: raw Responses API items for the model-facing history
    /// (docs/protocol.md §7.36), checked by the manager.
    InjectItems {
        /// The items.
        items: Vec<crate::model::ResponseItem>,
        /// Answered once they are recorded (on disk, for an idle thread).
        reply: oneshot::Sender<Result<(), CoreError>>,
    },
    /// Stop the thread: interrupt any turn, then end the actor.
    Shutdown {
        /// Answered when the actor is done.
        reply: oneshot::Sender<()>,
    },
}

/// The thread as a client sees it, plus its settings.
#[derive(Debug, Clone)]
pub struct ThreadSnapshot {
    /// The wire thread (`turns: []`).
    pub thread: Thread,
    /// Current settings.
    pub settings: ThreadSettings,
    /// Completed turns with all their items.
    pub turns: Vec<Turn>,
    /// Token totals and the last turn that reported them, once a model has answered.
    pub token_usage: Option<(TurnId, ThreadTokenUsage)>,
}

/// What a thread starts from: nothing for a new thread, its rollout for a resumed or forked
/// one.
#[derive(Debug, Default)]
pub struct Restored {
    /// The model history.
    pub history: Vec<ResponseItem>,
    /// Finished turns with their items.
    pub turns: Vec<Turn>,
    /// Token totals so far.
    pub token_usage: Option<ThreadTokenUsage>,
    /// The rollout to append to (none when ephemeral).
    pub rollout: Option<RolloutWriter>,
    /// Where the thread stands in its agent tree (set by the manager when it loads it; a
    /// thread loaded without it is a root).
    pub place: Option<crate::agents::TreePlace>,
}

/// A handle on a loaded thread. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ThreadHandle {
    id: ThreadId,
    /// Boxed ops keep the queue's first block (32 slots, allocated for every loaded thread)
    /// small; an op is a few hundred bytes.
    ops: mpsc::Sender<Box<Op>>,
}

impl ThreadHandle {
    /// A handle that submits to the actor reading `ops`.
    pub(super) fn new(id: ThreadId, ops: mpsc::Sender<Box<Op>>) -> ThreadHandle {
        ThreadHandle { id, ops }
    }

    /// The thread id.
    pub fn id(&self) -> &ThreadId {
        &self.id
    }

    /// Submit an op. Fails only if the actor has stopped.
    pub async fn send(&self, op: Op) -> Result<(), CoreError> {
        self.ops
            .send(Box::new(op))
            .await
            .map_err(|_| CoreError::ThreadNotFound(self.id.to_string()))
    }

    /// Submit an op without waiting: used on the request path, where waiting for one busy
    /// thread would hold up every other request. A full queue is [`CoreError::Overloaded`].
    pub fn try_send(&self, op: Op) -> Result<(), CoreError> {
        self.ops.try_send(Box::new(op)).map_err(|err| match err {
            mpsc::error::TrySendError::Full(_) => CoreError::Overloaded,
            mpsc::error::TrySendError::Closed(_) => CoreError::ThreadNotFound(self.id.to_string()),
        })
    }

    /// The thread's current state.
    pub async fn snapshot(&self) -> Result<ThreadSnapshot, CoreError> {
        let (tx, rx) = oneshot::channel();
        self.send(Op::Snapshot { reply: tx }).await?;
        rx.await
            .map_err(|_| CoreError::ThreadNotFound(self.id.to_string()))
    }

    /// The thread's tools: its background terminals live there.
    pub async fn tools(
        &self,
    ) -> Result<std::sync::Arc<crate::tools::runtime::ToolRuntime>, CoreError> {
        let (tx, rx) = oneshot::channel();
        self.send(Op::Tools { reply: tx }).await?;
        rx.await
            .map_err(|_| CoreError::ThreadNotFound(self.id.to_string()))
    }

    /// Interrupt whatever turn is running (the multi-agent tools' interrupt). Returns whether
    /// one was.
    pub async fn interrupt_running(&self) -> bool {
        let (tx, rx) = oneshot::channel();
        if self.send(Op::InterruptRunning { reply: tx }).await.is_err() {
            return false;
        }
        rx.await.unwrap_or(false)
    }

    /// Hand the thread's arrived mail to its running turn ([`Op::DeliverMail`]).
    pub async fn deliver_mail(&self) {
        let (tx, rx) = oneshot::channel();
        if self.send(Op::DeliverMail { reply: tx }).await.is_ok() {
            let _ = rx.await;
        }
    }

    /// Stop the actor (interrupting any running turn) and wait for it.
    pub async fn shutdown(&self) {
        let (tx, rx) = oneshot::channel();
        if self.send(Op::Shutdown { reply: tx }).await.is_ok() {
            let _ = rx.await;
        }
    }
}

//! The task contract (docs/architecture.md §5.5): what a thread's actor runs as its one current
//! task. A task states its [`TaskKind`], the name its span carries, how it is announced, and
//! how it runs and is aborted; everything else about it is its own. The actor spawns "the
//! current task" through [`RunningTask`], never by kind: the regular turn
//! ([`RegularTask`], also a goal's continuation and a turn started by mail) and the manual
//! compaction ([`CompactTask`]) are two types implementing [`ThreadTask`], and a new kind is
//! one more.
//!
//! Stopping a task is the same for every kind: its cancellation token fires, it has
//! [`INTERRUPT_GRACE`] to finish cooperatively, then it is aborted and the actor waits until
//! its future is dropped, then the kind's [`ThreadTask::abort`] runs. The actor then completes
//! what the task left open, records the end and flushes the rollout before any client hears of
//! it (`thread/actor/finish.rs`).

mod compact;
mod ghost_snapshot;
mod regular;
mod review;
mod user_shell;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use tokio::task::JoinHandle;
use tracing::Instrument;
use weft_protocol::{NonSteerableTurnKind, TurnError};

use crate::turn::{TurnContext, TurnEnd};

pub use compact::CompactTask;
pub use ghost_snapshot::GhostSnapshotTask;
pub use regular::RegularTask;
pub use review::ReviewTask;
pub use user_shell::{
    DEFAULT_USER_SHELL_TIMEOUT, USER_SHELL_ABORTED, UserShellCommand, UserShellOutcome,
    UserShellTask, run_command as run_user_shell_command,
};

/// How long an interrupted task may take to finish cooperatively before it is aborted.
pub const INTERRUPT_GRACE: Duration = Duration::from_millis(100);

/// What kind of task runs, as the clients see it: the kinds of the next issues (a ghost
/// snapshot, an undo, a user's shell command) show as `Regular`, a review as a kind of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskKind {
    /// A turn of the conversation.
    Regular,
    /// A manual compaction (`thread/compact/start`).
    Compact,
    /// A code review (`review/start`, `task/review.rs`).
    Review,
}

impl TaskKind {
    /// Why input cannot steer a task of this kind (`turn/steer`, `turn/start` while it runs);
    /// `None` when it can.
    pub fn not_steerable(self) -> Option<NonSteerableTurnKind> {
        match self {
            TaskKind::Regular => None,
            TaskKind::Compact => Some(NonSteerableTurnKind::Compact),
            TaskKind::Review => Some(NonSteerableTurnKind::Review),
        }
    }

    /// Whether the task's turn is part of the conversation the client reads: its
    /// `turn/completed` carries its final agent message, and a completed one leaves the
    /// thread unread. A compaction's carries no items and leaves the read state alone.
    pub fn is_conversation(self) -> bool {
        match self {
            // A review ends with the rendered review as its agent message.
            TaskKind::Regular | TaskKind::Review => true,
            TaskKind::Compact => false,
        }
    }
}

/// How the actor announces a task before spawning it (`thread/actor/start.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskStart {
    /// Record the context messages the model needs before the task's input: the developer
    /// instructions and AGENTS.md once per thread, the environment context when it changed.
    pub records_context: bool,
    /// A goal's automatic continuation (docs/protocol.md §7.26): not the user's activity (the
    /// thread's recency stays), and its end is judged as a continuation's.
    pub continuation: bool,
}

/// A task the thread's actor can run. `run` holds the task's whole logic and returns how it
/// ended; `abort` is the kind's own clean-up after a stop (the common part — open items,
/// the interruption marker, the flush before `turn/completed` — is the actor's).
pub trait ThreadTask: Send + Sync + 'static {
    /// The task's kind.
    fn kind(&self) -> TaskKind;

    /// The name of the task in its `turn` span (the span's `task` field).
    fn span_name(&self) -> &'static str;

    /// How the actor announces it.
    fn start(&self) -> TaskStart {
        TaskStart {
            records_context: true,
            continuation: false,
        }
    }

    /// Whether the task's turn runs read-only whatever the thread's sandbox: a read-only
    /// sandbox, no approval asked, and only the tools that cannot change the environment
    /// (as in Plan mode: no `apply_patch`, no escalation; no MCP, client-defined, goal or
    /// multi-agent tools). A review's is.
    fn read_only(&self) -> bool {
        false
    }

    /// Run the task with the context the actor froze for it (docs/architecture.md §6.2).
    fn run<'a>(&'a self, ctx: &'a TurnContext) -> BoxFuture<'a, TurnEnd>;

    /// After the task was stopped (its future is gone): undo or finish what only this kind
    /// knows about. Nothing by default.
    fn abort<'a>(&'a self, ctx: &'a TurnContext) -> BoxFuture<'a, ()> {
        let _ = ctx;
        Box::pin(async {})
    }
}

/// The task the actor runs now: the spawned future, the task, and the context it runs with
/// (the actor reads the turn's id, its shared state and its cancellation from it).
pub struct RunningTask {
    task: Arc<dyn ThreadTask>,
    ctx: Arc<TurnContext>,
    handle: JoinHandle<TurnEnd>,
}

impl RunningTask {
    /// Spawn `task` in `span`; `then` runs once it returned (the actor's `TurnFinished`).
    pub fn spawn(
        task: Arc<dyn ThreadTask>,
        ctx: TurnContext,
        span: tracing::Span,
        then: impl Future<Output = ()> + Send + 'static,
    ) -> RunningTask {
        let ctx = Arc::new(ctx);
        let (running, context) = (Arc::clone(&task), Arc::clone(&ctx));
        let handle = tokio::spawn(
            async move {
                let end = running.run(&context).await;
                then.await;
                end
            }
            .instrument(span),
        );
        RunningTask { task, ctx, handle }
    }

    /// The task's kind.
    pub fn kind(&self) -> TaskKind {
        self.task.kind()
    }

    /// How the task was announced.
    pub fn start(&self) -> TaskStart {
        self.task.start()
    }

    /// What the task runs with.
    pub fn ctx(&self) -> &TurnContext {
        &self.ctx
    }

    /// The end of a task that returned by itself (a task that panicked failed).
    pub async fn join(&mut self) -> TurnEnd {
        match (&mut self.handle).await {
            Ok(end) => end,
            Err(err) => TurnEnd::Failed(TurnError {
                message: format!("turn task failed: {err}"),
                codex_error_info: Some(weft_protocol::CodexErrorInfo::Other),
                additional_details: None,
                misalignment: None,
            }),
        }
    }

    /// Stop the task: cancel it, give it [`INTERRUPT_GRACE`] to finish cooperatively (so every
    /// item it started is completed), abort it otherwise and wait until its future is dropped
    /// (from then on only the actor touches the thread's history), then run the kind's
    /// [`ThreadTask::abort`].
    pub async fn stop(&mut self) {
        self.ctx.cancel.cancel();
        if tokio::time::timeout(INTERRUPT_GRACE, &mut self.handle)
            .await
            .is_err()
        {
            self.handle.abort();
            let _ = (&mut self.handle).await;
        }
        self.task.abort(&self.ctx).await;
    }
}

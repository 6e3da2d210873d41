//! The Session actor: one tokio task per loaded thread owns the thread's state. Everyone else
//! holds a [`ThreadHandle`] and submits [`Op`]s; answers come back through [`Reply`]s, which the
//! actor delivers *before* it emits anything that follows from the request.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use weft_protocol::{
    NonSteerableTurnKind, Thread, ThreadId, ThreadItem, ThreadItemDetails, ThreadStatus,
    ThreadTokenUsage, Turn, TurnError, TurnId, TurnItemsView, TurnStatus, UserInput,
};

use crate::compact::Window;
use crate::env_context::EnvironmentContext;
use crate::events::{Reply, SharedSink, ThreadEvent};
use crate::history::History;
use crate::instructions::{base_instructions, discover_agents_md, render_user_instructions};
use crate::manager::Services;
use crate::model::{ContentItem, ModelClient, Prompt, ResponseItem};
use crate::rollout::{RolloutRecord, RolloutWriter, TurnContextRecord};
use crate::settings::{ThreadSettings, approval_policy_name, sandbox_mode_name};
use crate::time::{new_item_id, new_turn_id, now_secs};
use crate::tools::context::ToolTurn;
use crate::tools::runtime::ToolRuntime;
use crate::turn::{self, PendingInput, TurnContext, TurnEnd, TurnShared};

/// Capacity of a thread's op queue.
const OP_QUEUE_CAPACITY: usize = 64;

/// The history marker recorded when the user interrupts a turn (model-visible).
pub use crate::rollout::TURN_ABORTED_MARKER;

/// How input is routed (runtime.md §3).
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
    /// Sandbox policy.
    pub sandbox: Option<weft_protocol::SandboxPolicy>,
    /// Reasoning effort.
    pub reasoning_effort: Option<weft_protocol::ReasoningEffort>,
    /// Reasoning summary.
    pub reasoning_summary: Option<weft_protocol::ReasoningSummary>,
}

impl TurnOverrides {
    fn apply(self, settings: &mut ThreadSettings) {
        if let Some(model) = self.model {
            settings.model = model;
        }
        if let Some(cwd) = self.cwd {
            settings.cwd = cwd;
        }
        if let Some(policy) = self.approval_policy {
            settings.approval_policy = policy;
        }
        if let Some(sandbox) = self.sandbox {
            settings.sandbox = sandbox;
        }
        if let Some(effort) = self.reasoning_effort {
            settings.reasoning_effort = Some(effort);
        }
        if let Some(summary) = self.reasoning_summary {
            settings.reasoning_summary = Some(summary);
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

/// Why a request to a thread was refused. `Display` is the exact client-facing message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CoreError {
    /// `turn/steer` on an idle thread.
    #[error("no active turn to steer")]
    NoActiveTurnToSteer,
    /// `turn/steer` with the wrong expected turn id.
    #[error("expected active turn id `{expected}` but found `{active}`")]
    SteerTurnMismatch {
        /// What the client expected.
        expected: String,
        /// What is running.
        active: String,
    },
    /// Empty input.
    #[error("input must not be empty")]
    EmptyInput,
    /// `expectedTurnId: ""`.
    #[error("expectedTurnId must not be empty")]
    EmptyExpectedTurnId,
    /// Steering into a review or compaction turn.
    #[error("cannot steer a {} turn", match .0 { NonSteerableTurnKind::Review => "review", NonSteerableTurnKind::Compact => "compact" })]
    NotSteerable(NonSteerableTurnKind),
    /// StartIfIdle on a busy thread.
    #[error("thread is busy with turn {0}")]
    Busy(String),
    /// `turn/interrupt` on an idle thread.
    #[error("no active turn to interrupt")]
    NoActiveTurnToInterrupt,
    /// `turn/interrupt` with the wrong turn id.
    #[error("expected active turn id {expected} but found {active}")]
    InterruptTurnMismatch {
        /// What the client gave.
        expected: String,
        /// What is running.
        active: String,
    },
    /// The thread is not loaded (or its actor has stopped).
    #[error("thread not found: {0}")]
    ThreadNotFound(String),
    /// Bad thread settings (unknown provider, missing cwd, …).
    #[error("{0}")]
    InvalidSettings(String),
    /// The thread's request queue is full.
    #[error("Server overloaded; retry later.")]
    Overloaded,
    /// `thread/name/set` on an ephemeral thread.
    #[error("ephemeral thread does not support metadata updates: {0}")]
    EphemeralMetadata(String),
    /// A stored thread that cannot be found (or is ephemeral, or archived).
    #[error("no rollout found for thread id {0}")]
    NoRollout(String),
    /// `thread/unarchive` of a thread that is not archived.
    #[error("no archived rollout found for thread id {0}")]
    NoArchivedRollout(String),
    /// `thread/read` of an unknown thread.
    #[error("thread not loaded: {0}")]
    NotLoaded(String),
    /// `thread/name/set` with an empty name.
    #[error("thread name must not be empty")]
    EmptyName,
    /// Storage failed (rollout or state DB).
    #[error("{0}")]
    Storage(String),
}

/// A request to a thread's actor.
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
    /// `thread/compact/start`.
    Compact {
        /// Answered at once (before the compaction turn starts).
        reply: Reply<Result<(), CoreError>>,
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

/// A handle on a loaded thread. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ThreadHandle {
    id: ThreadId,
    ops: mpsc::Sender<Op>,
}

impl ThreadHandle {
    /// The thread id.
    pub fn id(&self) -> &ThreadId {
        &self.id
    }

    /// Submit an op. Fails only if the actor has stopped.
    pub async fn send(&self, op: Op) -> Result<(), CoreError> {
        self.ops
            .send(op)
            .await
            .map_err(|_| CoreError::ThreadNotFound(self.id.to_string()))
    }

    /// Submit an op without waiting: used on the request path, where waiting for one busy
    /// thread would hold up every other request. A full queue is [`CoreError::Overloaded`].
    pub fn try_send(&self, op: Op) -> Result<(), CoreError> {
        self.ops.try_send(op).map_err(|err| match err {
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

    /// Stop the actor (interrupting any running turn) and wait for it.
    pub async fn shutdown(&self) {
        let (tx, rx) = oneshot::channel();
        if self.send(Op::Shutdown { reply: tx }).await.is_ok() {
            let _ = rx.await;
        }
    }
}

struct ActiveTurn {
    turn_id: TurnId,
    kind: Option<NonSteerableTurnKind>,
    cancel: CancellationToken,
    task: JoinHandle<TurnEnd>,
    shared: Arc<TurnShared>,
    started_at: i64,
    started: Instant,
}

/// The actor's state.
pub struct Session {
    thread: Thread,
    settings: ThreadSettings,
    services: Arc<Services>,
    sink: SharedSink,
    history: Arc<Mutex<History>>,
    token_usage: Arc<Mutex<ThreadTokenUsage>>,
    active: Option<ActiveTurn>,
    turns: Vec<Turn>,
    ops: mpsc::WeakSender<Op>,
    /// The environment context last recorded in history.
    last_environment: Option<EnvironmentContext>,
    /// Whether the instruction messages (developer, AGENTS.md) are in history.
    instructions_recorded: bool,
    /// The thread's tools (and what they keep running).
    tools: Arc<ToolRuntime>,
    /// The thread's rollout (none for an ephemeral thread).
    rollout: Option<RolloutWriter>,
    /// When the last turn ended or the thread was loaded (for idle unloading).
    last_activity: Instant,
}

/// What a spawned task does.
enum TaskKind {
    /// A regular turn with its first input.
    Regular(PendingInput),
    /// A manual compaction.
    Compact,
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
}

impl Session {
    /// Spawn the actor for a new thread and return its handle.
    pub fn spawn(
        thread: Thread,
        settings: ThreadSettings,
        services: Arc<Services>,
        sink: SharedSink,
        restored: Restored,
    ) -> ThreadHandle {
        let (tx, rx) = mpsc::channel(OP_QUEUE_CAPACITY);
        let handle = ThreadHandle {
            id: thread.id.clone(),
            ops: tx.clone(),
        };
        let instructions_recorded = !restored.history.is_empty();
        let last_environment = last_environment_in(&restored.history, &settings);
        let session = Session {
            thread,
            settings,
            services,
            sink,
            history: Arc::new(Mutex::new(History::restored(
                restored.history,
                restored.rollout.clone(),
            ))),
            token_usage: Arc::new(Mutex::new(restored.token_usage.unwrap_or_default())),
            active: None,
            turns: restored.turns,
            ops: tx.downgrade(),
            last_environment,
            instructions_recorded,
            tools: ToolRuntime::new(),
            rollout: restored.rollout,
            last_activity: Instant::now(),
        };
        drop(tx);
        tokio::spawn(session.run(rx));
        handle
    }

    async fn run(mut self, mut ops: mpsc::Receiver<Op>) {
        while let Some(op) = ops.recv().await {
            match op {
                Op::Submit {
                    input,
                    mode,
                    overrides,
                    client_id,
                    reply,
                } => self.submit(input, mode, overrides, client_id, reply).await,
                Op::Interrupt { turn_id, reply } => self.interrupt(turn_id, reply).await,
                Op::Snapshot { reply } => {
                    let _ = reply.send(self.snapshot());
                }
                Op::TurnFinished { turn_id } => {
                    if self.active.as_ref().is_some_and(|a| a.turn_id == turn_id) {
                        self.finish_turn(None).await;
                    }
                }
                Op::SetName { name, reply } => {
                    let _ = reply.send(self.set_name(name).await);
                }
                Op::Compact { reply } => self.compact(reply).await,
                Op::Flush { reply } => {
                    self.flush_rollout(false).await;
                    let _ = reply.send(());
                }
                Op::Idle { reply } => {
                    let _ = reply.send(self.active.is_none().then_some(self.last_activity));
                }
                Op::Shutdown { reply } => {
                    self.abort_active(TurnEnd::Interrupted).await;
                    self.tools.shutdown().await;
                    self.close_rollout().await;
                    let _ = reply.send(());
                    return;
                }
            }
        }
        // Every handle is gone: wind down.
        self.abort_active(TurnEnd::Interrupted).await;
        self.tools.shutdown().await;
        self.close_rollout().await;
    }

    fn status(&self) -> ThreadStatus {
        match &self.active {
            Some(_) if self.tools.waiting_on_approval() => ThreadStatus::Active {
                active_flags: vec![weft_protocol::ThreadActiveFlag::WaitingOnApproval],
            },
            Some(_) => ThreadStatus::active(),
            None => match self.turns.last() {
                Some(turn) if turn.status == TurnStatus::Failed => ThreadStatus::SystemError,
                _ => ThreadStatus::Idle,
            },
        }
    }

    fn snapshot(&self) -> ThreadSnapshot {
        let mut thread = self.thread.clone();
        thread.status = self.status();
        thread.model = Some(self.settings.model.clone());
        thread.model_provider = self.settings.model_provider.clone();
        thread.reasoning_effort = self.settings.reasoning_effort.clone();
        thread.cwd = self.settings.cwd.display().to_string();
        let usage = *self.token_usage.lock();
        let token_usage = match (usage.total.total_tokens, self.turns.last()) {
            (0, _) | (_, None) => None,
            (_, Some(turn)) => Some((turn.id.clone(), usage)),
        };
        ThreadSnapshot {
            thread,
            settings: self.settings.clone(),
            turns: self.turns.clone(),
            token_usage,
        }
    }

    async fn submit(
        &mut self,
        input: Vec<UserInput>,
        mode: InputMode,
        overrides: TurnOverrides,
        client_id: Option<String>,
        reply: Reply<Result<Submitted, CoreError>>,
    ) {
        if let Some(active) = &self.active {
            let outcome = match &mode {
                InputMode::StartIfIdle => Err(CoreError::Busy(active.turn_id.to_string())),
                InputMode::Steer { expected_turn_id } if expected_turn_id.is_empty() => {
                    Err(CoreError::EmptyExpectedTurnId)
                }
                InputMode::Steer { expected_turn_id }
                    if expected_turn_id.as_str() != active.turn_id.as_str() =>
                {
                    Err(CoreError::SteerTurnMismatch {
                        expected: expected_turn_id.clone(),
                        active: active.turn_id.to_string(),
                    })
                }
                _ if input.is_empty() => Err(CoreError::EmptyInput),
                _ => match active.kind {
                    Some(kind) => Err(CoreError::NotSteerable(kind)),
                    None => Ok(()),
                },
            };
            if let Err(err) = outcome {
                reply.send(Err(err)).await;
                return;
            }
            overrides.apply(&mut self.settings);
            let turn_id = active.turn_id.clone();
            // Answer first: the running turn may inject the input (and emit its userMessage
            // item) as soon as it is queued, and the answer must precede that.
            reply.send(Ok(Submitted::Steered(turn_id))).await;
            active.shared.push_pending(PendingInput {
                item_id: new_item_id(),
                input,
                client_id,
            });
            return;
        }
        if matches!(mode, InputMode::Steer { .. }) {
            reply.send(Err(CoreError::NoActiveTurnToSteer)).await;
            return;
        }
        // `turn/start` with `input: []` on an idle thread is accepted, as by the reference: a
        // turn with no userMessage item (protocol.md §4.14).
        let mut settings = self.settings.clone();
        overrides.apply(&mut settings);
        let Some(provider) = self
            .services
            .config
            .provider(&settings.model_provider)
            .cloned()
        else {
            reply
                .send(Err(CoreError::InvalidSettings(format!(
                    "unknown model provider `{}`",
                    settings.model_provider
                ))))
                .await;
            return;
        };
        self.settings = settings;
        let turn_id = new_turn_id();
        let turn = Turn {
            id: turn_id.clone(),
            root_turn_id: Some(turn_id.clone()),
            items: Vec::new(),
            items_view: TurnItemsView::NotLoaded,
            status: TurnStatus::InProgress,
            error: None,
            started_at: None,
            completed_at: None,
            duration_ms: None,
        };
        if self.thread.preview.is_empty() {
            self.thread.preview = preview_of(&input);
        }
        reply
            .send(Ok(Submitted::Started(Box::new(turn.clone()))))
            .await;
        let started_at = now_secs();
        if let Some(rollout) = &self.rollout {
            rollout.append(RolloutRecord::TurnStarted {
                turn_id: turn_id.clone(),
                started_at,
                context: TurnContextRecord::from_settings(&self.settings),
            });
        }
        self.record_context();
        self.thread.updated_at = started_at;
        self.emit(ThreadEvent::StatusChanged(ThreadStatus::active()))
            .await;
        let mut started = turn;
        started.started_at = Some(started_at);
        self.emit(ThreadEvent::TurnStarted(started)).await;
        self.spawn_turn(
            turn_id,
            provider,
            TaskKind::Regular(PendingInput {
                item_id: new_item_id(),
                input,
                client_id,
            }),
            started_at,
        );
    }

    /// `thread/compact/start`: answered at once; a running turn is replaced (it completes as
    /// interrupted), then the compaction runs as a turn of its own that cannot be steered.
    async fn compact(&mut self, reply: Reply<Result<(), CoreError>>) {
        let Some(provider) = self
            .services
            .config
            .provider(&self.settings.model_provider)
            .cloned()
        else {
            reply
                .send(Err(CoreError::InvalidSettings(format!(
                    "unknown model provider `{}`",
                    self.settings.model_provider
                ))))
                .await;
            return;
        };
        reply.send(Ok(())).await;
        self.abort_active(TurnEnd::Interrupted).await;
        let turn_id = new_turn_id();
        let started_at = now_secs();
        if let Some(rollout) = &self.rollout {
            rollout.append(RolloutRecord::TurnStarted {
                turn_id: turn_id.clone(),
                started_at,
                context: TurnContextRecord::from_settings(&self.settings),
            });
        }
        self.thread.updated_at = started_at;
        self.emit(ThreadEvent::StatusChanged(ThreadStatus::active()))
            .await;
        self.emit(ThreadEvent::TurnStarted(Turn {
            id: turn_id.clone(),
            root_turn_id: Some(turn_id.clone()),
            items: Vec::new(),
            items_view: TurnItemsView::NotLoaded,
            status: TurnStatus::InProgress,
            error: None,
            started_at: Some(started_at),
            completed_at: None,
            duration_ms: None,
        }))
        .await;
        self.spawn_turn(turn_id, provider, TaskKind::Compact, started_at);
    }

    fn spawn_turn(
        &mut self,
        turn_id: TurnId,
        provider: crate::model::ProviderConfig,
        task: TaskKind,
        started_at: i64,
    ) {
        let kind = match task {
            TaskKind::Regular(_) => None,
            TaskKind::Compact => Some(NonSteerableTurnKind::Compact),
        };
        let cancel = CancellationToken::new();
        let shared = Arc::new(TurnShared::default());
        let stream_max_retries = provider.stream_max_retries;
        let tool_turn = ToolTurn {
            thread_id: self.thread.id.clone(),
            turn_id: turn_id.clone(),
            sink: self.sink.clone(),
            cancel: cancel.clone(),
            cwd: self.settings.cwd.clone(),
            approval_policy: self.settings.approval_policy,
            sandbox: self.settings.sandbox.clone(),
        };
        let mut step = self.step_prompt();
        step.tools = self.tools.specs(&tool_turn);
        step.parallel_tool_calls = !step.tools.is_empty();
        let ctx = TurnContext {
            thread_id: self.thread.id.clone(),
            turn_id: turn_id.clone(),
            client: ModelClient::new(provider, self.services.http()),
            step,
            stop_hooks: self.services.stop_hooks.clone(),
            cwd: self.settings.cwd.clone(),
            sink: self.sink.clone(),
            history: self.history.clone(),
            token_usage: self.token_usage.clone(),
            shared: shared.clone(),
            cancel: cancel.clone(),
            stream_max_retries,
            context_window: self
                .services
                .config
                .model_context_window
                .and_then(|w| i64::try_from(w).ok()),
            rollout: self.rollout.clone(),
            window: Window::new(
                self.services.config.model_context_window,
                self.services.config.model_auto_compact_token_limit,
            ),
            environment: self.environment(),
            tools: self.tools.clone(),
            tool_turn,
        };
        let ops = self.ops.clone();
        let finished_id = turn_id.clone();
        let task = tokio::spawn(async move {
            let end = match task {
                TaskKind::Regular(initial) => turn::run_task(ctx, initial).await,
                TaskKind::Compact => turn::run_compact_task(ctx).await,
            };
            if let Some(ops) = ops.upgrade() {
                let _ = ops
                    .send(Op::TurnFinished {
                        turn_id: finished_id,
                    })
                    .await;
            }
            end
        });
        self.active = Some(ActiveTurn {
            turn_id,
            kind,
            cancel,
            task,
            shared,
            started_at,
            started: Instant::now(),
        });
    }

    /// The step context: what every request of the next turn is built from.
    fn step_prompt(&self) -> Prompt {
        let instructions = self
            .settings
            .base_instructions
            .clone()
            .unwrap_or_else(|| base_instructions().to_string());
        Prompt {
            model: self.settings.model.clone(),
            instructions,
            input: Vec::new(),
            tools: Vec::new(),
            parallel_tool_calls: false,
            reasoning_effort: self.settings.reasoning_effort.as_ref().map(|e| e.0.clone()),
            reasoning_summary: self
                .settings
                .reasoning_summary
                .and_then(|s| serde_json::to_value(s).ok())
                .and_then(|v| v.as_str().map(str::to_string)),
            prompt_cache_key: Some(self.thread.id.to_string()),
        }
    }

    /// Record the context messages the model needs before this turn's input: the developer
    /// instructions and AGENTS.md once, and the environment context whenever it changed.
    fn record_context(&mut self) {
        let mut history = self.history.lock();
        if !self.instructions_recorded {
            self.instructions_recorded = true;
            if let Some(developer) = &self.settings.developer_instructions {
                history.record(ResponseItem::message(
                    crate::model::Role::Developer,
                    vec![ContentItem::InputText {
                        text: developer.clone(),
                    }],
                ));
            }
            if let Some(text) = render_user_instructions(&discover_agents_md(&self.settings.cwd)) {
                history.record(ResponseItem::user_message(vec![ContentItem::InputText {
                    text,
                }]));
            }
        }
        // The environment context: in full the first time (and after a resume), then only
        // what changed since the last one the model saw.
        let environment = self.environment();
        let text = match &self.last_environment {
            None => Some(environment.render()),
            Some(previous) => environment.diff(previous),
        };
        if let Some(text) = text {
            history.record(ResponseItem::user_message(vec![ContentItem::InputText {
                text,
            }]));
        }
        self.last_environment = Some(environment);
    }

    fn environment(&self) -> EnvironmentContext {
        EnvironmentContext::capture(
            self.settings.cwd.clone(),
            approval_policy_name(&self.settings.approval_policy),
            sandbox_mode_name(self.settings.sandbox_mode()),
        )
    }

    async fn interrupt(&mut self, turn_id: String, reply: Reply<Result<(), CoreError>>) {
        let Some(active) = &self.active else {
            reply.send(Err(CoreError::NoActiveTurnToInterrupt)).await;
            return;
        };
        if active.turn_id.as_str() != turn_id {
            let active = active.turn_id.to_string();
            reply
                .send(Err(CoreError::InterruptTurnMismatch {
                    expected: turn_id,
                    active,
                }))
                .await;
            return;
        }
        reply.send(Ok(())).await;
        self.abort_active(TurnEnd::Interrupted).await;
    }

    /// Cancel the running task, give it a short grace to finish cooperatively (so every item
    /// it started is completed), then abort it, and finish the turn with `end`.
    async fn abort_active(&mut self, end: TurnEnd) {
        let Some(active) = self.active.as_mut() else {
            return;
        };
        active.cancel.cancel();
        if tokio::time::timeout(INTERRUPT_GRACE, &mut active.task)
            .await
            .is_err()
        {
            active.task.abort();
        }
        self.finish_turn(Some(end)).await;
    }

    /// The turn's task is over: record its end, then tell the clients.
    async fn finish_turn(&mut self, forced: Option<TurnEnd>) {
        let Some(mut active) = self.active.take() else {
            return;
        };
        let end = match forced {
            Some(end) => end,
            None => match (&mut active.task).await {
                Ok(end) => end,
                Err(err) => TurnEnd::Failed(TurnError {
                    message: format!("turn task failed: {err}"),
                    codex_error_info: Some(weft_protocol::CodexErrorInfo::Other),
                    additional_details: None,
                    misalignment: None,
                }),
            },
        };
        let (status, error) = match end {
            TurnEnd::Completed => (TurnStatus::Completed, None),
            TurnEnd::Interrupted => (TurnStatus::Interrupted, None),
            TurnEnd::Failed(error) => (TurnStatus::Failed, Some(error)),
        };
        if status == TurnStatus::Interrupted {
            self.history
                .lock()
                .record(ResponseItem::user_message(vec![ContentItem::InputText {
                    text: TURN_ABORTED_MARKER.to_string(),
                }]));
        }
        // A task aborted after the grace period may leave items started: complete them now,
        // so every item a client saw start also completes.
        for item in active.shared.complete_abandoned(crate::time::now_ms()) {
            if let Some(rollout) = &self.rollout {
                rollout.append(RolloutRecord::ItemCompleted {
                    turn_id: active.turn_id.clone(),
                    item: item.clone(),
                });
            }
            self.emit(ThreadEvent::ItemCompleted {
                turn_id: active.turn_id.clone(),
                item,
            })
            .await;
        }
        let completed_at = now_secs();
        self.thread.updated_at = completed_at;
        let items = active.shared.completed_items();
        let turn = Turn {
            id: active.turn_id.clone(),
            root_turn_id: Some(active.turn_id.clone()),
            items,
            items_view: TurnItemsView::Full,
            status,
            error: error.clone(),
            started_at: Some(active.started_at),
            completed_at: Some(completed_at),
            duration_ms: Some(active.started.elapsed().as_millis() as i64),
        };
        self.turns.push(turn.clone());
        if let Some(rollout) = &self.rollout {
            rollout.append(RolloutRecord::TurnEnded {
                turn_id: turn.id.clone(),
                status,
                error: error.clone(),
                completed_at,
                duration_ms: turn.duration_ms,
            });
        }
        // The end of the turn is on disk before any client hears of it.
        self.flush_rollout(true).await;
        self.last_activity = Instant::now();
        self.index_thread().await;
        let leftover = active.shared.take_pending();
        self.emit(ThreadEvent::StatusChanged(self.status())).await;
        if let Some(error) = &error {
            self.emit(ThreadEvent::Error {
                turn_id: turn.id.clone(),
                error: error.clone(),
                will_retry: false,
            })
            .await;
        }
        let view = if active.kind == Some(NonSteerableTurnKind::Compact) {
            Turn {
                items: Vec::new(),
                items_view: TurnItemsView::NotLoaded,
                ..turn
            }
        } else {
            completed_view(turn)
        };
        self.emit(ThreadEvent::TurnCompleted(view)).await;
        if !leftover.is_empty() && status != TurnStatus::Interrupted {
            self.start_with_leftover(leftover).await;
        }
    }

    /// Input steered in after the task had decided to finish starts the next turn.
    async fn start_with_leftover(&mut self, leftover: Vec<PendingInput>) {
        let mut input = Vec::new();
        for pending in leftover {
            input.extend(pending.input);
        }
        let (reply, _rx) = Reply::channel();
        Box::pin(self.submit(
            input,
            InputMode::StartIfIdle,
            TurnOverrides::default(),
            None,
            reply,
        ))
        .await;
    }

    async fn set_name(&mut self, name: Option<String>) -> Result<(), CoreError> {
        let Some(rollout) = &self.rollout else {
            return Err(CoreError::EphemeralMetadata(self.thread.id.to_string()));
        };
        rollout.append(RolloutRecord::ThreadNameSet {
            name: name.clone().unwrap_or_default(),
        });
        self.thread.name = name;
        self.flush_rollout(true).await;
        if let Some(state) = &self.services.state
            && let Err(err) = state
                .set_name(&self.thread.id, self.thread.name.as_deref())
                .await
        {
            tracing::warn!(thread = %self.thread.id, %err, "cannot index the thread name");
        }
        Ok(())
    }

    async fn flush_rollout(&self, fsync: bool) {
        if let Some(rollout) = &self.rollout
            && let Err(err) = rollout.flush(fsync).await
        {
            tracing::error!(thread = %self.thread.id, %err, "cannot write the rollout");
        }
    }

    async fn close_rollout(&mut self) {
        if let Some(rollout) = self.rollout.take() {
            self.history.lock().detach_journal();
            if let Err(err) = rollout.close().await {
                tracing::error!(thread = %self.thread.id, %err, "cannot close the rollout");
            }
        }
    }

    /// Keep the state DB's row (updated time, preview) in step with the thread.
    async fn index_thread(&self) {
        let (Some(state), Some(_)) = (&self.services.state, &self.rollout) else {
            return;
        };
        if let Err(err) = state
            .touch(
                &self.thread.id,
                self.thread.updated_at,
                Some(self.thread.preview.as_str()),
            )
            .await
        {
            tracing::warn!(thread = %self.thread.id, %err, "cannot update the thread index");
        }
    }

    async fn emit(&self, event: ThreadEvent) {
        self.sink.emit(&self.thread.id, event).await;
    }
}

/// The environment context a restored history already gives the model: when its last
/// environment message is the full context as it is now, the next turn need not repeat it.
/// Otherwise (it changed, or only a diff was last) the next turn sends it in full.
fn last_environment_in(
    history: &[ResponseItem],
    settings: &ThreadSettings,
) -> Option<EnvironmentContext> {
    let current = EnvironmentContext::capture(
        settings.cwd.clone(),
        approval_policy_name(&settings.approval_policy),
        sandbox_mode_name(settings.sandbox_mode()),
    );
    let rendered = current.render();
    let last = history.iter().rev().find_map(|item| {
        item.message_text()
            .filter(|text| text.starts_with(crate::env_context::ENVIRONMENT_CONTEXT_OPEN_TAG))
    })?;
    (last == rendered).then_some(current)
}

/// How long an interrupted turn's task may take to finish cooperatively.
pub const INTERRUPT_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

/// The view of a finished turn that `turn/completed` carries, as the reference sends it:
/// only the final agent message for a completed turn, nothing for an interrupted or failed one.
fn completed_view(mut turn: Turn) -> Turn {
    if turn.status == TurnStatus::Completed {
        let last = turn
            .items
            .iter()
            .rev()
            .find(|i| matches!(i.details, ThreadItemDetails::AgentMessage(_)))
            .cloned();
        turn.items = last.into_iter().collect::<Vec<ThreadItem>>();
        turn.items_view = TurnItemsView::Summary;
    } else {
        turn.items = Vec::new();
        turn.items_view = TurnItemsView::NotLoaded;
    }
    turn
}

/// The preview of a thread: its first user message's text.
fn preview_of(input: &[UserInput]) -> String {
    input
        .iter()
        .find_map(|part| match part {
            UserInput::Text { text, .. } => Some(text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;

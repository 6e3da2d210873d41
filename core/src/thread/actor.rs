//! The thread's actor: one tokio task per loaded thread owns the thread's state. Everyone else
//! holds a [`ThreadHandle`] and submits [`Op`]s; answers come back through [`Reply`](crate::events::Reply)s, which the
//! actor delivers *before* it emits anything that follows from the request.
//!
//! The actor runs one task at a time, whatever its kind (`crate::task`): starting one lives in
//! `start`, ending one in `finish`, what the model is told before each turn (instructions,
//! environment) in `context`. Its owned parts: the pursuit of the thread's goal (accounting,
//! continuation turns) in `goal`, the mail of its agent tree in `mail`, the rollout and the
//! index row in `persistence`.
//!
//! The thread's model-facing history and token totals have one owner, the actor
//! (docs/architecture.md §5.1): it lends them to the task it runs and touches them itself only
//! between tasks; while a task runs, what the actor needs of them comes through the task's
//! [`TurnShared`].
//!
//! The actor depends on its [`Services`] and its handle's types, never on the manager that
//! spawns it.

mod context;
mod finish;
mod goal;
mod guardian;
mod inject;
mod mail;
mod persistence;
mod revert;
mod review;
mod settings;
mod shell;
mod start;

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use tokio::sync::mpsc;
use tracing::Instrument;
use weft_protocol::{Thread, ThreadStatus, ThreadTokenUsage, Turn, TurnId, TurnStatus};

use super::error::CoreError;
use super::handle::{Op, Restored, ThreadHandle, ThreadSnapshot};
use super::services::Services;
use crate::agents::AgentMailbox;
use crate::env_context::EnvironmentContext;
use crate::events::{SharedSink, ThreadEvent};
use crate::goals::GoalTurnUsage;
use crate::history::History;
use crate::rollout::{RolloutError, RolloutRecord};
use crate::settings::ThreadSettings;
use crate::task::RunningTask;
use crate::tools::runtime::ToolRuntime;
use crate::turn::{TurnEnd, TurnShared};
use context::last_environment_in;
use goal::GoalPursuit;
use mail::Inbox;
use persistence::Persistence;

/// Capacity of a thread's op queue.
const OP_QUEUE_CAPACITY: usize = 64;

/// The current task and what the actor keeps to finish its turn.
struct ActiveTurn {
    task: RunningTask,
    /// The turn's `rootTurnId`: its own id, or the parent turn whose tool started it.
    root_turn_id: TurnId,
    started_at: i64,
    started: Instant,
    /// Ended by `turn/interrupt` (a user's interrupt pauses the goal; Weft's own do not).
    user_interrupt: bool,
    /// The turn's usage not yet counted toward the goal.
    goal_usage: Arc<GoalTurnUsage>,
}

impl ActiveTurn {
    fn turn_id(&self) -> &TurnId {
        &self.task.ctx().turn_id
    }

    /// What the task shares with the actor while it runs.
    fn shared(&self) -> &TurnShared {
        &self.task.ctx().shared
    }

    /// A goal's automatic continuation turn.
    fn continuation(&self) -> bool {
        self.task.start().continuation
    }
}

/// The actor's state.
pub struct ThreadActor {
    thread: Thread,
    settings: ThreadSettings,
    services: Arc<Services>,
    sink: SharedSink,
    /// The model-facing history: the actor's, lent to the running task (docs/architecture.md
    /// §5.1).
    history: Arc<Mutex<History>>,
    /// The thread's token totals, lent with the history.
    token_usage: Arc<Mutex<ThreadTokenUsage>>,
    active: Option<ActiveTurn>,
    /// The last finished turn, whole: the earlier ones are in the rollout
    /// (`ThreadManager::full_turns` reads them back). An ephemeral thread, or one whose
    /// rollout could not be written, keeps every turn.
    turns: Vec<Turn>,
    ops: mpsc::WeakSender<Box<Op>>,
    /// The environment context last recorded in history.
    last_environment: Option<EnvironmentContext>,
    /// Whether the instruction messages (developer, AGENTS.md) are in history.
    instructions_recorded: bool,
    /// The thread's tools (and what they keep running).
    tools: Arc<ToolRuntime>,
    /// The rollout and the index row.
    persistence: Persistence,
    /// When the last turn ended or the thread was loaded (for idle unloading).
    last_activity: Instant,
    /// The pursuit of the thread's goal.
    goal: GoalPursuit,
    /// Where the thread stands in its agent tree (docs/agents.md).
    place: crate::agents::TreePlace,
    /// Mail from the thread's agent tree.
    inbox: Inbox,
}

impl ThreadActor {
    /// Spawn the actor for a new thread; returns its handle and the sending side of its agent
    /// mailbox, which the manager keeps with the handle in its registry of loaded threads.
    pub fn spawn(
        thread: Thread,
        settings: ThreadSettings,
        services: Arc<Services>,
        sink: SharedSink,
        restored: Restored,
    ) -> (ThreadHandle, AgentMailbox) {
        let (tx, rx) = mpsc::channel(OP_QUEUE_CAPACITY);
        let handle = ThreadHandle::new(thread.id.clone(), tx.clone());
        let instructions_recorded = !restored.history.is_empty();
        let last_environment = last_environment_in(&restored.history, &settings);
        let tools =
            ToolRuntime::with_shell_environment(services.config.shell_environment_policy.clone());
        let (mailbox, inbox) = crate::agents::mailbox();
        let place = restored
            .place
            .clone()
            .unwrap_or_else(|| crate::agents::TreePlace::root(&thread.id));
        let goal = GoalPursuit::new(
            services.config.features.goals,
            services.state.as_ref(),
            restored.rollout.is_some(),
            services.config.goals.max_continuation_turns,
        );
        let actor = ThreadActor {
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
            tools,
            persistence: Persistence::new(restored.rollout),
            last_activity: Instant::now(),
            goal,
            place,
            inbox: Inbox::new(inbox),
        };
        drop(tx);
        // The thread outlives the request that loaded it, so its span has no parent: every
        // line the actor (and the turns it runs) logs carries `thread_id`, and nothing else.
        let span = tracing::info_span!(parent: None, "thread", thread_id = %actor.thread.id);
        tokio::spawn(Box::new(actor).run(rx).instrument(span));
        (handle, mailbox)
    }

    /// The actor's loop. The actor and the work of each op live on the heap, so the task of
    /// an idle thread holds little more than its queues (bench/README.md has the profile).
    async fn run(mut self: Box<Self>, mut ops: mpsc::Receiver<Box<Op>>) {
        loop {
            let op = tokio::select! {
                op = ops.recv() => op,
                () = self.inbox.changed() => {
                    Box::pin(self.deliver_mail()).await;
                    continue;
                }
            };
            let Some(op) = op else {
                break;
            };
            if Box::pin(self.handle(*op)).await.is_break() {
                return;
            }
        }
        // Every handle is gone.
        Box::pin(self.wind_down()).await;
    }

    /// One op; `Break` once the actor has shut down.
    async fn handle(&mut self, op: Op) -> ControlFlow<()> {
        match op {
            Op::Submit {
                input,
                mode,
                overrides,
                client_id,
                reply,
            } => self.submit(input, mode, overrides, client_id, reply).await,
            Op::Interrupt { turn_id, reply } => self.interrupt(turn_id, reply).await,
            Op::InterruptRunning { reply } => {
                let running = self.active.is_some();
                if running {
                    self.abort_active(TurnEnd::Interrupted).await;
                }
                let _ = reply.send(running);
            }
            Op::DeliverMail { reply } => {
                self.deliver_mail().await;
                let _ = reply.send(());
            }
            Op::Snapshot { reply } => {
                let _ = reply.send(self.snapshot());
            }
            Op::TurnFinished { turn_id } => {
                if self
                    .active
                    .as_ref()
                    .is_some_and(|a| *a.turn_id() == turn_id)
                {
                    self.finish_turn(None).await;
                }
            }
            Op::SetName { name, reply } => {
                let _ = reply.send(self.set_name(name).await);
            }
            Op::Compact { reply } => {
                self.start_task(Arc::new(crate::task::CompactTask), reply)
                    .await;
            }
            Op::Review { target, reply } => self.start_review(target, reply).await,
            Op::ApproveGuardianDenial { denial, reply } => {
                self.approve_guardian_denial(&denial);
                reply.send(Ok(())).await;
            }
            Op::ShellCommand { command, reply } => self.shell_command(command, reply).await,
            Op::GoalChanged { set, reply } => self.goal_changed(set, reply).await,
            Op::UpdateSettings { overrides, reply } => {
                self.update_settings(overrides, reply).await;
            }
            Op::Tools { reply } => {
                let _ = reply.send(Arc::clone(&self.tools));
            }
            Op::Flush { reply } => {
                let _ = self.flush_rollout(false).await;
                let _ = reply.send(());
            }
            Op::Idle { reply } => {
                let _ = reply.send(self.active.is_none().then_some(self.last_activity));
            }
            Op::Revert {
                before_turn_id,
                restore_workspace,
                reply,
            } => {
                let _ = reply.send(self.revert(before_turn_id, restore_workspace).await);
            }
            Op::InjectItems { items, reply } => {
                let _ = reply.send(self.inject_items(items).await);
            }
            Op::Shutdown { reply } => {
                self.wind_down().await;
                let _ = reply.send(());
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }

    /// The actor ends: its turn is interrupted, its tools stop and its rollout is closed (the
    /// manager forgets its mailbox once it has stopped).
    async fn wind_down(&mut self) {
        self.abort_active(TurnEnd::Interrupted).await;
        self.tools.shutdown().await;
        self.persistence
            .close(
                self.services.state.as_ref(),
                &self.thread,
                &self.history,
                &self.services.history_index,
            )
            .await;
    }

    pub(super) fn status(&self) -> ThreadStatus {
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
        // A running task holds the totals: its copy (docs/architecture.md §5.1).
        let usage = match &self.active {
            Some(active) => active.shared().token_usage(),
            None => *self.token_usage.lock(),
        };
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

    async fn set_name(&mut self, name: Option<String>) -> Result<(), CoreError> {
        if !self.persistence.is_persistent() {
            return Err(CoreError::EphemeralMetadata(self.thread.id.to_string()));
        }
        self.persistence.append(RolloutRecord::ThreadNameSet {
            name: name.clone().unwrap_or_default(),
        });
        self.thread.name = name;
        // The name is answered as set only once it is on disk.
        self.flush_rollout(true).await?;
        if let Some(state) = &self.services.state
            && let Err(err) = state
                .set_name(&self.thread.id, self.thread.name.as_deref())
                .await
        {
            tracing::warn!(thread = %self.thread.id, %err, "cannot index the thread name");
        }
        Ok(())
    }

    /// Flush the rollout (fsynced when `fsync`); a failure refuses new turns until a later
    /// flush succeeds.
    pub(super) async fn flush_rollout(&mut self, fsync: bool) -> Result<(), RolloutError> {
        self.persistence.flush(&self.thread.id, fsync).await
    }

    /// What a turn of the thread's current settings needs before it starts: a writable
    /// rollout (one that failed to write must take everything it holds first) and a
    /// configured provider.
    pub(super) async fn ready_for_turn(
        &mut self,
    ) -> Result<crate::model::provider::ProviderConfig, CoreError> {
        self.persistence.check_writable(&self.thread.id).await?;
        self.provider_config(&self.settings.model_provider.clone())
    }

    /// The provider `id` as the daemon's current config has it (a provider a client added or
    /// edited is used from the next turn on, docs/protocol.md §7.34), or `UnknownProvider`.
    pub(super) fn provider_config(
        &self,
        id: &str,
    ) -> Result<crate::model::provider::ProviderConfig, CoreError> {
        self.services
            .live
            .current()
            .provider(id)
            .cloned()
            .ok_or_else(|| CoreError::UnknownProvider(id.to_string()))
    }

    pub(super) async fn emit(&self, event: ThreadEvent) {
        self.sink.emit(&self.thread.id, event).await;
    }
}

//! The thread's actor: one tokio task per loaded thread owns the thread's state. Everyone else
//! holds a [`ThreadHandle`] and submits [`Op`]s; answers come back through [`Reply`](crate::events::Reply)s, which the
//! actor delivers *before* it emits anything that follows from the request.
//!
//! The actor depends on its [`Services`] and its handle's types, never on the manager that
//! spawns it. Starting a turn lives in `start`, ending one in `finish`, what the model is
//! told before each turn (instructions, environment) in `context`, and the pursuit of the
//! thread's goal (accounting, continuation turns) in `goal`.

mod context;
mod finish;
mod goal;
mod mail;
mod start;

#[cfg(test)]
mod tests;

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use weft_protocol::{
    NonSteerableTurnKind, Thread, ThreadStatus, ThreadTokenUsage, Turn, TurnId, TurnStatus,
};

use super::error::CoreError;
use super::handle::{Op, Restored, ThreadHandle, ThreadSnapshot};
use super::services::Services;
use crate::env_context::EnvironmentContext;
use crate::events::{SharedSink, ThreadEvent};
use crate::history::History;
use crate::rollout::{RolloutError, RolloutRecord, RolloutWriter};
use crate::settings::ThreadSettings;
use crate::tools::runtime::ToolRuntime;
use crate::turn::{TurnEnd, TurnShared};
use context::last_environment_in;

/// Capacity of a thread's op queue.
const OP_QUEUE_CAPACITY: usize = 64;

/// The running turn: its task and what the actor needs to finish it.
struct ActiveTurn {
    turn_id: TurnId,
    /// The turn's `rootTurnId`: its own id, or the parent turn whose tool started it.
    root_turn_id: TurnId,
    kind: Option<NonSteerableTurnKind>,
    cancel: CancellationToken,
    task: JoinHandle<TurnEnd>,
    shared: Arc<TurnShared>,
    started_at: i64,
    started: Instant,
    /// A goal's automatic continuation turn.
    continuation: bool,
    /// Ended by `turn/interrupt` (a user's interrupt pauses the goal; Weft's own do not).
    user_interrupt: bool,
    /// The turn's usage not yet counted toward the goal.
    goal_usage: Arc<crate::goals::GoalTurnUsage>,
}

/// The actor's state.
pub struct ThreadActor {
    thread: Thread,
    settings: ThreadSettings,
    services: Arc<Services>,
    sink: SharedSink,
    history: Arc<Mutex<History>>,
    token_usage: Arc<Mutex<ThreadTokenUsage>>,
    active: Option<ActiveTurn>,
    turns: Vec<Turn>,
    ops: mpsc::WeakSender<Box<Op>>,
    /// The environment context last recorded in history.
    last_environment: Option<EnvironmentContext>,
    /// Whether the instruction messages (developer, AGENTS.md) are in history.
    instructions_recorded: bool,
    /// The thread's tools (and what they keep running).
    tools: Arc<ToolRuntime>,
    /// The thread's rollout (none for an ephemeral thread).
    rollout: Option<RolloutWriter>,
    /// The last flush of the rollout failed: new turns are refused until one succeeds.
    rollout_failed: bool,
    /// The last update of the state DB's row failed: it may be behind the rollout.
    index_behind: bool,
    /// When the last turn ended or the thread was loaded (for idle unloading).
    last_activity: Instant,
    /// Automatic continuation turns since the last user input (docs/protocol.md §7.26).
    goal_turns: u32,
    /// Where the thread stands in its agent tree (docs/agents.md).
    place: crate::agents::TreePlace,
    /// Mail from the thread's agent tree.
    inbox: crate::agents::MailboxReceiver<crate::agents::AgentMail>,
    /// Mail received while idle that no turn has read yet, with whether it asks for one.
    mail_queue: Vec<(crate::model::ResponseItem, bool)>,
    /// The sender's turn of the latest mail that asks for a turn (the turn it starts gets it
    /// as `rootTurnId`).
    mail_root_turn: Option<TurnId>,
}

impl ThreadActor {
    /// Spawn the actor for a new thread and return its handle.
    pub fn spawn(
        thread: Thread,
        settings: ThreadSettings,
        services: Arc<Services>,
        sink: SharedSink,
        restored: Restored,
    ) -> ThreadHandle {
        let (tx, rx) = mpsc::channel(OP_QUEUE_CAPACITY);
        let handle = ThreadHandle::new(thread.id.clone(), tx.clone());
        let instructions_recorded = !restored.history.is_empty();
        let last_environment = last_environment_in(&restored.history, &settings);
        let tools =
            ToolRuntime::with_shell_environment(services.config.shell_environment_policy.clone());
        let (mailbox, inbox) = crate::agents::mailbox();
        services.agents.register_mailbox(&thread.id, mailbox);
        let place = restored
            .place
            .clone()
            .unwrap_or_else(|| crate::agents::TreePlace::root(&thread.id));
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
            rollout: restored.rollout,
            rollout_failed: false,
            index_behind: false,
            last_activity: Instant::now(),
            goal_turns: 0,
            place,
            inbox,
            mail_queue: Vec::new(),
            mail_root_turn: None,
        };
        drop(tx);
        // The thread outlives the request that loaded it, so its span has no parent: every
        // line the actor (and the turns it runs) logs carries `thread_id`, and nothing else.
        let span = tracing::info_span!(parent: None, "thread", thread_id = %actor.thread.id);
        tokio::spawn(Box::new(actor).run(rx).instrument(span));
        handle
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
                if self.active.as_ref().is_some_and(|a| a.turn_id == turn_id) {
                    self.finish_turn(None).await;
                }
            }
            Op::SetName { name, reply } => {
                let _ = reply.send(self.set_name(name).await);
            }
            Op::Compact { reply } => self.compact(reply).await,
            Op::GoalChanged { set, reply } => self.goal_changed(set, reply).await,
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
            Op::Shutdown { reply } => {
                self.wind_down().await;
                let _ = reply.send(());
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    }

    /// The actor ends: its turn is interrupted, its tools stop, its rollout is closed and its
    /// mailbox forgotten.
    async fn wind_down(&mut self) {
        self.abort_active(TurnEnd::Interrupted).await;
        self.tools.shutdown().await;
        self.close_rollout().await;
        self.services.agents.unregister_mailbox(&self.thread.id);
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

    async fn set_name(&mut self, name: Option<String>) -> Result<(), CoreError> {
        let Some(rollout) = &self.rollout else {
            return Err(CoreError::EphemeralMetadata(self.thread.id.to_string()));
        };
        rollout.append(RolloutRecord::ThreadNameSet {
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

    /// Flush the rollout (fsynced when `fsync`). A failure is remembered until a later flush
    /// succeeds (the writer keeps what it could not write and retries it each time).
    pub(super) async fn flush_rollout(&mut self, fsync: bool) -> Result<(), RolloutError> {
        let Some(rollout) = &self.rollout else {
            return Ok(());
        };
        let result = rollout.flush(fsync).await;
        if let Err(err) = &result {
            tracing::error!(thread = %self.thread.id, %err, "cannot write the rollout");
        }
        self.rollout_failed = result.is_err();
        result
    }

    /// Before a new turn: a rollout that failed to write must take everything it holds first.
    /// What a turn of the thread's current settings needs before it starts: a writable
    /// rollout and a configured provider.
    pub(super) async fn ready_for_turn(
        &mut self,
    ) -> Result<crate::model::provider::ProviderConfig, CoreError> {
        self.check_rollout_writable().await?;
        self.provider_config(&self.settings.model_provider.clone())
    }

    /// The provider `id`, or `UnknownProvider`.
    pub(super) fn provider_config(
        &self,
        id: &str,
    ) -> Result<crate::model::provider::ProviderConfig, CoreError> {
        self.services
            .config
            .provider(id)
            .cloned()
            .ok_or_else(|| CoreError::UnknownProvider(id.to_string()))
    }

    pub(super) async fn check_rollout_writable(&mut self) -> Result<(), CoreError> {
        if !self.rollout_failed {
            return Ok(());
        }
        self.flush_rollout(true)
            .await
            .map_err(|source| CoreError::RolloutNotWritable {
                thread: self.thread.id.to_string(),
                source,
            })
    }

    /// Close the rollout; once it is all on disk and the index row is updated, the row is
    /// marked level with the file again (a failure leaves it `dirty`, for the next start to
    /// re-index).
    async fn close_rollout(&mut self) {
        if self.rollout.is_none() {
            return;
        }
        // Every turn's end updates the row; only a failed update is left to redo.
        let indexed = !self.index_behind || self.index_thread().await;
        if let Some(rollout) = self.rollout.take() {
            self.history.lock().detach_journal();
            match rollout.close().await {
                Ok(()) if indexed => {
                    if let Some(state) = &self.services.state
                        && let Err(err) = state.set_dirty(&self.thread.id, false).await
                    {
                        tracing::warn!(thread = %self.thread.id, %err, "cannot mark the thread's index row");
                    }
                }
                Ok(()) => {}
                Err(err) => {
                    tracing::error!(thread = %self.thread.id, %err, "cannot close the rollout");
                }
            }
        }
    }

    /// Keep the state DB's row (updated time, preview) in step with the thread; `true` when
    /// the row is up to date (or there is none to keep).
    pub(super) async fn index_thread(&mut self) -> bool {
        let (Some(state), Some(_)) = (&self.services.state, &self.rollout) else {
            return true;
        };
        let mut indexed = true;
        if let Err(err) = state
            .touch(
                &self.thread.id,
                self.thread.updated_at,
                Some(self.thread.preview.as_str()),
            )
            .await
        {
            tracing::warn!(thread = %self.thread.id, %err, "cannot update the thread index");
            indexed = false;
        }
        if let Some(recency_at) = self.thread.recency_at
            && let Err(err) = state.touch_recency(&self.thread.id, recency_at).await
        {
            tracing::warn!(thread = %self.thread.id, %err, "cannot update the thread index");
            indexed = false;
        }
        self.index_behind = !indexed;
        indexed
    }

    pub(super) async fn emit(&self, event: ThreadEvent) {
        self.sink.emit(&self.thread.id, event).await;
    }
}

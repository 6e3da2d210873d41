//! Starting a task: routing submitted input (start, steer or refuse), a task that replaces
//! the running one (`thread/compact/start`), announcing a task's turn and spawning it (also for a goal's continuation turns, `goal.rs`,
//! and mail, `mail.rs`). Every kind goes through [`ThreadActor::launch_turn`]: what differs
//! between kinds is stated by the task (`crate::task`).

use std::sync::Arc;
use std::time::Instant;

use tokio_util::sync::CancellationToken;
use weft_protocol::{ThreadStatus, Turn, TurnId, UserInput};

use super::{ActiveTurn, ThreadActor};
use crate::collaboration;
use crate::compact::Window;
use crate::events::{Reply, ThreadEvent};
use crate::goals::GoalTurnUsage;
use crate::model::ModelClient;
use crate::rollout::{RolloutRecord, TurnContextRecord};
use crate::task::{RegularTask, RunningTask, ThreadTask};
use crate::thread::error::CoreError;
use crate::thread::handle::{InputMode, Op, Submitted, TurnOverrides};
use crate::time::{new_item_id, new_turn_id, now_secs};
use crate::tools::context::ToolTurn;
use crate::tools::offer::ToolOffer;
use crate::turn::{PendingInput, TurnContext, TurnEnd, TurnInput, TurnShared};

impl ThreadActor {
    pub(super) async fn submit(
        &mut self,
        input: Vec<UserInput>,
        mode: InputMode,
        overrides: TurnOverrides,
        client_id: Option<String>,
        reply: Reply<Result<Submitted, CoreError>>,
    ) {
        let mut overrides = match overrides
            .resolved()
            .and_then(|o| o.check_against(&self.settings).map(|()| o))
        {
            Ok(overrides) => overrides,
            Err(err) => {
                reply.send(Err(err)).await;
                return;
            }
        };
        if let Some(active) = &self.active {
            let outcome = match &mode {
                InputMode::StartIfIdle => Err(CoreError::Busy(active.turn_id().to_string())),
                InputMode::Steer { expected_turn_id } if expected_turn_id.is_empty() => {
                    Err(CoreError::EmptyExpectedTurnId)
                }
                InputMode::Steer { expected_turn_id }
                    if expected_turn_id.as_str() != active.turn_id().as_str() =>
                {
                    Err(CoreError::SteerTurnMismatch {
                        expected: expected_turn_id.clone(),
                        active: active.turn_id().to_string(),
                    })
                }
                _ if input.is_empty() => Err(CoreError::EmptyInput),
                _ => match active.task.kind().not_steerable() {
                    Some(kind) => Err(CoreError::NotSteerable(kind)),
                    None => Ok(()),
                },
            };
            if let Err(err) = outcome {
                reply.send(Err(err)).await;
                return;
            }
            overrides.apply(&mut self.settings);
            let turn_id = active.turn_id().clone();
            // User input: the goal's automatic turns start counting again.
            self.goal.user_input();
            // Answer first: the running turn may inject the input (and emit its userMessage
            // item) as soon as it is queued, and the answer must precede that.
            reply.send(Ok(Submitted::Steered(turn_id))).await;
            active.shared().push_pending(PendingInput {
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
        if let Err(err) = self.persistence.check_writable(&self.thread.id).await {
            reply.send(Err(err)).await;
            return;
        }
        let output_schema = overrides.output_schema.take();
        let root_turn_id = overrides.root_turn_id.take();
        // `turn/start` with `input: []` on an idle thread is accepted, as by the reference: a
        // turn with no userMessage item (docs/protocol.md §7.13).
        let mut settings = self.settings.clone();
        overrides.apply(&mut settings);
        let provider = match self.provider_config(&settings.model_provider) {
            Ok(provider) => provider,
            Err(err) => {
                reply.send(Err(err)).await;
                return;
            }
        };
        if settings != self.settings {
            // Before the response, as the reference sends it (docs/protocol.md §7.25).
            self.emit(ThreadEvent::SettingsChanged(Box::new(settings.clone())))
                .await;
        }
        self.settings = settings;
        self.goal.user_input();
        let mut turn = Turn::in_progress(new_turn_id(), None);
        if root_turn_id.is_some() {
            turn.root_turn_id = root_turn_id;
        }
        if self.thread.preview.is_empty() {
            self.thread.preview = preview_of(&input);
        }
        reply
            .send(Ok(Submitted::Started(Box::new(turn.clone()))))
            .await;
        let task = RegularTask::new(TurnInput::User(PendingInput {
            item_id: new_item_id(),
            input,
            client_id,
        }));
        self.launch_turn(turn, provider, Arc::new(task), output_schema)
            .await;
    }

    /// Announce the turn of a task that starts now — its start in the rollout, the context
    /// messages the model needs first (when the task asks for them), `thread/status/changed`
    /// and `turn/started` — and spawn the task. A request's reply has been sent already
    /// (docs/architecture.md §5.3).
    pub(super) async fn launch_turn(
        &mut self,
        turn: Turn,
        provider: crate::model::ProviderConfig,
        task: Arc<dyn ThreadTask>,
        output_schema: Option<serde_json::Value>,
    ) {
        let turn_id = turn.id.clone();
        let started_at = now_secs();
        let start = task.start();
        self.persistence.append(RolloutRecord::TurnStarted {
            turn_id: turn_id.clone(),
            started_at,
            context: TurnContextRecord::from_settings(&self.settings),
        });
        if start.records_context {
            self.record_context();
        }
        self.thread.updated_at = started_at;
        // A continuation turn is not the user's activity.
        if !start.continuation {
            self.thread.recency_at = Some(started_at);
        }
        self.emit(ThreadEvent::StatusChanged(ThreadStatus::active()))
            .await;
        let mut started = turn;
        started.started_at = Some(started_at);
        let root_turn_id = started
            .root_turn_id
            .clone()
            .unwrap_or_else(|| turn_id.clone());
        self.emit(ThreadEvent::TurnStarted(started)).await;
        self.spawn_task(
            turn_id,
            root_turn_id,
            provider,
            task,
            started_at,
            output_schema,
        );
    }

    /// Start a task that replaces the running one (`thread/compact/start` starts a
    /// [`CompactTask`](crate::task::CompactTask)): answered at once; a running turn completes as interrupted, then the
    /// task runs as a turn of its own. Any kind starts this way; nothing here depends on it.
    pub(super) async fn start_task(
        &mut self,
        task: Arc<dyn ThreadTask>,
        reply: Reply<Result<(), CoreError>>,
    ) {
        let provider = match self.ready_for_turn().await {
            Ok(provider) => provider,
            Err(err) => {
                reply.send(Err(err)).await;
                return;
            }
        };
        reply.send(Ok(())).await;
        self.abort_active(TurnEnd::Interrupted).await;
        let turn = Turn::in_progress(new_turn_id(), None);
        self.launch_turn(turn, provider, task, None).await;
    }

    /// Freeze the context the task runs with (docs/architecture.md §6.2), lend it the thread's
    /// history (§5.1) and spawn it as the current task.
    fn spawn_task(
        &mut self,
        turn_id: TurnId,
        root_turn_id: TurnId,
        provider: crate::model::ProviderConfig,
        task: Arc<dyn ThreadTask>,
        started_at: i64,
        output_schema: Option<serde_json::Value>,
    ) {
        let goal_usage = GoalTurnUsage::new(self.token_usage.clone());
        let cancel = CancellationToken::new();
        let shared = Arc::new(TurnShared::new(*self.token_usage.lock()));
        // Mail that came while the thread was idle is read at the turn's first step.
        self.inbox.hand_to(&shared);
        let stream_max_retries = provider.stream_max_retries;
        // Per model: the catalog's answer unless config or a client switched it
        // (docs/architecture.md §7.7).
        let tool_search = crate::model::catalog::tool_search(
            &self.services.live.current(),
            self.services.live.tool_search_switch(),
            &provider,
            &self.settings.model,
        );
        let mut tool_turn = ToolTurn {
            thread_id: self.thread.id.clone(),
            turn_id: turn_id.clone(),
            sink: self.sink.clone(),
            cancel: cancel.clone(),
            cwd: self.settings.cwd.clone(),
            approval_policy: self.settings.approval_policy,
            sandbox: collaboration::turn_sandbox(
                self.settings.collaboration_mode.as_ref(),
                &self.settings.sandbox,
            ),
            reviewer: self.guardian(&provider),
            ghost: None,
        };
        // The turn's ghost snapshot, which its mutating calls wait for (§5.5).
        tool_turn.ghost = crate::task::GhostSnapshotTask::for_turn(
            &self.services.config,
            &self.sink,
            &self.thread.id,
            &turn_id,
            &tool_turn.cwd,
            &tool_turn.sandbox,
            self.persistence.writer(),
        );
        let plan_mode = collaboration::is_plan(self.settings.collaboration_mode.as_ref());
        let offer = ToolOffer {
            plan_mode,
            plan_collaboration: plan_mode,
            user_input: self.settings.collaboration_mode.is_some(),
            dynamic_tools: Arc::new(self.settings.dynamic_tools.clone()),
            mcp: Arc::clone(&self.services.mcp),
            goals: self.goal.tools(&goal_usage),
            agents: self.agent_caller(&turn_id, tool_search),
        };
        // Plan mode's proposed plan (docs/protocol.md §7.25); a read-only task is no plan turn.
        let proposed_plans = offer.plan_mode && !task.read_only();
        // A task that runs read-only whatever the thread's sandbox (a review, §5.5).
        let (tool_turn, offer) = if task.read_only() {
            super::review::read_only_tools(tool_turn)
        } else {
            (tool_turn, offer)
        };
        // `model_context_window`, else what the catalog knows of the model (§7.7).
        let context_window =
            crate::model::catalog::context_window(&self.services.config, &self.settings.model);
        let mut step = self.step_prompt();
        step.output_schema = output_schema;
        step.headers = self.agent_headers(&turn_id, &root_turn_id);
        let tools = self.tools.tool_set(&offer, &tool_turn);
        let mut specs = tools.specs();
        // Namespaces flat for a model known not to read them (docs/architecture.md §7.7).
        if crate::model::catalog::flat_tools(&self.services.config, &provider, &self.settings.model)
        {
            specs = crate::model::catalog::flatten_namespaces(specs);
        }
        step.tools = self.services.tool_specs.share(specs);
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
            context_window: context_window.and_then(|w| i64::try_from(w).ok()),
            rollout: self.persistence.writer().cloned(),
            window: Window::new(
                context_window,
                self.services.config.model_auto_compact_token_limit,
            ),
            environment: self.environment(),
            tools,
            offer,
            tool_turn,
            tool_search,
            proposed_plans,
        };
        let ops = self.ops.clone();
        let finished_id = turn_id.clone();
        // A child of the actor's `thread` span (current here), with both ids of its own.
        let span = tracing::info_span!(
            "turn",
            thread_id = %self.thread.id,
            turn_id = %turn_id,
            task = task.span_name(),
        );
        let then = async move {
            if let Some(ops) = ops.upgrade() {
                let _ = ops
                    .send(Box::new(Op::TurnFinished {
                        turn_id: finished_id,
                    }))
                    .await;
            }
        };
        self.active = Some(ActiveTurn {
            task: RunningTask::spawn(task, ctx, span, then),
            root_turn_id,
            started_at,
            started: Instant::now(),
            user_interrupt: false,
            goal_usage,
        });
    }
}

impl ThreadActor {
    /// The headers a sub-agent's model requests carry, as the reference's (providers that
    /// bill or trace by them see a familiar shape; docs/agents.md §7): none for a root.
    fn agent_headers(&self, turn_id: &TurnId, root_turn_id: &TurnId) -> Vec<(String, String)> {
        let Some(parent) = &self.place.parent else {
            return Vec::new();
        };
        let root = self.place.root.to_string();
        let mut metadata = serde_json::json!({
            "session_id": root,
            "thread_id": self.thread.id.to_string(),
            "turn_id": turn_id.to_string(),
            "parent_thread_id": parent.to_string(),
            "subagent_kind": "thread_spawn",
            "thread_source": "subagent",
            "agent_name": self.place.path.clone().unwrap_or_else(|| crate::agents::ROOT_PATH.to_string()),
        });
        // A turn its parent's tools started carries the parent's turn.
        if root_turn_id != turn_id {
            metadata["parent_turn_id"] = serde_json::json!(root_turn_id.to_string());
        }
        vec![
            ("x-openai-subagent".into(), "collab_spawn".into()),
            ("session-id".into(), root),
            ("thread-id".into(), self.thread.id.to_string()),
            ("x-codex-turn-metadata".into(), metadata.to_string()),
        ]
    }

    /// The calling agent a turn's multi-agent tools act for; `None` when they are off or the
    /// daemon has not shared its manager (unit tests of the runtime).
    fn agent_caller(
        &self,
        turn_id: &TurnId,
        tool_search: bool,
    ) -> Option<crate::agents::AgentCaller> {
        let hub = &self.services.agents;
        if hub.surface == crate::config::AgentSurface::Off || !hub.attached() {
            return None;
        }
        Some(crate::agents::AgentCaller {
            hub: Arc::clone(hub),
            thread_id: self.thread.id.clone(),
            turn_id: turn_id.clone(),
            place: self.place.clone(),
            settings: self.settings.clone(),
            ephemeral: self.thread.ephemeral,
            history: self.history.clone(),
            tool_search,
        })
    }
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

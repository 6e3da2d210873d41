//! One turn, in three layers (docs/architecture.md §6.1), each deciding only its own question:
//!
//! 1. [`run_task`] — the task shell: "is this task still alive?" Emits `turn/started` once and
//!    re-enters the turn loop while steered input is pending.
//! 2. [`run_turn`] — the turn loop: "should we sample again?" Drains pending input at step
//!    boundaries, samples, and runs the stop hooks when the model is done.
//! 3. [`sampling::sample`] — one sampling step: "has this stream ended?" Streams the model's
//!    response into items, retries retryable failures, and abandons the response when input is
//!    steered in while the model is still talking.
//!
//! Around the loop: `input.rs` records user input and hook prompts, `compaction.rs` drives
//! compaction (the pure rebuild is [`crate::compact`]), `shared.rs` is what the thread's actor
//! sees of a running turn, `open_items.rs` owns the turn's items (every item started is
//! completed exactly once), and `item_sink.rs` routes the turn's and its tools' events through
//! that owner.

mod compaction;
mod input;
mod item_sink;
mod open_items;
mod plan_stream;
mod proposed_plan;
mod review;
mod sampling;
mod shared;

use std::sync::Arc;

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;
use weft_protocol::{
    ThreadId, ThreadItem, ThreadTokenUsage, TokenUsageBreakdown, TurnError, TurnId,
};

use crate::compact::{Placement, Window};
use crate::env_context::EnvironmentContext;
use crate::events::{SharedSink, ThreadEvent};
use crate::history::History;
use crate::hooks::{StopHookConfig, StopHookDecision, StopHookInput, run_stop_hooks};
use crate::model::{ModelClient, Prompt, TokenUsage};
use crate::rollout::{RolloutRecord, RolloutWriter};
use crate::time::now_ms;
use crate::tools::context::ToolTurn;
use crate::tools::offer::ToolOffer;
use crate::tools::tool::ToolSet;

pub use review::{exit_review, run_review};
pub use shared::{PendingInput, TurnShared};

/// What a turn starts with.
#[derive(Debug, Clone)]
pub enum TurnInput {
    /// User input (`turn/start`; may be empty: then there is no userMessage item).
    User(PendingInput),
    /// A goal's continuation message (docs/protocol.md §7.26): a user message for the model,
    /// no item for the client.
    Goal(String),
}

/// What a turn needs to run. Frozen when the turn starts (docs/architecture.md §6.2).
pub struct TurnContext {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
    /// The model client for this turn's provider.
    pub client: ModelClient,
    /// The step context: what the model is asked with (instructions, tools, model settings).
    pub step: Prompt,
    /// `[[hooks.stop]]`.
    pub stop_hooks: Arc<Vec<StopHookConfig>>,
    /// Working directory (for hooks).
    pub cwd: std::path::PathBuf,
    /// Where events go.
    pub sink: SharedSink,
    /// The thread's model-facing history, lent by the actor for the task's run: while the
    /// task runs, only the task (its loop, sampling and tool calls) locks it
    /// (docs/architecture.md §5.1).
    pub history: Arc<Mutex<History>>,
    /// Token totals of the thread, lent as the history is; the actor reads the task's
    /// copy in [`TurnShared::token_usage`] while it runs.
    pub token_usage: Arc<Mutex<ThreadTokenUsage>>,
    /// State shared with the actor.
    pub shared: Arc<TurnShared>,
    /// Cancelled by `turn/interrupt`.
    pub cancel: CancellationToken,
    /// Retries of a failed sampling request.
    pub stream_max_retries: u32,
    /// The model's context window, when known (reported with token usage).
    pub context_window: Option<i64>,
    /// The thread's rollout (none for an ephemeral thread).
    pub rollout: Option<RolloutWriter>,
    /// When to compact.
    pub window: Window,
    /// The environment context as of this turn (put in full into a compacted history).
    pub environment: EnvironmentContext,
    /// The turn's tools: what the model is shown and what serves its calls.
    pub tools: Arc<ToolSet>,
    /// What the turn offers, family by family (MCP servers, goals, agents, …).
    pub offer: ToolOffer,
    /// What tool calls of this turn run with.
    pub tool_turn: ToolTurn,
    /// MCP tools are deferred behind `tool_search` (`[features] tool_search` on a Responses
    /// provider, docs/mcp.md §4).
    pub tool_search: bool,
    /// Plan mode: the model's `<proposed_plan>` blocks become `plan` items
    /// (docs/protocol.md §7.25, `turn/plan_stream.rs`).
    pub proposed_plans: bool,
}

/// How a turn ended.
#[derive(Debug, Clone)]
pub enum TurnEnd {
    /// The model is done and no hook asked for more.
    Completed,
    /// Cancelled by the user.
    Interrupted,
    /// A failure that retries did not fix.
    Failed(TurnError),
}

/// Why sampling stopped early.
enum Stop {
    /// Cancelled.
    Aborted,
    /// Fatal error for this turn.
    Failed(TurnError),
}

/// Layer 1: the task shell (the regular task's run, `task/regular.rs`).
pub async fn run_task(ctx: &TurnContext, initial: TurnInput) -> TurnEnd {
    // The window is already over the limit: compact before the new input joins the history.
    if ctx.window.reached(estimated_tokens(ctx)) {
        match compaction::compact(ctx, Placement::End).await {
            Ok(()) => {}
            Err(Stop::Aborted) => return TurnEnd::Interrupted,
            Err(Stop::Failed(error)) => return TurnEnd::Failed(error),
        }
    }
    // The first step offers the MCP servers that are up: wait for those still starting.
    tokio::select! {
        () = ctx.offer.mcp.settle() => {}
        () = ctx.cancel.cancelled() => return TurnEnd::Interrupted,
    }
    match initial {
        // `turn/start` may come with no input at all: then there is no userMessage item.
        TurnInput::User(initial) if initial.input.is_empty() => {}
        TurnInput::User(initial) => input::record_user_input(ctx, initial).await,
        TurnInput::Goal(text) => ctx
            .history
            .lock()
            .record(crate::model::ResponseItem::user_text(text)),
    }
    loop {
        match run_turn(ctx).await {
            Err(Stop::Aborted) => return TurnEnd::Interrupted,
            Err(Stop::Failed(error)) => return TurnEnd::Failed(error),
            Ok(()) => {
                if ctx.cancel.is_cancelled() {
                    return TurnEnd::Interrupted;
                }
                if !ctx.shared.has_pending() {
                    return TurnEnd::Completed;
                }
            }
        }
    }
}

/// A manual compaction (`thread/compact/start`): the compaction task's run (`task/compact.rs`).
pub async fn run_compact_task(ctx: &TurnContext) -> TurnEnd {
    match compaction::compact(ctx, Placement::End).await {
        Ok(()) if ctx.cancel.is_cancelled() => TurnEnd::Interrupted,
        Ok(()) => TurnEnd::Completed,
        Err(Stop::Aborted) => TurnEnd::Interrupted,
        Err(Stop::Failed(error)) => TurnEnd::Failed(error),
    }
}

/// Layer 2: the turn loop.
async fn run_turn(ctx: &TurnContext) -> Result<(), Stop> {
    let mut stop_hook_active = false;
    loop {
        for pending in ctx.shared.take_pending() {
            input::record_user_input(ctx, pending).await;
        }
        for note in ctx.shared.take_notes() {
            ctx.history
                .lock()
                .record(crate::model::ResponseItem::user_text(note));
        }
        // What was handed to the turn before the mail is taken: the mail the model has read
        // once it is recorded (v2's `wait_agent` waits only when nothing is unread).
        let mailbox = ctx
            .offer
            .agents
            .as_ref()
            .and_then(|caller| caller.hub.mailbox(&caller.thread_id));
        let handed = mailbox.as_ref().map(crate::agents::Mailbox::handed);
        for mail in ctx.shared.take_mail() {
            ctx.history.lock().record(mail);
        }
        if let (Some(mailbox), Some(handed)) = (mailbox, handed) {
            mailbox.mark_read(handed);
        }
        if ctx.cancel.is_cancelled() {
            return Err(Stop::Aborted);
        }
        let model_needs_follow_up = sampling::sample(ctx).await?;
        let needs_follow_up = model_needs_follow_up || ctx.shared.has_pending();
        if needs_follow_up {
            if ctx.window.reached(estimated_tokens(ctx)) {
                compaction::compact(ctx, Placement::MidTurn).await?;
            }
            continue;
        }
        if ctx.stop_hooks.is_empty() {
            return Ok(());
        }
        let input = StopHookInput {
            thread_id: ctx.thread_id.to_string(),
            turn_id: ctx.turn_id.to_string(),
            cwd: ctx.cwd.clone(),
            last_agent_message: ctx.shared.last_agent_message(),
            stop_hook_active,
        };
        let outcome = run_stop_hooks(&ctx.stop_hooks, &input, &ctx.cancel).await;
        if ctx.cancel.is_cancelled() {
            return Err(Stop::Aborted);
        }
        for warning in outcome.warnings {
            ctx.sink
                .emit(
                    &ctx.thread_id,
                    ThreadEvent::Warning {
                        turn_id: Some(ctx.turn_id.clone()),
                        message: warning,
                    },
                )
                .await;
        }
        match outcome.decision {
            StopHookDecision::Allow | StopHookDecision::Stop { .. } => return Ok(()),
            StopHookDecision::Continue { prompts } => {
                stop_hook_active = true;
                input::record_hook_prompt(ctx, prompts).await;
            }
        }
    }
}

fn estimated_tokens(ctx: &TurnContext) -> u64 {
    ctx.history.lock().estimated_tokens()
}

/// Send one of the turn's events, noting it among the turn's items first.
async fn emit(ctx: &TurnContext, event: ThreadEvent) {
    if item_sink::record(&ctx.shared, &ctx.turn_id, ctx.rollout.as_ref(), &event) {
        ctx.sink.emit(&ctx.thread_id, event).await;
    }
}

/// Start an item: among the turn's items, to the client.
async fn start_item(ctx: &TurnContext, item: ThreadItem) {
    emit(
        ctx,
        ThreadEvent::ItemStarted {
            turn_id: ctx.turn_id.clone(),
            item,
        },
    )
    .await;
}

/// Complete an item: among the turn's items, in the rollout, to the client.
async fn complete_item(ctx: &TurnContext, item: ThreadItem) {
    emit(
        ctx,
        ThreadEvent::ItemCompleted {
            turn_id: ctx.turn_id.clone(),
            item,
        },
    )
    .await;
}

/// Start an item and complete it at once (user input, hook prompts).
async fn start_and_complete(ctx: &TurnContext, mut item: ThreadItem, started: i64) {
    item.started_at_ms = Some(started);
    start_item(ctx, item.clone()).await;
    item.completed_at_ms = Some(now_ms());
    complete_item(ctx, item).await;
}

/// Add a response's usage to the thread's totals and report them.
async fn report_usage(ctx: &TurnContext, usage: &TokenUsage) {
    let last = TokenUsageBreakdown {
        total_tokens: usage.total_tokens,
        input_tokens: usage.input_tokens,
        cached_input_tokens: usage.cached_input_tokens,
        cache_write_input_tokens: 0,
        output_tokens: usage.output_tokens,
        reasoning_output_tokens: usage.reasoning_output_tokens,
    };
    ctx.history
        .lock()
        .mark_reported(u64::try_from(usage.total_tokens).unwrap_or_default());
    let snapshot = {
        let mut totals = ctx.token_usage.lock();
        totals.total.add(&last);
        totals.last = last;
        totals.model_context_window = ctx.context_window;
        *totals
    };
    // What the actor reads while the turn runs (docs/architecture.md §5.1).
    ctx.shared.set_token_usage(snapshot);
    if let Some(rollout) = &ctx.rollout {
        rollout.append(RolloutRecord::TokenUsage(snapshot));
    }
    emit(
        ctx,
        ThreadEvent::TokenUsage {
            turn_id: ctx.turn_id.clone(),
            usage: snapshot,
        },
    )
    .await;
}

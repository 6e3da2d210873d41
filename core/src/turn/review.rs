//! The review task's run (`task/review.rs`, docs/protocol.md §7.28). A review is a
//! conversation of its own: the reviewer's instructions instead of the thread's, a history of
//! its own (the environment, the diff gathered up front, then the request naming the target,
//! which is the turn's `userMessage` item), the turn's read-only tools, its own token usage. Its events reach the thread's turn as a
//! sub-conversation's do in the reference: every item and delta passes into the thread's
//! turn (its open items, its rollout, its clients) except the reviewer's own messages, which
//! are replaced by the rendered review. The thread's history gets only the outcome: what the
//! user asked for and what the reviewer found, as a user message, and the rendered review as
//! the assistant's, so the next turn can act on it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::future::BoxFuture;
use parking_lot::Mutex;
use weft_protocol::{
    AgentMessageItem, ReviewModeItem, ReviewTarget, ThreadId, ThreadItem, ThreadItemDetails,
    ThreadTokenUsage, UserInput,
};

use super::{
    PendingInput, TurnContext, TurnEnd, TurnInput, TurnShared, item_sink, run_task,
    start_and_complete,
};
use crate::config::ReviewConfig;
use crate::env_context::EnvironmentContext;
use crate::events::{
    EventSink, ServerRequestOutcome, ServerRequestParams, SharedSink, ThreadEvent,
};
use crate::history::History;
use crate::model::{Prompt, ResponseItem, Role};
use crate::review::{
    INTERRUPTED_ASSISTANT_MESSAGE, REVIEW_FALLBACK_MESSAGE, REVIEW_INSTRUCTIONS, ReviewOutput,
    collect_diff, interrupted_user_action, parse_review_output, review_prompt, success_user_action,
    user_facing_hint,
};
use crate::time::{new_item_id, now_ms};

/// Run a review of `target` as the turn of `ctx`. Returns how the turn ended; the review's
/// end (`exitedReviewMode` and what the thread's history is told) is recorded here unless the
/// review was interrupted, which the task's abort records ([`exit_review`] with `None`).
pub async fn run_review(
    ctx: &TurnContext,
    target: &ReviewTarget,
    config: &ReviewConfig,
    model: Option<&str>,
    exited: &AtomicBool,
) -> TurnEnd {
    let entered = ReviewModeItem {
        id: new_item_id(),
        review: user_facing_hint(target),
    };
    start_and_complete(
        ctx,
        ThreadItem::new(ThreadItemDetails::EnteredReviewMode(entered)),
        now_ms(),
    )
    .await;
    let diff = tokio::select! {
        diff = collect_diff(target, &ctx.cwd, config) => diff,
        () = ctx.cancel.cancelled() => return TurnEnd::Interrupted,
    };
    let reviewer = reviewer_context(ctx, model);
    {
        // What the reviewer gets before the request, without items: where it runs, the diff.
        let environment = EnvironmentContext::capture(ctx.cwd.clone(), "never", "read-only");
        let mut history = reviewer.history.lock();
        history.record(ResponseItem::user_text(environment.render()));
        if let Some(diff) = &diff {
            history.record(ResponseItem::user_text(diff.render()));
        }
    }
    // The request is the reviewer's user message, an item of the turn as in the reference.
    let request = PendingInput {
        item_id: new_item_id(),
        input: vec![UserInput::text(review_prompt(target))],
        client_id: None,
    };
    let end = run_task(&reviewer, TurnInput::User(request)).await;
    match end {
        TurnEnd::Completed => {
            let answer = reviewer.shared.last_agent_message().unwrap_or_default();
            exit_review(ctx, Some(parse_review_output(&answer)), exited).await;
            TurnEnd::Completed
        }
        TurnEnd::Interrupted => TurnEnd::Interrupted,
        TurnEnd::Failed(error) => {
            exit_review(ctx, None, exited).await;
            TurnEnd::Failed(error)
        }
    }
}

/// End review mode: `exitedReviewMode` with the rendered review (the fallback text when there
/// is none: interrupted or failed), the thread's history told the outcome, and the rendered
/// review (or the interruption notice) as the turn's agent message. Once per review: the
/// first call sets `exited`, a later one (an abort racing the end) does nothing.
pub async fn exit_review(ctx: &TurnContext, output: Option<ReviewOutput>, exited: &AtomicBool) {
    if exited.swap(true, Ordering::SeqCst) {
        return;
    }
    let (told, review, message) = match &output {
        Some(output) => {
            let rendered = output.render();
            (success_user_action(output), rendered.clone(), rendered)
        }
        None => (
            interrupted_user_action(),
            REVIEW_FALLBACK_MESSAGE.to_string(),
            INTERRUPTED_ASSISTANT_MESSAGE.to_string(),
        ),
    };
    ctx.history.lock().record(ResponseItem::user_text(told));
    let exited = ReviewModeItem {
        id: new_item_id(),
        review,
    };
    start_and_complete(
        ctx,
        ThreadItem::new(ThreadItemDetails::ExitedReviewMode(exited)),
        now_ms(),
    )
    .await;
    ctx.history
        .lock()
        .record(ResponseItem::text_message(Role::Assistant, message.clone()));
    ctx.shared.set_last_agent_message(message.clone());
    let item = ThreadItem::new(ThreadItemDetails::AgentMessage(AgentMessageItem::new(
        format!("msg_{}", new_item_id()),
        message,
    )));
    start_and_complete(ctx, item, now_ms()).await;
}

/// The reviewer's conversation: the turn's provider, tools, cancellation and clients, with the
/// reviewer's instructions and model (`review_model`, else the turn's), an empty history of
/// its own (not journalled), no stop hooks, and a sink that passes its events into the
/// thread's turn ([`IntoTurn`]).
fn reviewer_context(ctx: &TurnContext, model: Option<&str>) -> TurnContext {
    let step = Prompt {
        model: model.map_or_else(|| ctx.step.model.clone(), str::to_string),
        instructions: REVIEW_INSTRUCTIONS.into(),
        output_schema: None,
        ..ctx.step.clone()
    };
    let sink: SharedSink = Arc::new(IntoTurn {
        inner: ctx.sink.clone(),
        shared: ctx.shared.clone(),
        turn_id: ctx.turn_id.clone(),
        rollout: ctx.rollout.clone(),
    });
    TurnContext {
        thread_id: ctx.thread_id.clone(),
        turn_id: ctx.turn_id.clone(),
        client: ctx.client.clone(),
        step,
        stop_hooks: Arc::new(Vec::new()),
        cwd: ctx.cwd.clone(),
        sink,
        history: Arc::new(Mutex::new(History::new())),
        // The reviewer's usage is its own, not the thread's (as the reference counts it).
        token_usage: Arc::new(Mutex::new(ThreadTokenUsage::default())),
        shared: Arc::new(TurnShared::new(ThreadTokenUsage::default())),
        cancel: ctx.cancel.clone(),
        stream_max_retries: ctx.stream_max_retries,
        context_window: ctx.context_window,
        rollout: None,
        window: ctx.window,
        environment: ctx.environment.clone(),
        tools: ctx.tools.clone(),
        offer: ctx.offer.clone(),
        tool_turn: ctx.tool_turn.clone(),
        tool_search: false,
        proposed_plans: false,
    }
}

/// Passes the reviewer's events into the thread's turn — noted among its items and in its
/// rollout ([`item_sink::record`]), then to its clients — except the reviewer's own agent
/// messages and their deltas, and its token usage (not the thread's).
struct IntoTurn {
    inner: SharedSink,
    shared: Arc<TurnShared>,
    turn_id: weft_protocol::TurnId,
    rollout: Option<crate::rollout::RolloutWriter>,
}

/// What of the reviewer's stays with it.
fn is_reviewer_message(event: &ThreadEvent) -> bool {
    match event {
        ThreadEvent::ItemStarted { item, .. } | ThreadEvent::ItemCompleted { item, .. } => {
            matches!(item.details, ThreadItemDetails::AgentMessage(_))
        }
        ThreadEvent::AgentMessageDelta { .. } | ThreadEvent::TokenUsage { .. } => true,
        _ => false,
    }
}

impl EventSink for IntoTurn {
    fn emit<'a>(&'a self, thread: &'a ThreadId, event: ThreadEvent) -> BoxFuture<'a, ()> {
        if is_reviewer_message(&event) {
            return Box::pin(std::future::ready(()));
        }
        if !item_sink::record(&self.shared, &self.turn_id, self.rollout.as_ref(), &event) {
            return Box::pin(std::future::ready(()));
        }
        self.inner.emit(thread, event)
    }

    fn request<'a>(
        &'a self,
        thread: &'a ThreadId,
        params: ServerRequestParams,
    ) -> BoxFuture<'a, ServerRequestOutcome> {
        self.inner.request(thread, params)
    }
}

//! One turn, in three layers (runtime.md §4), each deciding only its own question:
//!
//! 1. [`run_task`] — the task shell: "is this task still alive?" Emits `turn/started` once and
//!    re-enters the turn loop while steered input is pending.
//! 2. [`run_turn`] — the turn loop: "should we sample again?" Drains pending input at step
//!    boundaries, samples, and runs the stop hooks when the model is done.
//! 3. [`sample`] — one sampling step: "has this stream ended?" Streams the model's response
//!    into items, retries retryable failures, and abandons the response when input is steered
//!    in while the model is still talking.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use weft_protocol::{
    AgentMessageItem, CodexErrorInfo, CommandExecutionStatus,
    HookPromptFragment as WireHookFragment, HookPromptItem, ItemId, PatchApplyStatus,
    ReasoningItem, ThreadId, ThreadItem, ThreadItemDetails, ThreadTokenUsage, TokenUsageBreakdown,
    TurnError, TurnId, UserInput, UserMessageItem,
};

use crate::compact::{
    Placement, Window, collect_summary, compaction_error, compaction_item, rebuild, summary_prompt,
    summary_text, trimmed_for_summary,
};
use crate::env_context::EnvironmentContext;
use crate::events::{SharedSink, ThreadEvent};
use crate::history::History;
use crate::hooks::{StopHookConfig, StopHookDecision, StopHookInput, run_stop_hooks};
use crate::model::{
    ContentItem, ModelClient, ModelError, Prompt, ResponseEvent, ResponseItem, TokenUsage,
};
use crate::rollout::{RolloutRecord, RolloutWriter};
use crate::time::{new_item_id, now_ms};
use crate::tools::runtime::{ToolCall, ToolRuntime, ToolTurn};

/// User input waiting to enter the running turn at the next step boundary.
#[derive(Debug, Clone)]
pub struct PendingInput {
    /// The `userMessage` item id minted for it.
    pub item_id: ItemId,
    /// What the user sent.
    pub input: Vec<UserInput>,
    /// `clientUserMessageId`, echoed as the item's `clientId`.
    pub client_id: Option<String>,
}

/// State shared between a running turn and its thread's actor.
#[derive(Debug, Default)]
pub struct TurnShared {
    pending: Mutex<VecDeque<PendingInput>>,
    steered: Notify,
    items: Mutex<Vec<ThreadItem>>,
    /// Items started and not completed yet (so an aborted task's items can still be
    /// completed by the actor).
    open: Mutex<Vec<ThreadItem>>,
    last_agent_message: Mutex<Option<String>>,
}

impl TurnShared {
    /// Queue steered input and wake the turn.
    pub fn push_pending(&self, input: PendingInput) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.push_back(input);
        }
        self.steered.notify_one();
    }

    /// Whether input is waiting.
    pub fn has_pending(&self) -> bool {
        self.pending.lock().is_ok_and(|p| !p.is_empty())
    }

    /// Take all waiting input.
    pub fn take_pending(&self) -> Vec<PendingInput> {
        self.pending
            .lock()
            .map(|mut p| p.drain(..).collect())
            .unwrap_or_default()
    }

    /// The items the turn has completed so far, in completion order.
    pub fn completed_items(&self) -> Vec<ThreadItem> {
        self.items.lock().map(|i| i.clone()).unwrap_or_default()
    }

    /// The last agent message's text.
    pub fn last_agent_message(&self) -> Option<String> {
        self.last_agent_message.lock().ok().and_then(|m| m.clone())
    }

    fn push_item(&self, item: ThreadItem) {
        if let Ok(mut open) = self.open.lock() {
            open.retain(|o| o.id() != item.id());
        }
        if let Ok(mut items) = self.items.lock() {
            items.push(item);
        }
    }

    /// Note an item the client was told has started, and the text streamed into an agent
    /// message since.
    fn track_started(&self, event: &ThreadEvent) {
        match event {
            ThreadEvent::ItemStarted { item, .. } => {
                if let Ok(mut open) = self.open.lock() {
                    open.push(item.clone());
                }
            }
            ThreadEvent::AgentMessageDelta { item_id, delta, .. } => {
                if let Ok(mut open) = self.open.lock()
                    && let Some(ThreadItemDetails::AgentMessage(message)) = open
                        .iter_mut()
                        .rev()
                        .map(|item| &mut item.details)
                        .find(|details| details.id().as_str() == item_id.as_str())
                {
                    message.text.push_str(delta);
                }
            }
            _ => {}
        }
    }

    /// Items that were started and never completed (the task was aborted), as they should
    /// complete: commands and file changes `failed`. Also counted among the turn's items.
    pub fn complete_abandoned(&self, completed_at_ms: i64) -> Vec<ThreadItem> {
        let open = self
            .open
            .lock()
            .map(|mut open| std::mem::take(&mut *open))
            .unwrap_or_default();
        let mut done = Vec::with_capacity(open.len());
        for mut item in open {
            match &mut item.details {
                ThreadItemDetails::CommandExecution(command) => {
                    command.status = CommandExecutionStatus::Failed;
                }
                ThreadItemDetails::FileChange(change) => {
                    change.status = PatchApplyStatus::Failed;
                }
                _ => {}
            }
            item.completed_at_ms = Some(completed_at_ms);
            if let Ok(mut items) = self.items.lock() {
                items.push(item.clone());
            }
            done.push(item);
        }
        done
    }
}

/// What a turn needs to run. Frozen when the turn starts (runtime.md §5).
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
    /// The thread's model-facing history.
    pub history: Arc<Mutex<History>>,
    /// Token totals of the thread.
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
    /// The thread's tools.
    pub tools: Arc<ToolRuntime>,
    /// What tool calls of this turn run with.
    pub tool_turn: ToolTurn,
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

/// Layer 1: the task shell.
pub async fn run_task(ctx: TurnContext, initial: PendingInput) -> TurnEnd {
    // The window is already over the limit: compact before the new input joins the history.
    if ctx.window.reached(estimated_tokens(&ctx)) {
        match compact(&ctx, Placement::End).await {
            Ok(()) => {}
            Err(Stop::Aborted) => return TurnEnd::Interrupted,
            Err(Stop::Failed(error)) => return TurnEnd::Failed(error),
        }
    }
    // `turn/start` may come with no input at all: then there is no userMessage item.
    if !initial.input.is_empty() {
        record_user_input(&ctx, initial).await;
    }
    loop {
        match run_turn(&ctx).await {
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

/// A manual compaction (`thread/compact/start`): a task of its own.
pub async fn run_compact_task(ctx: TurnContext) -> TurnEnd {
    match compact(&ctx, Placement::End).await {
        Ok(()) if ctx.cancel.is_cancelled() => TurnEnd::Interrupted,
        Ok(()) => TurnEnd::Completed,
        Err(Stop::Aborted) => TurnEnd::Interrupted,
        Err(Stop::Failed(error)) => TurnEnd::Failed(error),
    }
}

fn estimated_tokens(ctx: &TurnContext) -> u64 {
    ctx.history
        .lock()
        .map(|h| h.estimated_tokens())
        .unwrap_or_default()
}

/// Ask the model for a hand-off summary and rebuild the history from it (runtime.md §9). The
/// client sees a `contextCompaction` item; a failed summary request leaves the history as it
/// was and fails the turn.
async fn compact(ctx: &TurnContext, placement: Placement) -> Result<(), Stop> {
    let mut item = compaction_item();
    item.started_at_ms = Some(now_ms());
    emit(
        ctx,
        ThreadEvent::ItemStarted {
            turn_id: ctx.turn_id.clone(),
            item: item.clone(),
        },
    )
    .await;
    let mut retries = 0u32;
    let mut dropped = 0usize;
    let summary = loop {
        let input = ctx
            .history
            .lock()
            .map(|h| trimmed_for_summary(h.items(), dropped))
            .unwrap_or_default();
        let droppable = input.len();
        let prompt = summary_prompt(&ctx.step, input);
        let attempt = async {
            let stream = ctx.client.stream(&prompt).await?;
            collect_summary(stream).await
        };
        let result = tokio::select! {
            result = attempt => result,
            () = ctx.cancel.cancelled() => {
                item.completed_at_ms = Some(now_ms());
                complete_item(ctx, item).await;
                return Err(Stop::Aborted);
            }
        };
        match result {
            Ok((summary, usage)) => {
                if let Some(usage) = usage {
                    report_usage(ctx, &usage).await;
                }
                break summary;
            }
            // The history no longer fits the model's real window: leave out the oldest items
            // of the summary request until it does (engine.md §6.3).
            Err(err) if err.is_context_window_exceeded() && droppable > 1 => dropped += 1,
            Err(err) if err.is_retryable() && retries < ctx.stream_max_retries => {
                retries += 1;
                let delay = err
                    .retry_after()
                    .unwrap_or_else(|| crate::model::backoff(retries));
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = ctx.cancel.cancelled() => {}
                }
            }
            Err(err) => {
                item.completed_at_ms = Some(now_ms());
                complete_item(ctx, item).await;
                return Err(Stop::Failed(compaction_error(&err)));
            }
        }
    };
    if dropped > 0 {
        emit(
            ctx,
            ThreadEvent::Warning {
                turn_id: Some(ctx.turn_id.clone()),
                message: format!(
                    "The conversation no longer fit the model's context window: the {dropped} oldest item(s) were left out of the summary."
                ),
            },
        )
        .await;
    }
    if let Ok(mut history) = ctx.history.lock() {
        let rebuilt = rebuild(history.items(), &summary, &ctx.environment, placement);
        history.replace(rebuilt, &summary_text(&summary));
    }
    item.completed_at_ms = Some(now_ms());
    complete_item(ctx, item).await;
    Ok(())
}

/// Layer 2: the turn loop.
async fn run_turn(ctx: &TurnContext) -> Result<(), Stop> {
    let mut stop_hook_active = false;
    loop {
        for pending in ctx.shared.take_pending() {
            record_user_input(ctx, pending).await;
        }
        if ctx.cancel.is_cancelled() {
            return Err(Stop::Aborted);
        }
        let model_needs_follow_up = sample(ctx).await?;
        let needs_follow_up = model_needs_follow_up || ctx.shared.has_pending();
        if needs_follow_up {
            if ctx.window.reached(estimated_tokens(ctx)) {
                compact(ctx, Placement::MidTurn).await?;
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
                record_hook_prompt(ctx, prompts).await;
            }
        }
    }
}

/// Record one user input: history, and the `userMessage` item's start and completion.
async fn record_user_input(ctx: &TurnContext, pending: PendingInput) {
    let content = user_content(&pending.input).await;
    if let Ok(mut history) = ctx.history.lock() {
        history.record(ResponseItem::user_message(content));
    }
    let started = now_ms();
    let item = UserMessageItem {
        id: pending.item_id,
        content: pending.input,
        client_id: pending.client_id,
    };
    start_and_complete(ctx, ThreadItem::from(item), started).await;
}

/// Record a stop hook's continuation prompt: a user message for the model, a `hookPrompt`
/// item for the client.
async fn record_hook_prompt(ctx: &TurnContext, prompts: Vec<crate::hooks::HookPromptFragment>) {
    let text = prompts
        .iter()
        .map(|p| {
            format!(
                "<hook_prompt hook_run_id=\"{}\">{}</hook_prompt>",
                p.hook_run_id, p.text
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    if let Ok(mut history) = ctx.history.lock() {
        history.record(ResponseItem::user_message(vec![ContentItem::InputText {
            text,
        }]));
    }
    let item = HookPromptItem {
        id: new_item_id(),
        fragments: prompts
            .into_iter()
            .map(|p| WireHookFragment {
                text: p.text,
                hook_run_id: p.hook_run_id,
            })
            .collect(),
    };
    start_and_complete(ctx, ThreadItem::from(item), now_ms()).await;
}

async fn start_and_complete(ctx: &TurnContext, mut item: ThreadItem, started: i64) {
    item.started_at_ms = Some(started);
    emit(
        ctx,
        ThreadEvent::ItemStarted {
            turn_id: ctx.turn_id.clone(),
            item: item.clone(),
        },
    )
    .await;
    item.completed_at_ms = Some(now_ms());
    complete_item(ctx, item).await;
}

async fn complete_item(ctx: &TurnContext, item: ThreadItem) {
    if let Some(rollout) = &ctx.rollout {
        rollout.append(RolloutRecord::ItemCompleted {
            turn_id: ctx.turn_id.clone(),
            item: item.clone(),
        });
    }
    ctx.shared.push_item(item.clone());
    emit(
        ctx,
        ThreadEvent::ItemCompleted {
            turn_id: ctx.turn_id.clone(),
            item,
        },
    )
    .await;
}

async fn emit(ctx: &TurnContext, event: ThreadEvent) {
    ctx.shared.track_started(&event);
    ctx.sink.emit(&ctx.thread_id, event).await;
}

/// The model-facing content of user input. Local images are read and sent inline as
/// `data:` URLs; one that cannot be read is replaced by a note the model can see.
async fn user_content(input: &[UserInput]) -> Vec<ContentItem> {
    let mut content = Vec::with_capacity(input.len());
    for part in input {
        match part {
            UserInput::Text { text, .. } => {
                content.push(ContentItem::InputText { text: text.clone() })
            }
            UserInput::Image {
                url: Some(url),
                detail,
                ..
            } => content.push(ContentItem::InputImage {
                image_url: url.clone(),
                detail: detail_name(detail.as_ref()),
            }),
            UserInput::LocalImage { path, detail } => match tokio::fs::read(path).await {
                Ok(bytes) => {
                    use base64::Engine as _;
                    let data = base64::engine::general_purpose::STANDARD.encode(bytes);
                    content.push(ContentItem::InputImage {
                        image_url: format!("data:{};base64,{data}", image_mime(path)),
                        detail: detail_name(detail.as_ref()),
                    });
                }
                Err(err) => content.push(ContentItem::InputText {
                    text: format!("[the image {path} could not be read: {err}]"),
                }),
            },
            _ => {}
        }
    }
    content
}

fn detail_name(detail: Option<&weft_protocol::ImageDetail>) -> Option<String> {
    detail
        .and_then(|d| serde_json::to_value(d).ok())
        .and_then(|v| v.as_str().map(str::to_string))
}

fn image_mime(path: &str) -> &'static str {
    let lower = path.to_ascii_lowercase();
    match lower.rsplit('.').next() {
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        _ => "image/png",
    }
}

/// An item the model is streaming.
struct OpenItem {
    id: String,
    started_at: i64,
    kind: OpenKind,
}

enum OpenKind {
    Message {
        text: String,
    },
    Reasoning {
        summary: Vec<String>,
        content: Vec<String>,
    },
}

/// A tool call started during the stream; aborted if dropped (the turn task was aborted).
struct InFlight {
    call: ToolCall,
    task: tokio::task::JoinHandle<ResponseItem>,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The streaming state of one sampling attempt.
#[derive(Default)]
struct Attempt {
    open: Vec<OpenItem>,
    in_flight: Vec<InFlight>,
}

impl Attempt {
    fn find(&mut self, id: &str) -> Option<&mut OpenItem> {
        self.open.iter_mut().find(|i| i.id == id)
    }

    /// The summary and content parts of an open reasoning item.
    fn reasoning(&mut self, id: &str) -> Option<(&mut Vec<String>, &mut Vec<String>)> {
        match self.find(id) {
            Some(OpenItem {
                kind: OpenKind::Reasoning { summary, content },
                ..
            }) => Some((summary, content)),
            _ => None,
        }
    }

    fn take(&mut self, id: &str) -> Option<OpenItem> {
        let at = self.open.iter().position(|i| i.id == id)?;
        Some(self.open.remove(at))
    }
}

/// What ended one attempt.
enum AttemptEnd {
    /// `response.completed`: whether a tool call asks for a follow-up.
    Completed { needs_follow_up: bool },
    /// Steered input arrived while the model was talking: the response was abandoned.
    Abandoned,
    /// Cancelled.
    Aborted,
    /// The stream failed.
    Failed(ModelError),
}

/// Layer 3: one sampling step, with retries. Returns whether the model needs a follow-up.
async fn sample(ctx: &TurnContext) -> Result<bool, Stop> {
    let mut retries = 0u32;
    loop {
        let mut prompt = ctx.step.clone();
        prompt.input = ctx
            .history
            .lock()
            .map(|h| h.for_prompt())
            .unwrap_or_default();
        let mut attempt = Attempt::default();
        let end = stream_once(ctx, &prompt, &mut attempt).await;
        close_open_items(ctx, &mut attempt).await;
        record_tool_outputs(ctx, &mut attempt).await;
        match end {
            AttemptEnd::Completed { needs_follow_up } => return Ok(needs_follow_up),
            AttemptEnd::Abandoned => return Ok(true),
            AttemptEnd::Aborted => return Err(Stop::Aborted),
            AttemptEnd::Failed(err) => {
                if !err.is_retryable() || retries >= ctx.stream_max_retries {
                    return Err(Stop::Failed(turn_error(&err)));
                }
                retries += 1;
                let delay = err
                    .retry_after()
                    .unwrap_or_else(|| crate::model::backoff(retries));
                emit(
                    ctx,
                    ThreadEvent::Error {
                        turn_id: ctx.turn_id.clone(),
                        error: TurnError {
                            message: format!(
                                "Reconnecting... {retries}/{}",
                                ctx.stream_max_retries
                            ),
                            codex_error_info: Some(CodexErrorInfo::ResponseStreamDisconnected {
                                http_status_code: err.http_status(),
                            }),
                            additional_details: Some(err.to_string()),
                            misalignment: None,
                        },
                        will_retry: true,
                    },
                )
                .await;
                tokio::select! {
                    () = tokio::time::sleep(delay) => {}
                    () = ctx.cancel.cancelled() => return Err(Stop::Aborted),
                }
            }
        }
    }
}

/// Stream one response. A complete tool call starts running at once; its output is recorded
/// after the stream ends (see [`record_tool_outputs`]).
async fn stream_once(ctx: &TurnContext, prompt: &Prompt, attempt: &mut Attempt) -> AttemptEnd {
    let mut stream = tokio::select! {
        opened = ctx.client.stream(prompt) => match opened {
            Ok(stream) => stream,
            Err(err) => return AttemptEnd::Failed(err),
        },
        () = ctx.cancel.cancelled() => return AttemptEnd::Aborted,
    };
    let mut needs_follow_up = false;
    loop {
        let event = tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => return AttemptEnd::Aborted,
            () = ctx.shared.steered.notified(), if !needs_follow_up => {
                if ctx.shared.has_pending() {
                    return AttemptEnd::Abandoned;
                }
                continue;
            }
            event = futures::StreamExt::next(&mut stream) => event,
        };
        let event = match event {
            Some(Ok(event)) => event,
            Some(Err(err)) => return AttemptEnd::Failed(err),
            None => return AttemptEnd::Failed(ModelError::stream_closed()),
        };
        match event {
            ResponseEvent::Created => {}
            ResponseEvent::OutputItemAdded(item) => open_item(ctx, attempt, &item).await,
            ResponseEvent::OutputTextDelta { item_id, delta } => {
                if let Some(OpenItem {
                    kind: OpenKind::Message { text },
                    ..
                }) = attempt.find(&item_id)
                {
                    text.push_str(&delta);
                }
                emit(
                    ctx,
                    ThreadEvent::AgentMessageDelta {
                        turn_id: ctx.turn_id.clone(),
                        item_id,
                        delta,
                    },
                )
                .await;
            }
            ResponseEvent::ReasoningSummaryPartAdded {
                item_id,
                summary_index,
            } => {
                if let Some((summary, _)) = attempt.reasoning(&item_id) {
                    grow(summary, summary_index);
                }
                emit(
                    ctx,
                    ThreadEvent::ReasoningSummaryPartAdded {
                        turn_id: ctx.turn_id.clone(),
                        item_id,
                        summary_index,
                    },
                )
                .await;
            }
            ResponseEvent::ReasoningSummaryDelta {
                item_id,
                summary_index,
                delta,
            } => {
                if let Some((summary, _)) = attempt.reasoning(&item_id) {
                    append_part(summary, summary_index, &delta);
                }
                emit(
                    ctx,
                    ThreadEvent::ReasoningSummaryTextDelta {
                        turn_id: ctx.turn_id.clone(),
                        item_id,
                        delta,
                        summary_index,
                    },
                )
                .await;
            }
            ResponseEvent::ReasoningContentDelta {
                item_id,
                content_index,
                delta,
            } => {
                if let Some((_, content)) = attempt.reasoning(&item_id) {
                    append_part(content, content_index, &delta);
                }
                emit(
                    ctx,
                    ThreadEvent::ReasoningTextDelta {
                        turn_id: ctx.turn_id.clone(),
                        item_id,
                        delta,
                        content_index,
                    },
                )
                .await;
            }
            ResponseEvent::OutputItemDone(item) => {
                if finish_item(ctx, attempt, item).await {
                    needs_follow_up = true;
                }
            }
            ResponseEvent::Completed { token_usage, .. } => {
                if let Some(usage) = token_usage {
                    report_usage(ctx, &usage).await;
                }
                return AttemptEnd::Completed { needs_follow_up };
            }
        }
    }
}

/// Append `delta` to part `index` of a reasoning summary or content, growing the list.
fn append_part(parts: &mut Vec<String>, index: i64, delta: &str) {
    grow(parts, index);
    if let Some(part) = usize::try_from(index).ok().and_then(|i| parts.get_mut(i)) {
        part.push_str(delta);
    }
}

fn grow(parts: &mut Vec<String>, index: i64) {
    let Ok(index) = usize::try_from(index) else {
        return;
    };
    while parts.len() <= index {
        parts.push(String::new());
    }
}

/// `response.output_item.added`: start the client-visible item.
async fn open_item(ctx: &TurnContext, attempt: &mut Attempt, item: &ResponseItem) {
    let (id, kind, wire) = match item {
        ResponseItem::Message { id, role, .. } if role == "assistant" => {
            let id = id.clone().unwrap_or_else(|| new_item_id().to_string());
            let wire = ThreadItem::from(AgentMessageItem::new(id.clone(), ""));
            (
                id,
                OpenKind::Message {
                    text: String::new(),
                },
                wire,
            )
        }
        ResponseItem::Reasoning { id, .. } => {
            let wire = ThreadItem::from(ReasoningItem {
                id: ItemId::from(id.clone()),
                summary: Vec::new(),
                content: Vec::new(),
            });
            (
                id.clone(),
                OpenKind::Reasoning {
                    summary: Vec::new(),
                    content: Vec::new(),
                },
                wire,
            )
        }
        _ => return,
    };
    if attempt.find(&id).is_some() {
        return;
    }
    let started_at = now_ms();
    let mut wire = wire;
    wire.started_at_ms = Some(started_at);
    attempt.open.push(OpenItem {
        id,
        started_at,
        kind,
    });
    emit(
        ctx,
        ThreadEvent::ItemStarted {
            turn_id: ctx.turn_id.clone(),
            item: wire,
        },
    )
    .await;
}

/// `response.output_item.done`: record the item and complete it. Returns true for a tool call
/// (which needs a follow-up).
async fn finish_item(ctx: &TurnContext, attempt: &mut Attempt, item: ResponseItem) -> bool {
    match &item {
        ResponseItem::Message {
            id, role, content, ..
        } if role == "assistant" => {
            let text = content
                .iter()
                .filter_map(|c| match c {
                    ContentItem::OutputText { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<String>();
            let (item_id, started_at) = match id.as_deref().and_then(|id| attempt.take(id)) {
                Some(open) => (open.id, open.started_at),
                None => {
                    // A message that was never announced: start it now.
                    let id = id.clone().unwrap_or_else(|| new_item_id().to_string());
                    let started = now_ms();
                    let mut wire = ThreadItem::from(AgentMessageItem::new(id.clone(), ""));
                    wire.started_at_ms = Some(started);
                    emit(
                        ctx,
                        ThreadEvent::ItemStarted {
                            turn_id: ctx.turn_id.clone(),
                            item: wire,
                        },
                    )
                    .await;
                    (id, started)
                }
            };
            if let Ok(mut history) = ctx.history.lock() {
                history.record(item.clone());
            }
            if let Ok(mut last) = ctx.shared.last_agent_message.lock() {
                *last = Some(text.clone());
            }
            let mut wire = ThreadItem::from(AgentMessageItem::new(item_id, text));
            wire.started_at_ms = Some(started_at);
            wire.completed_at_ms = Some(now_ms());
            complete_item(ctx, wire).await;
            false
        }
        ResponseItem::Reasoning { id, .. } => {
            let (summary, content, started_at) = match attempt.take(id) {
                Some(OpenItem {
                    kind: OpenKind::Reasoning { summary, content },
                    started_at,
                    ..
                }) => (summary, content, started_at),
                _ => {
                    let started = now_ms();
                    let mut wire = ThreadItem::from(ReasoningItem {
                        id: ItemId::from(id.clone()),
                        summary: Vec::new(),
                        content: Vec::new(),
                    });
                    wire.started_at_ms = Some(started);
                    emit(
                        ctx,
                        ThreadEvent::ItemStarted {
                            turn_id: ctx.turn_id.clone(),
                            item: wire,
                        },
                    )
                    .await;
                    (Vec::new(), Vec::new(), started)
                }
            };
            let (summary, content) = item.reasoning_texts().unwrap_or((summary, content));
            if let Ok(mut history) = ctx.history.lock() {
                history.record(item.clone());
            }
            let mut wire = ThreadItem::from(ReasoningItem {
                id: ItemId::from(id.clone()),
                summary,
                content,
            });
            wire.started_at_ms = Some(started_at);
            wire.completed_at_ms = Some(now_ms());
            complete_item(ctx, wire).await;
            false
        }
        ResponseItem::FunctionCall { .. } | ResponseItem::CustomToolCall { .. } => {
            let Some(call) = ToolCall::from_item(&item) else {
                return false;
            };
            if let Ok(mut history) = ctx.history.lock() {
                history.record(item.clone());
            }
            let task = tokio::spawn(ctx.tools.clone().handle(call.clone(), tool_turn(ctx)));
            attempt.in_flight.push(InFlight { call, task });
            true
        }
        _ => {
            if let Ok(mut history) = ctx.history.lock() {
                history.record(item);
            }
            false
        }
    }
}

/// The tool context for one call: the turn's, with a sink that also keeps the items the tool
/// completes among the turn's items (so they are part of the finished turn).
fn tool_turn(ctx: &TurnContext) -> ToolTurn {
    let mut turn = ctx.tool_turn.clone();
    turn.sink = Arc::new(ToolItemSink {
        inner: ctx.sink.clone(),
        shared: ctx.shared.clone(),
        turn_id: ctx.turn_id.clone(),
        rollout: ctx.rollout.clone(),
    });
    turn
}

/// Forwards a tool's events, recording its completed items as [`complete_item`] does (in the
/// rollout and in [`TurnShared`]).
struct ToolItemSink {
    inner: SharedSink,
    shared: Arc<TurnShared>,
    turn_id: TurnId,
    rollout: Option<RolloutWriter>,
}

impl crate::events::EventSink for ToolItemSink {
    fn emit<'a>(
        &'a self,
        thread: &'a ThreadId,
        event: ThreadEvent,
    ) -> futures::future::BoxFuture<'a, ()> {
        self.shared.track_started(&event);
        if let ThreadEvent::ItemCompleted { item, .. } = &event {
            if let Some(rollout) = &self.rollout {
                rollout.append(RolloutRecord::ItemCompleted {
                    turn_id: self.turn_id.clone(),
                    item: item.clone(),
                });
            }
            self.shared.push_item(item.clone());
        }
        self.inner.emit(thread, event)
    }

    fn request<'a>(
        &'a self,
        thread: &'a ThreadId,
        params: crate::events::ServerRequestParams,
    ) -> futures::future::BoxFuture<'a, crate::events::ServerRequestOutcome> {
        self.inner.request(thread, params)
    }
}

/// Wait for the attempt's tool calls in call order and record their outputs, so history
/// always pairs a call with its output. A tool task that died answers `aborted`.
async fn record_tool_outputs(ctx: &TurnContext, attempt: &mut Attempt) {
    for mut in_flight in std::mem::take(&mut attempt.in_flight) {
        let output = match (&mut in_flight.task).await {
            Ok(output) => output,
            Err(err) => {
                tracing::warn!(call_id = %in_flight.call.call_id, %err, "tool task failed");
                in_flight.call.output("aborted")
            }
        };
        if let Ok(mut history) = ctx.history.lock() {
            history.record(output);
        }
    }
}

/// Complete every item the attempt started and did not finish: messages with the text
/// received so far (not recorded in history, so the model never sees a cut answer).
async fn close_open_items(ctx: &TurnContext, attempt: &mut Attempt) {
    for open in std::mem::take(&mut attempt.open) {
        let mut wire = match open.kind {
            OpenKind::Message { text } => ThreadItem::from(AgentMessageItem::new(open.id, text)),
            OpenKind::Reasoning { summary, content } => ThreadItem::from(ReasoningItem {
                id: ItemId::from(open.id),
                summary,
                content,
            }),
        };
        wire.started_at_ms = Some(open.started_at);
        wire.completed_at_ms = Some(now_ms());
        complete_item(ctx, wire).await;
    }
}

async fn report_usage(ctx: &TurnContext, usage: &TokenUsage) {
    let last = TokenUsageBreakdown {
        total_tokens: usage.total_tokens,
        input_tokens: usage.input_tokens,
        cached_input_tokens: usage.cached_input_tokens,
        cache_write_input_tokens: 0,
        output_tokens: usage.output_tokens,
        reasoning_output_tokens: usage.reasoning_output_tokens,
    };
    if let Ok(mut history) = ctx.history.lock() {
        history.mark_reported(u64::try_from(usage.total_tokens).unwrap_or_default());
    }
    let snapshot = match ctx.token_usage.lock() {
        Ok(mut totals) => {
            totals.total.add(&last);
            totals.last = last;
            totals.model_context_window = ctx.context_window;
            *totals
        }
        Err(_) => return,
    };
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

/// The client-facing error of a failed turn.
pub fn turn_error(err: &ModelError) -> TurnError {
    let status = err.http_status();
    let (message, info) = if err.is_context_window_exceeded() {
        (
            "Weft ran out of room in the model's context window. Start a new thread or clear earlier history before retrying.".to_string(),
            CodexErrorInfo::ContextWindowExceeded,
        )
    } else if err.is_retryable() {
        (
            err.to_string(),
            CodexErrorInfo::ResponseTooManyFailedAttempts {
                http_status_code: status,
            },
        )
    } else {
        (err.to_string(), err.error_info())
    };
    TurnError {
        message,
        codex_error_info: Some(info),
        additional_details: None,
        misalignment: None,
    }
}

#[cfg(test)]
mod tests {
    use weft_protocol::{CommandExecutionItem, CommandExecutionSource};

    use super::*;

    fn started(item: ThreadItem) -> ThreadEvent {
        ThreadEvent::ItemStarted {
            turn_id: TurnId::from("t".to_string()),
            item,
        }
    }

    #[test]
    fn abandoned_items_complete_and_commands_fail() {
        let shared = TurnShared::default();
        let message = ThreadItem::from(AgentMessageItem::new("m1", ""));
        let done = ThreadItem::from(AgentMessageItem::new("m2", "whole"));
        let command = ThreadItem::from(CommandExecutionItem {
            id: ItemId::from("c1".to_string()),
            command: "sleep 30".into(),
            cwd: "/".into(),
            process_id: None,
            source: CommandExecutionSource::default(),
            status: CommandExecutionStatus::InProgress,
            command_actions: Vec::new(),
            aggregated_output: None,
            exit_code: None,
            duration_ms: None,
            plugin_id: None,
            script_path: None,
        });
        for item in [&message, &done, &command] {
            shared.track_started(&started(item.clone()));
        }
        shared.track_started(&ThreadEvent::AgentMessageDelta {
            turn_id: TurnId::from("t".to_string()),
            item_id: "m1".into(),
            delta: "partial".into(),
        });
        shared.push_item(done.clone());
        let abandoned = shared.complete_abandoned(42);
        let ids: Vec<&str> = abandoned.iter().map(|i| i.id().as_str()).collect();
        assert_eq!(ids, ["m1", "c1"]);
        assert!(matches!(
            &abandoned[0].details,
            ThreadItemDetails::AgentMessage(m) if m.text == "partial"
        ));
        assert!(abandoned.iter().all(|i| i.completed_at_ms == Some(42)));
        assert!(matches!(
            &abandoned[1].details,
            ThreadItemDetails::CommandExecution(c) if c.status == CommandExecutionStatus::Failed
        ));
        assert_eq!(shared.completed_items().len(), 3);
        assert!(shared.complete_abandoned(43).is_empty());
    }
}

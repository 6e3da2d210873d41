//! Layer 3 of the turn: one sampling step. [`sample`] asks the model, retrying a retryable
//! stream failure; [`stream_once`] turns one response stream into items: it opens an agent
//! message or reasoning item when the model announces it, forwards its deltas, finishes it
//! when the model is done with it (recording it in history), and starts a tool call as soon
//! as the call is complete. What the stream leaves open when it ends early — interrupted, or
//! abandoned for steered input — completes as streamed so far (see `open_items.rs`).

use weft_protocol::{
    AgentMessageItem, CodexErrorInfo, ItemId, ReasoningItem, ThreadItem, ThreadItemDetails,
    TurnError,
};

use super::item_sink::tool_turn;
use super::plan_stream::PlanStream;
use super::{Stop, TurnContext, complete_item, emit, report_usage, start_item};
use crate::events::ThreadEvent;
use crate::model::{ContentItem, ModelError, Prompt, ResponseEvent, ResponseItem, turn_error};
use crate::time::{new_item_id, now_ms};
use crate::tools::context::ToolCall;
use crate::tools::goal_tool::GoalTools;
use crate::tools::{mcp_tool, tool_search};

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

/// The tool calls one sampling attempt started, in call order.
#[derive(Default)]
struct Attempt {
    in_flight: Vec<InFlight>,
    /// Plan mode: the proposed plan split out of the agent messages.
    plan: Option<PlanStream>,
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

/// One sampling step, with retries. Returns whether the model needs a follow-up.
pub(super) async fn sample(ctx: &TurnContext) -> Result<bool, Stop> {
    let mut retries = 0u32;
    loop {
        let mut prompt = ctx.step.clone();
        prompt.input = ctx.history.lock().for_prompt();
        // MCP tools as the servers list them now (a `list_changed` shows at the next step):
        // inline, or deferred behind `tool_search` (docs/mcp.md §4).
        add_mcp_tools(ctx, &mut prompt);
        let mut attempt = Attempt {
            plan: ctx
                .proposed_plans
                .then(|| PlanStream::new(ctx.turn_id.as_str())),
            ..Attempt::default()
        };
        let goal_usage = match &ctx.offer.goals {
            GoalTools::On { usage, .. } => Some(usage),
            _ => None,
        };
        if let Some(usage) = goal_usage {
            usage.response_started();
        }
        let end = stream_once(ctx, &prompt, &mut attempt).await;
        // The response's usage is reported: goal tools it called may act (docs/protocol.md §7.26).
        if let Some(usage) = goal_usage {
            usage.response_ended();
        }
        close_streamed_items(ctx).await;
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

/// The MCP tools of one request: inline namespaces; or, with tool search on and a server
/// with tools running, the resource tools, `tool_search` and the `<tools>` section.
fn add_mcp_tools(ctx: &TurnContext, prompt: &mut Prompt) {
    let mcp = &ctx.offer.mcp;
    let deferred = deferred_tools(ctx);
    let Some(section) = tool_search::section(&deferred) else {
        let specs = mcp_tool::specs(mcp);
        if !specs.is_empty() {
            // The step's own copy of the turn's tools, only when it adds to them.
            std::sync::Arc::make_mut(&mut prompt.tools).extend(specs);
        }
        return;
    };
    let tools = std::sync::Arc::make_mut(&mut prompt.tools);
    tools.extend(mcp_tool::resource_specs(mcp));
    tools.push(tool_search::spec());
    tool_search::insert_section(&mut prompt.input, section);
}

/// What `tool_search` searches in this turn: the MCP servers' tools and the multi-agent
/// namespace, when tool search is on.
fn deferred_tools(ctx: &TurnContext) -> Vec<tool_search::Deferred> {
    if !ctx.tool_search {
        return Vec::new();
    }
    let mut deferred = tool_search::deferred(&ctx.offer.mcp);
    deferred.extend(crate::tools::agent_tool::deferred(
        ctx.offer.agents.as_ref(),
    ));
    deferred
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
            () = ctx.shared.steered().notified(), if !needs_follow_up => {
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
        let turn_id = ctx.turn_id.clone();
        // Deltas go to the client as they come; the turn's items note them on the way (the
        // text and parts an item completes with if the stream ends before the item does).
        let delta = match event {
            ResponseEvent::Created => None,
            ResponseEvent::OutputItemAdded(item) => {
                open_item(ctx, &item, attempt.plan.as_mut()).await;
                None
            }
            ResponseEvent::OutputTextDelta { item_id, delta } => match attempt.plan.as_mut() {
                Some(plan) => {
                    plan.delta(ctx, &item_id, &delta).await;
                    None
                }
                None => Some(ThreadEvent::AgentMessageDelta {
                    turn_id,
                    item_id,
                    delta,
                }),
            },
            ResponseEvent::ReasoningSummaryPartAdded {
                item_id,
                summary_index,
            } => Some(ThreadEvent::ReasoningSummaryPartAdded {
                turn_id,
                item_id,
                summary_index,
            }),
            ResponseEvent::ReasoningSummaryDelta {
                item_id,
                summary_index,
                delta,
            } => Some(ThreadEvent::ReasoningSummaryTextDelta {
                turn_id,
                item_id,
                delta,
                summary_index,
            }),
            ResponseEvent::ReasoningContentDelta {
                item_id,
                content_index,
                delta,
            } => Some(ThreadEvent::ReasoningTextDelta {
                turn_id,
                item_id,
                delta,
                content_index,
            }),
            ResponseEvent::OutputItemDone(item) => {
                if finish_item(ctx, attempt, item).await {
                    needs_follow_up = true;
                }
                None
            }
            ResponseEvent::Completed { token_usage, .. } => {
                if let Some(plan) = attempt.plan.as_mut() {
                    plan.flush(ctx).await;
                }
                if let Some(usage) = token_usage {
                    report_usage(ctx, &usage).await;
                }
                return AttemptEnd::Completed { needs_follow_up };
            }
        };
        if let Some(delta) = delta {
            emit(ctx, delta).await;
        }
    }
}

/// `response.output_item.added`: start the client-visible item (in Plan mode an agent
/// message starts once it has text of its own, `plan_stream.rs`).
async fn open_item(ctx: &TurnContext, item: &ResponseItem, plan: Option<&mut PlanStream>) {
    let mut wire = match item {
        ResponseItem::Message { id, role, .. } if role == "assistant" => {
            let id = id.clone().unwrap_or_else(|| new_item_id().to_string());
            if let Some(plan) = plan {
                plan.announce(&id);
                return;
            }
            ThreadItem::from(AgentMessageItem::new(id, ""))
        }
        ResponseItem::Reasoning { id, .. } => ThreadItem::from(ReasoningItem {
            id: ItemId::from(id.clone()),
            summary: Vec::new(),
            content: Vec::new(),
        }),
        _ => return,
    };
    if ctx.shared.items().get(wire.id().as_str()).is_some() {
        return;
    }
    wire.started_at_ms = Some(now_ms());
    start_item(ctx, wire).await;
}

/// Start an item the model finished without announcing it; returns when it started.
async fn start_unannounced(ctx: &TurnContext, mut wire: ThreadItem) -> i64 {
    let started = now_ms();
    wire.started_at_ms = Some(started);
    start_item(ctx, wire).await;
    started
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
            if let Some(plan) = attempt.plan.as_mut() {
                let id = id.clone().unwrap_or_else(|| new_item_id().to_string());
                ctx.history.lock().record(item.clone());
                if !text.trim().is_empty() {
                    ctx.shared.mark_produced();
                }
                if let Some((started_at, visible)) = plan.done(ctx, &id, &text).await {
                    ctx.shared.set_last_agent_message(visible.clone());
                    let mut wire = ThreadItem::from(AgentMessageItem::new(id, visible));
                    wire.started_at_ms = Some(started_at);
                    wire.completed_at_ms = Some(now_ms());
                    complete_item(ctx, wire).await;
                }
                return false;
            }
            let open = id.as_deref().and_then(|id| ctx.shared.items().get(id));
            let (item_id, started_at) = match open {
                Some(open) => (
                    open.id().to_string(),
                    open.started_at_ms.unwrap_or_default(),
                ),
                None => {
                    let id = id.clone().unwrap_or_else(|| new_item_id().to_string());
                    let wire = ThreadItem::from(AgentMessageItem::new(id.clone(), ""));
                    (id, start_unannounced(ctx, wire).await)
                }
            };
            ctx.history.lock().record(item.clone());
            if !text.trim().is_empty() {
                ctx.shared.mark_produced();
            }
            ctx.shared.set_last_agent_message(text.clone());
            let mut wire = ThreadItem::from(AgentMessageItem::new(item_id, text));
            wire.started_at_ms = Some(started_at);
            wire.completed_at_ms = Some(now_ms());
            complete_item(ctx, wire).await;
            false
        }
        ResponseItem::Reasoning { id, .. } => {
            let open = ctx.shared.items().get(id);
            let (summary, content, started_at) = match open {
                Some(ThreadItem {
                    details: ThreadItemDetails::Reasoning(open),
                    started_at_ms,
                    ..
                }) => (
                    open.summary,
                    open.content,
                    started_at_ms.unwrap_or_default(),
                ),
                _ => {
                    let wire = ThreadItem::from(ReasoningItem {
                        id: ItemId::from(id.clone()),
                        summary: Vec::new(),
                        content: Vec::new(),
                    });
                    (Vec::new(), Vec::new(), start_unannounced(ctx, wire).await)
                }
            };
            let (summary, content) = item.reasoning_texts().unwrap_or((summary, content));
            ctx.history.lock().record(item.clone());
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
            ctx.history.lock().record(item.clone());
            ctx.shared.mark_produced();
            let task = tokio::spawn(ctx.tools.clone().handle(call.clone(), tool_turn(ctx)));
            attempt.in_flight.push(InFlight { call, task });
            true
        }
        ResponseItem::ToolSearchCall {
            call_id: Some(call_id),
            execution,
            arguments,
            ..
        } if ctx.tool_search && execution.as_deref() != Some("server") => {
            // A local search, done at once: the call and its output are recorded together,
            // so an interrupt never leaves one without the other (docs/mcp.md §4).
            let deferred = deferred_tools(ctx);
            let output = tool_search::run(&deferred, call_id, arguments);
            ctx.shared.mark_produced();
            let mut history = ctx.history.lock();
            history.record(item.clone());
            history.record(output);
            true
        }
        _ => {
            ctx.history.lock().record(item);
            false
        }
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
        ctx.history.lock().record(output);
    }
}

/// Complete every item the stream started and did not finish: messages with the text
/// received so far (not recorded in history, so the model never sees a cut answer), reasoning
/// with its parts.
async fn close_streamed_items(ctx: &TurnContext) {
    for item in ctx.shared.items().streamed(now_ms()) {
        complete_item(ctx, item).await;
    }
}

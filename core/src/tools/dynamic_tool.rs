//! Client-defined tools (`thread/start.dynamicTools`, docs/protocol.md §9.6).
//!
//! * **Offered** as the client defined them: a plain tool as a `function` tool
//!   (`strict: false`, its `inputSchema` as `parameters`), a namespace as a Responses API
//!   `namespace` tool holding its functions. Weft has no tool search, so tools with
//!   `deferLoading: true` are not offered at all (a namespace left empty is dropped). On Chat
//!   Completions, which has no namespaces, a namespaced tool is the function
//!   `<namespace>__<name>` (see `chat_request.rs`).
//! * **A call** (a `function_call` whose name, and namespace, name a thread's tool) becomes a
//!   `dynamicToolCall` item and the `item/tool/call` request to the thread's clients; their
//!   answer is what the model gets: one text part as a string, anything else as content parts
//!   (audio is replaced by a note; a remote image URL fails the call).
//! * **No answer**: a JSON-RPC error, an unreadable result, the asked connections gone, or the
//!   turn interrupted: the item fails and the model is told so.

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use serde_json::{Value, json};
use weft_protocol::{
    DynamicToolCallItem, DynamicToolCallOutputContentItem, DynamicToolCallParams,
    DynamicToolCallResponse, DynamicToolCallStatus, DynamicToolFunction, DynamicToolSpec, ItemId,
    ThreadItem,
};

use super::approval;
use super::context::{ToolCall, ToolTurn};
use super::tool::{Concurrency, Effects, Tool};
use crate::events::{ServerRequestOutcome, ServerRequestParams};
use crate::model::{ContentItem, ToolOutput};
use crate::time::now_ms;

/// Told to the model when nobody answered (interrupt, connections gone).
pub const CANCELLED: &str = "dynamic tool call was cancelled before receiving a response";
/// Told to the model when the client answered with a JSON-RPC error.
pub const REQUEST_FAILED: &str = "dynamic tool request failed";
/// Told to the model when the client's result could not be read.
pub const RESPONSE_INVALID: &str = "dynamic tool response was invalid";
/// Replaces audio parts (the model takes no audio input).
pub const AUDIO_OMITTED: &str = "audio content omitted because you do not support audio input";
/// Fails a call whose answer has an image by URL.
pub const REMOTE_IMAGE: &str =
    "remote image URLs are not supported; use an inline data URL instead";

/// The separator of a namespaced tool's flat name on Chat Completions.
pub const FLAT_SEPARATOR: &str = "__";

/// The thread's client-defined tools, as one family: claims a function call naming one of
/// them. Exclusive; what a client's tool does is unknown, so it counts as mutating.
pub(crate) struct DynamicTools {
    /// The tools as the client defined them.
    pub tools: Arc<Vec<DynamicToolSpec>>,
}

#[async_trait]
impl Tool for DynamicTools {
    fn name(&self) -> &str {
        "dynamic tools"
    }

    fn specs(&self) -> Vec<Value> {
        dynamic_tool_specs(&self.tools)
    }

    fn claims(&self, call: &ToolCall) -> bool {
        call.is_function() && resolve(&self.tools, call.namespace.as_deref(), &call.name).is_some()
    }

    fn effects(&self) -> Effects {
        Effects {
            mutates: true,
            concurrency: Concurrency::Exclusive,
        }
    }

    async fn call(&self, call: &ToolCall, turn: &ToolTurn) -> ToolOutput {
        match resolve(&self.tools, call.namespace.as_deref(), &call.name) {
            Some((namespace, tool)) => {
                self::call(turn, &call.call_id, namespace, tool, call.arguments()).await
            }
            None => ToolOutput::Text(format!("unsupported call: {}", call.name)),
        }
    }
}

/// The tool definitions (Responses API format) of a thread's dynamic tools.
pub fn dynamic_tool_specs(tools: &[DynamicToolSpec]) -> Vec<Value> {
    tools
        .iter()
        .filter_map(|spec| match spec {
            DynamicToolSpec::Function(function) if !function.defer_loading => {
                Some(function_spec(function))
            }
            DynamicToolSpec::Function(_) => None,
            DynamicToolSpec::Namespace(namespace) => {
                let functions: Vec<Value> = namespace
                    .tools
                    .iter()
                    .map(|tool| tool.function())
                    .filter(|function| !function.defer_loading)
                    .map(function_spec)
                    .collect();
                (!functions.is_empty()).then(|| {
                    json!({
                        "type": "namespace",
                        "name": namespace.name,
                        "description": namespace.description,
                        "tools": functions,
                    })
                })
            }
        })
        .collect()
}

fn function_spec(function: &DynamicToolFunction) -> Value {
    json!({
        "type": "function",
        "name": function.name,
        "description": function.description,
        "strict": false,
        "parameters": function.input_schema,
    })
}

/// Which offered dynamic tool a call names: `(namespace, tool)`. A namespaced call names its
/// namespace; on Chat Completions it comes back as the flat `<namespace>__<name>`. Deferred
/// tools were not offered, so they are not callable.
pub fn resolve(
    tools: &[DynamicToolSpec],
    namespace: Option<&str>,
    name: &str,
) -> Option<(Option<String>, String)> {
    let offered = |function: &DynamicToolFunction, wanted: &str| {
        !function.defer_loading && function.name == wanted
    };
    let in_namespace = |ns: &str, tool: &str| {
        tools.iter().any(|spec| match spec {
            DynamicToolSpec::Namespace(namespace) => {
                namespace.name == ns && namespace.tools.iter().any(|t| offered(t.function(), tool))
            }
            DynamicToolSpec::Function(_) => false,
        })
    };
    match namespace {
        Some(ns) => in_namespace(ns, name).then(|| (Some(ns.to_string()), name.to_string())),
        None => {
            let plain = tools.iter().any(|spec| match spec {
                DynamicToolSpec::Function(function) => offered(function, name),
                DynamicToolSpec::Namespace(_) => false,
            });
            if plain {
                return Some((None, name.to_string()));
            }
            name.split_once(FLAT_SEPARATOR)
                .filter(|(ns, tool)| in_namespace(ns, tool))
                .map(|(ns, tool)| (Some(ns.to_string()), tool.to_string()))
        }
    }
}

/// Ask the thread's clients to run the call; returns what the model gets.
pub async fn call(
    turn: &ToolTurn,
    call_id: &str,
    namespace: Option<String>,
    tool: String,
    arguments: &str,
) -> ToolOutput {
    let arguments: Value = match serde_json::from_str(arguments) {
        Ok(value) => value,
        Err(err) => return ToolOutput::Text(format!("failed to parse function arguments: {err}")),
    };
    let started = Instant::now();
    let started_at = now_ms();
    let mut item = DynamicToolCallItem {
        id: ItemId::from(call_id.to_string()),
        namespace: namespace.clone(),
        tool: tool.clone(),
        arguments: arguments.clone(),
        status: DynamicToolCallStatus::InProgress,
        content_items: None,
        success: None,
        duration_ms: None,
    };
    let mut wire = ThreadItem::from(item.clone());
    wire.started_at_ms = Some(started_at);
    turn.item_started(wire).await;
    let params = DynamicToolCallParams {
        thread_id: turn.thread_id.clone(),
        turn_id: turn.turn_id.clone(),
        call_id: call_id.to_string(),
        namespace,
        tool,
        arguments,
    };
    let outcome = approval::ask(turn, ServerRequestParams::DynamicToolCall(params)).await;
    let answer = read_result(outcome);
    item.status = if answer.success {
        DynamicToolCallStatus::Completed
    } else {
        DynamicToolCallStatus::Failed
    };
    item.content_items = Some(answer.content_items);
    item.success = Some(answer.success);
    item.duration_ms = Some(i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX));
    let mut wire = ThreadItem::from(item);
    wire.started_at_ms = Some(started_at);
    wire.completed_at_ms = Some(now_ms());
    turn.item_completed(wire).await;
    answer.output
}

/// A call's result: what the item shows and what the model gets.
#[derive(Debug, Clone, PartialEq)]
pub struct DynamicToolResult {
    /// The item's `contentItems`.
    pub content_items: Vec<DynamicToolCallOutputContentItem>,
    /// The item's `success`.
    pub success: bool,
    /// The model's output.
    pub output: ToolOutput,
}

impl DynamicToolResult {
    fn failed(text: &str) -> DynamicToolResult {
        DynamicToolResult {
            content_items: vec![DynamicToolCallOutputContentItem::InputText {
                text: text.to_string(),
            }],
            success: false,
            output: ToolOutput::Text(text.to_string()),
        }
    }
}

/// The answer to `item/tool/call`, read.
pub fn read_result(outcome: ServerRequestOutcome) -> DynamicToolResult {
    let response = match outcome {
        ServerRequestOutcome::Cancelled => {
            return DynamicToolResult {
                content_items: Vec::new(),
                success: false,
                output: ToolOutput::Text(CANCELLED.to_string()),
            };
        }
        ServerRequestOutcome::Failed(_) => return DynamicToolResult::failed(REQUEST_FAILED),
        ServerRequestOutcome::Answered(value) => {
            match serde_json::from_value::<DynamicToolCallResponse>(value) {
                Ok(response) => response,
                Err(_) => return DynamicToolResult::failed(RESPONSE_INVALID),
            }
        }
    };
    let remote_image = response.content_items.iter().any(|item| {
        matches!(item, DynamicToolCallOutputContentItem::InputImage { image_url }
            if !image_url.starts_with("data:"))
    });
    if remote_image {
        return DynamicToolResult::failed(REMOTE_IMAGE);
    }
    let output = match response.content_items.as_slice() {
        [DynamicToolCallOutputContentItem::InputText { text }] => ToolOutput::Text(text.clone()),
        items => ToolOutput::Content(items.iter().map(content_part).collect()),
    };
    DynamicToolResult {
        content_items: response.content_items,
        success: response.success,
        output,
    }
}

fn content_part(item: &DynamicToolCallOutputContentItem) -> ContentItem {
    match item {
        DynamicToolCallOutputContentItem::InputText { text } => {
            ContentItem::InputText { text: text.clone() }
        }
        DynamicToolCallOutputContentItem::InputImage { image_url } => ContentItem::InputImage {
            image_url: image_url.clone(),
            detail: None,
        },
        DynamicToolCallOutputContentItem::InputAudio { .. } => ContentItem::InputText {
            text: AUDIO_OMITTED.to_string(),
        },
    }
}

#[cfg(test)]
#[path = "dynamic_tool_tests.rs"]
mod tests;

//! MCP tools as the model sees them, and how a call runs (docs/mcp.md §4–§5).
//!
//! * **Offered** inline (unless `[features] tool_search` defers them, see `tool_search.rs`):
//!   each running server's tools as a Responses API `namespace` tool `mcp__NAME` (on Chat
//!   Completions the functions `mcp__NAME__tool`),
//!   their input schemas passed through without `title`s; and, when any server is configured,
//!   `list_mcp_resources`, `list_mcp_resource_templates` and `read_mcp_resource`.
//! * **A call** is an `mcpToolCall` item. Whether it needs the user's approval depends on the
//!   server's tool annotations and its approval mode; the approval is the
//!   `mcpServer/elicitation/request` server request. Progress notifications of the server
//!   become `item/mcpToolCall/progress`; an interrupt withdraws a pending approval and
//!   cancels the call in flight (the server gets `notifications/cancelled`).
//! * **The model's output**: `Wall time: S seconds\nOutput:\n` then the structured content
//!   (or the text); a failure is the two-part content array the reference sends.

use std::sync::Arc;
use std::time::Instant;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use weft_protocol::{
    ItemId, McpElicitationSchema, McpServerElicitationRequest, McpServerElicitationRequestParams,
    McpToolCallError, McpToolCallItem, McpToolCallResult, McpToolCallStatus, ThreadItem,
};

use super::approval::{self, ApprovalWaits, Mode};
use super::context::{ToolCall, ToolTurn};
use super::tool::{Concurrency, Effects, Tool};
use crate::events::{ServerRequestOutcome, ServerRequestParams, ThreadEvent};
use crate::guardian::{ReviewRequest, Verdict};
use crate::mcp::{ApprovalMode, CallError, McpPool, OfferedServer};
use crate::model::ToolOutput;
use crate::time::now_ms;

mod output;
mod resources;
mod specs;

use output::{failure_output, millis, success_output, texts};
pub use resources::resource_tool;
pub use specs::{
    clean_schema, function_spec, namespace_description, namespace_name, resource_specs, specs,
};

/// The prefix of every MCP namespace.
pub const NAMESPACE_PREFIX: &str = "mcp__";
/// `list_mcp_resources`.
pub const LIST_RESOURCES_TOOL: &str = "list_mcp_resources";
/// `list_mcp_resource_templates`.
pub const LIST_TEMPLATES_TOOL: &str = "list_mcp_resource_templates";
/// `read_mcp_resource`.
pub const READ_RESOURCE_TOOL: &str = "read_mcp_resource";

/// Told to the model when an approval would be needed under `never`.
pub const NEVER_APPROVED: &str = "MCP tool call requires approval, but approval policy is never";
/// Told to the model when the user declined.
pub const DECLINED: &str = "user rejected MCP tool call";
/// Told to the model when the user cancelled (or nobody could answer).
pub const CANCELLED: &str = "user cancelled MCP tool call";

/// Which server and tool a call names: the `mcp__NAME` namespace and the tool, or (Chat
/// Completions) the flat `mcp__NAME__tool`. `None` when it names no running server's tool.
pub fn resolve(pool: &McpPool, namespace: Option<&str>, name: &str) -> Option<Target> {
    let offered = pool.offered();
    let find = |server: &str, tool: &str| {
        offered
            .iter()
            .find(|candidate| candidate.config.name == server)
            .and_then(|candidate| {
                candidate
                    .tools
                    .iter()
                    .find(|t| t.get("name").and_then(Value::as_str) == Some(tool))
                    .map(|t| Target {
                        server: candidate.clone(),
                        tool: t.clone(),
                    })
            })
    };
    match namespace {
        Some(namespace) => find(namespace.strip_prefix(NAMESPACE_PREFIX)?, name),
        None => {
            let rest = name.strip_prefix(NAMESPACE_PREFIX)?;
            offered.iter().find_map(|candidate| {
                let tool = rest
                    .strip_prefix(candidate.config.name.as_str())?
                    .strip_prefix("__")?;
                find(&candidate.config.name, tool)
            })
        }
    }
}

/// The server and tool a call names.
#[derive(Debug, Clone)]
pub struct Target {
    /// The server, as offered.
    pub server: OfferedServer,
    /// The tool (MCP `Tool` JSON).
    pub tool: Value,
}

/// Whether `name` is one of the resource tools (offered when a server is configured).
pub fn is_resource_tool(pool: &McpPool, name: &str) -> bool {
    pool.has_servers()
        && matches!(
            name,
            LIST_RESOURCES_TOOL | LIST_TEMPLATES_TOOL | READ_RESOURCE_TOOL
        )
}

/// What the thread remembers of "approve for the session": `server\0tool` keys.
pub type SessionGrants = parking_lot::Mutex<std::collections::HashSet<String>>;

/// The MCP servers' tools and the resource tools, as one family: claims a function call
/// naming a running server's tool (offered or found by `tool_search`), or a resource tool.
/// Runs beside other calls; a server's tool may change anything, so it counts as mutating.
/// Its definitions change from step to step (`list_changed`): each request takes them anew,
/// inline or behind `tool_search` (`turn/sampling.rs`), so [`Tool::specs`] is empty here.
pub(crate) struct McpTools {
    /// The daemon's servers.
    pub pool: Arc<McpPool>,
    /// The thread's "approve for the session" grants.
    pub grants: Arc<SessionGrants>,
    /// Pending approvals (the `waitingOnApproval` flag).
    pub waits: Arc<ApprovalWaits>,
}

impl McpTools {
    /// A resource tool call (no namespace).
    fn is_resource_call(&self, call: &ToolCall) -> bool {
        call.namespace.is_none() && is_resource_tool(&self.pool, &call.name)
    }
}

#[async_trait]
impl Tool for McpTools {
    fn name(&self) -> &str {
        "mcp tools"
    }

    fn specs(&self) -> Vec<Value> {
        Vec::new()
    }

    fn claims(&self, call: &ToolCall) -> bool {
        call.is_function()
            && (self.is_resource_call(call)
                || resolve(&self.pool, call.namespace.as_deref(), &call.name).is_some())
    }

    fn effects(&self) -> Effects {
        Effects {
            mutates: true,
            concurrency: Concurrency::Parallel,
        }
    }

    async fn call(&self, call: &ToolCall, turn: &ToolTurn) -> ToolOutput {
        let arguments = call.arguments();
        if self.is_resource_call(call) {
            return ToolOutput::Text(resource_tool(&self.pool, &call.name, arguments).await);
        }
        match resolve(&self.pool, call.namespace.as_deref(), &call.name) {
            Some(target) => {
                self::call(
                    &self.pool,
                    &self.grants,
                    &self.waits,
                    turn,
                    &call.call_id,
                    target,
                    arguments,
                )
                .await
            }
            None => ToolOutput::Text(format!("unsupported call: {}", call.name)),
        }
    }
}

/// Runs one call of an MCP tool; returns what the model gets.
pub async fn call(
    pool: &Arc<McpPool>,
    grants: &SessionGrants,
    waits: &ApprovalWaits,
    turn: &ToolTurn,
    call_id: &str,
    target: Target,
    arguments: &str,
) -> ToolOutput {
    let Target { server, tool } = target;
    let started = Instant::now();
    // The server's own name: the model may know the tool by a sanitised one (`mcp::names`).
    let tool_name = server
        .server_tool_name(tool.get("name").and_then(Value::as_str).unwrap_or_default())
        .to_string();
    let arguments: Value = if arguments.trim().is_empty() {
        json!({})
    } else {
        match serde_json::from_str(arguments) {
            Ok(value) => value,
            Err(err) => {
                return ToolOutput::Text(format!("failed to parse function arguments: {err}"));
            }
        }
    };
    let read_only = tool
        .pointer("/annotations/readOnlyHint")
        .and_then(Value::as_bool);
    let mut item = Item {
        id: call_id.to_string(),
        server: server.config.name.clone(),
        tool: tool_name.clone(),
        arguments: arguments.clone(),
        read_only,
        started_at: now_ms(),
    };
    item.emit_started(turn).await;
    let key = format!("{}\u{0}{tool_name}", server.config.name);
    let needs_approval = match server.config.approval_mode(&tool_name) {
        ApprovalMode::Approve => false,
        ApprovalMode::Prompt => true,
        ApprovalMode::Auto | ApprovalMode::Writes => read_only != Some(true),
    } && !grants.lock().contains(&key);
    if needs_approval {
        if Mode::of(&turn.approval_policy) == Mode::Never {
            return item.refused(turn, started, NEVER_APPROVED).await;
        }
        // With the guardian, its review comes first (docs/protocol.md §9.8).
        let review = turn.reviewer.is_some().then(|| {
            ReviewRequest::mcp_tool(call_id, &server.config.name, &tool, &tool_name, &arguments)
        });
        let verdict = match review {
            Some(review) => turn.guardian_review(review).await,
            None => None,
        };
        let ask_user = match verdict {
            Some(Verdict::Denied(text)) => return item.refused(turn, started, &text).await,
            Some(Verdict::Cancelled) => return item.refused(turn, started, CANCELLED).await,
            Some(Verdict::Approved) => false,
            Some(Verdict::AskUser) | None => true,
        };
        if ask_user {
            let wait = waits.begin(turn).await;
            let params = approval_params(turn, &server, &tool_name, &tool, &arguments);
            let outcome =
                approval::ask(turn, ServerRequestParams::McpElicitation(Box::new(params))).await;
            wait.release().await;
            match approval_answer(&outcome) {
                Approval::Accept { session } => {
                    if session {
                        grants.lock().insert(key);
                    }
                }
                Approval::Decline => return item.refused(turn, started, DECLINED).await,
                Approval::Cancel => return item.refused(turn, started, CANCELLED).await,
            }
        }
    }
    let connection = match pool.connect(&server.config.name).await {
        Ok(connection) => connection,
        Err(error) => return item.refused(turn, started, &error).await,
    };
    let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel();
    let object = match arguments {
        Value::Object(map) => Some(map),
        Value::Null => None,
        other => {
            let mut map = Map::new();
            map.insert("value".into(), other);
            Some(map)
        }
    };
    let call = connection.call_tool(
        &tool_name,
        object,
        server.config.tool_timeout,
        Some(progress_tx),
        Some(asker(turn, &server.config.name)),
        &turn.cancel,
    );
    tokio::pin!(call);
    let result = loop {
        tokio::select! {
            result = &mut call => break result,
            Some(progress) = progress_rx.recv() => {
                let message = progress.message.clone().unwrap_or_else(|| match progress.total {
                    Some(total) => format!("{} / {total}", progress.progress),
                    None => format!("{}", progress.progress),
                });
                turn.sink.emit(&turn.thread_id, ThreadEvent::McpToolCallProgress {
                    turn_id: turn.turn_id.clone(),
                    item_id: ItemId::from(call_id.to_string()),
                    message,
                }).await;
            }
        }
    };
    match result {
        Ok(result) => item.finished(turn, started, result).await,
        Err(CallError::Cancelled) => {
            item.refused(
                turn,
                started,
                &format!(
                    "aborted by user after {:.1}s",
                    started.elapsed().as_secs_f64().max(0.1)
                ),
            )
            .await
        }
        Err(err) => {
            let message = format!("tool call error: {err}");
            item.refused(turn, started, &message).await
        }
    }
}

/// Forwards the server's questions attributed to this call to the thread's clients, as
/// `mcpServer/elicitation/request` (docs/mcp.md §5); nobody answering is `cancel`. Warnings
/// about questions Weft answered itself go to the thread as `warning`s.
fn asker(turn: &ToolTurn, server: &str) -> crate::mcp::connection::Asker {
    let warn_turn = turn.clone();
    let warn: crate::mcp::connection::WarnFn = Arc::new(move |message: String| {
        let turn = warn_turn.clone();
        Box::pin(async move {
            let event = ThreadEvent::Warning {
                turn_id: Some(turn.turn_id.clone()),
                message,
            };
            turn.sink.emit(&turn.thread_id, event).await;
        })
    });
    crate::mcp::connection::Asker {
        thread: turn.thread_id.to_string(),
        ask: ask_clients(turn, server),
        warn,
    }
}

fn ask_clients(turn: &ToolTurn, server: &str) -> crate::mcp::connection::AskFn {
    let turn = turn.clone();
    let server = server.to_string();
    Arc::new(move |request: Value| {
        let turn = turn.clone();
        let server = server.clone();
        Box::pin(async move {
            let request = match serde_json::from_value::<McpServerElicitationRequest>(
                form_for_clients(request),
            ) {
                Ok(request) => request,
                Err(err) => {
                    tracing::warn!(%server, %err, "an MCP elicitation Weft cannot show: declined");
                    return json!({"action": "decline"});
                }
            };
            let params = McpServerElicitationRequestParams {
                thread_id: turn.thread_id.clone(),
                turn_id: Some(turn.turn_id.clone()),
                server_name: server,
                environment_id: None,
                request,
            };
            match approval::ask(&turn, ServerRequestParams::McpElicitation(Box::new(params))).await
            {
                ServerRequestOutcome::Answered(answer) => answer,
                _ => json!({"action": "cancel"}),
            }
        })
    })
}

/// A server's form as the protocol carries it: the form's own keys only (`$schema`, `type`,
/// `properties`, `required`); a `title` or `description` a server's SDK adds to the form
/// object (FastMCP does) is not part of the restricted schema clients take.
fn form_for_clients(mut request: Value) -> Value {
    if let Some(Value::Object(schema)) = request.get_mut("requestedSchema") {
        schema.retain(|key, _| {
            matches!(key.as_str(), "$schema" | "type" | "properties" | "required")
        });
    }
    request
}

/// The `mcpServer/elicitation/request` that asks to run a tool, as the reference sends it.
fn approval_params(
    turn: &ToolTurn,
    server: &OfferedServer,
    name: &str,
    tool: &Value,
    arguments: &Value,
) -> McpServerElicitationRequestParams {
    let display: Vec<Value> = arguments
        .as_object()
        .map(|map| {
            map.iter()
                .map(|(key, value)| json!({"name": key, "value": value, "display_name": key}))
                .collect()
        })
        .unwrap_or_default();
    let mut meta = json!({
        "codex_approval_kind": "mcp_tool_call",
        "persist": ["session", "always"],
        "tool_name": name,
        "tool_params": arguments,
        "tool_params_display": display,
    });
    if let Some(description) = tool.get("description") {
        meta["tool_description"] = description.clone();
    }
    McpServerElicitationRequestParams {
        thread_id: turn.thread_id.clone(),
        turn_id: Some(turn.turn_id.clone()),
        server_name: server.config.name.clone(),
        environment_id: None,
        request: McpServerElicitationRequest::Form {
            meta: Some(meta),
            message: format!(
                "Allow the {} MCP server to run tool \"{name}\"?",
                server.config.name
            ),
            requested_schema: McpElicitationSchema::empty(),
        },
    }
}

enum Approval {
    Accept { session: bool },
    Decline,
    Cancel,
}

fn approval_answer(outcome: &ServerRequestOutcome) -> Approval {
    let ServerRequestOutcome::Answered(answer) = outcome else {
        return Approval::Cancel;
    };
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => {
            let persist = |v: Option<&Value>| {
                v.and_then(|meta| meta.get("persist"))
                    .and_then(Value::as_str)
                    .is_some_and(|p| p == "session" || p == "always")
            };
            Approval::Accept {
                session: persist(answer.get("_meta")) || persist(answer.get("content")),
            }
        }
        Some("decline") => Approval::Decline,
        _ => Approval::Cancel,
    }
}

/// The item of one call, and what the model gets at its end.
struct Item {
    id: String,
    server: String,
    tool: String,
    arguments: Value,
    read_only: Option<bool>,
    started_at: i64,
}

impl Item {
    fn wire(
        &self,
        status: McpToolCallStatus,
        result: Option<McpToolCallResult>,
        error: Option<McpToolCallError>,
        duration: Option<i64>,
    ) -> ThreadItem {
        let mut call = McpToolCallItem::started(
            ItemId::from(self.id.clone()),
            self.server.clone(),
            self.tool.clone(),
            self.arguments.clone(),
        );
        call.status = status;
        call.read_only_hint = self.read_only;
        call.result = result;
        call.error = error;
        call.duration_ms = duration;
        let mut item = ThreadItem::from(call);
        item.started_at_ms = Some(self.started_at);
        if duration.is_some() {
            item.completed_at_ms = Some(now_ms());
        }
        item
    }

    async fn emit_started(&mut self, turn: &ToolTurn) {
        let item = self.wire(McpToolCallStatus::InProgress, None, None, None);
        turn.item_started(item).await;
    }

    async fn complete(&self, turn: &ToolTurn, item: ThreadItem) {
        turn.item_completed(item).await;
    }

    /// The call did not run, or failed without a result: `error` set, `result` null.
    async fn refused(&self, turn: &ToolTurn, started: Instant, message: &str) -> ToolOutput {
        let duration = millis(started);
        let item = self.wire(
            McpToolCallStatus::Failed,
            None,
            Some(McpToolCallError {
                message: message.to_string(),
            }),
            Some(duration),
        );
        self.complete(turn, item).await;
        failure_output(started, vec![message.to_string()])
    }

    /// The server answered: `completed`, or `failed` with the result when `isError`.
    async fn finished(&self, turn: &ToolTurn, started: Instant, result: Value) -> ToolOutput {
        let duration = millis(started);
        let is_error = result
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let content = result.get("content").cloned().unwrap_or_else(|| json!([]));
        let structured = result
            .get("structuredContent")
            .cloned()
            .filter(|v| !v.is_null());
        let wire_result = McpToolCallResult {
            content: content.as_array().cloned().unwrap_or_default(),
            structured_content: structured.clone(),
            meta: result.get("_meta").cloned().filter(|v| !v.is_null()),
        };
        let status = if is_error {
            McpToolCallStatus::Failed
        } else {
            McpToolCallStatus::Completed
        };
        let item = self.wire(status, Some(wire_result), None, Some(duration));
        self.complete(turn, item).await;
        if is_error {
            return failure_output(started, texts(&content));
        }
        success_output(started, &content, structured)
    }
}

#[cfg(test)]
#[path = "mcp_tool/tests.rs"]
mod tests;

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

use serde_json::{Map, Value, json};
use weft_protocol::{
    ItemId, McpElicitationSchema, McpServerElicitationRequest, McpServerElicitationRequestParams,
    McpToolCallError, McpToolCallItem, McpToolCallResult, McpToolCallStatus, ThreadItem,
};

use super::approval::{self, Mode};
use super::context::ToolTurn;
use crate::events::{ServerRequestOutcome, ServerRequestParams, ThreadEvent};
use crate::mcp::{ApprovalMode, CallError, McpPool, OfferedServer};
use crate::model::{ContentItem, ToolOutput};
use crate::time::now_ms;

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

/// The tool definitions of the pool's running servers, then the resource tools.
pub fn specs(pool: &McpPool) -> Vec<Value> {
    if !pool.has_servers() {
        return Vec::new();
    }
    let mut specs: Vec<Value> = resource_tool_specs();
    for server in pool.offered() {
        if server.tools.is_empty() {
            continue;
        }
        let tools: Vec<Value> = server.tools.iter().filter_map(function_spec).collect();
        specs.push(json!({
            "type": "namespace",
            "name": namespace_name(&server),
            "description": namespace_description(&server),
            "tools": tools,
        }));
    }
    specs
}

/// The resource tools alone (offered inline also when the servers' tools are deferred behind
/// `tool_search`, docs/mcp.md §4); none when no server is configured.
pub fn resource_specs(pool: &McpPool) -> Vec<Value> {
    if pool.has_servers() {
        resource_tool_specs()
    } else {
        Vec::new()
    }
}

/// `mcp__NAME`.
pub fn namespace_name(server: &OfferedServer) -> String {
    format!("{NAMESPACE_PREFIX}{}", server.config.name)
}

/// A server's namespace description: its `initialize` instructions, or a line naming it.
pub fn namespace_description(server: &OfferedServer) -> String {
    server
        .instructions
        .clone()
        .filter(|text| !text.trim().is_empty())
        .unwrap_or_else(|| format!("Tools of the `{}` MCP server.", server.config.name))
}

/// One MCP tool as a Responses API function (`strict: false`, the cleaned input schema).
pub fn function_spec(tool: &Value) -> Option<Value> {
    Some(json!({
        "type": "function",
        "name": tool.get("name")?.as_str()?,
        "description": tool.get("description").and_then(Value::as_str).unwrap_or_default(),
        "strict": false,
        "parameters": clean_schema(tool.get("inputSchema").cloned().unwrap_or_else(|| json!({}))),
    }))
}

fn resource_tool_specs() -> Vec<Value> {
    let server = |what: &str| json!({"type": "string", "description": format!("The MCP server's name, as configured. Leave it out to {what} every server.")});
    let cursor = json!({"type": "string", "description": "The cursor a previous call returned, for the next page."});
    vec![
        json!({
            "type": "function",
            "name": LIST_RESOURCES_TOOL,
            "description": "List the resources (files, records, documents) that the configured MCP servers make available to read.",
            "strict": false,
            "parameters": {"type": "object", "properties": {"cursor": cursor, "server": server("list the resources of")}, "additionalProperties": false},
        }),
        json!({
            "type": "function",
            "name": LIST_TEMPLATES_TOOL,
            "description": "List the resource templates (URI patterns with parameters) of the configured MCP servers.",
            "strict": false,
            "parameters": {"type": "object", "properties": {"cursor": cursor, "server": server("list the templates of")}, "additionalProperties": false},
        }),
        json!({
            "type": "function",
            "name": READ_RESOURCE_TOOL,
            "description": "Read one resource of an MCP server by its URI.",
            "strict": false,
            "parameters": {
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "The MCP server's name, as list_mcp_resources reports it."},
                    "uri": {"type": "string", "description": "The resource's URI, as list_mcp_resources reports it."},
                },
                "required": ["server", "uri"],
                "additionalProperties": false,
            },
        }),
    ]
}

/// An input schema as the model gets it: every `title` dropped (property *names* kept), and
/// an object schema at the top.
pub fn clean_schema(schema: Value) -> Value {
    let mut schema = strip_titles(schema);
    if let Value::Object(map) = &mut schema {
        map.entry("type").or_insert_with(|| json!("object"));
        if map.get("type") == Some(&json!("object")) {
            map.entry("properties").or_insert_with(|| json!({}));
        }
    } else {
        schema = json!({"type": "object", "properties": {}});
    }
    schema
}

fn strip_titles(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(key, _)| key != "title")
                .map(|(key, value)| {
                    let value = match (key.as_str(), value) {
                        // A map of names to schemas: keep every name, clean each schema.
                        (
                            "properties" | "$defs" | "definitions" | "patternProperties",
                            Value::Object(inner),
                        ) => Value::Object(
                            inner
                                .into_iter()
                                .map(|(k, v)| (k, strip_titles(v)))
                                .collect(),
                        ),
                        (_, value) => strip_titles(value),
                    };
                    (key, value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(strip_titles).collect()),
        other => other,
    }
}

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

/// Runs one call of an MCP tool; returns what the model gets.
pub async fn call(
    pool: &Arc<McpPool>,
    grants: &SessionGrants,
    waits: &approval::ApprovalWaits,
    turn: &ToolTurn,
    call_id: &str,
    target: Target,
    arguments: &str,
) -> ToolOutput {
    let Target { server, tool } = target;
    let started = Instant::now();
    let tool_name = tool
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
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
        let wait = waits.begin(turn).await;
        let params = approval_params(turn, &server, &tool, &arguments);
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

/// Forwards the server's own questions during the call to the thread's clients, as
/// `mcpServer/elicitation/request` (docs/mcp.md §5); nobody answering is `cancel`.
fn asker(turn: &ToolTurn, server: &str) -> crate::mcp::connection::Asker {
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
    tool: &Value,
    arguments: &Value,
) -> McpServerElicitationRequestParams {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
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
        turn.sink
            .emit(
                &turn.thread_id,
                ThreadEvent::ItemStarted {
                    turn_id: turn.turn_id.clone(),
                    item,
                },
            )
            .await;
    }

    async fn complete(&self, turn: &ToolTurn, item: ThreadItem) {
        turn.sink
            .emit(
                &turn.thread_id,
                ThreadEvent::ItemCompleted {
                    turn_id: turn.turn_id.clone(),
                    item,
                },
            )
            .await;
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

fn millis(started: Instant) -> i64 {
    i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX)
}

fn wall_time(started: Instant) -> String {
    format!(
        "Wall time: {:.4} seconds\nOutput:",
        started.elapsed().as_secs_f64()
    )
}

fn texts(content: &Value) -> Vec<String> {
    content
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn failure_output(started: Instant, messages: Vec<String>) -> ToolOutput {
    let mut parts = vec![ContentItem::InputText {
        text: wall_time(started),
    }];
    parts.extend(
        messages
            .into_iter()
            .map(|text| ContentItem::InputText { text }),
    );
    ToolOutput::Content(parts)
}

/// Structured content as compact JSON; else the text parts; images as image parts.
fn success_output(started: Instant, content: &Value, structured: Option<Value>) -> ToolOutput {
    let head = wall_time(started);
    if let Some(structured) = structured {
        return ToolOutput::Text(format!("{head}\n{structured}"));
    }
    let parts = content.as_array().cloned().unwrap_or_default();
    let images: Vec<&Value> = parts
        .iter()
        .filter(|p| p.get("type") == Some(&json!("image")))
        .collect();
    if images.is_empty() {
        let body = texts(content).join("\n");
        let body = if body.is_empty() && !parts.is_empty() {
            content.to_string()
        } else {
            body
        };
        return ToolOutput::Text(format!("{head}\n{body}"));
    }
    let mut items = vec![ContentItem::InputText { text: head }];
    for part in &parts {
        match part.get("type").and_then(Value::as_str) {
            Some("text") => items.push(ContentItem::InputText {
                text: part
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            }),
            Some("image") => {
                let mime = part
                    .get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("image/png");
                let data = part.get("data").and_then(Value::as_str).unwrap_or_default();
                items.push(ContentItem::InputImage {
                    image_url: format!("data:{mime};base64,{data}"),
                    detail: None,
                });
            }
            _ => items.push(ContentItem::InputText {
                text: part.to_string(),
            }),
        }
    }
    ToolOutput::Content(items)
}

/// Runs `list_mcp_resources`, `list_mcp_resource_templates` or `read_mcp_resource`; returns the
/// JSON text the model gets.
pub async fn resource_tool(pool: &Arc<McpPool>, name: &str, arguments: &str) -> String {
    let args: Value = serde_json::from_str(if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    })
    .unwrap_or(Value::Null);
    let Some(args) = args.as_object() else {
        return "failed to parse function arguments: expected an object".to_string();
    };
    let server = args
        .get("server")
        .and_then(Value::as_str)
        .map(str::to_string);
    let cursor = args
        .get("cursor")
        .and_then(Value::as_str)
        .map(str::to_string);
    match name {
        READ_RESOURCE_TOOL => {
            let (Some(server), Some(uri)) = (server, args.get("uri").and_then(Value::as_str))
            else {
                return "read_mcp_resource needs `server` and `uri`".to_string();
            };
            match pool.connect(&server).await {
                Ok(connection) => match connection.read_resource(uri).await {
                    Ok(result) => json!({"server": server, "uri": uri, "contents": result.get("contents").cloned().unwrap_or_else(|| json!([]))}).to_string(),
                    Err(err) => format!("resources/read failed: {err}"),
                },
                Err(err) => err,
            }
        }
        _ => {
            let templates = name == LIST_TEMPLATES_TOOL;
            let key = if templates {
                "resourceTemplates"
            } else {
                "resources"
            };
            let names: Vec<String> = match server {
                Some(server) => vec![server],
                None => pool
                    .servers()
                    .into_iter()
                    .filter(|s| s.config.enabled)
                    .map(|s| s.config.name.clone())
                    .collect(),
            };
            let single = names.len() == 1;
            let mut listed = Vec::new();
            let mut next_cursor = Value::Null;
            for name in names {
                let connection = match pool.connect(&name).await {
                    Ok(connection) => connection,
                    Err(err) if single => return err,
                    Err(_) => continue,
                };
                let page = if templates {
                    connection
                        .list_resource_templates(if single { cursor.clone() } else { None })
                        .await
                } else {
                    connection
                        .list_resources(if single { cursor.clone() } else { None })
                        .await
                };
                match page {
                    Ok(page) => {
                        for mut entry in page
                            .get(key)
                            .and_then(Value::as_array)
                            .cloned()
                            .unwrap_or_default()
                        {
                            entry["server"] = json!(name);
                            listed.push(entry);
                        }
                        if single {
                            next_cursor = page.get("nextCursor").cloned().unwrap_or(Value::Null);
                        }
                    }
                    Err(err) if single => return format!("listing failed: {err}"),
                    Err(_) => {}
                }
            }
            json!({key: listed, "nextCursor": next_cursor}).to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_lose_their_titles_but_not_properties_named_title() {
        let schema = json!({
            "title": "addArguments", "type": "object",
            "properties": {
                "a": {"title": "A", "type": "integer"},
                "title": {"title": "Title", "type": "string"},
                "list": {"type": "array", "items": {"title": "Item", "type": "string"}},
            },
            "$defs": {"Point": {"title": "Point", "type": "object"}},
            "required": ["a"],
        });
        assert_eq!(
            clean_schema(schema),
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "integer"},
                    "title": {"type": "string"},
                    "list": {"type": "array", "items": {"type": "string"}},
                },
                "$defs": {"Point": {"type": "object"}},
                "required": ["a"],
            })
        );
        assert_eq!(
            clean_schema(json!({})),
            json!({"type": "object", "properties": {}})
        );
        assert_eq!(
            clean_schema(json!(true)),
            json!({"type": "object", "properties": {}})
        );
    }

    #[test]
    fn outputs_have_the_wall_time_then_the_content() {
        let started = Instant::now();
        let ToolOutput::Text(text) = success_output(
            started,
            &json!([{"type": "text", "text": "x"}]),
            Some(json!({"result": 5})),
        ) else {
            panic!("text expected");
        };
        let (head, body) = text.split_once("\nOutput:\n").expect("two parts");
        assert!(
            head.starts_with("Wall time: ") && head.ends_with(" seconds"),
            "{head}"
        );
        assert_eq!(body, r#"{"result":5}"#);
        let ToolOutput::Text(text) = success_output(
            started,
            &json!([{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]),
            None,
        ) else {
            panic!("text expected");
        };
        assert!(text.ends_with("\nOutput:\none\ntwo"), "{text}");
        let ToolOutput::Content(parts) = success_output(
            started,
            &json!([{"type": "image", "data": "AAAA", "mimeType": "image/png"}]),
            None,
        ) else {
            panic!("content expected");
        };
        assert_eq!(
            parts[1],
            ContentItem::InputImage {
                image_url: "data:image/png;base64,AAAA".into(),
                detail: None
            }
        );
        let ToolOutput::Content(parts) = failure_output(started, vec!["boom".into()]) else {
            panic!("content expected");
        };
        assert_eq!(
            parts[1],
            ContentItem::InputText {
                text: "boom".into()
            }
        );
    }

    #[test]
    fn approval_answers() {
        let answered = |v: Value| approval_answer(&ServerRequestOutcome::Answered(v));
        assert!(matches!(
            answered(json!({"action": "accept"})),
            Approval::Accept { session: false }
        ));
        assert!(matches!(
            answered(json!({"action": "accept", "_meta": {"persist": "session"}})),
            Approval::Accept { session: true }
        ));
        assert!(matches!(
            answered(json!({"action": "decline"})),
            Approval::Decline
        ));
        assert!(matches!(
            answered(json!({"action": "cancel"})),
            Approval::Cancel
        ));
        assert!(matches!(
            answered(json!({"action": "other"})),
            Approval::Cancel
        ));
        assert!(matches!(
            approval_answer(&ServerRequestOutcome::Cancelled),
            Approval::Cancel
        ));
    }

    #[test]
    fn no_servers_no_tools() {
        assert!(specs(&McpPool::empty()).is_empty());
        assert!(!is_resource_tool(&McpPool::empty(), READ_RESOURCE_TOOL));
        assert!(resolve(&McpPool::empty(), Some("mcp__x"), "y").is_none());
    }
}

//! The MCP client methods (docs/mcp.md §6): `mcpServerStatus/list`, `mcpServer/tool/call`,
//! `mcpServer/resource/read`, `config/mcpServer/reload`; and the per-thread
//! `mcpServer/startupStatus/updated` notifications that follow `thread/start`.
//!
//! Every thread shares the daemon's one pool (`weft_core::mcp::McpPool`): a status is the
//! server's, whichever thread asks.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use weft_core::mcp::{McpPool, ServerStatus};
use weft_protocol::config_api::NoParams;
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::notifications::ServerNotification;
use weft_protocol::{
    ListMcpServerStatusParams, ListMcpServerStatusResponse, McpAuthStatus, McpResourceReadParams,
    McpResourceReadResponse, McpServerConnectionStatus, McpServerInfo, McpServerRefreshResponse,
    McpServerStartupState, McpServerStatus, McpServerStatusDetail,
    McpServerStatusUpdatedNotification, McpServerToolCallParams, McpServerToolCallResponse,
    McpTool, ThreadId,
};

use crate::dispatch::{Context, HandlerResult};
use crate::handlers::parse_thread_id;
use crate::state::AppState;

/// The default page size of `mcpServerStatus/list`.
const DEFAULT_PAGE: usize = 100;

fn pool(state: &AppState) -> Arc<McpPool> {
    Arc::clone(&state.threads.services().mcp)
}

/// `mcpServer/startupStatus/updated` for each enabled server, to the thread's subscribers:
/// `starting`, then `ready` or `failed` once the shared server is up (started now, if no
/// thread started it before).
pub async fn announce_startup(state: &AppState, thread_id: &ThreadId) {
    let pool = pool(state);
    let Some(subscribers) = state.subscribers_of(thread_id) else {
        return;
    };
    let servers: Vec<String> = pool
        .servers()
        .into_iter()
        .filter(|server| server.config.enabled)
        .map(|server| server.config.name.clone())
        .collect();
    for name in servers {
        let pool = Arc::clone(&pool);
        let subscribers = Arc::clone(&subscribers);
        let thread_id = thread_id.clone();
        tokio::spawn(async move {
            let notify = |status, error| {
                ServerNotification::from(McpServerStatusUpdatedNotification {
                    thread_id: Some(thread_id.clone()),
                    name: name.clone(),
                    environment_id: None,
                    status,
                    error,
                    failure_reason: None,
                })
            };
            subscribers
                .notify(&notify(McpServerStartupState::Starting, None))
                .await;
            let done = match pool.connect(&name).await {
                Ok(_) => notify(McpServerStartupState::Ready, None),
                Err(error) => notify(McpServerStartupState::Failed, Some(error)),
            };
            subscribers.notify(&done).await;
        });
    }
}

/// `mcpServerStatus/list`: every configured server, in name order, paged by name.
pub async fn status_list(
    cx: Context<'_>,
    params: ListMcpServerStatusParams,
) -> HandlerResult<ListMcpServerStatusResponse> {
    params.thread_id.as_ref().map_or(Ok(()), parse_thread_id)?;
    let pool = pool(cx.state);
    let limit = params
        .limit
        .map(|limit| (limit as usize).max(1))
        .unwrap_or(DEFAULT_PAGE);
    // The configured servers and the entries that were left out, in name order.
    let mut rows: BTreeMap<String, Row> = pool
        .servers()
        .into_iter()
        .map(|server| (server.config.name.clone(), Row::Server(server)))
        .collect();
    for (name, reason) in pool.invalid() {
        rows.entry(name).or_insert(Row::Invalid(reason));
    }
    let mut rows: Vec<(String, Row)> = rows
        .into_iter()
        .filter(|(name, _)| {
            params
                .server_name
                .as_ref()
                .is_none_or(|wanted| wanted == name)
        })
        .filter(|(name, _)| {
            params
                .cursor
                .as_ref()
                .is_none_or(|cursor| name.as_str() > cursor.as_str())
        })
        .collect();
    let more = rows.len() > limit;
    rows.truncate(limit);
    let next_cursor = more
        .then(|| rows.last().map(|(name, _)| name.clone()))
        .flatten();
    let full = params.detail != Some(McpServerStatusDetail::ToolsAndAuthOnly);
    let mut data = Vec::with_capacity(rows.len());
    for (name, row) in rows {
        let server = match row {
            Row::Server(server) => server,
            Row::Invalid(reason) => {
                data.push(McpServerStatus {
                    name,
                    environment_id: None,
                    runtime_status: params
                        .thread_id
                        .as_ref()
                        .map(|_| McpServerConnectionStatus::Failed),
                    plugin_id: None,
                    http_origin: None,
                    server_info: None,
                    server_capabilities: None,
                    tool_list_meta: None,
                    tools: BTreeMap::new(),
                    tools_error: Some(format!("invalid config entry: {reason}")),
                    resources: Vec::new(),
                    resource_templates: Vec::new(),
                    auth_status: McpAuthStatus::Unsupported,
                });
                continue;
            }
        };
        // Asking about a server starts it when it is enabled and not running (the reference
        // answers from a live session too); a failure is reported, not an error.
        let connection = if server.config.enabled {
            pool.connect(&server.config.name).await.ok()
        } else {
            None
        };
        let tools: BTreeMap<String, McpTool> = connection
            .as_ref()
            .map(|connection| {
                connection
                    .tools()
                    .into_iter()
                    .filter_map(|tool| serde_json::from_value::<McpTool>(tool).ok())
                    .filter(|tool| server.config.tool_allowed(&tool.name))
                    .map(|tool| (tool.name.clone(), tool))
                    .collect()
            })
            .unwrap_or_default();
        let (resources, resource_templates) = match (&connection, full) {
            (Some(connection), true) if connection.has_resources => {
                let resources = listed(connection.list_resources(None).await, "resources");
                let templates = listed(
                    connection.list_resource_templates(None).await,
                    "resourceTemplates",
                );
                (resources, templates)
            }
            _ => (Vec::new(), Vec::new()),
        };
        let runtime_status = params.thread_id.as_ref().map(|_| match server.status() {
            ServerStatus::Idle => McpServerConnectionStatus::NotStarted,
            ServerStatus::Starting => McpServerConnectionStatus::Starting,
            ServerStatus::Ready => McpServerConnectionStatus::Connected,
            ServerStatus::Failed { .. } => McpServerConnectionStatus::Failed,
            ServerStatus::Disabled => McpServerConnectionStatus::Disabled,
        });
        let tools_error = match server.status() {
            ServerStatus::Failed { error, .. } => Some(error),
            _ => None,
        };
        data.push(McpServerStatus {
            name: server.config.name.clone(),
            environment_id: None,
            runtime_status,
            plugin_id: None,
            http_origin: None,
            server_info: connection
                .as_ref()
                .and_then(|c| serde_json::from_value::<McpServerInfo>(c.server_info.clone()).ok()),
            server_capabilities: None,
            tool_list_meta: None,
            tools,
            tools_error,
            resources,
            resource_templates,
            auth_status: weft_core::mcp::oauth::auth_status(&server.config, pool.credentials())
                .await,
        });
    }
    Ok(ListMcpServerStatusResponse { next_cursor, data })
}

/// One line of `mcpServerStatus/list`.
enum Row {
    /// A configured server.
    Server(Arc<weft_core::mcp::Server>),
    /// An entry left out of the config, and why.
    Invalid(String),
}

fn listed<T: serde::de::DeserializeOwned>(
    page: Result<Value, weft_core::mcp::CallError>,
    key: &str,
) -> Vec<T> {
    page.ok()
        .and_then(|page| page.get(key).cloned())
        .and_then(|entries| serde_json::from_value(entries).ok())
        .unwrap_or_default()
}

/// `mcpServer/tool/call`: the client calls a tool itself (no approval, no item, as the
/// reference). An unknown server is `-32603 unknown MCP server '<name>'`.
pub async fn tool_call(
    cx: Context<'_>,
    params: McpServerToolCallParams,
) -> HandlerResult<McpServerToolCallResponse> {
    let (server, connection) = connect(cx.state, &params.server).await?;
    let arguments = match params.arguments {
        Some(Value::Object(map)) => Some(map),
        None | Some(Value::Null) => None,
        Some(_) => {
            return Err(JsonRpcError::invalid_request(
                "`arguments` must be an object",
            ));
        }
    };
    let never = tokio_util::sync::CancellationToken::new();
    let result = connection
        .call_tool(
            &params.tool,
            arguments,
            server.config.tool_timeout,
            None,
            None,
            &never,
        )
        .await
        .map_err(|err| JsonRpcError::internal(err.to_string()))?;
    serde_json::from_value(result).map_err(|err| JsonRpcError::internal(err.to_string()))
}

/// The running session of a configured server (started if needed); `-32603 unknown MCP
/// server '<name>'` for a name the config does not have, as the reference answers.
async fn connect(
    state: &AppState,
    name: &str,
) -> Result<
    (
        Arc<weft_core::mcp::Server>,
        Arc<weft_core::mcp::McpConnection>,
    ),
    JsonRpcError,
> {
    let pool = pool(state);
    let server = pool
        .server(name)
        .ok_or_else(|| JsonRpcError::internal(format!("unknown MCP server '{name}'")))?;
    let connection = pool.connect(name).await.map_err(JsonRpcError::internal)?;
    Ok((server, connection))
}

/// `mcpServer/resource/read`.
pub async fn resource_read(
    cx: Context<'_>,
    params: McpResourceReadParams,
) -> HandlerResult<McpResourceReadResponse> {
    params.thread_id.as_ref().map_or(Ok(()), parse_thread_id)?;
    let (_, connection) = connect(cx.state, &params.server).await?;
    let result = connection
        .read_resource(&params.uri)
        .await
        .map_err(|err| JsonRpcError::internal(err.to_string()))?;
    let contents = result
        .get("contents")
        .cloned()
        .map(serde_json::from_value)
        .transpose()
        .map_err(|err| JsonRpcError::internal(err.to_string()))?
        .unwrap_or_default();
    Ok(McpResourceReadResponse {
        contents,
        origin_call_id: None,
    })
}

/// `config/mcpServer/reload`: the config file's `mcp_servers` read again; changed and removed
/// servers are stopped, new and changed ones start when next needed.
pub async fn reload(cx: Context<'_>, _params: NoParams) -> HandlerResult<McpServerRefreshResponse> {
    let servers = weft_core::mcp::config::reread(&cx.state.config.layers)
        .map_err(JsonRpcError::invalid_request)?;
    let stopped = pool(cx.state).reload(servers).await;
    if !stopped.is_empty() {
        tracing::info!(?stopped, "MCP servers stopped by reload");
    }
    Ok(McpServerRefreshResponse {})
}

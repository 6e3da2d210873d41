//! MCP servers as seen by clients: the params and results of `mcpServerStatus/list`,
//! `mcpServer/tool/call`, `mcpServer/resource/read` and `config/mcpServer/reload`, with the
//! server inventory they carry (tools, resources, resource templates).
//!
//! These methods are declared but not served yet (`requests::PENDING_CLIENT_METHODS`), so a
//! client calling one still gets the unknown-method error (docs/protocol.md §7.17).
//!
//! Two ways of writing an absent value meet here. Objects the reference builds for the
//! app-server protocol itself (`McpServerStatus`, `McpServerInfo`) write every key, `null` when
//! absent, as the rest of Weft does (docs/protocol.md §1.2). Objects that mirror MCP's own
//! types (`Tool`, `Resource`, `ResourceTemplate`, resource contents, a tool call's result) leave
//! absent optional keys out, as the reference does on the wire.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::ThreadId;

/// How much of each server's inventory `mcpServerStatus/list` fetches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpServerStatusDetail {
    /// Tools, resources, resource templates and auth status (the default).
    Full,
    /// Only tools and auth status; `resources` and `resourceTemplates` come back empty.
    ToolsAndAuthOnly,
}

/// Params of `mcpServerStatus/list` (all optional).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListMcpServerStatusParams {
    /// Opaque cursor from a previous page's `nextCursor`.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Page size; the server picks one when absent.
    #[serde(default)]
    pub limit: Option<u32>,
    /// How much to fetch per server; `full` when absent.
    #[serde(default)]
    pub detail: Option<McpServerStatusDetail>,
    /// Only this server. With `threadId`, the thread's own connection to it is used.
    #[serde(default)]
    pub server_name: Option<String>,
    /// The thread whose MCP connections to report on.
    #[serde(default)]
    pub thread_id: Option<ThreadId>,
    /// Only the registration of this environment; needs `serverName` and `threadId`.
    #[serde(default)]
    pub environment_id: Option<String>,
}

/// How a server's client authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpAuthStatus {
    /// Not determined.
    Unknown,
    /// The transport has no authentication (e.g. stdio).
    Unsupported,
    /// Authentication is possible but no credentials are stored.
    NotLoggedIn,
    /// A static bearer token is configured.
    BearerToken,
    /// OAuth credentials are stored.
    #[serde(rename = "oAuth")]
    OAuth,
}

/// The state of a thread's connection to a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpServerConnectionStatus {
    /// Configured, not started.
    NotStarted,
    /// Starting up (spawned or connecting, not initialized yet).
    Starting,
    /// Initialized and usable.
    Connected,
    /// The server asks for credentials.
    AuthenticationRequired,
    /// Start-up failed.
    Failed,
    /// Start-up was cancelled.
    Cancelled,
    /// Disabled in the configuration.
    Disabled,
}

/// What a server said about itself in its `initialize` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerInfo {
    /// Server name.
    pub name: String,
    /// Display title.
    #[serde(default)]
    pub title: Option<String>,
    /// Server version (`""` when it gave none).
    pub version: String,
    /// Description.
    #[serde(default)]
    pub description: Option<String>,
    /// Icons, as the server sent them.
    #[serde(default)]
    pub icons: Option<Vec<Value>>,
    /// Website.
    #[serde(default)]
    pub website_url: Option<String>,
}

/// A tool as the server lists it (MCP `Tool`). Absent optional keys are left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "Tool")]
pub struct McpTool {
    /// Tool name.
    pub name: String,
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments.
    pub input_schema: Value,
    /// JSON Schema of `structuredContent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// Hints such as `readOnlyHint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Value>>,
    /// Opaque metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// A resource the server can read (MCP `Resource`). Absent optional keys are left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "Resource")]
pub struct McpResource {
    /// Resource URI.
    pub uri: String,
    /// Resource name.
    pub name: String,
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<i64>,
    /// Annotations (audience, priority, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Value>>,
    /// Opaque metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// A family of resources named by a URI template (MCP `ResourceTemplate`). Absent optional
/// keys are left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(rename = "ResourceTemplate")]
pub struct McpResourceTemplate {
    /// RFC 6570 URI template.
    pub uri_template: String,
    /// Template name.
    pub name: String,
    /// Display title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of the resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

/// One configured server in `mcpServerStatus/list`. Every key is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatus {
    /// The server's name in the configuration.
    pub name: String,
    /// The environment that registered it; `null` for a server of the whole thread.
    #[serde(default)]
    pub environment_id: Option<String>,
    /// The thread's connection state; `null` without a thread or when unknown.
    #[serde(default)]
    pub runtime_status: Option<McpServerConnectionStatus>,
    /// The plugin that contributed the server.
    #[serde(default)]
    pub plugin_id: Option<String>,
    /// Origin (scheme, host, port) of an HTTP server's endpoint; `null` for stdio.
    #[serde(default)]
    pub http_origin: Option<String>,
    /// From the server's `initialize` answer; `null` when it never answered.
    #[serde(default)]
    pub server_info: Option<McpServerInfo>,
    /// The capabilities of the server's `initialize` answer, as sent.
    #[serde(default)]
    pub server_capabilities: Option<Value>,
    /// `_meta` of the first page of `tools/list`.
    #[serde(default)]
    pub tool_list_meta: Option<Value>,
    /// Tools by name.
    pub tools: BTreeMap<String, McpTool>,
    /// Why listing the tools failed; `null` whenever a list (even an empty one) was obtained.
    #[serde(default)]
    pub tools_error: Option<String>,
    /// Resources (empty with `detail: toolsAndAuthOnly`).
    pub resources: Vec<McpResource>,
    /// Resource templates (empty with `detail: toolsAndAuthOnly`).
    pub resource_templates: Vec<McpResourceTemplate>,
    /// How the server's client authenticates.
    pub auth_status: McpAuthStatus,
}

/// Result of `mcpServerStatus/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListMcpServerStatusResponse {
    /// One entry per server.
    pub data: Vec<McpServerStatus>,
    /// Cursor of the next page; `null` on the last one.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// Params of `mcpServer/tool/call`: a client calls a tool itself, without a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerToolCallParams {
    /// The thread whose connection to the server is used.
    pub thread_id: ThreadId,
    /// Server name.
    pub server: String,
    /// Tool name.
    pub tool: String,
    /// The tool's arguments.
    #[serde(default)]
    pub arguments: Option<Value>,
    /// Request metadata passed to the server.
    #[serde(rename = "_meta", default)]
    pub meta: Option<Value>,
    /// Which environment's registration of the server; by name only when absent.
    #[serde(default)]
    pub environment_id: Option<String>,
}

/// Result of `mcpServer/tool/call`: the server's `CallToolResult`. Absent optional keys are
/// left out (the reference omits `structuredContent` for a failing tool).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerToolCallResponse {
    /// Content blocks (text, image, …), as the server sent them.
    pub content: Vec<Value>,
    /// Structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool reported an error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Opaque metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// An explicit hosted app and account for `mcpServer/resource/read`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpResourceReadTarget {
    /// The connector.
    pub connector_id: String,
    /// The account link; required but nullable: `null` asks for access without one.
    #[schemars(required, schema_with = "crate::schema_base::nullable_string")]
    pub link_id: Option<String>,
}

/// Params of `mcpServer/resource/read`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpResourceReadParams {
    /// The thread whose connection is used.
    #[serde(default)]
    pub thread_id: Option<ThreadId>,
    /// Server name.
    pub server: String,
    /// Resource URI.
    pub uri: String,
    /// Request metadata (an object).
    #[serde(rename = "_meta", default)]
    pub meta: Option<BTreeMap<String, Value>>,
    /// Which environment's registration of the server; by name only when absent.
    #[serde(default)]
    pub environment_id: Option<String>,
    /// The tool call the resource belongs to (picks the app that serves it).
    #[serde(default)]
    pub origin_call_id: Option<String>,
    /// Hosted connector.
    #[serde(default)]
    pub connector_id: Option<String>,
    /// Explicit hosted app and account.
    #[serde(default)]
    pub target: Option<McpResourceReadTarget>,
}

/// One content of a read resource: text or base64 data. Absent optional keys are left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "ResourceContent")]
pub enum McpResourceContent {
    /// Text content.
    #[serde(rename_all = "camelCase")]
    Text {
        /// The resource's URI.
        uri: String,
        /// MIME type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
        /// Opaque metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    /// Binary content.
    #[serde(rename_all = "camelCase")]
    Blob {
        /// The resource's URI.
        uri: String,
        /// MIME type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Base64 data.
        blob: String,
        /// Opaque metadata.
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
}

/// Result of `mcpServer/resource/read`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpResourceReadResponse {
    /// The contents.
    pub contents: Vec<McpResourceContent>,
    /// The call whose app scoped the read, when one did.
    #[serde(default)]
    pub origin_call_id: Option<String>,
}

/// Result of `config/mcpServer/reload` (which takes no params): `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct McpServerRefreshResponse {}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn list_params_accept_nothing_and_nulls() {
        let empty: ListMcpServerStatusParams = serde_json::from_value(json!({})).unwrap();
        assert_eq!(empty, ListMcpServerStatusParams::default());
        let nulls: ListMcpServerStatusParams = serde_json::from_value(json!({
            "cursor": null, "limit": null, "detail": null, "serverName": null,
            "threadId": null, "environmentId": null}))
        .unwrap();
        assert_eq!(nulls, ListMcpServerStatusParams::default());
        let detail: ListMcpServerStatusParams =
            serde_json::from_value(json!({"detail": "toolsAndAuthOnly", "limit": 5})).unwrap();
        assert_eq!(detail.detail, Some(McpServerStatusDetail::ToolsAndAuthOnly));
        assert_eq!(detail.limit, Some(5));
        let err = serde_json::from_value::<ListMcpServerStatusParams>(json!({"detail": "some"}))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("unknown variant `some`, expected `full` or `toolsAndAuthOnly`"),
            "{err}"
        );
    }

    #[test]
    fn auth_status_spells_oauth_as_the_reference() {
        assert_eq!(
            serde_json::to_value(McpAuthStatus::OAuth).unwrap(),
            json!("oAuth")
        );
        assert_eq!(
            serde_json::to_value(McpAuthStatus::NotLoggedIn).unwrap(),
            json!("notLoggedIn")
        );
        assert_eq!(
            serde_json::to_value(McpServerConnectionStatus::AuthenticationRequired).unwrap(),
            json!("authenticationRequired")
        );
    }

    #[test]
    fn mcp_shaped_objects_leave_absent_keys_out() {
        let tool = McpTool {
            name: "echo".into(),
            title: None,
            description: None,
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: None,
            icons: None,
            meta: None,
        };
        assert_eq!(
            serde_json::to_value(&tool).unwrap(),
            json!({"name": "echo", "inputSchema": {"type": "object"}})
        );
        let answer = McpServerToolCallResponse {
            content: vec![json!({"type": "text", "text": "boom"})],
            structured_content: None,
            is_error: Some(true),
            meta: None,
        };
        assert_eq!(
            serde_json::to_value(&answer).unwrap(),
            json!({"content": [{"type": "text", "text": "boom"}], "isError": true})
        );
        let blob = McpResourceContent::Blob {
            uri: "file:///a.png".into(),
            mime_type: None,
            blob: "AA==".into(),
            meta: None,
        };
        assert_eq!(
            serde_json::to_value(&blob).unwrap(),
            json!({"uri": "file:///a.png", "blob": "AA=="})
        );
        let text: McpResourceContent =
            serde_json::from_value(json!({"uri": "u", "text": "t", "mimeType": "text/plain"}))
                .unwrap();
        assert!(matches!(text, McpResourceContent::Text { .. }));
    }

    #[test]
    fn link_id_is_written_even_when_null() {
        let target = McpResourceReadTarget {
            connector_id: "c".into(),
            link_id: None,
        };
        assert_eq!(
            serde_json::to_value(&target).unwrap(),
            json!({"connectorId": "c", "linkId": null})
        );
    }

    #[test]
    fn tool_call_params_need_thread_server_and_tool() {
        let err =
            serde_json::from_value::<McpServerToolCallParams>(json!({"server": "s", "tool": "t"}))
                .unwrap_err()
                .to_string();
        assert_eq!(err, "missing field `threadId`");
        let params: McpServerToolCallParams = serde_json::from_value(
            json!({"threadId": "th", "server": "s", "tool": "t", "_meta": {"k": 1}}),
        )
        .unwrap();
        assert_eq!(params.arguments, None);
        assert_eq!(params.meta, Some(json!({"k": 1})));
    }

    #[test]
    fn refresh_response_is_an_empty_object() {
        assert_eq!(
            serde_json::to_value(McpServerRefreshResponse {}).unwrap(),
            json!({})
        );
    }
}

//! The `mcpToolCall` thread item (the model called a tool of an MCP server) and the two MCP
//! notifications: `item/mcpToolCall/progress` and `mcpServer/startupStatus/updated`.
//!
//! The item writes every key, `null` when absent (docs/protocol.md §1.2), except the legacy
//! `mcpAppResourceUri`, which the reference leaves out when it has none.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{ItemId, ThreadId, TurnId};

/// Status of an `mcpToolCall` item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpToolCallStatus {
    /// Running, or waiting for the user's approval.
    InProgress,
    /// The tool answered without `isError`.
    Completed,
    /// The tool answered with `isError: true` (then `result` is set), or the call was refused
    /// or could not be made (then `error` is set).
    Failed,
}

/// What the tool answered (its `CallToolResult` without `isError`, which the item's status
/// carries). All three keys are written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpToolCallResult {
    /// Content blocks, as the server sent them.
    pub content: Vec<Value>,
    /// Structured result; `null` when the tool gave none.
    #[serde(default)]
    pub structured_content: Option<Value>,
    /// Opaque metadata; `null` when the tool gave none.
    #[serde(rename = "_meta", default)]
    pub meta: Option<Value>,
}

/// Why a call failed without an answer from the tool (refused, unknown server, transport
/// error).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct McpToolCallError {
    /// The text, e.g. `user rejected MCP tool call`.
    pub message: String,
}

/// The hosted app a call went through (Weft has none, so it writes `null`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpToolCallAppContext {
    /// The connector.
    pub connector_id: String,
    /// The account link.
    #[serde(default)]
    pub link_id: Option<String>,
    /// The app's display name.
    #[serde(default)]
    pub app_name: Option<String>,
    /// The action's display name.
    #[serde(default)]
    pub action_name: Option<String>,
    /// The app's UI resource.
    #[serde(default)]
    pub resource_uri: Option<String>,
}

/// How a tool's UI resource prefers to be shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpAppDisplayMode {
    /// Inside the conversation.
    Inline,
    /// Taking the whole view.
    Fullscreen,
}

/// The UI resource a tool's descriptor names, and how to show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpAppUi {
    /// The UI resource's URI.
    pub resource_uri: String,
    /// Preferred display.
    pub preferred_model_display_mode: McpAppDisplayMode,
}

/// `mcpToolCall` item: the model called a tool of an MCP server. The id is the model's call id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpToolCallItem {
    /// Item id (the model's call id).
    pub id: ItemId,
    /// Server name.
    pub server: String,
    /// The environment that registered the server; `null` for a server of the whole thread.
    #[serde(default)]
    pub environment_id: Option<String>,
    /// Tool name.
    pub tool: String,
    /// Status.
    pub status: McpToolCallStatus,
    /// The model's arguments (any JSON; required).
    pub arguments: Value,
    /// The hosted app the call went through.
    // Boxed: Weft never sets it, and inline it would make every thread item larger.
    #[serde(default)]
    pub app_context: Option<Box<McpToolCallAppContext>>,
    /// The tool's UI resource, from its descriptor.
    #[serde(default)]
    pub mcp_app_ui: Option<McpAppUi>,
    /// Older spelling of `mcpAppUi.resourceUri`; left out when absent, as the reference does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_app_resource_uri: Option<String>,
    /// The plugin that contributed the server.
    #[serde(default)]
    pub plugin_id: Option<String>,
    /// The tool's `readOnlyHint` annotation; `null` when the tool has none.
    #[serde(default)]
    pub read_only_hint: Option<bool>,
    /// What the tool answered; `null` while in progress and when it never answered.
    #[serde(default)]
    pub result: Option<McpToolCallResult>,
    /// Why the call failed without an answer; `null` otherwise.
    #[serde(default)]
    pub error: Option<McpToolCallError>,
    /// How long the call took, in milliseconds; `null` while in progress.
    #[serde(default)]
    pub duration_ms: Option<i64>,
}

impl McpToolCallItem {
    /// An in-progress call: everything but the identity `null`.
    pub fn started(
        id: impl Into<ItemId>,
        server: impl Into<String>,
        tool: impl Into<String>,
        arguments: Value,
    ) -> Self {
        Self {
            id: id.into(),
            server: server.into(),
            environment_id: None,
            tool: tool.into(),
            status: McpToolCallStatus::InProgress,
            arguments,
            app_context: None,
            mcp_app_ui: None,
            mcp_app_resource_uri: None,
            plugin_id: None,
            read_only_hint: None,
            result: None,
            error: None,
            duration_ms: None,
        }
    }
}

/// `item/mcpToolCall/progress`: a progress message from the server during a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpToolCallProgressNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
    /// The `mcpToolCall` item.
    pub item_id: ItemId,
    /// The progress message.
    pub message: String,
}

/// Start-up state of a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpServerStartupState {
    /// Spawning or connecting.
    Starting,
    /// Initialized; its tools are listed.
    Ready,
    /// Start-up failed (`error` says why).
    Failed,
    /// Start-up was cancelled.
    Cancelled,
}

/// Why a start-up failed, when it is something the client can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpServerStartupFailureReason {
    /// The stored credentials no longer work.
    ReauthenticationRequired,
}

/// `mcpServer/startupStatus/updated`: a server of a thread changed start-up state. Every key
/// is written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatusUpdatedNotification {
    /// The thread starting the server; nullable in the schema.
    #[serde(default)]
    pub thread_id: Option<ThreadId>,
    /// Server name.
    pub name: String,
    /// The environment that registered the server; `null` for a server of the whole thread.
    #[serde(default)]
    pub environment_id: Option<String>,
    /// New state.
    pub status: McpServerStartupState,
    /// What went wrong, with `failed`.
    #[serde(default)]
    pub error: Option<String>,
    /// A reason the client can act on, with `failed`.
    #[serde(default)]
    pub failure_reason: Option<McpServerStartupFailureReason>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_started_call_writes_every_key_but_the_legacy_uri() {
        let item = McpToolCallItem::started("call_1", "anchor", "echo", json!({"text": "x"}));
        assert_eq!(
            serde_json::to_value(&item).unwrap(),
            json!({"id": "call_1", "server": "anchor", "environmentId": null, "tool": "echo",
                "status": "inProgress", "arguments": {"text": "x"}, "appContext": null,
                "mcpAppUi": null, "pluginId": null, "readOnlyHint": null, "result": null,
                "error": null, "durationMs": null})
        );
        let with_uri = McpToolCallItem {
            mcp_app_resource_uri: Some("ui://a".into()),
            ..item
        };
        assert_eq!(
            serde_json::to_value(&with_uri).unwrap()["mcpAppResourceUri"],
            json!("ui://a")
        );
    }

    #[test]
    fn arguments_are_required_and_may_be_null() {
        let err = serde_json::from_value::<McpToolCallItem>(
            json!({"id": "c", "server": "s", "tool": "t", "status": "completed"}),
        )
        .unwrap_err()
        .to_string();
        assert_eq!(err, "missing field `arguments`");
        let item: McpToolCallItem = serde_json::from_value(
            json!({"id": "c", "server": "s", "tool": "t", "status": "failed", "arguments": null}),
        )
        .unwrap();
        assert_eq!(item.arguments, Value::Null);
        assert_eq!(item.status, McpToolCallStatus::Failed);
    }

    #[test]
    fn a_result_writes_null_structured_content_and_meta() {
        let result = McpToolCallResult {
            content: vec![json!({"type": "text", "text": "Error executing tool fail"})],
            structured_content: None,
            meta: None,
        };
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({"content": [{"type": "text", "text": "Error executing tool fail"}],
                "structuredContent": null, "_meta": null})
        );
    }

    #[test]
    fn startup_status_writes_every_key() {
        let n = McpServerStatusUpdatedNotification {
            thread_id: Some("t".into()),
            name: "anchor".into(),
            environment_id: None,
            status: McpServerStartupState::Failed,
            error: Some("exited".into()),
            failure_reason: Some(McpServerStartupFailureReason::ReauthenticationRequired),
        };
        assert_eq!(
            serde_json::to_value(&n).unwrap(),
            json!({"threadId": "t", "name": "anchor", "environmentId": null, "status": "failed",
                "error": "exited", "failureReason": "reauthenticationRequired"})
        );
    }
}

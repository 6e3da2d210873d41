//! Server → client requests (approvals, user input) and their responses.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::dynamic_tools::{DynamicToolCallParams, DynamicToolCallResponse};
use crate::ids::{ItemId, ThreadId, TurnId};
use crate::items::CommandAction;
use crate::jsonrpc::RequestId;
use crate::mcp_elicitation::{
    McpServerElicitationRequestParams, McpServerElicitationRequestResponse,
};
use crate::requests::Method;

/// What kind of command approval is requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionApprovalKind {
    /// Run a command (default).
    #[default]
    Command,
    /// Write to a running command's stdin.
    WriteStdin,
    /// A command to be approved by a person.
    HumanCommand,
}

/// Protocol of a network access needing approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum NetworkApprovalProtocol {
    /// HTTP.
    Http,
    /// HTTPS.
    Https,
    /// SOCKS5 TCP.
    Socks5Tcp,
    /// SOCKS5 UDP.
    Socks5Udp,
}

/// Context of a network-only approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NetworkApprovalContext {
    /// Target host.
    pub host: String,
    /// Protocol.
    pub protocol: NetworkApprovalProtocol,
}

/// Action of a network policy rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum NetworkPolicyRuleAction {
    /// Allow the host.
    Allow,
    /// Deny the host.
    Deny,
}

/// A proposed network policy rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NetworkPolicyAmendment {
    /// Host.
    pub host: String,
    /// Action.
    pub action: NetworkPolicyRuleAction,
}

/// The client's decision on a command approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionApprovalDecision {
    /// Run once.
    Accept,
    /// Run, and auto-approve identical requests in this session.
    AcceptForSession,
    /// Run, and persist an allow rule for the argv prefix.
    AcceptWithExecpolicyAmendment {
        /// Argv prefix to allow (snake_case key on the wire).
        execpolicy_amendment: Vec<String>,
    },
    /// Persist a host rule and proceed accordingly.
    ApplyNetworkPolicyAmendment {
        /// The rule (snake_case key on the wire).
        network_policy_amendment: NetworkPolicyAmendment,
    },
    /// Do not run; the turn continues.
    Decline,
    /// Do not run; the turn is interrupted.
    Cancel,
}

/// Params of `item/commandExecution/requestApproval`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionRequestApprovalParams {
    /// Kind of approval.
    #[serde(default)]
    pub kind: CommandExecutionApprovalKind,
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
    /// The `commandExecution` item already started.
    pub item_id: ItemId,
    /// Unix timestamp (ms) when the approval request started.
    pub started_at_ms: i64,
    /// Only for sub-command callbacks; `null` for normal commands.
    #[serde(default)]
    pub approval_id: Option<String>,
    /// Execution environment (Codex: `"local"`).
    #[serde(default)]
    pub environment_id: Option<String>,
    /// Display command, same as the item's.
    #[serde(default)]
    pub command: Option<String>,
    /// Working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Parsed actions.
    #[serde(default)]
    pub command_actions: Option<Vec<CommandAction>>,
    /// Why approval is needed (e.g. the model's justification).
    #[serde(default)]
    pub reason: Option<String>,
    /// Context of a network-only approval.
    #[serde(default)]
    pub network_approval_context: Option<NetworkApprovalContext>,
    /// Argv prefix the client may offer to allow permanently.
    #[serde(default)]
    pub proposed_execpolicy_amendment: Option<Vec<String>>,
    /// Host rules the client may offer.
    #[serde(default)]
    pub proposed_network_policy_amendments: Option<Vec<NetworkPolicyAmendment>>,
    /// EXPERIMENTAL (not in the stable schema): the choices to render. Omitted when `None`;
    /// the server strips it for connections without `experimentalApi`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_decisions: Option<Vec<CommandExecutionApprovalDecision>>,
    /// EXPERIMENTAL (not in the stable schema): extra permissions requested. Loosely typed (the
    /// permission-profile shape is out of scope); omitted when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_permissions: Option<Value>,
}

/// Result of `item/commandExecution/requestApproval`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CommandExecutionRequestApprovalResponse {
    /// The decision.
    pub decision: CommandExecutionApprovalDecision,
}

/// The client's decision on a file change approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum FileChangeApprovalDecision {
    /// Apply once.
    Accept,
    /// Apply, and skip the prompt for later changes to the same files.
    AcceptForSession,
    /// Do not apply; the turn continues.
    Decline,
    /// Do not apply; the turn is interrupted.
    Cancel,
}

/// Params of `item/fileChange/requestApproval`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileChangeRequestApprovalParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
    /// The `fileChange` item already started.
    pub item_id: ItemId,
    /// Unix timestamp (ms) when the approval request started.
    pub started_at_ms: i64,
    /// Why approval is needed.
    #[serde(default)]
    pub reason: Option<String>,
    /// [UNSTABLE] Asks for session-wide write access under this root.
    #[serde(default)]
    pub grant_root: Option<String>,
}

/// Result of `item/fileChange/requestApproval`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileChangeRequestApprovalResponse {
    /// The decision.
    pub decision: FileChangeApprovalDecision,
}

/// An option of a user-input question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolRequestUserInputOption {
    /// Option label.
    pub label: String,
    /// Option description.
    pub description: String,
}

/// A question of `item/tool/requestUserInput`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolRequestUserInputQuestion {
    /// Question id (key of the answer).
    pub id: String,
    /// Short header.
    pub header: String,
    /// The question.
    pub question: String,
    /// The client adds a free-text "Other" choice.
    #[serde(default)]
    pub is_other: bool,
    /// The answer is secret.
    #[serde(default)]
    pub is_secret: bool,
    /// Choices.
    #[serde(default)]
    pub options: Option<Vec<ToolRequestUserInputOption>>,
}

/// Params of `item/tool/requestUserInput` (EXPERIMENTAL upstream).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolRequestUserInputParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
    /// The tool call id.
    pub item_id: ItemId,
    /// Whether the turn waits for the answer.
    pub is_blocking: bool,
    /// Questions.
    pub questions: Vec<ToolRequestUserInputQuestion>,
    /// Deprecated; `null`.
    #[serde(default)]
    pub auto_resolution_ms: Option<u64>,
}

/// Answers to one question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolRequestUserInputAnswer {
    /// Selected / typed answers.
    pub answers: Vec<String>,
}

/// Result of `item/tool/requestUserInput`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolRequestUserInputResponse {
    /// Answers keyed by question id.
    pub answers: BTreeMap<String, ToolRequestUserInputAnswer>,
}

macro_rules! server_requests {
    ($($variant:ident => $wire:literal, $params:ident, $response:ident;)*) => {
        crate::requests::request_enum! {
            /// A request sent by the server to the client, selected by its `method`.
            ServerRequest, id_doc = "Request id (integers, increasing per connection).";
            $($variant => $wire, $params;)*
        }

        /// Every server request method Weft declares, in declaration order (those in
        /// [`PENDING_SERVER_REQUESTS`] are not sent yet).
        pub const SERVER_REQUEST_METHODS: &[&str] = &[$($wire),*];

        impl ServerRequest {
            /// The thread the request belongs to.
            pub fn thread_id(&self) -> &ThreadId {
                match self {
                    $(ServerRequest::$variant { params, .. } => &params.thread_id,)*
                }
            }
        }

        /// Marker types implementing [`Method`] for each server request.
        pub mod methods {
            use super::*;

            crate::requests::method_markers!("", $($variant => $wire, $params, $response;)*);
        }

        pub(crate) fn server_request_schemas(roots: &mut crate::schema_base::Roots) {
            $(roots.add_method::<$params, $response>("", stringify!($params), stringify!($response));)*
        }
    };
}

server_requests! {
    CommandExecutionRequestApproval => "item/commandExecution/requestApproval", CommandExecutionRequestApprovalParams, CommandExecutionRequestApprovalResponse;
    FileChangeRequestApproval => "item/fileChange/requestApproval", FileChangeRequestApprovalParams, FileChangeRequestApprovalResponse;
    ToolRequestUserInput => "item/tool/requestUserInput", ToolRequestUserInputParams, ToolRequestUserInputResponse;
    DynamicToolCall => "item/tool/call", DynamicToolCallParams, DynamicToolCallResponse;
    McpServerElicitationRequest => "mcpServer/elicitation/request", McpServerElicitationRequestParams, McpServerElicitationRequestResponse;
}

/// Server requests whose types are declared but which Weft does not send yet (their runtime is
/// not there), so they are outside the protocol subset (docs/protocol.md §1.1). Serving one
/// means taking it off this list and adding its `server-request …` line to the subset.
pub const PENDING_SERVER_REQUESTS: &[&str] = &[];

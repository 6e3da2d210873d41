//! Params and results of the `turn/*` methods.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::experimental::{Experimental, ExperimentalParams};
use crate::ids::{ThreadId, TurnId};
use crate::input::UserInput;
use crate::policy::{
    ApprovalsReviewer, AskForApproval, CollaborationMode, Personality, ReasoningEffort,
    ReasoningSummary, SandboxPolicy,
};
use crate::serde_util::null_as_default;
use crate::thread_api::empty_response;
use crate::turn::Turn;

/// Body of a function call output: a string or a list of content items.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FunctionCallOutputBody {
    /// Plain text.
    Text(String),
    /// Content items. Loosely typed: the item union (`input_text` / `input_image` /
    /// `input_audio` / `encrypted_content`) is out of phase-1 scope.
    ContentItems(Vec<Value>),
}

/// Output for a pending tool call, supplied with `turn/start` (later phase).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnToolOutput {
    /// Tool name.
    pub name: String,
    /// Tool namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Tool output.
    pub output: FunctionCallOutputBody,
    /// Keep the output in history.
    #[serde(default, deserialize_with = "null_as_default")]
    pub retain: bool,
}

/// Params of `turn/start`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartParams {
    /// The thread (must be loaded).
    pub thread_id: ThreadId,
    /// User input (`[]` is accepted).
    pub input: Vec<UserInput>,
    /// Working directory (sticky).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Approval policy (sticky).
    #[serde(default)]
    pub approval_policy: Option<AskForApproval>,
    /// Approvals reviewer (sticky).
    #[serde(default)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// Sandbox policy object (sticky).
    #[serde(default)]
    pub sandbox_policy: Option<SandboxPolicy>,
    /// Model (sticky).
    #[serde(default)]
    pub model: Option<String>,
    /// Service tier (sticky).
    #[serde(default)]
    pub service_tier: Option<String>,
    /// Service tier for this turn only (`"default"` = standard).
    #[serde(default)]
    pub service_tier_for_turn: Option<String>,
    /// Reasoning effort (sticky).
    #[serde(default)]
    pub effort: Option<ReasoningEffort>,
    /// Reasoning summary mode (sticky).
    #[serde(default)]
    pub summary: Option<ReasoningSummary>,
    /// Deprecated; accepted and ignored.
    #[serde(default)]
    pub personality: Option<Personality>,
    /// JSON Schema constraining the final assistant message (this turn only).
    #[serde(default)]
    pub output_schema: Option<Value>,
    /// Echoed as `userMessage.clientId`.
    #[serde(default)]
    pub client_user_message_id: Option<String>,
    /// Attribution: parent turn.
    #[serde(default)]
    pub parent_turn_id: Option<String>,
    /// Attribution: root turn.
    #[serde(default)]
    pub root_turn_id: Option<String>,
    /// Attribution: trigger.
    #[serde(default)]
    pub turn_trigger: Option<String>,
    /// Disabled plugin ids.
    #[serde(default)]
    pub disabled_plugin_ids: Option<Vec<String>>,
    /// Output for a pending tool call (later phase).
    #[serde(default)]
    pub tool_output: Option<TurnToolOutput>,
    /// Collaboration mode (EXPERIMENTAL upstream, sticky); `settings.developer_instructions:
    /// null` selects the mode's built-in instructions.
    #[serde(default)]
    pub collaboration_mode: Option<CollaborationMode>,
    /// A built-in permission profile id (EXPERIMENTAL upstream, sticky; not with
    /// `sandboxPolicy`).
    #[serde(default)]
    pub permissions: Option<String>,
    /// Runtime workspace roots (EXPERIMENTAL upstream); Weft accepts only the thread's cwd.
    #[serde(default)]
    pub runtime_workspace_roots: Option<Vec<String>>,
}

impl TurnStartParams {
    /// Params with only `threadId` and `input` set.
    pub fn new(thread_id: impl Into<ThreadId>, input: Vec<UserInput>) -> Self {
        Self {
            thread_id: thread_id.into(),
            input,
            cwd: None,
            approval_policy: None,
            approvals_reviewer: None,
            sandbox_policy: None,
            model: None,
            service_tier: None,
            service_tier_for_turn: None,
            effort: None,
            summary: None,
            personality: None,
            output_schema: None,
            client_user_message_id: None,
            parent_turn_id: None,
            root_turn_id: None,
            turn_trigger: None,
            disabled_plugin_ids: None,
            tool_output: None,
            collaboration_mode: None,
            permissions: None,
            runtime_workspace_roots: None,
        }
    }
}

impl Experimental for TurnStartParams {
    const PARAMS: ExperimentalParams = ExperimentalParams {
        served: &["collaborationMode", "permissions", "runtimeWorkspaceRoots"],
        unsupported: &[
            "additionalContext",
            "cyberAccessProgram",
            "responsesapiClientMetadata",
            "responsesapiClientMetadataPatch",
            "multiAgentMode",
        ],
        empty_only: &["environments"],
        ..ExperimentalParams::NONE
    };
}

/// Result of `turn/start`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartResponse {
    /// The turn (`inProgress`, `items: []`, `itemsView: notLoaded`).
    pub turn: Turn,
}

/// Params of `turn/steer`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// Input to add (non-empty).
    pub input: Vec<UserInput>,
    /// Must equal the running turn's id.
    pub expected_turn_id: TurnId,
    /// Echoed as `userMessage.clientId`.
    #[serde(default)]
    pub client_user_message_id: Option<String>,
}

impl Experimental for TurnSteerParams {
    const PARAMS: ExperimentalParams = ExperimentalParams {
        unsupported: &[
            "additionalContext",
            "responsesapiClientMetadata",
            "responsesapiClientMetadataPatch",
        ],
        ..ExperimentalParams::NONE
    };
}

/// Result of `turn/steer`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerResponse {
    /// The running turn's id.
    pub turn_id: TurnId,
}

/// Params of `turn/interrupt`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnInterruptParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// The running turn.
    pub turn_id: TurnId,
}

empty_response! {
    /// Result of `turn/interrupt` (`{}`).
    TurnInterruptResponse;
}

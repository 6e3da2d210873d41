//! `thread/settings/updated` (experimental upstream): the thread's settings after a `turn/start`
//! changed them, sent before that request's response, to connections with `experimentalApi`
//! (docs/protocol.md §7.25).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::collaboration::ActivePermissionProfile;
use crate::ids::ThreadId;
use crate::policy::{
    ApprovalsReviewer, AskForApproval, CollaborationMode, Personality, ReasoningEffort,
    ReasoningSummary, SandboxPolicy,
};

/// A thread's settings as the reference reports them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSettings {
    /// Working directory.
    pub cwd: String,
    /// Approval policy.
    pub approval_policy: AskForApproval,
    /// Who answers approvals (`user`).
    pub approvals_reviewer: ApprovalsReviewer,
    /// The sandbox, as a policy object.
    pub sandbox_policy: SandboxPolicy,
    /// The built-in permission profile the sandbox came from, if any.
    #[serde(default)]
    pub active_permission_profile: Option<ActivePermissionProfile>,
    /// Model.
    pub model: String,
    /// Model provider.
    pub model_provider: String,
    /// Service tier (Weft has none: `null`).
    #[serde(default)]
    pub service_tier: Option<String>,
    /// Reasoning effort.
    #[serde(default)]
    pub effort: Option<ReasoningEffort>,
    /// Reasoning summary mode.
    #[serde(default)]
    pub summary: Option<ReasoningSummary>,
    /// Collaboration mode, with its instructions.
    pub collaboration_mode: CollaborationMode,
    /// Disabled plugins (Weft has no plugins: `[]`).
    #[serde(default)]
    pub disabled_plugin_ids: Vec<String>,
    /// Personality (deprecated upstream; Weft keeps none: `null`).
    #[serde(default)]
    pub personality: Option<Personality>,
}

/// Params of `thread/settings/updated`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSettingsUpdatedNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// Its settings now.
    pub thread_settings: ThreadSettings,
}

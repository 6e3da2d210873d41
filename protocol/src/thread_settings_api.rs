//! `thread/settings/update` (experimental upstream): a loaded thread's settings for its next
//! turns, without starting one; `thread/settings/updated` follows the response when they
//! changed (docs/protocol.md §7.34).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::ThreadId;
use crate::policy::{
    ApprovalsReviewer, AskForApproval, CollaborationMode, Personality, ReasoningEffort,
    ReasoningSummary, SandboxPolicy,
};

/// `thread/settings/update` params: every field but `threadId` optional; an omitted one is left
/// as it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSettingsUpdateParams {
    /// The thread (must be loaded).
    pub thread_id: ThreadId,
    /// Working directory for subsequent turns.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Approval policy for subsequent turns.
    #[serde(default)]
    pub approval_policy: Option<AskForApproval>,
    /// Where approval requests are routed for subsequent turns.
    #[serde(default)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// Sandbox policy for subsequent turns.
    #[serde(default)]
    pub sandbox_policy: Option<SandboxPolicy>,
    /// A built-in permission profile id for subsequent turns (not with `sandboxPolicy`).
    #[serde(default)]
    pub permissions: Option<String>,
    /// Model for subsequent turns.
    #[serde(default)]
    pub model: Option<String>,
    /// Service tier: accepted and ignored (Weft has no service tiers).
    #[serde(default)]
    pub service_tier: Option<String>,
    /// Reasoning effort for subsequent turns.
    #[serde(default)]
    pub effort: Option<ReasoningEffort>,
    /// Reasoning summary for subsequent turns.
    #[serde(default)]
    pub summary: Option<ReasoningSummary>,
    /// Collaboration mode for subsequent turns; its model and effort take precedence.
    #[serde(default)]
    pub collaboration_mode: Option<CollaborationMode>,
    /// Deprecated upstream; accepted and ignored.
    #[serde(default)]
    pub personality: Option<Personality>,
    /// Deprecated upstream (ignored there too).
    #[serde(default)]
    pub multi_agent_mode: Option<Value>,
    /// Disabled plugin ids: Weft has no plugins, so only `null` or `[]`.
    #[serde(default)]
    pub disabled_plugin_ids: Option<Vec<String>>,
    /// Environments for future turns: Weft has none to select, so only `null` or `[]`.
    #[serde(default)]
    pub environments: Option<Vec<Value>>,
}

/// `thread/settings/update` result (empty).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadSettingsUpdateResponse {}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn params_take_the_reference_keys() {
        let params: ThreadSettingsUpdateParams = serde_json::from_value(json!({
            "threadId": "t", "model": "m", "effort": "high", "permissions": ":read-only",
            "serviceTier": null, "environments": []}))
        .unwrap();
        assert_eq!(params.model.as_deref(), Some("m"));
        assert_eq!(params.effort, Some(ReasoningEffort::from("high")));
        assert_eq!(params.environments, Some(vec![]));
        assert_eq!(
            serde_json::to_value(ThreadSettingsUpdateResponse {}).unwrap(),
            json!({})
        );
    }
}

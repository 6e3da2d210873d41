//! Collaboration modes (`collaborationMode/list`, EXPERIMENTAL upstream) and permission
//! profiles (`permissions` on `thread/start` and `turn/start`, `activePermissionProfile` in
//! their answers). The mode a turn runs in is [`crate::CollaborationMode`] (policy.rs).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::policy::{ModeKind, ReasoningEffort};

/// Params of `collaborationMode/list` (`{}`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CollaborationModeListParams {}

/// A collaboration mode preset, as a client shows it (snake_case `reasoning_effort` on the
/// wire, as the reference writes it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CollaborationModeMask {
    /// Display name (`Plan`, `Default`).
    pub name: String,
    /// The mode.
    #[serde(default)]
    pub mode: Option<ModeKind>,
    /// The model the preset selects (`null`: the thread's model).
    #[serde(default)]
    pub model: Option<String>,
    /// The reasoning effort the preset selects (`null`: the thread's effort).
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
}

/// Result of `collaborationMode/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CollaborationModeListResponse {
    /// The presets, Plan first.
    pub data: Vec<CollaborationModeMask>,
}

/// The permission profile a thread runs under (`activePermissionProfile`): one of the
/// built-in ids `:read-only`, `:workspace`, `:danger-full-access`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ActivePermissionProfile {
    /// The profile id.
    pub id: String,
    /// The profile it extends (`null` for the built-in ones).
    #[serde(default)]
    pub extends: Option<String>,
}

impl ActivePermissionProfile {
    /// A built-in profile (no parent).
    pub fn builtin(id: &str) -> ActivePermissionProfile {
        ActivePermissionProfile {
            id: id.to_string(),
            extends: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn masks_use_the_reference_keys() {
        let mask = CollaborationModeMask {
            name: "Plan".into(),
            mode: Some(ModeKind::Plan),
            model: None,
            reasoning_effort: Some(ReasoningEffort("medium".into())),
        };
        assert_eq!(
            serde_json::to_value(&mask).unwrap(),
            json!({"name":"Plan","mode":"plan","model":null,"reasoning_effort":"medium"})
        );
        let params: CollaborationModeListParams = serde_json::from_value(json!({})).unwrap();
        assert_eq!(params, CollaborationModeListParams {});
    }
}

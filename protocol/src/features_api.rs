//! `experimentalFeature/list`, `experimentalFeature/enablement/set` and
//! `permissionProfile/list`: Weft's feature switches and its permission profiles
//! (docs/protocol.md §7.34).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `experimentalFeature/list` params.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExperimentalFeatureListParams {
    /// Opaque pagination cursor returned by a previous call.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Optional page size; defaults to a reasonable server-side value.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Optional loaded thread id (Weft's features are the daemon's, the same for every thread).
    #[serde(default)]
    pub thread_id: Option<String>,
}

/// A feature's lifecycle stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ExperimentalFeatureStage {
    /// Feature is available for user testing and feedback.
    Beta,
    /// Feature is still being built and not ready for broad use.
    UnderDevelopment,
    /// Feature is production-ready.
    Stable,
    /// Feature is deprecated and should be avoided.
    Deprecated,
    /// Feature flag is retained only for backwards compatibility.
    Removed,
}

/// One feature switch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExperimentalFeature {
    /// Stable key used in config.toml and CLI flag toggles.
    pub name: String,
    /// Lifecycle stage of this feature flag.
    pub stage: ExperimentalFeatureStage,
    /// User-facing display name (only for a beta feature).
    #[serde(default)]
    pub display_name: Option<String>,
    /// Short summary of what the feature does (only for a beta feature).
    #[serde(default)]
    pub description: Option<String>,
    /// Announcement copy (only for a beta feature).
    #[serde(default)]
    pub announcement: Option<String>,
    /// Whether this feature is currently enabled.
    pub enabled: bool,
    /// Whether this feature is enabled by default.
    pub default_enabled: bool,
}

/// `experimentalFeature/list` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExperimentalFeatureListResponse {
    /// One page of features.
    pub data: Vec<ExperimentalFeature>,
    /// Cursor of the next page; `null` on the last one.
    pub next_cursor: Option<String>,
}

/// `experimentalFeature/enablement/set` params.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExperimentalFeatureEnablementSetParams {
    /// Process-wide runtime enablement by feature name; features left out are unchanged.
    pub enablement: BTreeMap<String, bool>,
}

/// `experimentalFeature/enablement/set` result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExperimentalFeatureEnablementSetResponse {
    /// The entries this request applied.
    pub enablement: BTreeMap<String, bool>,
}

/// `permissionProfile/list` params.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionProfileListParams {
    /// Opaque pagination cursor returned by a previous call.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Optional page size; defaults to the full result set.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Working directory for project layers (Weft has none: ignored).
    #[serde(default)]
    pub cwd: Option<String>,
}

/// One permission profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PermissionProfileSummary {
    /// Its id (`:read-only`, `:workspace`, `:danger-full-access`).
    pub id: String,
    /// A description for clients (`null` for the built-ins, as in the reference).
    #[serde(default)]
    pub description: Option<String>,
    /// Whether it may be selected (always: Weft imposes no requirements).
    pub allowed: bool,
}

/// `permissionProfile/list` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionProfileListResponse {
    /// One page of profiles.
    pub data: Vec<PermissionProfileSummary>,
    /// Cursor of the next page; `null` on the last one.
    pub next_cursor: Option<String>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn results_use_the_reference_keys() {
        let feature = ExperimentalFeature {
            name: "goals".into(),
            stage: ExperimentalFeatureStage::UnderDevelopment,
            display_name: None,
            description: None,
            announcement: None,
            enabled: true,
            default_enabled: true,
        };
        assert_eq!(
            serde_json::to_value(&feature).unwrap(),
            json!({"name": "goals", "stage": "underDevelopment", "displayName": null,
                "description": null, "announcement": null, "enabled": true,
                "defaultEnabled": true})
        );
        let params: PermissionProfileListParams =
            serde_json::from_value(json!({"cursor": null, "limit": 2})).unwrap();
        assert_eq!(params.limit, Some(2));
    }
}

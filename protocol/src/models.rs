//! `model/list`: the model catalog.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::policy::ReasoningEffort;

/// An input modality a model accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum InputModality {
    /// Text.
    Text,
    /// Images.
    Image,
    /// Audio.
    Audio,
}

fn default_input_modalities() -> Vec<InputModality> {
    vec![InputModality::Text, InputModality::Image]
}

/// A reasoning effort a model supports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningEffortOption {
    /// The effort value.
    pub reasoning_effort: ReasoningEffort,
    /// What it means.
    pub description: String,
}

/// A service tier a model offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ModelServiceTier {
    /// Tier id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Description.
    pub description: String,
}

/// Upgrade information for a model being replaced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelUpgradeInfo {
    /// Replacement model.
    pub model: String,
    /// Upgrade copy.
    #[serde(default)]
    pub upgrade_copy: Option<String>,
    /// Link about the new model.
    #[serde(default)]
    pub model_link: Option<String>,
    /// Migration notes (Markdown).
    #[serde(default)]
    pub migration_markdown: Option<String>,
    /// Unix timestamp (seconds) of retirement.
    #[serde(default)]
    pub retirement_at: Option<i64>,
}

/// A first-use notice for a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ModelAvailabilityNux {
    /// Notice text.
    pub message: String,
}

/// Multi-agent protocol version of a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum MultiAgentVersion {
    /// Disabled.
    Disabled,
    /// Version 1.
    V1,
    /// Version 2.
    V2,
}

/// Access program of the cyber-security policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CyberAccessProgram {
    /// Standard access.
    Standard,
    /// Daybreak blue.
    DaybreakBlue,
    /// Daybreak red.
    DaybreakRed,
}

/// Access programs available for a model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ModelAccessPrograms {
    /// Cyber-security access programs.
    pub cyber: Vec<CyberAccessProgram>,
}

/// A model of the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    /// Catalog id.
    pub id: String,
    /// Model slug sent upstream.
    pub model: String,
    /// Deprecated: slug of the upgrade model.
    #[serde(default)]
    pub upgrade: Option<String>,
    /// Upgrade information.
    #[serde(default)]
    pub upgrade_info: Option<ModelUpgradeInfo>,
    /// First-use notice.
    #[serde(default)]
    pub availability_nux: Option<ModelAvailabilityNux>,
    /// Display name.
    pub display_name: String,
    /// Description.
    pub description: String,
    /// Hidden from default listings.
    pub hidden: bool,
    /// Supported reasoning efforts.
    pub supported_reasoning_efforts: Vec<ReasoningEffortOption>,
    /// Default reasoning effort.
    pub default_reasoning_effort: ReasoningEffort,
    /// Accepted input modalities (default `["text", "image"]`).
    #[serde(default = "default_input_modalities")]
    pub input_modalities: Vec<InputModality>,
    /// Whether personalities are supported (always false).
    #[serde(default)]
    pub supports_personality: bool,
    /// Deprecated speed tiers.
    #[serde(default)]
    pub additional_speed_tiers: Vec<String>,
    /// Service tiers.
    #[serde(default)]
    pub service_tiers: Vec<ModelServiceTier>,
    /// Default service tier.
    #[serde(default)]
    pub default_service_tier: Option<String>,
    /// Specialty tag.
    #[serde(default)]
    pub model_specialty: Option<String>,
    /// Multi-agent protocol version.
    #[serde(default)]
    pub multi_agent_version: Option<MultiAgentVersion>,
    /// Access programs.
    #[serde(default)]
    pub available_access_programs: Option<ModelAccessPrograms>,
    /// Whether this is the default model.
    pub is_default: bool,
}

/// Params of `model/list`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelListParams {
    /// Opaque pagination cursor.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Page size.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Include `hidden: true` models.
    #[serde(default)]
    pub include_hidden: Option<bool>,
    /// List another configured provider's models.
    #[serde(default)]
    pub model_provider: Option<String>,
}

/// Result of `model/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelListResponse {
    /// Models of this page.
    pub data: Vec<Model>,
    /// Cursor of the next page; `null` on the last page.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

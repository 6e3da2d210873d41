//! `skills/config/write`: a skill switched off (or on again) in the user's `config.toml`, by
//! its `SKILL.md` path or its name (docs/protocol.md §7.34).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `skills/config/write` params: exactly one of `path` and `name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillsConfigWriteParams {
    /// Path-based selector: the skill's `SKILL.md` (absolute).
    #[serde(default)]
    pub path: Option<String>,
    /// Name-based selector.
    #[serde(default)]
    pub name: Option<String>,
    /// Whether the skill is enabled.
    pub enabled: bool,
}

/// `skills/config/write` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillsConfigWriteResponse {
    /// Whether the skill is enabled now.
    pub effective_enabled: bool,
}

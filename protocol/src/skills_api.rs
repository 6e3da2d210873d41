//! `skills/list`: the skills (`SKILL.md` files) found for each working directory
//! (docs/protocol.md §7.23).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::serde_util::null_as_default;

/// `skills/list` params.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillsListParams {
    /// Directories to list skills for; empty: the daemon's cwd.
    #[serde(default, deserialize_with = "null_as_default")]
    pub cwds: Vec<String>,
    /// Scan the disk again instead of answering from the cache.
    #[serde(default, deserialize_with = "null_as_default")]
    pub force_reload: bool,
}

/// `skills/list` result: one entry per cwd.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkillsListResponse {
    /// One entry per requested cwd, in request order.
    pub data: Vec<SkillsListEntry>,
}

/// The skills seen from one cwd.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkillsListEntry {
    /// The cwd, as requested.
    pub cwd: String,
    /// The skills: repo, then user scope, each by name.
    pub skills: Vec<SkillMetadata>,
    /// `SKILL.md` files that could not be loaded.
    pub errors: Vec<SkillErrorInfo>,
}

/// A `SKILL.md` file that could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkillErrorInfo {
    /// The file.
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

/// One skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillMetadata {
    /// Its name (front matter `name`, else the folder's name).
    pub name: String,
    /// Its description (front matter `description`).
    pub description: String,
    /// Front matter `metadata.short-description`.
    #[serde(default)]
    pub short_description: Option<String>,
    /// How clients show it (`agents/openai.yaml` beside the `SKILL.md`).
    #[serde(default)]
    pub interface: Option<SkillInterface>,
    /// Tools it needs (`agents/openai.yaml`).
    #[serde(default)]
    pub dependencies: Option<SkillDependencies>,
    /// The `SKILL.md` file.
    pub path: String,
    /// Where it was found.
    pub scope: SkillScope,
    /// Whether it is offered.
    pub enabled: bool,
    /// Owning plugin (Weft has no plugins).
    #[serde(default)]
    pub plugin_id: Option<String>,
}

/// How a client shows a skill.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct SkillInterface {
    pub display_name: Option<String>,
    pub short_description: Option<String>,
    /// Absolute path under the skill's `assets/`.
    pub icon_small: Option<String>,
    /// Absolute path under the skill's `assets/`.
    pub icon_large: Option<String>,
    /// Remote icon URL (plugin catalogs only).
    pub icon_small_url: Option<String>,
    /// Remote icon URL (plugin catalogs only).
    pub icon_large_url: Option<String>,
    /// `#RRGGBB`.
    pub brand_color: Option<String>,
    pub default_prompt: Option<String>,
}

/// Tools a skill needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkillDependencies {
    /// The tools.
    pub tools: Vec<SkillToolDependency>,
}

/// One tool a skill needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[allow(missing_docs)]
pub struct SkillToolDependency {
    #[serde(rename = "type")]
    pub kind: String,
    pub value: String,
    pub description: Option<String>,
    pub transport: Option<String>,
    pub command: Option<String>,
    pub url: Option<String>,
}

/// Where a skill was found.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum SkillScope {
    /// The project: `.codex/skills` or `.agents/skills` between the project root and the cwd.
    Repo,
    /// The user: `$WEFT_HOME/skills`, `~/.agents/skills`.
    User,
    /// Shipped with the server (Weft ships none).
    System,
    /// Installed by an administrator (Weft reads none).
    Admin,
}

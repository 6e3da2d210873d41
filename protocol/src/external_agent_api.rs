//! `externalAgentConfig/*`: another agent's set-up (Claude Code's) detected and imported into
//! Weft's, and the history of imports (docs/protocol.md §7.39).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a migration item moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExternalAgentConfigMigrationItemType {
    /// `CLAUDE.md` into `AGENTS.md`.
    AgentsMd,
    /// Settings into `config.toml`.
    Config,
    /// Skill folders.
    Skills,
    /// Plugins (Weft has none: never detected).
    Plugins,
    /// MCP servers.
    McpServerConfig,
    /// Subagents.
    Subagents,
    /// Hooks.
    Hooks,
    /// Slash commands (as skills).
    Commands,
    /// Memory (Weft has no memory pipeline: never detected).
    Memory,
    /// Past sessions.
    Sessions,
}

/// One named thing a migration item moves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CommandMigration {
    /// The skill name the command becomes.
    pub name: String,
}

/// One hook event a migration item moves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HookMigration {
    /// The event name.
    pub name: String,
}

/// One MCP server a migration item moves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct McpServerMigration {
    /// The server name.
    pub name: String,
}

/// One skill a migration item moves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SkillMigration {
    /// The skill folder's name.
    pub name: String,
}

/// One subagent a migration item moves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SubagentMigration {
    /// The subagent name.
    pub name: String,
}

/// Plugins of one marketplace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PluginsMigration {
    /// The marketplace.
    pub marketplace_name: String,
    /// The plugins.
    pub plugin_names: Vec<String>,
}

/// One session a migration item moves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SessionMigration {
    /// The session file.
    pub path: String,
    /// The session's working directory.
    pub cwd: String,
    /// Its title.
    #[serde(default)]
    pub title: Option<String>,
}

/// What exactly an item moves.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MigrationDetails {
    /// Plugins.
    #[serde(default)]
    pub plugins: Vec<PluginsMigration>,
    /// Skills.
    #[serde(default)]
    pub skills: Vec<SkillMigration>,
    /// Sessions.
    #[serde(default)]
    pub sessions: Vec<SessionMigration>,
    /// MCP servers.
    #[serde(default)]
    pub mcp_servers: Vec<McpServerMigration>,
    /// Hook events.
    #[serde(default)]
    pub hooks: Vec<HookMigration>,
    /// Subagents.
    #[serde(default)]
    pub subagents: Vec<SubagentMigration>,
    /// Commands.
    #[serde(default)]
    pub commands: Vec<CommandMigration>,
    /// Memory files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Vec<String>>,
}

/// One thing detect found to import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAgentConfigMigrationItem {
    /// What it moves.
    pub item_type: ExternalAgentConfigMigrationItemType,
    /// A sentence saying from where to where.
    pub description: String,
    /// Null or empty means home-scoped migration; non-empty means repo-scoped migration.
    #[serde(default)]
    pub cwd: Option<String>,
    /// What exactly it moves.
    #[serde(default)]
    pub details: Option<MigrationDetails>,
}

/// `externalAgentConfig/detect` params.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAgentConfigDetectParams {
    /// If true, include detection under the user's home directory.
    #[serde(default)]
    pub include_home: bool,
    /// Zero or more working directories to include for repo-scoped detection.
    #[serde(default)]
    pub cwds: Option<Vec<String>>,
    /// Maximum age in days for detected sessions. Missing values use the default limit.
    #[serde(default)]
    pub max_session_age_days: Option<u32>,
    /// Maximum number of sessions to detect. Missing values use the default limit.
    #[serde(default)]
    pub max_sessions: Option<u32>,
    /// Optional migration-source selector. Missing or unrecognized values use the default
    /// source.
    #[serde(default)]
    pub migration_source: Option<String>,
    /// Deprecated field retained for compatibility. This field is ignored; use
    /// `migrationSource` to select the migration source.
    #[serde(default)]
    pub source: Option<String>,
}

/// Where a detected connector was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ExternalAgentDetectedConnectorSource {
    /// A remote MCP server in the settings.
    RemoteMcpServersConfig,
    /// A tool used in sessions.
    SessionToolUse,
}

/// A connector detect suggests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAgentDetectedConnectorCandidate {
    /// Its name.
    pub name: String,
    /// Sessions that used it.
    pub session_count: u32,
    /// Where it was seen.
    pub source: ExternalAgentDetectedConnectorSource,
}

/// `externalAgentConfig/detect` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExternalAgentConfigDetectResponse {
    /// What there is to import.
    pub items: Vec<ExternalAgentConfigMigrationItem>,
    /// Connectors suggested.
    #[serde(default)]
    pub connectors: Vec<ExternalAgentDetectedConnectorCandidate>,
}

/// `externalAgentConfig/import` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAgentConfigImportParams {
    /// What to import (items as detect listed them).
    pub migration_items: Vec<ExternalAgentConfigMigrationItem>,
    /// Migration-source selector used to produce the migration items. Pass the same value to
    /// detection and import; missing or unrecognized values use the default source.
    #[serde(default)]
    pub migration_source: Option<String>,
    /// Opaque provider identifier supplied by the caller for analytics attribution and import
    /// history display. This does not select the migration source.
    #[serde(default)]
    pub provider_id: Option<String>,
    /// Optional identifier for the product that initiated the import.
    #[serde(default)]
    pub source: Option<String>,
}

/// `externalAgentConfig/import` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAgentConfigImportResponse {
    /// The import's id, as its notifications and history name it.
    pub import_id: String,
}

/// One thing imported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAgentConfigImportItemTypeSuccess {
    /// Its type.
    pub item_type: ExternalAgentConfigMigrationItemType,
    /// The repository, for a repo-scoped item.
    #[serde(default)]
    pub cwd: Option<String>,
    /// What was imported.
    #[serde(default)]
    pub source: Option<String>,
    /// What it became.
    #[serde(default)]
    pub target: Option<String>,
    /// Original title for an imported session; null for other item types.
    #[serde(default)]
    pub title: Option<String>,
}

/// One thing that failed to import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAgentConfigImportItemTypeFailure {
    /// Its type.
    pub item_type: ExternalAgentConfigMigrationItemType,
    /// A classification of the error.
    #[serde(default)]
    pub error_type: Option<String>,
    /// A finer classification.
    #[serde(default)]
    pub sub_error_type: Option<String>,
    /// The step that failed.
    pub failure_stage: String,
    /// What went wrong.
    pub message: String,
    /// The repository, for a repo-scoped item.
    #[serde(default)]
    pub cwd: Option<String>,
    /// What failed to import.
    #[serde(default)]
    pub source: Option<String>,
}

/// The outcome for one item type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAgentConfigImportTypeResult {
    /// The type.
    pub item_type: ExternalAgentConfigMigrationItemType,
    /// What was imported.
    pub successes: Vec<ExternalAgentConfigImportItemTypeSuccess>,
    /// What failed.
    pub failures: Vec<ExternalAgentConfigImportItemTypeFailure>,
}

crate::serde_util::same_members! {
    {
        /// The import.
        pub import_id: String,
        /// The outcomes, by type (one item's for a progress notification).
        pub item_type_results: Vec<ExternalAgentConfigImportTypeResult>,
    }
    /// `externalAgentConfig/import/progress`: one item done.
    ExternalAgentConfigImportProgressNotification;
    /// `externalAgentConfig/import/completed`: every item done, outcomes by type.
    ExternalAgentConfigImportCompletedNotification;
}

/// One thing an externally completed import imported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAgentConfigImportHistoryRecordSuccessParams {
    /// Its type.
    pub item_type: ExternalAgentConfigMigrationItemType,
    /// The repository, for a repo-scoped item.
    #[serde(default)]
    pub cwd: Option<String>,
    /// What was imported.
    #[serde(default)]
    pub source: Option<String>,
    /// What it became.
    #[serde(default)]
    pub target: Option<String>,
    /// Original title for an imported session, when available.
    #[serde(default)]
    pub title: Option<String>,
}

/// The outcome of an externally completed import for one type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAgentConfigImportHistoryRecordTypeResultParams {
    /// The type.
    pub item_type: ExternalAgentConfigMigrationItemType,
    /// What was imported.
    pub successes: Vec<ExternalAgentConfigImportHistoryRecordSuccessParams>,
    /// What failed.
    pub failures: Vec<ExternalAgentConfigImportItemTypeFailure>,
}

/// `externalAgentConfig/import/recordHistory` params.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAgentConfigImportHistoryRecordParams {
    /// Opaque provider identifier for the externally completed import.
    pub provider_id: String,
    /// Completed results grouped by imported item type.
    pub item_type_results: Vec<ExternalAgentConfigImportHistoryRecordTypeResultParams>,
}

/// `externalAgentConfig/import/recordHistory` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAgentConfigImportHistoryRecordResponse {
    /// The id the import is recorded under.
    pub import_id: String,
}

/// One past import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAgentConfigImportHistory {
    /// Its id.
    pub import_id: String,
    /// The provider the caller named.
    #[serde(default)]
    pub provider_id: Option<String>,
    /// When it completed (ms since the epoch).
    pub completed_at_ms: i64,
    /// What was imported.
    pub successes: Vec<ExternalAgentConfigImportItemTypeSuccess>,
    /// What failed.
    pub failures: Vec<ExternalAgentConfigImportItemTypeFailure>,
}

/// Where an imported connector was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ExternalAgentImportedConnectorSource {
    /// A remote MCP server in the settings.
    RemoteMcpServersConfig,
}

/// A connector an import brought.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExternalAgentImportedConnectorCandidate {
    /// Its name.
    pub name: String,
    /// Sessions that used it.
    pub session_count: u32,
    /// Where it was seen.
    pub source: ExternalAgentImportedConnectorSource,
}

/// `externalAgentConfig/import/readHistories` result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ExternalAgentConfigImportHistoriesReadResponse {
    /// Past imports, newest first.
    pub data: Vec<ExternalAgentConfigImportHistory>,
    /// Connectors imports brought.
    pub connectors: Vec<ExternalAgentImportedConnectorCandidate>,
}

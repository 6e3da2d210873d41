//! `hooks/list`: the hooks configured for each working directory (docs/protocol.md §7.22).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::serde_util::null_as_default;

/// `hooks/list` params.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HooksListParams {
    /// Directories to list hooks for; empty: the daemon's cwd.
    #[serde(default, deserialize_with = "null_as_default")]
    pub cwds: Vec<String>,
    /// A loaded thread whose hooks to list (its cwd) instead of `cwds`.
    #[serde(default)]
    pub thread_id: Option<String>,
}

/// `hooks/list` result: one entry per cwd.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HooksListResponse {
    /// One entry per requested cwd, in request order.
    pub data: Vec<HooksListEntry>,
}

/// The hooks seen from one cwd.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HooksListEntry {
    /// The cwd, as requested.
    pub cwd: String,
    /// The hooks, in the order they run.
    pub hooks: Vec<HookMetadata>,
    /// Entries that were skipped, and why.
    pub warnings: Vec<String>,
    /// Files whose hooks could not be read at all.
    pub errors: Vec<HookErrorInfo>,
}

/// A hooks file that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HookErrorInfo {
    /// The file.
    pub path: String,
    /// What is wrong with it.
    pub message: String,
}

/// One configured hook handler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookMetadata {
    /// Stable key: `<source path>:<event>:<group index>:<handler index>`.
    pub key: String,
    /// The event it handles.
    pub event_name: HookEventName,
    /// How it runs: Weft's hooks are commands.
    pub handler_type: HookHandlerType,
    /// The command line (an argv entry is shell-quoted).
    pub command: String,
    /// Whether it runs in the background: Weft's stop hooks are waited for.
    #[serde(default, rename = "async")]
    pub is_async: bool,
    /// Tool matcher (stop hooks have none).
    pub matcher: Option<String>,
    /// Timeout in seconds.
    pub timeout_sec: u64,
    /// Status line shown while it runs (not a Weft setting).
    pub status_message: Option<String>,
    /// `additionalContext` spill threshold (not a Weft setting).
    pub additional_context_limit: Option<u64>,
    /// The file that configures it.
    pub source_path: String,
    /// Which layer configures it.
    pub source: HookSource,
    /// Owning plugin (Weft has no plugins).
    pub plugin_id: Option<String>,
    /// Owning execution environment (Weft has one, the local machine).
    pub environment_id: Option<String>,
    /// Position in the run order.
    pub display_order: i64,
    /// Whether it runs.
    pub enabled: bool,
    /// Whether an administrator manages it.
    pub is_managed: bool,
    /// `sha256:` hash of the hook's normalized definition.
    pub current_hash: String,
    /// Whether it is trusted to run.
    pub trust_status: HookTrustStatus,
}

/// A hook event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub enum HookEventName {
    PreModelRequest,
    PostModelRequest,
    PreToolUse,
    PermissionRequest,
    PostToolUse,
    PreCompact,
    PostCompact,
    SessionStart,
    SessionEnd,
    UserPromptSubmit,
    SubagentStart,
    SubagentStop,
    Stop,
    Interrupt,
}

/// How a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum HookHandlerType {
    /// A command.
    Command,
}

/// Which layer configures a hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum HookSource {
    /// The user's `config.toml`.
    User,
    /// The command line (`-c hooks.stop=…`).
    SessionFlags,
}

/// Whether a hook may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum HookTrustStatus {
    /// Managed by an administrator.
    Managed,
    /// Needs the user's review before it runs.
    Untrusted,
    /// Runs.
    Trusted,
    /// Changed since the user trusted it.
    Modified,
}

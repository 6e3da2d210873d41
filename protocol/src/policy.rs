//! Approval policies, sandbox modes/policies, reasoning settings and other small enums shared by
//! several methods.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

/// When the agent asks the user for approval (`approvalPolicy`).
///
/// Serializes as `"untrusted"`, `"on-request"`, `"never"` or `{"granular": {…}}`. The variant
/// order matches Codex's, so serde's "unknown variant" message lists the same values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum AskForApproval {
    /// Ask before anything that is not a known-safe read-only command.
    Untrusted,
    /// Run sandboxed without asking; the model may request escalation.
    OnRequest,
    /// Per-category switches (upstream gates this behind `experimentalApi`).
    Granular {
        /// Ask for sandbox escalations.
        sandbox_approval: bool,
        /// Ask when an exec-policy rule requires it.
        rules: bool,
        /// Forward MCP elicitations to the user.
        mcp_elicitations: bool,
        /// Ask for permission requests.
        #[serde(default)]
        request_permissions: bool,
        /// Ask before using skills that require approval.
        #[serde(default)]
        skill_approval: bool,
    },
    /// Never ask; failures go back to the model.
    Never,
}

impl AskForApproval {
    /// The wire name of the variant that is experimental in the reference and that Weft refuses
    /// as unsupported (`askForApproval.granular`, docs/protocol.md §4.2).
    pub const UNSUPPORTED_EXPERIMENTAL_VARIANT: &'static str = "granular";
}

/// Who reviews approval requests (`approvalsReviewer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalsReviewer {
    /// Prompts go to the client (default).
    User,
    /// A reviewing sub-agent decides.
    AutoReview,
    /// Legacy alias of `auto_review`.
    GuardianSubagent,
}

/// Thread-level sandbox mode (`thread/start.sandbox`), kebab-case on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Read-only file system access.
    ReadOnly,
    /// Writes allowed inside the workspace.
    WorkspaceWrite,
    /// No sandbox.
    DangerFullAccess,
}

/// Network access of an externally sandboxed server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum NetworkAccess {
    /// Network restricted.
    #[default]
    Restricted,
    /// Network enabled.
    Enabled,
}

/// Sandbox policy object (`turn/start.sandboxPolicy`, and the effective `sandbox` in thread
/// responses). Tagged by a camelCase `type`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum SandboxPolicy {
    /// No restrictions.
    DangerFullAccess,
    /// Read-only file system.
    ReadOnly {
        /// Whether outbound network access is allowed.
        #[serde(default)]
        network_access: bool,
    },
    /// The client sandboxes the server itself; Weft enforces nothing.
    ExternalSandbox {
        /// Network access inside the external sandbox.
        #[serde(default)]
        network_access: NetworkAccess,
    },
    /// Writes allowed in the cwd and `writableRoots`.
    WorkspaceWrite {
        /// Extra absolute paths that are writable.
        #[serde(default)]
        writable_roots: Vec<String>,
        /// Whether outbound network access is allowed.
        #[serde(default)]
        network_access: bool,
        /// Do not make `$TMPDIR` writable.
        #[serde(default)]
        exclude_tmpdir_env_var: bool,
        /// Do not make `/tmp` writable.
        #[serde(default)]
        exclude_slash_tmp: bool,
    },
}

impl SandboxPolicy {
    /// The policy Codex reports for a thread-level [`SandboxMode`].
    pub fn from_mode(mode: SandboxMode) -> Self {
        match mode {
            SandboxMode::ReadOnly => SandboxPolicy::ReadOnly {
                network_access: false,
            },
            SandboxMode::WorkspaceWrite => SandboxPolicy::WorkspaceWrite {
                writable_roots: Vec::new(),
                network_access: false,
                exclude_tmpdir_env_var: false,
                exclude_slash_tmp: false,
            },
            SandboxMode::DangerFullAccess => SandboxPolicy::DangerFullAccess,
        }
    }
}

impl From<SandboxMode> for SandboxPolicy {
    fn from(mode: SandboxMode) -> Self {
        Self::from_mode(mode)
    }
}

/// Reasoning effort: a non-empty free string (`low`, `medium`, `high`, `xhigh`, … per model).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(transparent)]
pub struct ReasoningEffort(#[schemars(length(min = 1))] pub String);

impl ReasoningEffort {
    /// Builds an effort value.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The effort as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for ReasoningEffort {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = String::deserialize(deserializer)?;
        if value.is_empty() {
            return Err(serde::de::Error::invalid_length(
                0,
                &"a non-empty reasoning effort",
            ));
        }
        Ok(Self(value))
    }
}

impl From<&str> for ReasoningEffort {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

impl From<String> for ReasoningEffort {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl fmt::Display for ReasoningEffort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reasoning summary mode (`turn/start.summary`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReasoningSummary {
    /// Let the model decide.
    Auto,
    /// Short summaries.
    Concise,
    /// Detailed summaries.
    Detailed,
    /// No summaries.
    None,
}

/// Deprecated personality selector; accepted and ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Personality {
    /// No personality.
    None,
    /// Friendly (no longer does anything).
    Friendly,
    /// Pragmatic (no longer does anything).
    Pragmatic,
}

/// Why a thread was started (`thread/start.sessionStartSource`), passed to SessionStart hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ThreadStartSource {
    /// Client startup.
    Startup,
    /// The user cleared the conversation.
    Clear,
}

/// Collaboration mode kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModeKind {
    /// Plan mode.
    Plan,
    /// Default mode.
    Default,
}

/// Settings of a collaboration mode (snake_case keys on the wire).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CollaborationModeSettings {
    /// Model used in this mode.
    pub model: String,
    /// Reasoning effort used in this mode.
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Developer instructions; `null` selects the built-in mode instructions.
    #[serde(default)]
    pub developer_instructions: Option<String>,
}

/// A collaboration mode (`plan` / `default`) with its settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CollaborationMode {
    /// Mode kind.
    pub mode: ModeKind,
    /// Mode settings.
    pub settings: CollaborationModeSettings,
}

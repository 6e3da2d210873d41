//! A thread's settings: what the user chose (model, cwd, policies, instructions). Frozen into a
//! turn context when a turn starts; changed by `turn/start` overrides.

use std::path::PathBuf;

use weft_protocol::{
    ApprovalsReviewer, AskForApproval, CollaborationMode, DynamicToolSpec, ReasoningEffort,
    ReasoningSummary, SandboxMode, SandboxPolicy,
};

/// The settings of one thread.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadSettings {
    /// Model id sent to the provider.
    pub model: String,
    /// Provider id (a key of `model_providers`).
    pub model_provider: String,
    /// Working directory (absolute).
    pub cwd: PathBuf,
    /// When the agent must ask before acting.
    pub approval_policy: AskForApproval,
    /// Who answers the approval questions: the user, or the guardian (docs/protocol.md §9.8).
    pub approvals_reviewer: ApprovalsReviewer,
    /// What commands and patches may touch.
    pub sandbox: SandboxPolicy,
    /// Replaces Weft's base instructions when set.
    pub base_instructions: Option<String>,
    /// Added as a developer message when set.
    pub developer_instructions: Option<String>,
    /// Reasoning effort requested from the model.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Reasoning summary mode requested from the model.
    pub reasoning_summary: Option<ReasoningSummary>,
    /// Client-defined tools (`thread/start.dynamicTools`); kept for the thread's life.
    pub dynamic_tools: Vec<DynamicToolSpec>,
    /// The collaboration mode a client chose (instructions resolved); `None` until one does.
    pub collaboration_mode: Option<CollaborationMode>,
    /// The built-in permission profile the sandbox came from (`:read-only`, …), if any.
    pub permission_profile: Option<String>,
}

impl ThreadSettings {
    /// The collaboration mode the thread reports (`thread/resume`, `thread/settings/updated`):
    /// the one a client chose, with the thread's current model and effort, or Default with no
    /// instructions when none was.
    pub fn reported_collaboration_mode(&self) -> CollaborationMode {
        let (mode, developer_instructions) = match &self.collaboration_mode {
            Some(chosen) => (chosen.mode, chosen.settings.developer_instructions.clone()),
            None => (weft_protocol::ModeKind::Default, None),
        };
        CollaborationMode {
            mode,
            settings: weft_protocol::CollaborationModeSettings {
                model: self.model.clone(),
                reasoning_effort: self.reasoning_effort.clone(),
                developer_instructions,
            },
        }
    }

    /// The sandbox mode spelling of the current policy (`read-only`, …), for the environment
    /// context.
    pub fn sandbox_mode(&self) -> SandboxMode {
        sandbox_mode_of(&self.sandbox)
    }
}

/// The kebab-case mode that corresponds to a sandbox policy.
pub fn sandbox_mode_of(policy: &SandboxPolicy) -> SandboxMode {
    match policy {
        SandboxPolicy::DangerFullAccess | SandboxPolicy::ExternalSandbox { .. } => {
            SandboxMode::DangerFullAccess
        }
        SandboxPolicy::ReadOnly { .. } => SandboxMode::ReadOnly,
        SandboxPolicy::WorkspaceWrite { .. } => SandboxMode::WorkspaceWrite,
    }
}

/// The kebab-case spelling of an approval policy, for the environment context.
pub fn approval_policy_name(policy: &AskForApproval) -> &'static str {
    match policy {
        AskForApproval::Untrusted => "untrusted",
        AskForApproval::OnRequest => "on-request",
        AskForApproval::Never => "never",
        AskForApproval::Granular { .. } => "granular",
    }
}

/// The kebab-case spelling of a sandbox mode.
pub fn sandbox_mode_name(mode: SandboxMode) -> &'static str {
    match mode {
        SandboxMode::ReadOnly => "read-only",
        SandboxMode::WorkspaceWrite => "workspace-write",
        SandboxMode::DangerFullAccess => "danger-full-access",
    }
}

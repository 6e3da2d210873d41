//! The options of a new, resumed or forked thread, and how they become its settings.

use std::path::{Path, PathBuf};

use weft_protocol::{
    ApprovalsReviewer, AskForApproval, DynamicToolSpec, ReasoningEffort, SandboxMode, SandboxPolicy,
};

use super::error::CoreError;
use crate::config::Config;
use crate::permissions::profile_sandbox;
use crate::settings::ThreadSettings;

/// Options of a new thread (`thread/start`); unset ones come from config.
#[derive(Debug, Clone, Default)]
pub struct StartThreadOptions {
    /// Model.
    pub model: Option<String>,
    /// Provider id.
    pub model_provider: Option<String>,
    /// Working directory; the daemon's cwd when unset; relative paths resolve against it.
    pub cwd: Option<PathBuf>,
    /// Approval policy.
    pub approval_policy: Option<AskForApproval>,
    /// Who reviews approvals (`approvalsReviewer`); config's `approvals_reviewer` when unset.
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// Sandbox mode.
    pub sandbox: Option<SandboxMode>,
    /// Replaces the base instructions.
    pub base_instructions: Option<String>,
    /// Developer instructions.
    pub developer_instructions: Option<String>,
    /// In-memory only.
    pub ephemeral: bool,
    /// Reasoning effort.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// The creating client's name.
    pub originator: Option<String>,
    /// `thread/start.threadSource`.
    pub thread_source: Option<String>,
    /// `thread/start.dynamicTools` (validated by the caller); resume and fork keep the
    /// thread's own.
    pub dynamic_tools: Vec<DynamicToolSpec>,
    /// `permissions`: a built-in profile id; sets the sandbox (never given with `sandbox`).
    pub permission_profile: Option<String>,
    /// `runtimeWorkspaceRoots`: accepted when each is the thread's cwd.
    pub workspace_roots: Option<Vec<PathBuf>>,
}

impl StartThreadOptions {
    /// The settings of a new thread: these options over the config's defaults.
    pub(super) fn settings(&self, config: &Config) -> Result<ThreadSettings, CoreError> {
        let model_provider = self
            .model_provider
            .clone()
            .unwrap_or_else(|| config.model_provider.clone());
        if config.provider(&model_provider).is_none() {
            return Err(CoreError::UnknownProvider(model_provider));
        }
        let cwd = resolve_cwd(self.cwd.as_deref())?;
        check_workspace_roots(self.workspace_roots.as_deref(), &cwd)?;
        let approval_policy = match self.approval_policy {
            Some(policy) => policy,
            None => parse_config_enum(config.approval_policy.as_deref(), AskForApproval::OnRequest),
        };
        let sandbox_mode = match (&self.permission_profile, self.sandbox) {
            (Some(profile), _) => profile_sandbox(profile)?,
            (None, Some(mode)) => mode,
            (None, None) => {
                parse_config_enum(config.sandbox_mode.as_deref(), SandboxMode::WorkspaceWrite)
            }
        };
        Ok(ThreadSettings {
            model: self.model.clone().unwrap_or_else(|| config.model.clone()),
            model_provider,
            cwd,
            approval_policy,
            approvals_reviewer: self.approvals_reviewer.unwrap_or_else(|| {
                parse_config_enum(
                    config.approvals_reviewer.as_deref(),
                    ApprovalsReviewer::User,
                )
            }),
            sandbox: SandboxPolicy::from_mode(sandbox_mode),
            base_instructions: self.base_instructions.clone(),
            developer_instructions: self.developer_instructions.clone(),
            reasoning_effort: self
                .reasoning_effort
                .clone()
                .or_else(|| config.model_reasoning_effort.clone().map(ReasoningEffort)),
            reasoning_summary: config
                .model_reasoning_summary
                .as_deref()
                .and_then(|s| serde_json::from_value(serde_json::Value::String(s.into())).ok()),
            dynamic_tools: self.dynamic_tools.clone(),
            collaboration_mode: None,
            permission_profile: self.permission_profile.clone(),
        })
    }

    /// Thread-level options of resume and fork, over the thread's last settings.
    pub(super) fn apply_to(
        &self,
        settings: &mut ThreadSettings,
        config: &Config,
    ) -> Result<(), CoreError> {
        if let Some(provider) = &self.model_provider {
            if config.provider(provider).is_none() {
                return Err(CoreError::UnknownProvider(provider.clone()));
            }
            settings.model_provider = provider.clone();
        }
        if let Some(model) = &self.model {
            settings.model = model.clone();
        }
        if self.cwd.is_some() {
            settings.cwd = resolve_cwd(self.cwd.as_deref())?;
        }
        if let Some(policy) = self.approval_policy {
            settings.approval_policy = policy;
        }
        // The request's reviewer, else the one the thread's last turn recorded.
        if let Some(reviewer) = self.approvals_reviewer {
            settings.approvals_reviewer = reviewer;
        }
        if let Some(profile) = &self.permission_profile {
            settings.sandbox = SandboxPolicy::from_mode(profile_sandbox(profile)?);
            settings.permission_profile = Some(profile.clone());
        } else if let Some(mode) = self.sandbox {
            settings.sandbox = SandboxPolicy::from_mode(mode);
            settings.permission_profile = None;
        }
        if self.base_instructions.is_some() {
            settings.base_instructions = self.base_instructions.clone();
        }
        if self.developer_instructions.is_some() {
            settings.developer_instructions = self.developer_instructions.clone();
        }
        if self.reasoning_effort.is_some() {
            settings.reasoning_effort = self.reasoning_effort.clone();
        }
        Ok(())
    }
}

fn parse_config_enum<T: serde::de::DeserializeOwned>(value: Option<&str>, default: T) -> T {
    value
        .and_then(|v| serde_json::from_value(serde_json::Value::String(v.to_string())).ok())
        .unwrap_or(default)
}

/// Weft has one workspace root per thread, its cwd: `runtimeWorkspaceRoots` is accepted when
/// every root is that directory (what the Codex TUI sends), and refused otherwise.
pub(super) fn check_workspace_roots(
    roots: Option<&[PathBuf]>,
    cwd: &Path,
) -> Result<(), CoreError> {
    match roots {
        Some(roots) if roots.iter().any(|root| root != cwd) => Err(CoreError::WorkspaceRoots),
        _ => Ok(()),
    }
}

/// Resolve a thread's cwd: absolute, existing directory. `thread/start`, resume, fork and
/// `turn/start`'s override all go through here, so they accept and refuse the same paths.
pub(super) fn resolve_cwd(cwd: Option<&Path>) -> Result<PathBuf, CoreError> {
    let base = std::env::current_dir().map_err(CoreError::DaemonCwd)?;
    let cwd = match cwd {
        Some(path) if path.is_absolute() => path.to_path_buf(),
        Some(path) => base.join(path),
        None => base,
    };
    if !cwd.is_dir() {
        return Err(CoreError::CwdNotADirectory(cwd));
    }
    Ok(cwd)
}

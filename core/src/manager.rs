//! The `ThreadManager`: creates threads and holds the loaded ones (one Session actor each).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use weft_protocol::{
    AskForApproval, ReasoningEffort, SandboxMode, SandboxPolicy, SessionSource, Thread,
    ThreadHistoryMode, ThreadId, ThreadStatus,
};

use crate::config::Config;
use crate::events::SharedSink;
use crate::hooks::StopHookConfig;
use crate::session::{CoreError, Session, ThreadHandle, ThreadSnapshot};
use crate::settings::ThreadSettings;
use crate::time::{new_thread_id, now_secs};

/// What every thread shares: immutable config, the HTTP client, the hooks.
#[derive(Debug)]
pub struct Services {
    /// The daemon's configuration.
    pub config: Arc<Config>,
    /// One HTTP client (connection pool) for every model request.
    pub http: reqwest::Client,
    /// `[[hooks.stop]]`.
    pub stop_hooks: Arc<Vec<StopHookConfig>>,
}

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
}

/// Creates and holds loaded threads.
pub struct ThreadManager {
    services: Arc<Services>,
    threads: Mutex<HashMap<ThreadId, ThreadHandle>>,
}

impl ThreadManager {
    /// A manager for this config.
    pub fn new(config: Arc<Config>) -> ThreadManager {
        let stop_hooks = Arc::new(config.stop_hooks.clone());
        ThreadManager {
            services: Arc::new(Services {
                config,
                http: reqwest::Client::new(),
                stop_hooks,
            }),
            threads: Mutex::new(HashMap::new()),
        }
    }

    /// The shared services.
    pub fn services(&self) -> &Arc<Services> {
        &self.services
    }

    /// Create a thread, start its actor, and return its first snapshot. Its events go to `sink`.
    pub async fn start_thread(
        &self,
        options: StartThreadOptions,
        sink: SharedSink,
    ) -> Result<(ThreadHandle, ThreadSnapshot), CoreError> {
        let settings = self.resolve_settings(&options)?;
        let id = new_thread_id();
        let now = now_secs();
        let thread = Thread {
            id: id.clone(),
            session_id: id.to_string(),
            forked_from_id: None,
            parent_thread_id: None,
            preview: String::new(),
            ephemeral: options.ephemeral,
            section: None,
            section_entered_at: None,
            project_id: None,
            history_mode: ThreadHistoryMode::default(),
            model_provider: settings.model_provider.clone(),
            model: Some(settings.model.clone()),
            reasoning_effort: settings.reasoning_effort.clone(),
            created_at: now,
            updated_at: now,
            recency_at: None,
            status: ThreadStatus::Idle,
            path: None,
            cwd: settings.cwd.display().to_string(),
            cli_version: env!("CARGO_PKG_VERSION").to_string(),
            originator: options.originator.clone(),
            source: SessionSource::Vscode,
            thread_source: options.thread_source.clone(),
            agent_nickname: None,
            agent_role: None,
            git_info: None,
            name: None,
            turns: Vec::new(),
        };
        let handle = Session::spawn(thread, settings, self.services.clone(), sink);
        if let Ok(mut threads) = self.threads.lock() {
            threads.insert(id, handle.clone());
        }
        let snapshot = handle.snapshot().await?;
        Ok((handle, snapshot))
    }

    fn resolve_settings(&self, options: &StartThreadOptions) -> Result<ThreadSettings, CoreError> {
        let config = &self.services.config;
        let model_provider = options
            .model_provider
            .clone()
            .unwrap_or_else(|| config.model_provider.clone());
        if config.provider(&model_provider).is_none() {
            return Err(CoreError::InvalidSettings(format!(
                "unknown model provider `{model_provider}`"
            )));
        }
        let cwd = resolve_cwd(options.cwd.as_deref())?;
        let approval_policy = match options.approval_policy {
            Some(policy) => policy,
            None => parse_config_enum(config.approval_policy.as_deref(), AskForApproval::OnRequest),
        };
        let sandbox_mode = match options.sandbox {
            Some(mode) => mode,
            None => parse_config_enum(config.sandbox_mode.as_deref(), SandboxMode::WorkspaceWrite),
        };
        Ok(ThreadSettings {
            model: options
                .model
                .clone()
                .unwrap_or_else(|| config.model.clone()),
            model_provider,
            cwd,
            approval_policy,
            sandbox: SandboxPolicy::from_mode(sandbox_mode),
            base_instructions: options.base_instructions.clone(),
            developer_instructions: options.developer_instructions.clone(),
            reasoning_effort: options
                .reasoning_effort
                .clone()
                .or_else(|| config.model_reasoning_effort.clone().map(ReasoningEffort)),
            reasoning_summary: config
                .model_reasoning_summary
                .as_deref()
                .and_then(|s| serde_json::from_value(serde_json::Value::String(s.into())).ok()),
        })
    }

    /// The handle of a loaded thread.
    pub fn get(&self, id: &ThreadId) -> Option<ThreadHandle> {
        self.threads.lock().ok()?.get(id).cloned()
    }

    /// Ids of every loaded thread, sorted.
    pub fn loaded_ids(&self) -> Vec<ThreadId> {
        let mut ids: Vec<ThreadId> = self
            .threads
            .lock()
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default();
        ids.sort_by(|a, b| a.as_str().cmp(b.as_str()));
        ids
    }

    /// Stop every thread (interrupting running turns).
    pub async fn shutdown(&self) {
        let handles: Vec<ThreadHandle> = self
            .threads
            .lock()
            .map(|mut t| t.drain().map(|(_, h)| h).collect())
            .unwrap_or_default();
        for handle in handles {
            handle.shutdown().await;
        }
    }
}

fn parse_config_enum<T: serde::de::DeserializeOwned>(value: Option<&str>, default: T) -> T {
    value
        .and_then(|v| serde_json::from_value(serde_json::Value::String(v.to_string())).ok())
        .unwrap_or(default)
}

/// Resolve a thread's cwd: absolute, existing directory.
fn resolve_cwd(cwd: Option<&Path>) -> Result<PathBuf, CoreError> {
    let base = std::env::current_dir().map_err(|err| {
        CoreError::InvalidSettings(format!("cannot read the daemon's cwd: {err}"))
    })?;
    let cwd = match cwd {
        Some(path) if path.is_absolute() => path.to_path_buf(),
        Some(path) => base.join(path),
        None => base,
    };
    if !cwd.is_dir() {
        return Err(CoreError::InvalidSettings(format!(
            "cwd is not a directory: {}",
            cwd.display()
        )));
    }
    Ok(cwd)
}

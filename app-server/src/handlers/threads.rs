//! Starting threads and the loaded ones: `thread/start`, `thread/unsubscribe`,
//! `thread/loaded/list`, and the settings `thread/start`, `thread/resume` and `thread/fork`
//! share.

use std::path::PathBuf;

use serde_json::{Map, Value};
use weft_core::thread::StartThreadOptions;
use weft_core::thread::ThreadSnapshot;
use weft_protocol::jsonrpc::JsonRpcError;
use weft_protocol::notifications::{
    ThreadStartedNotification, ThreadTokenUsageUpdatedNotification,
};
use weft_protocol::thread_api::{
    ThreadEffectiveSettings, ThreadLoadedListParams, ThreadLoadedListResponse, ThreadStartParams,
    ThreadStartResponse, ThreadUnsubscribeParams, ThreadUnsubscribeResponse,
};
use weft_protocol::{
    ActivePermissionProfile, ApprovalsReviewer, AskForApproval, CollaborationMode, ReasoningEffort,
    SandboxMode, ThreadId, ThreadTokenUsage, TurnId, validate_dynamic_tools,
};

use crate::connection::Connection;
use crate::dispatch::{Answer, Context, HandlerResult};
use crate::handlers::{mcp, page};

/// The [`RequestedSettings`] of a thread-opening method's params: `thread/start`'s params, or the
/// `ThreadOverrides` flattened into `thread/resume`'s and `thread/fork`'s; wire types with the
/// same members, copied field by field in one place.
macro_rules! requested_settings {
    ($params:expr, ephemeral: $ephemeral:expr, thread_source: $source:expr) => {
        $crate::handlers::threads::RequestedSettings {
            model: $params.model,
            model_provider: $params.model_provider,
            cwd: $params.cwd,
            approval_policy: $params.approval_policy,
            approvals_reviewer: $params.approvals_reviewer,
            sandbox: $params.sandbox,
            base_instructions: $params.base_instructions,
            developer_instructions: $params.developer_instructions,
            config: $params.config,
            ephemeral: $ephemeral,
            thread_source: $source,
        }
    };
}
pub(crate) use requested_settings;

/// `thread/start`: the response, then `thread/started` to everyone, then the MCP servers'
/// startup statuses to the thread's subscribers (in the reference's order).
pub async fn start(
    cx: Context<'_>,
    mut params: ThreadStartParams,
) -> HandlerResult<Answer<ThreadStartResponse>> {
    if params.history_mode == Some(weft_protocol::ThreadHistoryMode::Legacy) {
        // Every Weft thread is paginated (docs/protocol.md §7.24).
        return Err(JsonRpcError::invalid_request(
            "historyMode `legacy` is not supported by Weft; use `paginated`",
        ));
    }
    if params.permissions.is_some() && params.sandbox.is_some() {
        return Err(JsonRpcError::invalid_request(
            "`permissions` cannot be combined with `sandbox`",
        ));
    }
    let dynamic_tools = params.dynamic_tools.take().unwrap_or_default();
    validate_dynamic_tools(&dynamic_tools).map_err(JsonRpcError::invalid_request)?;
    let permission_profile = params.permissions.take();
    let workspace_roots = params.runtime_workspace_roots.take();
    let mut options = requested_settings!(params, ephemeral: params.ephemeral.unwrap_or(false), thread_source: params.thread_source)
        .into_options(cx.connection);
    options.dynamic_tools = dynamic_tools;
    options.permission_profile = permission_profile;
    options.workspace_roots =
        workspace_roots.map(|roots| roots.into_iter().map(PathBuf::from).collect());
    let subscribers = cx.state.new_subscribers();
    subscribers.subscribe(cx.connection);
    let (handle, snapshot) = cx
        .state
        .threads
        .start_thread(options, subscribers.clone())
        .await?;
    let response = settings_response(&snapshot);
    let thread_id = handle.id().clone();
    Ok(Answer::new(response)
        .then_broadcast(ThreadStartedNotification {
            thread: snapshot.thread,
        })
        .then_run(|state| async move { mcp::announce_startup(&state, &thread_id).await }))
}

/// `thread/unsubscribe`.
pub async fn unsubscribe(
    cx: Context<'_>,
    params: ThreadUnsubscribeParams,
) -> HandlerResult<ThreadUnsubscribeResponse> {
    let status = cx.state.unsubscribe(&params.thread_id, cx.connection.id);
    Ok(ThreadUnsubscribeResponse { status })
}

/// `thread/loaded/list`: the loaded threads' ids in order, paged by the last id seen.
pub async fn loaded_list(
    cx: Context<'_>,
    params: ThreadLoadedListParams,
) -> HandlerResult<ThreadLoadedListResponse> {
    let ids = cx.state.threads.loaded_ids();
    let start = match &params.cursor {
        Some(cursor) => ids.partition_point(|id| id.as_str() <= cursor.as_str()),
        None => 0,
    };
    let (data, more) = page(&ids, start, params.limit);
    let next_cursor = if more {
        data.last().map(|id| id.to_string())
    } else {
        None
    };
    Ok(ThreadLoadedListResponse {
        data: data.to_vec(),
        next_cursor,
    })
}

/// What `thread/start`, `thread/resume` and `thread/fork` may set on the thread they open.
pub struct RequestedSettings {
    /// `model`.
    pub model: Option<String>,
    /// `modelProvider`.
    pub model_provider: Option<String>,
    /// `cwd`.
    pub cwd: Option<String>,
    /// `approvalPolicy`.
    pub approval_policy: Option<AskForApproval>,
    /// `approvalsReviewer` (docs/protocol.md §9.8).
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// `sandbox`.
    pub sandbox: Option<SandboxMode>,
    /// `baseInstructions`.
    pub base_instructions: Option<String>,
    /// `developerInstructions`.
    pub developer_instructions: Option<String>,
    /// `config`: the keys Weft understands override the fields above.
    pub config: Option<Map<String, Value>>,
    /// `ephemeral` (`false` for `thread/resume`).
    pub ephemeral: bool,
    /// `threadSource` (none for `thread/resume`).
    pub thread_source: Option<String>,
}

impl RequestedSettings {
    /// The core's thread options; the originator is the connection's client name.
    pub fn into_options(self, connection: &Connection) -> StartThreadOptions {
        let mut options = StartThreadOptions {
            model: self.model,
            model_provider: self.model_provider,
            cwd: self.cwd.map(PathBuf::from),
            approval_policy: self.approval_policy,
            approvals_reviewer: self.approvals_reviewer,
            sandbox: self.sandbox,
            base_instructions: self.base_instructions,
            developer_instructions: self.developer_instructions,
            ephemeral: self.ephemeral,
            reasoning_effort: None,
            permission_profile: None,
            workspace_roots: None,
            originator: connection
                .initialize_choices()
                .map(|c| c.client_name.clone()),
            thread_source: self.thread_source,
            dynamic_tools: Vec::new(),
        };
        if let Some(config) = &self.config {
            apply_config_overrides(&mut options, config);
        }
        options
    }
}

/// The `config` map of `thread/start`: the keys Weft understands; others are ignored.
fn apply_config_overrides(options: &mut StartThreadOptions, config: &Map<String, Value>) {
    for (key, value) in config {
        match (key.as_str(), value) {
            ("model", Value::String(model)) => options.model = Some(model.clone()),
            ("model_provider", Value::String(provider)) => {
                options.model_provider = Some(provider.clone());
            }
            ("model_reasoning_effort", Value::String(effort)) => {
                options.reasoning_effort = Some(ReasoningEffort(effort.clone()));
            }
            ("developer_instructions", Value::String(text)) => {
                options.developer_instructions = Some(text.clone());
            }
            ("base_instructions", Value::String(text)) => {
                options.base_instructions = Some(text.clone());
            }
            ("approvals_reviewer", Value::String(_)) => {
                match serde_json::from_value(value.clone()) {
                    Ok(reviewer) => options.approvals_reviewer = Some(reviewer),
                    Err(_) => tracing::debug!(%key, "ignoring an unknown approvals_reviewer"),
                }
            }
            _ => tracing::debug!(%key, "ignoring thread/start config override"),
        }
    }
}

/// The `thread/start` result for a thread; `thread/resume` and `thread/fork` convert it into
/// theirs.
pub fn settings_response(snapshot: &ThreadSnapshot) -> ThreadStartResponse {
    let settings = &snapshot.settings;
    ThreadStartResponse {
        thread: snapshot.thread.clone(),
        settings: ThreadEffectiveSettings {
            model: settings.model.clone(),
            model_provider: settings.model_provider.clone(),
            service_tier: None,
            cwd: settings.cwd.display().to_string(),
            instruction_sources: weft_core::instructions::discover_agents_md(&settings.cwd)
                .into_iter()
                .map(|doc| doc.path.display().to_string())
                .collect(),
            approval_policy: settings.approval_policy,
            approvals_reviewer: settings.approvals_reviewer,
            sandbox: settings.sandbox.clone(),
            reasoning_effort: settings.reasoning_effort.clone(),
            disabled_plugin_ids: Vec::new(),
        },
        active_permission_profile: settings
            .permission_profile
            .as_deref()
            .map(ActivePermissionProfile::builtin),
    }
}

/// The collaboration mode a thread reports (`thread/resume`).
pub fn reported_mode(snapshot: &ThreadSnapshot) -> CollaborationMode {
    snapshot.settings.reported_collaboration_mode()
}

/// Resume and fork replay the thread's last token usage to the caller, right after their
/// response (docs/protocol.md §7.3).
pub fn replay_token_usage<R>(
    answer: Answer<R>,
    thread_id: &ThreadId,
    usage: Option<(TurnId, ThreadTokenUsage)>,
) -> Answer<R> {
    match usage {
        None => answer,
        Some((turn_id, token_usage)) => {
            answer.then_tell_caller(ThreadTokenUsageUpdatedNotification {
                thread_id: thread_id.clone(),
                turn_id,
                token_usage,
            })
        }
    }
}

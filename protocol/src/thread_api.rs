//! Params and results of the `thread/*` methods (`thread/list`'s are in `thread_list_api.rs`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::collaboration::ActivePermissionProfile;
use crate::dynamic_tools::DynamicToolSpec;
use crate::experimental::{Experimental, ExperimentalParams};
use crate::history_api::{ThreadResumeInitialTurnsPageParams, TurnsPage};
use crate::ids::{ThreadId, TurnId};
use crate::policy::{
    ApprovalsReviewer, AskForApproval, CollaborationMode, Personality, ReasoningEffort,
    SandboxMode, SandboxPolicy, ThreadStartSource,
};
use crate::serde_util::null_as_default;
use crate::thread::{Thread, ThreadHistoryMode, ThreadUnsubscribeStatus};
pub use crate::thread_list_api::{ThreadListCwdFilter, ThreadListParams, ThreadListResponse};

/// Params of `thread/start` (every field optional; `{}` is valid).
///
/// Experimental fields of upstream (`permissions`, …) are not part of the stable schema and are
/// not modelled, except `dynamicTools`; unknown keys are ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStartParams {
    /// Working directory; relative paths resolve against the server's cwd.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Model override.
    #[serde(default)]
    pub model: Option<String>,
    /// Model provider override.
    #[serde(default)]
    pub model_provider: Option<String>,
    /// Service tier override.
    #[serde(default)]
    pub service_tier: Option<String>,
    /// Approval policy.
    #[serde(default)]
    pub approval_policy: Option<AskForApproval>,
    /// Where approval requests are routed.
    #[serde(default)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// Sandbox mode (kebab-case).
    #[serde(default)]
    pub sandbox: Option<SandboxMode>,
    /// Config overrides keyed by dotted config path.
    #[serde(default)]
    pub config: Option<Map<String, Value>>,
    /// Replaces the base instructions.
    #[serde(default)]
    pub base_instructions: Option<String>,
    /// Adds a developer message.
    #[serde(default)]
    pub developer_instructions: Option<String>,
    /// In-memory thread, never persisted.
    #[serde(default)]
    pub ephemeral: Option<bool>,
    /// Deprecated; accepted and ignored.
    #[serde(default)]
    pub personality: Option<Personality>,
    /// Metrics tag.
    #[serde(default)]
    pub service_name: Option<String>,
    /// Passed to SessionStart hooks.
    #[serde(default)]
    pub session_start_source: Option<ThreadStartSource>,
    /// Stored in `thread.threadSource`.
    #[serde(default)]
    pub thread_source: Option<String>,
    /// EXPERIMENTAL: client-defined tools offered to the model (docs/protocol.md §9.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_tools: Option<Vec<DynamicToolSpec>>,
    /// Persisted history contract of the new thread (experimental); Weft serves `paginated`.
    #[serde(default)]
    pub history_mode: Option<ThreadHistoryMode>,
    /// A built-in permission profile id (EXPERIMENTAL upstream; not with `sandbox`).
    #[serde(default)]
    pub permissions: Option<String>,
    /// Runtime workspace roots (EXPERIMENTAL upstream); Weft accepts only the thread's cwd.
    #[serde(default)]
    pub runtime_workspace_roots: Option<Vec<String>>,
}

impl Experimental for ThreadStartParams {
    const PARAMS: ExperimentalParams = ExperimentalParams {
        served: &[
            "dynamicTools",
            "historyMode",
            "permissions",
            "runtimeWorkspaceRoots",
        ],
        unsupported: &[
            "experimentalRawEvents",
            "projectId",
            "daybreakEnabled",
            "allowProviderModelFallback",
            "multiAgentMode",
            "mockExperimentalField",
        ],
        empty_only: &["environments", "selectedCapabilityRoots"],
        flags: &["experimentalRawEvents", "allowProviderModelFallback"],
    };
}

/// Result of `thread/start`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStartResponse {
    /// The new thread (status `idle`, `turns: []`).
    pub thread: Thread,
    /// The settings in effect.
    #[serde(flatten)]
    pub settings: ThreadEffectiveSettings,
    /// The permission profile the sandbox came from (EXPERIMENTAL upstream).
    #[serde(default)]
    pub active_permission_profile: Option<ActivePermissionProfile>,
}

/// The effective settings `thread/start`, `thread/resume` and `thread/fork` answer with,
/// flattened into their results (the schema is the same as with the fields inline).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadEffectiveSettings {
    /// Effective model.
    pub model: String,
    /// Effective model provider.
    pub model_provider: String,
    /// Effective service tier.
    #[serde(default)]
    pub service_tier: Option<String>,
    /// Effective working directory (absolute).
    pub cwd: String,
    /// Paths of the instruction files (AGENTS.md etc.) that were loaded.
    #[serde(default)]
    pub instruction_sources: Vec<String>,
    /// Effective approval policy.
    pub approval_policy: AskForApproval,
    /// Effective approvals reviewer.
    pub approvals_reviewer: ApprovalsReviewer,
    /// Effective sandbox policy (object form).
    pub sandbox: SandboxPolicy,
    /// Effective reasoning effort.
    #[serde(default)]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Disabled plugin ids.
    #[serde(default)]
    pub disabled_plugin_ids: Vec<String>,
}

/// The settings `thread/resume` and `thread/fork` may override, flattened into their params
/// (the schema is the same as with the fields inline). `thread/start` keeps its own fields: its
/// schema describes them differently (they are defaults there, not overrides).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadOverrides {
    /// Model override.
    #[serde(default)]
    pub model: Option<String>,
    /// Model provider override.
    #[serde(default)]
    pub model_provider: Option<String>,
    /// Service tier override.
    #[serde(default)]
    pub service_tier: Option<String>,
    /// Working directory override.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Approval policy override.
    #[serde(default)]
    pub approval_policy: Option<AskForApproval>,
    /// Approvals reviewer override.
    #[serde(default)]
    pub approvals_reviewer: Option<ApprovalsReviewer>,
    /// Sandbox mode override (kebab-case).
    #[serde(default)]
    pub sandbox: Option<SandboxMode>,
    /// Config overrides keyed by dotted config path.
    #[serde(default)]
    pub config: Option<Map<String, Value>>,
    /// Replaces the base instructions.
    #[serde(default)]
    pub base_instructions: Option<String>,
    /// Adds a developer message.
    #[serde(default)]
    pub developer_instructions: Option<String>,
}

/// Params of `thread/resume`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadResumeParams {
    /// Thread to resume.
    pub thread_id: ThreadId,
    /// Skip `thread.turns` in the result.
    #[serde(default, deserialize_with = "null_as_default")]
    pub exclude_turns: bool,
    /// The settings it overrides.
    #[serde(flatten)]
    pub overrides: ThreadOverrides,
    /// Deprecated; accepted and ignored.
    #[serde(default)]
    pub personality: Option<Personality>,
    /// Include a `thread/turns/list` page in the response (experimental).
    #[serde(default)]
    pub initial_turns_page: Option<ThreadResumeInitialTurnsPageParams>,
}

impl ThreadResumeParams {
    /// Params with only `threadId` set.
    pub fn new(thread_id: impl Into<ThreadId>) -> Self {
        Self {
            thread_id: thread_id.into(),
            exclude_turns: false,
            overrides: ThreadOverrides::default(),
            personality: None,
            initial_turns_page: None,
        }
    }
}

impl Experimental for ThreadResumeParams {
    const PARAMS: ExperimentalParams = ExperimentalParams {
        served: &["initialTurnsPage"],
        unsupported: &["history", "path", "permissions", "runtimeWorkspaceRoots"],
        ..ExperimentalParams::NONE
    };
}

/// Result of `thread/resume`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadResumeResponse {
    /// The resumed thread (with history unless `excludeTurns`).
    pub thread: Thread,
    /// The settings in effect.
    #[serde(flatten)]
    pub settings: ThreadEffectiveSettings,
    /// The `thread/turns/list` page asked for by `initialTurnsPage` (experimental).
    #[serde(default)]
    pub initial_turns_page: Option<TurnsPage>,
    /// Pass as `cursor` to `thread/turns/list` with `sortDirection: "desc"`: the first page
    /// includes the thread's latest turn. `null` when the thread has no turn.
    #[serde(default)]
    pub turns_backwards_cursor: Option<String>,
    /// Pass as `cursor` to `thread/items/list` with `sortDirection: "desc"`: the first page
    /// includes the thread's latest item. `null` when the thread has no item.
    #[serde(default)]
    pub items_backwards_cursor: Option<String>,
    /// Active collaboration mode.
    #[serde(default)]
    pub collaboration_mode: Option<CollaborationMode>,
    /// The permission profile the sandbox came from (EXPERIMENTAL upstream).
    #[serde(default)]
    pub active_permission_profile: Option<ActivePermissionProfile>,
}

impl From<ThreadStartResponse> for ThreadResumeResponse {
    /// The settings part `thread/resume` shares with `thread/start`; the cursors and the
    /// collaboration mode are `null`.
    fn from(start: ThreadStartResponse) -> Self {
        let ThreadStartResponse {
            thread,
            settings,
            active_permission_profile,
        } = start;
        Self {
            thread,
            settings,
            initial_turns_page: None,
            turns_backwards_cursor: None,
            items_backwards_cursor: None,
            collaboration_mode: None,
            active_permission_profile,
        }
    }
}

/// Params of `thread/fork`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadForkParams {
    /// Thread to copy.
    pub thread_id: ThreadId,
    /// Make the fork in-memory only.
    #[serde(default, deserialize_with = "null_as_default")]
    pub ephemeral: bool,
    /// Skip `thread.turns` in the result.
    #[serde(default, deserialize_with = "null_as_default")]
    pub exclude_turns: bool,
    /// Fork through this turn (inclusive).
    #[serde(default)]
    pub last_turn_id: Option<TurnId>,
    /// The settings it overrides.
    #[serde(flatten)]
    pub overrides: ThreadOverrides,
    /// Stored in `thread.threadSource` of the new thread.
    #[serde(default)]
    pub thread_source: Option<String>,
}

impl ThreadForkParams {
    /// Params with only `threadId` set.
    pub fn new(thread_id: impl Into<ThreadId>) -> Self {
        Self {
            thread_id: thread_id.into(),
            ephemeral: false,
            exclude_turns: false,
            last_turn_id: None,
            overrides: ThreadOverrides::default(),
            thread_source: None,
        }
    }
}

impl Experimental for ThreadForkParams {
    const PARAMS: ExperimentalParams = ExperimentalParams {
        unsupported: &[
            "beforeTurnId",
            "path",
            "attachToSource",
            "permissions",
            "runtimeWorkspaceRoots",
            "deferGoalContinuation",
            "experimentalPredictionMode",
            "experimentalDisablePredictionMcp",
        ],
        flags: &[
            "attachToSource",
            "deferGoalContinuation",
            "experimentalPredictionMode",
            "experimentalDisablePredictionMcp",
        ],
        ..ExperimentalParams::NONE
    };
}

/// Result of `thread/fork`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadForkResponse {
    /// The new thread (`forkedFromId` = source).
    pub thread: Thread,
    /// The settings in effect.
    #[serde(flatten)]
    pub settings: ThreadEffectiveSettings,
    /// The permission profile the sandbox came from (EXPERIMENTAL upstream).
    #[serde(default)]
    pub active_permission_profile: Option<ActivePermissionProfile>,
}

impl From<ThreadStartResponse> for ThreadForkResponse {
    /// `thread/fork` answers with the same members as `thread/start`.
    fn from(start: ThreadStartResponse) -> Self {
        let ThreadStartResponse {
            thread,
            settings,
            active_permission_profile,
        } = start;
        Self {
            thread,
            settings,
            active_permission_profile,
        }
    }
}

/// Params of `thread/read`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadParams {
    /// Thread to read.
    pub thread_id: ThreadId,
    /// Populate `thread.turns`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub include_turns: bool,
}

/// Result of `thread/read`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadResponse {
    /// The thread.
    pub thread: Thread,
    /// Its read state; `null` when it has none (ephemeral).
    #[serde(default)]
    pub read_state: Option<crate::ThreadReadState>,
}

/// Params of `thread/loaded/list`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadLoadedListParams {
    /// Opaque pagination cursor.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Page size (default: no limit).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// Result of `thread/loaded/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadLoadedListResponse {
    /// Ids of the threads in memory.
    pub data: Vec<ThreadId>,
    /// Cursor of the next page; `null` on the last page.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// Declares params (and notifications) whose only member is the thread's id, each with a
/// constructor.
macro_rules! thread_id_structs {
    ($($(#[$meta:meta])* $name:ident;)*) => {
        crate::serde_util::same_members! {
            {
                /// The thread.
                pub thread_id: ThreadId,
            }
            $($(#[$meta])* $name;)*
        }

        $(
            impl $name {
                /// The struct for the given thread.
                pub fn new(thread_id: impl Into<ThreadId>) -> Self {
                    Self { thread_id: thread_id.into() }
                }
            }
        )*
    };
}
pub(crate) use thread_id_structs;

thread_id_structs! {
    /// Params of `thread/archive`.
    ThreadArchiveParams;
    /// Params of `thread/unarchive`.
    ThreadUnarchiveParams;
    /// Params of `thread/unsubscribe`.
    ThreadUnsubscribeParams;
    /// Params of `thread/compact/start`.
    ThreadCompactStartParams;
}

macro_rules! empty_response {
    ($($(#[$meta:meta])* $name:ident;)*) => {
        $(
            $(#[$meta])*
            #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
            pub struct $name {}
        )*
    };
}
pub(crate) use empty_response;

empty_response! {
    /// Result of `thread/archive` (`{}`).
    ThreadArchiveResponse;
    /// Result of `thread/name/set` (`{}`).
    ThreadSetNameResponse;
    /// Result of `thread/compact/start` (`{}`).
    ThreadCompactStartResponse;
}

/// Result of `thread/unarchive`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadUnarchiveResponse {
    /// The restored thread (status `notLoaded`).
    pub thread: Thread,
}

/// Result of `thread/unsubscribe`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadUnsubscribeResponse {
    /// What happened.
    pub status: ThreadUnsubscribeStatus,
}

/// Params of `thread/name/set`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSetNameParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// New name (must not be empty or whitespace).
    pub name: String,
}

//! Server notifications: params types and the [`ServerNotification`] enum.
//!
//! On the wire a notification is `{"method": M, "params": P, "emittedAtMs": N}` (Weft may add
//! `"jsonrpc": "2.0"`). [`ServerNotification::to_line`] assembles that line without going
//! through `#[serde(flatten)]` (`notifications/line.rs`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::attachments_api::ThreadAttachmentUpdatedNotification;
pub use crate::command_api::CommandExecOutputDeltaNotification;
pub use crate::external_agent_api::{
    ExternalAgentConfigImportCompletedNotification, ExternalAgentConfigImportProgressNotification,
};
use crate::fs_api::FsChangedNotification;
pub use crate::guardian_api::{
    GuardianWarningNotification, ItemGuardianApprovalReviewCompletedNotification,
    ItemGuardianApprovalReviewStartedNotification,
};
use crate::ids::{ItemId, ThreadId, TurnId};
use crate::items::ThreadItem;
use crate::jsonrpc::RequestId;
pub use crate::mcp_items::{McpServerStatusUpdatedNotification, McpToolCallProgressNotification};
pub use crate::mcp_oauth_api::McpServerOauthLoginCompletedNotification;
use crate::revert_api::ThreadRevertedNotification;
pub use crate::search_api::{
    FuzzyFileSearchSessionCompletedNotification, FuzzyFileSearchSessionUpdatedNotification,
};
pub use crate::settings_api::ThreadSettingsUpdatedNotification;
pub use crate::skills_roots_api::SkillsChangedNotification;
use crate::thread::{Thread, ThreadStatus};
use crate::thread_manage_api::{ThreadDeletedNotification, ThreadSectionChangedNotification};
pub use crate::thread_state_api::{
    ThreadGoalClearedNotification, ThreadGoalUpdatedNotification,
    ThreadReadStateChangedNotification,
};
use crate::turn::{Turn, TurnError, TurnPlanStep};
use crate::usage::ThreadTokenUsage;

mod line;

/// Notifications the reference sends only to connections that opted into `experimentalApi`
/// (observed from 0.171.0: a client without the opt-in never sees them), so Weft holds them back
/// from other connections too (docs/protocol.md §4.2).
pub const EXPERIMENTAL_NOTIFICATIONS: &[&str] =
    &["thread/readState/changed", "thread/settings/updated"];

/// Notifications whose types are declared but which Weft does not send yet (their runtime is
/// not there), so they are outside the protocol subset (docs/protocol.md §1.1). Serving one
/// means taking it off this list and adding its `notification …` line to the subset.
pub const PENDING_NOTIFICATIONS: &[&str] = &[];

/// Implemented by every notification params type: its wire method name.
pub trait NotificationParams: Serialize + Into<ServerNotification> {
    /// Wire method name, e.g. `"turn/started"`.
    const METHOD: &'static str;
}

/// `thread/started`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadStartedNotification {
    /// The thread (`turns: []`).
    pub thread: Thread,
}

/// `thread/status/changed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStatusChangedNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// New status.
    pub status: ThreadStatus,
}

crate::thread_api::thread_id_structs! {
    /// `thread/closed`: a loaded thread was unloaded.
    ThreadClosedNotification;
    /// `thread/archived`.
    ThreadArchivedNotification;
    /// `thread/unarchived`.
    ThreadUnarchivedNotification;
}

/// `thread/name/updated`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadNameUpdatedNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// New name.
    #[serde(default)]
    pub thread_name: Option<String>,
}

/// `thread/tokenUsage/updated`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTokenUsageUpdatedNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn the usage belongs to.
    pub turn_id: TurnId,
    /// Usage.
    pub token_usage: ThreadTokenUsage,
}

/// `thread/compacted` (deprecated; Codex does not emit it on manual compaction).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextCompactedNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// The compaction turn.
    pub turn_id: TurnId,
}

/// `turn/started`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartedNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn (`items: []`, `inProgress`).
    pub turn: Turn,
}

/// `turn/completed`: the terminal event of every turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnCompletedNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn with its final status.
    pub turn: Turn,
}

/// `turn/diff/updated`: the whole turn's unified diff so far.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnDiffUpdatedNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
    /// Unified diff (`diff --git …`).
    pub diff: String,
}

/// `turn/plan/updated`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnPlanUpdatedNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
    /// Explanation of the update.
    #[serde(default)]
    pub explanation: Option<String>,
    /// The plan.
    pub plan: Vec<TurnPlanStep>,
}

/// `item/started`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemStartedNotification {
    /// The item.
    pub item: ThreadItem,
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
    /// Unix timestamp (ms) when the item started.
    pub started_at_ms: i64,
}

/// `item/completed`: the authoritative final item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemCompletedNotification {
    /// The item.
    pub item: ThreadItem,
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
    /// Token count of the item's content, when known.
    #[serde(default)]
    pub content_token_count: Option<u64>,
    /// Unix timestamp (ms) when the item completed.
    pub completed_at_ms: i64,
}

crate::serde_util::same_members! {
    {
        /// The thread.
        pub thread_id: ThreadId,
        /// The turn.
        pub turn_id: TurnId,
        /// The item.
        pub item_id: ItemId,
        /// Text to append.
        pub delta: String,
    }
    /// `item/agentMessage/delta`: append to the message text.
    AgentMessageDeltaNotification;
    /// `item/plan/delta`: append to a plan item's text (Plan mode's proposed plan).
    PlanDeltaNotification;
    /// `item/commandExecution/outputDelta`: live command output (text).
    CommandExecutionOutputDeltaNotification;
    /// `item/fileChange/outputDelta` (deprecated; not emitted).
    FileChangeOutputDeltaNotification;
}

/// `item/reasoning/summaryTextDelta`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningSummaryTextDeltaNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
    /// The item.
    pub item_id: ItemId,
    /// Text to append.
    pub delta: String,
    /// Summary section the text belongs to.
    pub summary_index: i64,
}

/// `item/reasoning/summaryPartAdded`: a new summary section starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningSummaryPartAddedNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
    /// The item.
    pub item_id: ItemId,
    /// Index of the new section.
    pub summary_index: i64,
}

/// `item/reasoning/textDelta`: raw reasoning text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningTextDeltaNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
    /// The item.
    pub item_id: ItemId,
    /// Text to append.
    pub delta: String,
    /// Content block the text belongs to.
    pub content_index: i64,
}

/// `serverRequest/resolved`: a server request was answered or cleared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerRequestResolvedNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// The server request's id.
    pub request_id: RequestId,
}

/// `error`: an error during a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorNotification {
    /// The error.
    pub error: TurnError,
    /// Whether the server retries (the turn continues).
    pub will_retry: bool,
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
}

/// `warning`: a non-fatal warning for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WarningNotification {
    /// The thread, if the warning belongs to one.
    #[serde(default)]
    pub thread_id: Option<ThreadId>,
    /// Warning text.
    pub message: String,
}

macro_rules! server_notifications {
    ($($variant:ident => $wire:literal, $params:ident;)*) => {
        /// A notification sent by the server, tagged by `method` with its `params`.
        ///
        /// The schema also declares the top-level `emittedAtMs` (Unix ms) and `jsonrpc` members
        /// that the app-server adds when writing the message.
        #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
        #[serde(tag = "method", content = "params")]
        #[schemars(extend("properties" = {
            "emittedAtMs": {
                "description": "Unix timestamp (in milliseconds) when the server emitted this notification.",
                "type": "integer",
                "format": "int64"
            },
            "jsonrpc": {
                "description": "Optional JSON-RPC version marker (`\"2.0\"`).",
                "type": "string"
            }
        }))]
        // Messages are built, serialized once and dropped; boxing the big variants would only
        // make construction and matching noisier.
        #[allow(clippy::large_enum_variant)]
        pub enum ServerNotification {
            $(
                #[doc = concat!("`", $wire, "`")]
                #[serde(rename = $wire)]
                $variant($params),
            )*
        }

        /// Every server notification method Weft declares, in declaration order (those in
        /// [`PENDING_NOTIFICATIONS`] are not sent yet).
        pub const SERVER_NOTIFICATION_METHODS: &[&str] = &[$($wire),*];

        impl ServerNotification {
            /// The wire method name.
            pub fn method(&self) -> &'static str {
                match self {
                    $(ServerNotification::$variant(_) => $wire,)*
                }
            }

            /// Serializes only the params object, into `out`.
            pub fn write_params<W: std::io::Write>(&self, out: W) -> serde_json::Result<()> {
                match self {
                    $(ServerNotification::$variant(p) => serde_json::to_writer(out, p),)*
                }
            }

            /// The params as a JSON value.
            pub fn params_value(&self) -> serde_json::Result<serde_json::Value> {
                match self {
                    $(ServerNotification::$variant(p) => serde_json::to_value(p),)*
                }
            }
        }

        $(
            impl From<$params> for ServerNotification {
                fn from(params: $params) -> Self {
                    ServerNotification::$variant(params)
                }
            }

            impl NotificationParams for $params {
                const METHOD: &'static str = $wire;
            }
        )*

        pub(crate) fn server_notification_schemas(roots: &mut crate::schema_base::Roots) {
            $(roots.add::<$params>(&notification_schema_file(stringify!($params)));)*
        }
    };
}

server_notifications! {
    Error => "error", ErrorNotification;
    ThreadStarted => "thread/started", ThreadStartedNotification;
    ThreadStatusChanged => "thread/status/changed", ThreadStatusChangedNotification;
    ThreadArchived => "thread/archived", ThreadArchivedNotification;
    ThreadUnarchived => "thread/unarchived", ThreadUnarchivedNotification;
    ThreadClosed => "thread/closed", ThreadClosedNotification;
    ThreadDeleted => "thread/deleted", ThreadDeletedNotification;
    ThreadSectionChanged => "thread/section/changed", ThreadSectionChangedNotification;
    ThreadNameUpdated => "thread/name/updated", ThreadNameUpdatedNotification;
    ThreadTokenUsageUpdated => "thread/tokenUsage/updated", ThreadTokenUsageUpdatedNotification;
    TurnStarted => "turn/started", TurnStartedNotification;
    TurnCompleted => "turn/completed", TurnCompletedNotification;
    TurnDiffUpdated => "turn/diff/updated", TurnDiffUpdatedNotification;
    TurnPlanUpdated => "turn/plan/updated", TurnPlanUpdatedNotification;
    ItemStarted => "item/started", ItemStartedNotification;
    ItemCompleted => "item/completed", ItemCompletedNotification;
    AgentMessageDelta => "item/agentMessage/delta", AgentMessageDeltaNotification;
    PlanDelta => "item/plan/delta", PlanDeltaNotification;
    CommandExecutionOutputDelta => "item/commandExecution/outputDelta", CommandExecutionOutputDeltaNotification;
    FileChangeOutputDelta => "item/fileChange/outputDelta", FileChangeOutputDeltaNotification;
    ServerRequestResolved => "serverRequest/resolved", ServerRequestResolvedNotification;
    ReasoningSummaryTextDelta => "item/reasoning/summaryTextDelta", ReasoningSummaryTextDeltaNotification;
    ReasoningSummaryPartAdded => "item/reasoning/summaryPartAdded", ReasoningSummaryPartAddedNotification;
    ReasoningTextDelta => "item/reasoning/textDelta", ReasoningTextDeltaNotification;
    ContextCompacted => "thread/compacted", ContextCompactedNotification;
    ThreadReverted => "thread/reverted", ThreadRevertedNotification;
    Warning => "warning", WarningNotification;
    ThreadReadStateChanged => "thread/readState/changed", ThreadReadStateChangedNotification;
    ThreadGoalUpdated => "thread/goal/updated", ThreadGoalUpdatedNotification;
    ThreadGoalCleared => "thread/goal/cleared", ThreadGoalClearedNotification;
    ThreadSettingsUpdated => "thread/settings/updated", ThreadSettingsUpdatedNotification;
    McpServerStatusUpdated => "mcpServer/startupStatus/updated", McpServerStatusUpdatedNotification;
    McpToolCallProgress => "item/mcpToolCall/progress", McpToolCallProgressNotification;
    McpServerOauthLoginCompleted => "mcpServer/oauthLogin/completed", McpServerOauthLoginCompletedNotification;
    GuardianReviewStarted => "item/autoApprovalReview/started", ItemGuardianApprovalReviewStartedNotification;
    GuardianReviewCompleted => "item/autoApprovalReview/completed", ItemGuardianApprovalReviewCompletedNotification;
    GuardianWarning => "guardianWarning", GuardianWarningNotification;
    FsChanged => "fs/changed", FsChangedNotification;
    CommandExecOutputDelta => "command/exec/outputDelta", CommandExecOutputDeltaNotification;
    ThreadAttachmentUpdated => "thread/attachment/updated", ThreadAttachmentUpdatedNotification;
    FuzzyFileSearchSessionUpdated => "fuzzyFileSearch/sessionUpdated", FuzzyFileSearchSessionUpdatedNotification;
    FuzzyFileSearchSessionCompleted => "fuzzyFileSearch/sessionCompleted", FuzzyFileSearchSessionCompletedNotification;
    SkillsChanged => "skills/changed", SkillsChangedNotification;
    ExternalAgentConfigImportProgress => "externalAgentConfig/import/progress", ExternalAgentConfigImportProgressNotification;
    ExternalAgentConfigImportCompleted => "externalAgentConfig/import/completed", ExternalAgentConfigImportCompletedNotification;
}

/// Notifications whose schema the reference keeps at the top of its schema directory rather
/// than under `v2/` (the fuzzy file search's, docs/protocol.md §7.33).
const TOP_LEVEL_NOTIFICATION_SCHEMAS: &[&str] = &[
    "FuzzyFileSearchSessionUpdatedNotification",
    "FuzzyFileSearchSessionCompletedNotification",
];

/// The schema file of a notification params type, where the reference has it.
fn notification_schema_file(params: &str) -> String {
    if TOP_LEVEL_NOTIFICATION_SCHEMAS.contains(&params) {
        format!("{params}.json")
    } else {
        format!("v2/{params}.json")
    }
}

impl ServerNotification {
    /// The thread this notification is about, if any (`None` only for a thread-less warning,
    /// an MCP start-up status without a thread, or a `command/exec` delta).
    pub fn thread_id(&self) -> Option<&ThreadId> {
        use ServerNotification as N;
        match self {
            N::Error(p) => Some(&p.thread_id),
            N::ThreadStarted(p) => Some(&p.thread.id),
            N::ThreadStatusChanged(p) => Some(&p.thread_id),
            N::ThreadArchived(p) => Some(&p.thread_id),
            N::ThreadUnarchived(p) => Some(&p.thread_id),
            N::ThreadClosed(p) => Some(&p.thread_id),
            N::ThreadDeleted(p) => Some(&p.thread_id),
            N::ThreadSectionChanged(p) => Some(&p.thread_id),
            N::ThreadNameUpdated(p) => Some(&p.thread_id),
            N::ThreadTokenUsageUpdated(p) => Some(&p.thread_id),
            N::TurnStarted(p) => Some(&p.thread_id),
            N::TurnCompleted(p) => Some(&p.thread_id),
            N::TurnDiffUpdated(p) => Some(&p.thread_id),
            N::TurnPlanUpdated(p) => Some(&p.thread_id),
            N::ItemStarted(p) => Some(&p.thread_id),
            N::ItemCompleted(p) => Some(&p.thread_id),
            N::AgentMessageDelta(p) => Some(&p.thread_id),
            N::PlanDelta(p) => Some(&p.thread_id),
            N::CommandExecutionOutputDelta(p) => Some(&p.thread_id),
            N::FileChangeOutputDelta(p) => Some(&p.thread_id),
            N::ServerRequestResolved(p) => Some(&p.thread_id),
            N::ReasoningSummaryTextDelta(p) => Some(&p.thread_id),
            N::ReasoningSummaryPartAdded(p) => Some(&p.thread_id),
            N::ReasoningTextDelta(p) => Some(&p.thread_id),
            N::ContextCompacted(p) => Some(&p.thread_id),
            N::ThreadReverted(p) => Some(&p.thread_id),
            N::Warning(p) => p.thread_id.as_ref(),
            N::ThreadReadStateChanged(p) => Some(&p.thread_id),
            N::ThreadGoalUpdated(p) => Some(&p.thread_id),
            N::ThreadGoalCleared(p) => Some(&p.thread_id),
            N::ThreadSettingsUpdated(p) => Some(&p.thread_id),
            N::McpServerStatusUpdated(p) => p.thread_id.as_ref(),
            N::McpToolCallProgress(p) => Some(&p.thread_id),
            N::McpServerOauthLoginCompleted(p) => p.thread_id.as_ref(),
            N::GuardianReviewStarted(p) => Some(&p.thread_id),
            N::GuardianReviewCompleted(p) => Some(&p.thread_id),
            N::GuardianWarning(p) => Some(&p.thread_id),
            N::FsChanged(_) => None,
            N::CommandExecOutputDelta(_) => None,
            N::FuzzyFileSearchSessionUpdated(_) | N::FuzzyFileSearchSessionCompleted(_) => None,
            N::ThreadAttachmentUpdated(p) => Some(&p.thread_id),
            N::SkillsChanged(_) => None,
            N::ExternalAgentConfigImportProgress(_) | N::ExternalAgentConfigImportCompleted(_) => {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The declared methods minus the pending ones are exactly the subset's; every pending one
    /// is declared and none is in the subset.
    fn assert_served_match_subset(kind: &str, declared: &[&str], pending: &[&str]) {
        let subset = crate::test_support::read_reference("protocol-subset.txt");
        let prefix = format!("{kind} ");
        let mut expected: Vec<&str> = subset
            .lines()
            .filter_map(|l| l.strip_prefix(prefix.as_str()))
            .map(str::trim)
            .collect();
        for method in pending {
            assert!(declared.contains(method), "{kind} {method} is not declared");
            assert!(
                !expected.contains(method),
                "{kind} {method} is pending and served"
            );
        }
        let mut ours: Vec<&str> = declared
            .iter()
            .copied()
            .filter(|m| !pending.contains(m))
            .collect();
        expected.sort_unstable();
        ours.sort_unstable();
        assert_eq!(ours, expected);
    }

    #[test]
    fn method_list_matches_subset() {
        assert_served_match_subset(
            "notification",
            SERVER_NOTIFICATION_METHODS,
            PENDING_NOTIFICATIONS,
        );
        assert_served_match_subset(
            "server-request",
            crate::server_requests::SERVER_REQUEST_METHODS,
            crate::server_requests::PENDING_SERVER_REQUESTS,
        );
    }
}

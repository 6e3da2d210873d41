//! The guardian (`approvalsReviewer: "auto_review"`, docs/protocol.md §9.8): the review
//! notifications (`item/autoApprovalReview/started|completed`, `guardianWarning`) and the
//! user's override of a denial (`thread/approveGuardianDeniedAction`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{ThreadId, TurnId};

/// Lifecycle of one review.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum GuardianApprovalReviewStatus {
    /// The reviewer is deciding.
    InProgress,
    /// Allowed: the action runs.
    Approved,
    /// Denied: the action does not run.
    Denied,
    /// The reviewer did not answer in time.
    TimedOut,
    /// The review was abandoned (the turn was interrupted, or the reviewer failed).
    Aborted,
}

/// The risk the reviewer assigned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GuardianRiskLevel {
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
    /// Critical.
    Critical,
}

/// How clearly the user authorized the action, as the reviewer judged it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GuardianUserAuthorization {
    /// Not known.
    Unknown,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
}

/// Who produced a terminal decision (always the reviewing agent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum AutoReviewDecisionSource {
    /// The reviewing agent.
    Agent,
}

/// Which tool a reviewed command came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum GuardianCommandSource {
    /// A `shell` tool call.
    Shell,
    /// An `exec_command` call (unified exec).
    UnifiedExec,
}

/// The review's verdict so far.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GuardianApprovalReview {
    /// Where the review is.
    pub status: GuardianApprovalReviewStatus,
    /// The risk, once decided.
    #[serde(default)]
    pub risk_level: Option<GuardianRiskLevel>,
    /// The user's authorization, once decided.
    #[serde(default)]
    pub user_authorization: Option<GuardianUserAuthorization>,
    /// Why, once decided.
    #[serde(default)]
    pub rationale: Option<String>,
}

/// The action under review (the kinds Weft reviews).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum GuardianApprovalReviewAction {
    /// A shell command.
    Command {
        /// The command line.
        command: String,
        /// Where it runs.
        cwd: String,
        /// The tool it came from.
        source: GuardianCommandSource,
    },
    /// A patch.
    #[serde(rename_all = "camelCase")]
    ApplyPatch {
        /// The patch's base directory.
        cwd: String,
        /// The files it writes.
        files: Vec<String>,
    },
    /// An MCP tool call.
    #[serde(rename_all = "camelCase")]
    McpToolCall {
        /// The MCP server.
        server: String,
        /// The tool.
        tool_name: String,
        /// The tool's title, when it has one.
        #[serde(default)]
        tool_title: Option<String>,
        /// A connector id (never set by Weft).
        #[serde(default)]
        connector_id: Option<String>,
        /// A connector name (never set by Weft).
        #[serde(default)]
        connector_name: Option<String>,
    },
}

/// `item/autoApprovalReview/started`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemGuardianApprovalReviewStartedNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
    /// Stable id of this review.
    pub review_id: String,
    /// The item (tool call) under review.
    #[serde(default)]
    pub target_item_id: Option<String>,
    /// What is reviewed.
    pub action: GuardianApprovalReviewAction,
    /// `inProgress`.
    pub review: GuardianApprovalReview,
    /// Unix ms.
    pub started_at_ms: i64,
}

/// `item/autoApprovalReview/completed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemGuardianApprovalReviewCompletedNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn.
    pub turn_id: TurnId,
    /// Stable id of this review.
    pub review_id: String,
    /// The item (tool call) under review.
    #[serde(default)]
    pub target_item_id: Option<String>,
    /// What was reviewed.
    pub action: GuardianApprovalReviewAction,
    /// The verdict.
    pub review: GuardianApprovalReview,
    /// Who decided.
    pub decision_source: AutoReviewDecisionSource,
    /// Unix ms.
    pub started_at_ms: i64,
    /// Unix ms.
    pub completed_at_ms: i64,
}

/// `guardianWarning`: a short message about a review for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GuardianWarningNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// The message.
    pub message: String,
}

/// `thread/approveGuardianDeniedAction`: the user allows one action the reviewer denied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadApproveGuardianDeniedActionParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// The denied review as the reference's core event (snake_case: `id`, `turn_id`,
    /// `status`, `action`, …); read by the server.
    pub event: serde_json::Value,
}

/// The (empty) result of `thread/approveGuardianDeniedAction`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadApproveGuardianDeniedActionResponse {}

//! Turns, turn status and turn errors.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::TurnId;
use crate::items::ThreadItem;

/// Status of a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TurnStatus {
    /// Finished normally.
    Completed,
    /// Stopped by the user (or by a `cancel` approval decision).
    Interrupted,
    /// Ended with an error (see `Turn.error`).
    Failed,
    /// Running.
    InProgress,
}

/// How much of `Turn.items` is populated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TurnItemsView {
    /// Items not loaded (`items` is `[]`).
    NotLoaded,
    /// Only a summary (the final agent message).
    Summary,
    /// Every item.
    #[default]
    Full,
}

/// A turn: one unit of agent work started by user input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    /// Turn id.
    pub id: TurnId,
    /// First turn of a chain of work; equals `id` for user turns.
    #[serde(default)]
    pub root_turn_id: Option<TurnId>,
    /// Items of the turn (see `itemsView`).
    pub items: Vec<ThreadItem>,
    /// How much of `items` is populated.
    #[serde(default)]
    pub items_view: TurnItemsView,
    /// Turn status.
    pub status: TurnStatus,
    /// Set when `status` is `failed`.
    #[serde(default)]
    pub error: Option<TurnError>,
    /// Unix timestamp (seconds) when the turn started running.
    #[serde(default)]
    pub started_at: Option<i64>,
    /// Unix timestamp (seconds) when the turn finished.
    #[serde(default)]
    pub completed_at: Option<i64>,
    /// Wall-clock duration of the turn in milliseconds.
    #[serde(default)]
    pub duration_ms: Option<i64>,
}

impl Turn {
    /// A user turn that is running: its own root, no items loaded, no error, not finished.
    pub fn in_progress(id: TurnId, started_at: Option<i64>) -> Turn {
        Turn {
            root_turn_id: Some(id.clone()),
            id,
            items: Vec::new(),
            items_view: TurnItemsView::NotLoaded,
            status: TurnStatus::InProgress,
            error: None,
            started_at,
            completed_at: None,
            duration_ms: None,
        }
    }
}

/// Kind of a turn that cannot be steered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum NonSteerableTurnKind {
    /// A review turn.
    Review,
    /// A manual compaction turn.
    Compact,
}

/// Machine-readable error category: a plain string, or a one-key object for the variants that
/// carry details (e.g. `{"httpConnectionFailed": {"httpStatusCode": 502}}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum CodexErrorInfo {
    /// The model's context window is full.
    ContextWindowExceeded,
    /// The session budget is exhausted.
    SessionBudgetExceeded,
    /// The account's usage limit was reached.
    UsageLimitExceeded,
    /// Rate limited upstream.
    RateLimitExceeded,
    /// Flex processing unavailable.
    FlexUnavailable,
    /// Upstream overloaded.
    ServerOverloaded,
    /// Unknown model.
    ModelNotFound,
    /// Policy capacity unavailable.
    PolicyCapacityUnavailable,
    /// Blocked by the cyber-security policy.
    CyberPolicy,
    /// Blocked by the bio-security policy.
    BioPolicy,
    /// Blocked by the misalignment policy.
    MisalignmentPolicyViolation,
    /// Too many denied approvals.
    TooManyDenials,
    /// Upstream internal server error.
    InternalServerError,
    /// Authentication failed.
    Unauthorized,
    /// Upstream rejected the request.
    BadRequest,
    /// A thread rollback failed.
    ThreadRollbackFailed,
    /// Sandbox failure.
    SandboxError,
    /// An inference hook denied the request.
    InferenceHookDenied,
    /// Anything else.
    Other,
    /// Connecting to the model API failed.
    HttpConnectionFailed {
        /// Upstream HTTP status, when known.
        #[serde(default)]
        http_status_code: Option<u16>,
    },
    /// Connecting the response stream failed.
    ResponseStreamConnectionFailed {
        /// Upstream HTTP status, when known.
        #[serde(default)]
        http_status_code: Option<u16>,
    },
    /// The response stream disconnected before completion.
    ResponseStreamDisconnected {
        /// Upstream HTTP status, when known.
        #[serde(default)]
        http_status_code: Option<u16>,
    },
    /// Too many failed attempts.
    ResponseTooManyFailedAttempts {
        /// Upstream HTTP status, when known.
        #[serde(default)]
        http_status_code: Option<u16>,
    },
    /// The active turn cannot be steered.
    ActiveTurnNotSteerable {
        /// Kind of the running turn.
        turn_kind: NonSteerableTurnKind,
    },
}

/// A steering hint attached to a misalignment error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MisalignmentSteer {
    /// The message.
    pub message: String,
}

/// Details of a misalignment-policy error.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MisalignmentErrorDetails {
    /// Long explanation.
    #[serde(default)]
    pub detailed_explanation: Option<String>,
    /// Error type.
    #[serde(default)]
    pub error_type: Option<String>,
    /// What was reviewed.
    #[serde(default)]
    pub review_target: Option<String>,
    /// Steering hint.
    #[serde(default)]
    pub steer: Option<MisalignmentSteer>,
}

/// Error of a failed turn (also the `data` of non-steerable errors).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnError {
    /// Human-readable message.
    pub message: String,
    /// Machine-readable category.
    #[serde(default)]
    pub codex_error_info: Option<CodexErrorInfo>,
    /// Extra details.
    #[serde(default)]
    pub additional_details: Option<String>,
    /// Misalignment details.
    #[serde(default)]
    pub misalignment: Option<MisalignmentErrorDetails>,
}

impl TurnError {
    /// An error with a message and category and no further details.
    pub fn new(message: impl Into<String>, info: Option<CodexErrorInfo>) -> Self {
        Self {
            message: message.into(),
            codex_error_info: info,
            additional_details: None,
            misalignment: None,
        }
    }
}

/// Status of a plan step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TurnPlanStepStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
}

/// One step of the agent's plan (`turn/plan/updated`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TurnPlanStep {
    /// Step description.
    pub step: String,
    /// Step status.
    pub status: TurnPlanStepStatus,
}

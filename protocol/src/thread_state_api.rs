//! Per-thread state the clients keep in sync: read receipts (`thread/readState/update`,
//! `thread/readState/changed`), goals (`thread/goal/get|set|clear`, `thread/goal/updated`,
//! `thread/goal/cleared`) and background terminals (`thread/backgroundTerminals/*`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{ThreadId, TurnId};

/// The first unread position of a durable thread (`firstUnread: null` = read). The opaque
/// `revision` guards edits against activity the caller has not seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadState {
    /// Where unread starts; `null` when the thread is read.
    #[serde(default)]
    pub first_unread: Option<ThreadUnreadPosition>,
    /// Opaque revision of this state.
    pub revision: String,
}

impl ThreadReadState {
    /// The state of a thread nobody has marked yet: read, revision `initial:<thread id>`.
    pub fn initial(thread_id: &ThreadId) -> ThreadReadState {
        ThreadReadState {
            first_unread: None,
            revision: format!("initial:{thread_id}"),
        }
    }
}

/// Where a thread's unread part starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadUnreadPosition {
    /// Explicitly marked unread, including when the thread has no turns.
    ThreadStart,
    /// The earliest completed result needing attention.
    #[serde(rename_all = "camelCase")]
    Turn {
        /// That turn.
        turn_id: TurnId,
    },
}

/// What `thread/readState/update` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadReadStateOperation {
    /// Mark the whole thread read.
    Read,
    /// Mark the thread unread from its start.
    Unread,
}

/// Params of `thread/readState/update` (experimental).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadStateUpdateParams {
    /// The thread (loaded).
    pub thread_id: ThreadId,
    /// What to do.
    pub operation: ThreadReadStateOperation,
    /// Revision of the state the caller saw; a different current revision is a conflict.
    pub expected_revision: String,
}

/// Result of `thread/readState/update`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadStateUpdateResponse {
    /// The new state.
    pub read_state: ThreadReadState,
}

/// `thread/readState/changed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadStateChangedNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// Its new state.
    pub read_state: ThreadReadState,
}

/// A goal's lifecycle state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadGoalStatus {
    /// Being pursued.
    Active,
    /// Paused by the user.
    Paused,
    /// Blocked.
    Blocked,
    /// Stopped by a usage limit.
    UsageLimited,
    /// Stopped by its token budget.
    BudgetLimited,
    /// Reached.
    Complete,
}

/// Who asked for a goal mutation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadGoalMutationOrigin {
    /// An explicit user action.
    User,
    /// An automatic lifecycle step.
    Automatic,
}

/// A thread's goal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoal {
    /// The thread.
    pub thread_id: ThreadId,
    /// What the thread works towards.
    pub objective: String,
    /// Lifecycle state.
    pub status: ThreadGoalStatus,
    /// Token budget, when one is set.
    pub token_budget: Option<i64>,
    /// Tokens used while the goal was active.
    pub tokens_used: i64,
    /// Seconds of turns run while the goal was active.
    pub time_used_seconds: i64,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds.
    pub updated_at: i64,
}

/// Params of `thread/goal/get`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalGetParams {
    /// The thread.
    pub thread_id: ThreadId,
}

/// Result of `thread/goal/get`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalGetResponse {
    /// The goal; `null` when the thread has none.
    pub goal: Option<ThreadGoal>,
}

/// Params of `thread/goal/set`: a new objective creates the goal (replacing any other one);
/// without one, the existing goal's status and budget are updated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalSetParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// The objective.
    #[serde(default)]
    pub objective: Option<String>,
    /// The status (default `active` for a new goal).
    #[serde(default)]
    pub status: Option<ThreadGoalStatus>,
    /// Token budget.
    #[serde(default)]
    pub token_budget: Option<i64>,
    /// Who asks.
    #[serde(default)]
    pub origin: Option<ThreadGoalMutationOrigin>,
}

/// Result of `thread/goal/set`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalSetResponse {
    /// The goal as stored.
    pub goal: ThreadGoal,
}

/// Params of `thread/goal/clear`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalClearParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// Who asks.
    #[serde(default)]
    pub origin: Option<ThreadGoalMutationOrigin>,
}

/// Result of `thread/goal/clear`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalClearResponse {
    /// Whether there was a goal to clear.
    pub cleared: bool,
}

/// `thread/goal/updated`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalUpdatedNotification {
    /// The thread.
    pub thread_id: ThreadId,
    /// The turn that changed it; `null` for client requests and resume.
    pub turn_id: Option<TurnId>,
    /// The goal.
    pub goal: ThreadGoal,
}

/// `thread/goal/cleared`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalClearedNotification {
    /// The thread.
    pub thread_id: ThreadId,
}

/// One background terminal: a command that outlived its `exec_command` call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadBackgroundTerminal {
    /// Session id (what `write_stdin` takes).
    pub process_id: String,
    /// The `commandExecution` item that started it.
    pub item_id: String,
    /// The command line.
    pub command: String,
    /// Working directory.
    pub cwd: String,
    /// OS process id.
    #[serde(default)]
    pub os_pid: Option<u32>,
    /// CPU use (not measured by Weft: `null`).
    #[serde(default)]
    pub cpu_percent: Option<f64>,
    /// Resident memory in KiB, when known.
    #[serde(default)]
    pub rss_kb: Option<u64>,
}

/// Params of `thread/backgroundTerminals/list` (experimental).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadBackgroundTerminalsListParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// Opaque pagination cursor.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Page size.
    #[serde(default)]
    pub limit: Option<u32>,
}

/// Result of `thread/backgroundTerminals/list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadBackgroundTerminalsListResponse {
    /// This page.
    pub data: Vec<ThreadBackgroundTerminal>,
    /// Cursor of the next page; `null` on the last page.
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// Params of `thread/backgroundTerminals/terminate` (experimental).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadBackgroundTerminalsTerminateParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// The terminal's `processId`.
    pub process_id: String,
}

/// Result of `thread/backgroundTerminals/terminate`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadBackgroundTerminalsTerminateResponse {
    /// Whether such a terminal was running and got terminated.
    pub terminated: bool,
}

/// Params of `thread/backgroundTerminals/clean` (experimental).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadBackgroundTerminalsCleanParams {
    /// The thread.
    pub thread_id: ThreadId,
}

/// Result of `thread/backgroundTerminals/clean` (`{}`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ThreadBackgroundTerminalsCleanResponse {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn read_state_wire_shape() {
        let state = ThreadReadState {
            first_unread: Some(ThreadUnreadPosition::Turn {
                turn_id: TurnId::from("u".to_string()),
            }),
            revision: "r".into(),
        };
        assert_eq!(
            serde_json::to_value(&state).unwrap(),
            json!({"firstUnread": {"type": "turn", "turnId": "u"}, "revision": "r"})
        );
        let start = ThreadUnreadPosition::ThreadStart;
        assert_eq!(
            serde_json::to_value(&start).unwrap(),
            json!({"type": "threadStart"})
        );
        let initial = ThreadReadState::initial(&ThreadId::from("t".to_string()));
        assert_eq!(
            serde_json::to_value(&initial).unwrap(),
            json!({"firstUnread": null, "revision": "initial:t"})
        );
        let op: ThreadReadStateOperation =
            serde_json::from_value(json!({"type": "unread"})).unwrap();
        assert_eq!(op, ThreadReadStateOperation::Unread);
    }

    #[test]
    fn goal_status_spelling() {
        assert_eq!(
            serde_json::to_value(ThreadGoalStatus::BudgetLimited).unwrap(),
            json!("budgetLimited")
        );
        assert_eq!(
            serde_json::to_value(ThreadGoalStatus::UsageLimited).unwrap(),
            json!("usageLimited")
        );
    }
}

//! Params and results of `thread/revert` (docs/protocol.md §7.27) and its notification.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::{ThreadId, TurnId};
use crate::thread::Thread;

/// Params of `thread/revert`: replace the thread's durable history with the prefix before
/// `beforeTurnId`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadRevertParams {
    /// The thread.
    pub thread_id: ThreadId,
    /// The first turn left out of the history (every later turn goes with it).
    pub before_turn_id: TurnId,
    /// Weft's extension (docs/protocol.md §13): also put the workspace's files back as they
    /// were before that turn, from the ghost snapshot taken then. Refused, with nothing
    /// changed, when files changed outside the agent since.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore_workspace: Option<bool>,
}

/// Result of `thread/revert`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadRevertResponse {
    /// The thread as it is now (`turns` always empty: page the rest with
    /// `thread/turns/list`).
    pub thread: Thread,
    /// Cursor for `thread/turns/list` with `sortDirection: "desc"` (the latest turn kept).
    pub turns_backwards_cursor: Option<String>,
    /// Cursor for `thread/items/list` with `sortDirection: "desc"` (the latest item kept).
    pub items_backwards_cursor: Option<String>,
}

/// `thread/reverted`: a thread's history was replaced by `thread/revert`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadRevertedNotification {
    /// The thread.
    pub thread_id: ThreadId,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_extension_is_optional_and_left_out_when_unset() {
        let params: ThreadRevertParams =
            serde_json::from_value(json!({"threadId": "t", "beforeTurnId": "u"})).unwrap();
        assert_eq!(params.restore_workspace, None);
        assert_eq!(
            serde_json::to_value(&params).unwrap(),
            json!({"threadId": "t", "beforeTurnId": "u"})
        );
        let params: ThreadRevertParams = serde_json::from_value(
            json!({"threadId": "t", "beforeTurnId": "u", "restoreWorkspace": true}),
        )
        .unwrap();
        assert_eq!(params.restore_workspace, Some(true));
        assert!(serde_json::from_value::<ThreadRevertParams>(json!({"threadId": "t"})).is_err());
    }
}

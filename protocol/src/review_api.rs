//! Params and result of `review/start` (docs/protocol.md §7.28): a code review run as a turn
//! of the thread it names.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::ThreadId;
use crate::turn::Turn;

/// What a review looks at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ReviewTarget {
    /// Review the working tree: staged, unstaged, and untracked files.
    #[serde(rename_all = "camelCase")]
    UncommittedChanges,
    /// Review changes between the current branch and the given base branch.
    #[serde(rename_all = "camelCase")]
    BaseBranch {
        /// The base branch.
        branch: String,
    },
    /// Review the changes introduced by a specific commit.
    #[serde(rename_all = "camelCase")]
    Commit {
        /// The commit.
        sha: String,
        /// Optional human-readable label (e.g., commit subject) for UIs.
        #[serde(default)]
        title: Option<String>,
    },
    /// Arbitrary instructions, equivalent to the old free-form prompt.
    #[serde(rename_all = "camelCase")]
    Custom {
        /// What to review, in the user's words.
        instructions: String,
    },
}

/// Where a review runs: only on the thread the request names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ReviewDelivery {
    /// On the supplied thread.
    Inline,
}

/// Params of `review/start`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewStartParams {
    /// The thread the review runs on.
    pub thread_id: ThreadId,
    /// What to review.
    pub target: ReviewTarget,
    /// Reviews run inline on the supplied thread. Omit this field or pass `inline`. To review
    /// on a separate thread, start a thread first and use its id.
    #[serde(default)]
    pub delivery: Option<ReviewDelivery>,
}

/// Result of `review/start`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewStartResponse {
    /// The review's turn, in progress.
    pub turn: Turn,
    /// The thread id supplied to `review/start`.
    pub review_thread_id: ThreadId,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn targets_read_as_the_reference_writes_them() {
        let params: ReviewStartParams = serde_json::from_value(json!({
            "threadId": "t",
            "target": {"type": "commit", "sha": "abc"},
        }))
        .unwrap();
        assert_eq!(
            params.target,
            ReviewTarget::Commit {
                sha: "abc".into(),
                title: None
            }
        );
        assert_eq!(params.delivery, None);
        for (target, expected) in [
            (
                json!({"type": "uncommittedChanges"}),
                ReviewTarget::UncommittedChanges,
            ),
            (
                json!({"type": "baseBranch", "branch": "main"}),
                ReviewTarget::BaseBranch {
                    branch: "main".into(),
                },
            ),
            (
                json!({"type": "custom", "instructions": "look"}),
                ReviewTarget::Custom {
                    instructions: "look".into(),
                },
            ),
        ] {
            let params: ReviewStartParams = serde_json::from_value(
                json!({"threadId": "t", "target": target, "delivery": "inline"}),
            )
            .unwrap();
            assert_eq!(params.target, expected);
            assert_eq!(params.delivery, Some(ReviewDelivery::Inline));
        }
        assert!(
            serde_json::from_value::<ReviewStartParams>(json!({
                "threadId": "t", "target": {"type": "uncommittedChanges"}, "delivery": "detached"
            }))
            .is_err()
        );
    }
}

//! Samples of the guardian's notifications (docs/protocol.md §9.8), one per action kind and
//! status, for the notification conformance test.

use crate::notifications::ServerNotification;
use crate::*;

/// A review's started and completed notifications for each action Weft reviews, and a warning.
pub(super) fn sample_notifications() -> Vec<ServerNotification> {
    let actions = [
        GuardianApprovalReviewAction::Command {
            command: "/bin/bash -lc 'touch x'".into(),
            cwd: "/w".into(),
            source: GuardianCommandSource::UnifiedExec,
        },
        GuardianApprovalReviewAction::ApplyPatch {
            cwd: "/w".into(),
            files: vec!["/elsewhere/f".into()],
        },
        GuardianApprovalReviewAction::McpToolCall {
            server: "docs".into(),
            tool_name: "write".into(),
            tool_title: None,
            connector_id: None,
            connector_name: None,
        },
    ];
    let statuses = [
        (GuardianApprovalReviewStatus::Approved, true),
        (GuardianApprovalReviewStatus::Denied, true),
        (GuardianApprovalReviewStatus::TimedOut, false),
    ];
    let mut out: Vec<ServerNotification> = Vec::new();
    for (action, (status, decided)) in actions.into_iter().zip(statuses) {
        out.push(
            ItemGuardianApprovalReviewStartedNotification {
                thread_id: "t".into(),
                turn_id: "u".into(),
                review_id: "r".into(),
                target_item_id: Some("call".into()),
                action: action.clone(),
                review: GuardianApprovalReview {
                    status: GuardianApprovalReviewStatus::InProgress,
                    risk_level: None,
                    user_authorization: None,
                    rationale: None,
                },
                started_at_ms: 1,
            }
            .into(),
        );
        out.push(
            ItemGuardianApprovalReviewCompletedNotification {
                thread_id: "t".into(),
                turn_id: "u".into(),
                review_id: "r".into(),
                target_item_id: Some("call".into()),
                action,
                review: GuardianApprovalReview {
                    status,
                    risk_level: decided.then_some(GuardianRiskLevel::Medium),
                    user_authorization: decided.then_some(GuardianUserAuthorization::High),
                    rationale: Some("why".into()),
                },
                decision_source: AutoReviewDecisionSource::Agent,
                started_at_ms: 1,
                completed_at_ms: 2,
            }
            .into(),
        );
    }
    out.push(
        GuardianWarningNotification {
            thread_id: "t".into(),
            message: "Automatic approval review allowed the action".into(),
        }
        .into(),
    );
    out
}

//! How a thread event becomes a notification, and who gets it: the thread's subscribers, or
//! every connection (docs/architecture.md §3.3; the table of docs/protocol.md §8.1).

use weft_core::events::ThreadEvent;
use weft_core::time::now_ms;
use weft_protocol::ThreadId;
use weft_protocol::notifications::*;

/// The notification for a thread event, and whether it is broadcast to every connection.
pub fn to_notification(thread: &ThreadId, event: ThreadEvent) -> (ServerNotification, bool) {
    // A status change goes to everyone (docs/protocol.md §8.1); the rest to the subscribers.
    let broadcast = matches!(event, ThreadEvent::StatusChanged(_));
    let thread_id = thread.clone();
    let notification = match event {
        ThreadEvent::StatusChanged(status) => {
            ThreadStatusChangedNotification { thread_id, status }.into()
        }
        ThreadEvent::TurnStarted(turn) => TurnStartedNotification { thread_id, turn }.into(),
        ThreadEvent::TurnCompleted(turn) => TurnCompletedNotification { thread_id, turn }.into(),
        ThreadEvent::ItemStarted { turn_id, item } => ItemStartedNotification {
            started_at_ms: item.started_at_ms.unwrap_or_else(now_ms),
            item,
            thread_id,
            turn_id,
        }
        .into(),
        ThreadEvent::ItemCompleted { turn_id, item } => ItemCompletedNotification {
            completed_at_ms: item.completed_at_ms.unwrap_or_else(now_ms),
            item,
            thread_id,
            turn_id,
            content_token_count: None,
        }
        .into(),
        ThreadEvent::AgentMessageDelta {
            turn_id,
            item_id,
            delta,
        } => AgentMessageDeltaNotification {
            thread_id,
            turn_id,
            item_id: item_id.into(),
            delta,
        }
        .into(),
        ThreadEvent::PlanDelta {
            turn_id,
            item_id,
            delta,
        } => PlanDeltaNotification {
            thread_id,
            turn_id,
            item_id: item_id.into(),
            delta,
        }
        .into(),
        ThreadEvent::ReasoningSummaryTextDelta {
            turn_id,
            item_id,
            delta,
            summary_index,
        } => ReasoningSummaryTextDeltaNotification {
            thread_id,
            turn_id,
            item_id: item_id.into(),
            delta,
            summary_index,
        }
        .into(),
        ThreadEvent::ReasoningSummaryPartAdded {
            turn_id,
            item_id,
            summary_index,
        } => ReasoningSummaryPartAddedNotification {
            thread_id,
            turn_id,
            item_id: item_id.into(),
            summary_index,
        }
        .into(),
        ThreadEvent::ReasoningTextDelta {
            turn_id,
            item_id,
            delta,
            content_index,
        } => ReasoningTextDeltaNotification {
            thread_id,
            turn_id,
            item_id: item_id.into(),
            delta,
            content_index,
        }
        .into(),
        ThreadEvent::CommandOutputDelta {
            turn_id,
            item_id,
            delta,
        } => CommandExecutionOutputDeltaNotification {
            thread_id,
            turn_id,
            item_id: item_id.into(),
            delta,
        }
        .into(),
        ThreadEvent::TurnDiffUpdated { turn_id, diff } => TurnDiffUpdatedNotification {
            thread_id,
            turn_id,
            diff,
        }
        .into(),
        ThreadEvent::PlanUpdated {
            turn_id,
            explanation,
            plan,
        } => TurnPlanUpdatedNotification {
            thread_id,
            turn_id,
            explanation,
            plan,
        }
        .into(),
        ThreadEvent::TokenUsage { turn_id, usage } => ThreadTokenUsageUpdatedNotification {
            thread_id,
            turn_id,
            token_usage: usage,
        }
        .into(),
        ThreadEvent::Error {
            turn_id,
            error,
            will_retry,
        } => ErrorNotification {
            error,
            will_retry,
            thread_id,
            turn_id,
        }
        .into(),
        ThreadEvent::McpToolCallProgress {
            turn_id,
            item_id,
            message,
        } => weft_protocol::McpToolCallProgressNotification {
            thread_id,
            turn_id,
            item_id,
            message,
        }
        .into(),
        ThreadEvent::GuardianReviewStarted(review) => (*review).into(),
        ThreadEvent::GuardianReviewCompleted(review) => (*review).into(),
        ThreadEvent::GuardianWarning { message } => {
            GuardianWarningNotification { thread_id, message }.into()
        }
        ThreadEvent::Warning { message, .. } => WarningNotification {
            thread_id: Some(thread_id),
            message,
        }
        .into(),
        ThreadEvent::GoalUpdated { turn_id, goal } => {
            weft_protocol::ThreadGoalUpdatedNotification {
                thread_id,
                turn_id,
                goal,
            }
            .into()
        }
        ThreadEvent::ReadStateChanged(read_state) => {
            weft_protocol::ThreadReadStateChangedNotification {
                thread_id,
                read_state,
            }
            .into()
        }
        ThreadEvent::SettingsChanged(settings) => {
            weft_protocol::ThreadSettingsUpdatedNotification {
                thread_id,
                thread_settings: weft_protocol::settings_api::ThreadSettings {
                    cwd: settings.cwd.display().to_string(),
                    approval_policy: settings.approval_policy,
                    approvals_reviewer: settings.approvals_reviewer,
                    sandbox_policy: settings.sandbox.clone(),
                    active_permission_profile: settings
                        .permission_profile
                        .as_deref()
                        .map(weft_protocol::ActivePermissionProfile::builtin),
                    model: settings.model.clone(),
                    model_provider: settings.model_provider.clone(),
                    service_tier: None,
                    effort: settings.reasoning_effort.clone(),
                    summary: settings.reasoning_summary,
                    collaboration_mode: settings.reported_collaboration_mode(),
                    disabled_plugin_ids: Vec::new(),
                    personality: None,
                },
            }
            .into()
        }
    };
    (notification, broadcast)
}

//! Notifications Weft writes validate against both schemas and write every key.

use super::*;

#[test]
fn notifications_validate_and_write_every_key() {
    let mut schemas = Schemas::load();
    let thread_id = ThreadId::from("th");
    let turn_id = TurnId::from("tu");
    let item_id = ItemId::from("it");
    let usage = TokenUsageBreakdown {
        total_tokens: 3,
        input_tokens: 2,
        cached_input_tokens: 0,
        cache_write_input_tokens: 0,
        output_tokens: 1,
        reasoning_output_tokens: 0,
    };
    let mut notifications: Vec<ServerNotification> = vec![
        ThreadStartedNotification {
            thread: sample_thread(vec![]),
        }
        .into(),
        ThreadClosedNotification {
            thread_id: thread_id.clone(),
        }
        .into(),
        ThreadArchivedNotification {
            thread_id: thread_id.clone(),
        }
        .into(),
        ThreadUnarchivedNotification {
            thread_id: thread_id.clone(),
        }
        .into(),
        ThreadNameUpdatedNotification {
            thread_id: thread_id.clone(),
            thread_name: Some("n".into()),
        }
        .into(),
        ThreadTokenUsageUpdatedNotification {
            thread_id: thread_id.clone(),
            turn_id: turn_id.clone(),
            token_usage: ThreadTokenUsage {
                total: usage,
                last: usage,
                model_context_window: None,
            },
        }
        .into(),
        ContextCompactedNotification {
            thread_id: thread_id.clone(),
            turn_id: turn_id.clone(),
        }
        .into(),
        TurnStartedNotification {
            thread_id: thread_id.clone(),
            turn: sample_turn(TurnStatus::InProgress),
        }
        .into(),
        TurnCompletedNotification {
            thread_id: thread_id.clone(),
            turn: sample_turn(TurnStatus::Failed),
        }
        .into(),
        TurnDiffUpdatedNotification {
            thread_id: thread_id.clone(),
            turn_id: turn_id.clone(),
            diff: "diff --git".into(),
        }
        .into(),
        TurnPlanUpdatedNotification {
            thread_id: thread_id.clone(),
            turn_id: turn_id.clone(),
            explanation: None,
            plan: vec![
                TurnPlanStep {
                    step: "a".into(),
                    status: TurnPlanStepStatus::Pending,
                },
                TurnPlanStep {
                    step: "b".into(),
                    status: TurnPlanStepStatus::InProgress,
                },
                TurnPlanStep {
                    step: "c".into(),
                    status: TurnPlanStepStatus::Completed,
                },
            ],
        }
        .into(),
        AgentMessageDeltaNotification {
            thread_id: thread_id.clone(),
            turn_id: turn_id.clone(),
            item_id: item_id.clone(),
            delta: "d".into(),
        }
        .into(),
        crate::notifications::PlanDeltaNotification {
            thread_id: thread_id.clone(),
            turn_id: turn_id.clone(),
            item_id: item_id.clone(),
            delta: "- step\n".into(),
        }
        .into(),
        CommandExecutionOutputDeltaNotification {
            thread_id: thread_id.clone(),
            turn_id: turn_id.clone(),
            item_id: item_id.clone(),
            delta: "d".into(),
        }
        .into(),
        FileChangeOutputDeltaNotification {
            thread_id: thread_id.clone(),
            turn_id: turn_id.clone(),
            item_id: item_id.clone(),
            delta: "d".into(),
        }
        .into(),
        ReasoningSummaryTextDeltaNotification {
            thread_id: thread_id.clone(),
            turn_id: turn_id.clone(),
            item_id: item_id.clone(),
            delta: "d".into(),
            summary_index: 0,
        }
        .into(),
        ReasoningSummaryPartAddedNotification {
            thread_id: thread_id.clone(),
            turn_id: turn_id.clone(),
            item_id: item_id.clone(),
            summary_index: 1,
        }
        .into(),
        ReasoningTextDeltaNotification {
            thread_id: thread_id.clone(),
            turn_id: turn_id.clone(),
            item_id: item_id.clone(),
            delta: "d".into(),
            content_index: 0,
        }
        .into(),
        ServerRequestResolvedNotification {
            thread_id: thread_id.clone(),
            request_id: RequestId::Integer(0),
        }
        .into(),
        ServerRequestResolvedNotification {
            thread_id: thread_id.clone(),
            request_id: RequestId::String("s".into()),
        }
        .into(),
        WarningNotification {
            thread_id: None,
            message: "w".into(),
        }
        .into(),
    ];
    for status in [
        ThreadStatus::NotLoaded,
        ThreadStatus::Idle,
        ThreadStatus::SystemError,
        ThreadStatus::active(),
    ] {
        notifications.push(
            ThreadStatusChangedNotification {
                thread_id: thread_id.clone(),
                status,
            }
            .into(),
        );
    }
    let infos = [
        CodexErrorInfo::ContextWindowExceeded,
        CodexErrorInfo::InferenceHookDenied,
        CodexErrorInfo::Other,
        CodexErrorInfo::HttpConnectionFailed {
            http_status_code: None,
        },
        CodexErrorInfo::ResponseStreamConnectionFailed {
            http_status_code: Some(500),
        },
        CodexErrorInfo::ResponseTooManyFailedAttempts {
            http_status_code: Some(429),
        },
        CodexErrorInfo::ActiveTurnNotSteerable {
            turn_kind: NonSteerableTurnKind::Compact,
        },
    ];
    for info in infos {
        notifications.push(
            ErrorNotification {
                error: TurnError::new("e", Some(info)),
                will_retry: false,
                thread_id: thread_id.clone(),
                turn_id: turn_id.clone(),
            }
            .into(),
        );
    }
    for item in sample_items() {
        notifications.push(
            ItemStartedNotification {
                item: item.clone(),
                thread_id: thread_id.clone(),
                turn_id: turn_id.clone(),
                started_at_ms: 5,
            }
            .into(),
        );
        notifications.push(
            ItemCompletedNotification {
                item,
                thread_id: thread_id.clone(),
                turn_id: turn_id.clone(),
                content_token_count: None,
                completed_at_ms: 6,
            }
            .into(),
        );
    }
    let goal = ThreadGoal {
        thread_id: thread_id.clone(),
        objective: "Ship it".into(),
        status: ThreadGoalStatus::Paused,
        token_budget: None,
        tokens_used: 0,
        time_used_seconds: 0,
        created_at: 1,
        updated_at: 2,
    };
    notifications.push(
        ThreadReadStateChangedNotification {
            thread_id: thread_id.clone(),
            read_state: ThreadReadState {
                first_unread: Some(ThreadUnreadPosition::Turn {
                    turn_id: turn_id.clone(),
                }),
                revision: "r".into(),
            },
        }
        .into(),
    );
    notifications.push(
        ThreadGoalUpdatedNotification {
            thread_id: thread_id.clone(),
            turn_id: None,
            goal,
        }
        .into(),
    );
    notifications.push(
        ThreadGoalClearedNotification {
            thread_id: thread_id.clone(),
        }
        .into(),
    );
    notifications.push(
        ThreadSettingsUpdatedNotification {
            thread_id: thread_id.clone(),
            thread_settings: settings_api::ThreadSettings {
                cwd: "/w".into(),
                approval_policy: AskForApproval::OnRequest,
                approvals_reviewer: ApprovalsReviewer::User,
                sandbox_policy: SandboxPolicy::from_mode(SandboxMode::ReadOnly),
                active_permission_profile: Some(ActivePermissionProfile::builtin(":read-only")),
                model: "m".into(),
                model_provider: "p".into(),
                service_tier: None,
                effort: None,
                summary: None,
                collaboration_mode: CollaborationMode {
                    mode: ModeKind::Plan,
                    settings: CollaborationModeSettings {
                        model: "m".into(),
                        reasoning_effort: None,
                        developer_instructions: Some("plan".into()),
                    },
                },
                disabled_plugin_ids: Vec::new(),
                personality: None,
            },
        }
        .into(),
    );
    notifications.extend(mcp::sample_notifications());
    notifications.extend(super::guardian::sample_notifications());
    notifications.extend(super::fs::sample_notifications());
    notifications.extend(super::command::sample_notifications());
    notifications.extend(super::external_agent::sample_notifications());
    notifications.push(
        ThreadRevertedNotification {
            thread_id: "t".into(),
        }
        .into(),
    );
    notifications.push(
        crate::ThreadDeletedNotification {
            thread_id: "t".into(),
        }
        .into(),
    );
    for section_id in [Some("s".to_string()), None] {
        notifications.push(
            crate::ThreadSectionChangedNotification {
                thread_id: "t".into(),
                section_id,
            }
            .into(),
        );
    }
    notifications.push(
        crate::ThreadAttachmentUpdatedNotification {
            thread_id: "t".into(),
            attachment_type: "pull_request".into(),
            identity_key: "k".into(),
            attachment_id: "a".into(),
            operation: crate::ThreadAttachmentOperation::Deleted,
        }
        .into(),
    );
    notifications.push(crate::SkillsChangedNotification {}.into());
    notifications.push(
        crate::FuzzyFileSearchSessionUpdatedNotification {
            session_id: "s".into(),
            query: "mai".into(),
            files: vec![crate::search_api::FuzzyFileSearchResult {
                root: "/w".into(),
                path: "src/main.rs".into(),
                match_type: crate::search_api::FuzzyFileSearchMatchType::File,
                file_name: "main.rs".into(),
                score: 65620,
                indices: Some(vec![4, 5, 6]),
            }],
        }
        .into(),
    );
    notifications.push(
        crate::FuzzyFileSearchSessionCompletedNotification {
            session_id: "s".into(),
        }
        .into(),
    );
    let mut methods_seen = std::collections::BTreeSet::new();
    for n in &notifications {
        let line = n.to_line(1_795_979_147_618).unwrap();
        let value: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["method"], json!(n.method()));
        assert_eq!(value["params"], n.params_value().unwrap());
        schemas.check("ServerNotification.json", &value, n.method());
        // Round trip through the enum.
        let back: ServerNotification = serde_json::from_value(value).unwrap();
        assert_eq!(&back, n);
        methods_seen.insert(n.method());
    }
    assert_eq!(methods_seen.len(), SERVER_NOTIFICATION_METHODS.len());
}

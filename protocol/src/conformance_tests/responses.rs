//! Responses Weft writes validate against both schemas and write every key.

use super::*;

#[test]
fn responses_validate_and_write_every_key() {
    let mut schemas = Schemas::load();
    let thread = sample_thread(vec![
        sample_turn(TurnStatus::Completed),
        sample_turn(TurnStatus::Failed),
    ]);
    let policies = [
        (
            AskForApproval::Never,
            SandboxPolicy::from_mode(SandboxMode::WorkspaceWrite),
        ),
        (
            AskForApproval::OnRequest,
            SandboxPolicy::from_mode(SandboxMode::ReadOnly),
        ),
        (
            AskForApproval::Granular {
                sandbox_approval: true,
                rules: true,
                mcp_elicitations: false,
                request_permissions: false,
                skill_approval: false,
            },
            SandboxPolicy::ExternalSandbox {
                network_access: NetworkAccess::Enabled,
            },
        ),
        (AskForApproval::Untrusted, SandboxPolicy::DangerFullAccess),
    ];
    for (approval_policy, sandbox) in policies {
        let start = ThreadStartResponse {
            thread: thread.clone(),
            settings: ThreadEffectiveSettings {
                model: "gpt-5.5".into(),
                model_provider: "openai".into(),
                service_tier: None,
                cwd: "/w".into(),
                instruction_sources: vec!["/w/AGENTS.md".into()],
                approval_policy,
                approvals_reviewer: ApprovalsReviewer::User,
                sandbox: sandbox.clone(),
                reasoning_effort: None,
                disabled_plugin_ids: vec![],
            },
            active_permission_profile: None,
        };
        schemas.check_result::<methods::ThreadStart>(&start);
        let settings = ThreadEffectiveSettings {
            instruction_sources: vec![],
            approvals_reviewer: ApprovalsReviewer::AutoReview,
            sandbox,
            reasoning_effort: Some("low".into()),
            ..start.settings.clone()
        };
        let fork = ThreadForkResponse {
            thread: thread.clone(),
            settings: settings.clone(),
            active_permission_profile: Some(ActivePermissionProfile::builtin(":workspace")),
        };
        schemas.check_result::<methods::ThreadFork>(&fork);
        let resume = ThreadResumeResponse {
            thread: thread.clone(),
            settings: ThreadEffectiveSettings {
                service_tier: Some("flex".into()),
                approvals_reviewer: ApprovalsReviewer::GuardianSubagent,
                reasoning_effort: None,
                ..settings
            },
            initial_turns_page: None,
            turns_backwards_cursor: None,
            items_backwards_cursor: None,
            collaboration_mode: Some(CollaborationMode {
                mode: ModeKind::Plan,
                settings: CollaborationModeSettings {
                    model: "m".into(),
                    reasoning_effort: None,
                    developer_instructions: None,
                },
            }),
            active_permission_profile: None,
        };
        schemas.check_result::<methods::ThreadResume>(&resume);
    }
    let init = InitializeResponse {
        user_agent: "x/0.1.0".into(),
        codex_home: "/home/me/.weft".into(),
        platform_family: "unix".into(),
        platform_os: "linux".into(),
    };
    schemas.check("v1/InitializeResponse.json", &to_value(&init), "initialize");
    let list = ThreadListResponse {
        data: vec![sample_thread(vec![])],
        next_cursor: Some("c".into()),
        backwards_cursor: None,
        read_states: Some(
            [(
                "t".to_string(),
                ThreadReadState::initial(&ThreadId::from("t")),
            )]
            .into(),
        ),
    };
    schemas.check_result::<methods::ThreadList>(&list);
    schemas.check_result::<methods::ThreadRead>(&ThreadReadResponse {
        thread: thread.clone(),
        read_state: Some(ThreadReadState {
            first_unread: Some(ThreadUnreadPosition::ThreadStart),
            revision: "r".into(),
        }),
    });
    // `thread/revert` (with and without Weft's `restoreWorkspace`, and its result).
    for restore_workspace in [None, Some(true)] {
        schemas.check_params::<methods::ThreadRevert>(&ThreadRevertParams {
            thread_id: "t".into(),
            before_turn_id: "u".into(),
            restore_workspace,
        });
    }
    for cursor in [None, Some("c".to_string())] {
        schemas.check_result::<methods::ThreadRevert>(&ThreadRevertResponse {
            thread: thread.clone(),
            turns_backwards_cursor: cursor.clone(),
            items_backwards_cursor: cursor,
        });
    }
    schemas.check_result::<methods::ThreadUnarchive>(&ThreadUnarchiveResponse { thread });
    let loaded = ThreadLoadedListResponse {
        data: vec!["a".into()],
        next_cursor: None,
    };
    schemas.check_result::<methods::ThreadLoadedList>(&loaded);
    for status in [
        ThreadUnsubscribeStatus::NotLoaded,
        ThreadUnsubscribeStatus::NotSubscribed,
        ThreadUnsubscribeStatus::Unsubscribed,
    ] {
        schemas.check_result::<methods::ThreadUnsubscribe>(&ThreadUnsubscribeResponse { status });
    }
    schemas.check_result::<methods::ThreadArchive>(&ThreadArchiveResponse {});
    schemas.check_result::<methods::ThreadSetName>(&ThreadSetNameResponse {});
    schemas.check_result::<methods::ThreadCompactStart>(&ThreadCompactStartResponse {});
    schemas.check_result::<methods::TurnInterrupt>(&TurnInterruptResponse {});
    let turn = Turn {
        items_view: TurnItemsView::NotLoaded,
        started_at: None,
        ..sample_turn(TurnStatus::InProgress)
    };
    let turn_json = to_value(&TurnStartResponse { turn });
    assert_eq!(
        turn_json,
        json!({"turn": {"id": "turn1", "rootTurnId": "turn1", "items": [], "itemsView": "notLoaded",
            "status": "inProgress", "error": null, "startedAt": null, "completedAt": null, "durationMs": null}})
    );
    schemas.check("v2/TurnStartResponse.json", &turn_json, "turn/start");
    schemas.check_result::<methods::TurnSteer>(&TurnSteerResponse {
        turn_id: "t".into(),
    });
    let models = ModelListResponse {
        data: vec![sample_model()],
        next_cursor: None,
    };
    schemas.check_result::<methods::ModelList>(&models);
}

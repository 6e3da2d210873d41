//! Requests Weft sends to clients validate against both schemas and write every key.

use super::*;

#[test]
fn server_requests_validate_and_write_every_key() {
    let mut schemas = Schemas::load();
    let requests = vec![
        ServerRequest::CommandExecutionRequestApproval {
            id: RequestId::Integer(0),
            params: CommandExecutionRequestApprovalParams {
                kind: CommandExecutionApprovalKind::Command,
                thread_id: "t".into(),
                turn_id: "u".into(),
                item_id: "call".into(),
                started_at_ms: 1,
                approval_id: None,
                environment_id: Some("local".into()),
                command: Some("ls".into()),
                cwd: Some("/w".into()),
                command_actions: Some(vec![CommandAction::Unknown {
                    command: "ls".into(),
                }]),
                reason: None,
                network_approval_context: Some(NetworkApprovalContext {
                    host: "h".into(),
                    protocol: NetworkApprovalProtocol::Socks5Tcp,
                }),
                proposed_execpolicy_amendment: Some(vec!["ls".into()]),
                proposed_network_policy_amendments: Some(vec![NetworkPolicyAmendment {
                    host: "h".into(),
                    action: NetworkPolicyRuleAction::Allow,
                }]),
                available_decisions: None,
                additional_permissions: None,
            },
        },
        ServerRequest::FileChangeRequestApproval {
            id: RequestId::Integer(1),
            params: FileChangeRequestApprovalParams {
                thread_id: "t".into(),
                turn_id: "u".into(),
                item_id: "call".into(),
                started_at_ms: 2,
                reason: None,
                grant_root: None,
            },
        },
        ServerRequest::ToolRequestUserInput {
            id: RequestId::Integer(2),
            params: ToolRequestUserInputParams {
                thread_id: "t".into(),
                turn_id: "u".into(),
                item_id: "call".into(),
                is_blocking: true,
                questions: vec![ToolRequestUserInputQuestion {
                    id: "q".into(),
                    header: "H".into(),
                    question: "?".into(),
                    is_other: true,
                    is_secret: false,
                    options: Some(vec![ToolRequestUserInputOption {
                        label: "a".into(),
                        description: "b".into(),
                    }]),
                }],
                auto_resolution_ms: None,
            },
        },
    ];
    for request in &requests {
        let value = to_value(request);
        assert_eq!(value["method"], json!(request.method()));
        assert_eq!(request.thread_id().as_str(), "t");
        schemas.check("ServerRequest.json", &value, request.method());
        let back: ServerRequest = serde_json::from_value(value).unwrap();
        assert_eq!(&back, request);
    }
    let decisions = [
        CommandExecutionApprovalDecision::Accept,
        CommandExecutionApprovalDecision::AcceptForSession,
        CommandExecutionApprovalDecision::AcceptWithExecpolicyAmendment {
            execpolicy_amendment: vec!["ls".into()],
        },
        CommandExecutionApprovalDecision::ApplyNetworkPolicyAmendment {
            network_policy_amendment: NetworkPolicyAmendment {
                host: "h".into(),
                action: NetworkPolicyRuleAction::Deny,
            },
        },
        CommandExecutionApprovalDecision::Decline,
        CommandExecutionApprovalDecision::Cancel,
    ];
    for decision in decisions {
        let value = to_value(&CommandExecutionRequestApprovalResponse { decision });
        schemas.check(
            "CommandExecutionRequestApprovalResponse.json",
            &value,
            "command decision",
        );
    }
    assert_eq!(
        to_value(
            &CommandExecutionApprovalDecision::AcceptWithExecpolicyAmendment {
                execpolicy_amendment: vec!["a".into()]
            }
        ),
        json!({"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["a"]}})
    );
    for decision in [
        FileChangeApprovalDecision::Accept,
        FileChangeApprovalDecision::AcceptForSession,
        FileChangeApprovalDecision::Decline,
        FileChangeApprovalDecision::Cancel,
    ] {
        let value = to_value(&FileChangeRequestApprovalResponse { decision });
        schemas.check(
            "FileChangeRequestApprovalResponse.json",
            &value,
            "file decision",
        );
    }
    let mut answers = std::collections::BTreeMap::new();
    answers.insert(
        "q".to_owned(),
        ToolRequestUserInputAnswer {
            answers: vec!["a".into()],
        },
    );
    let value = to_value(&ToolRequestUserInputResponse { answers });
    schemas.check(
        "ToolRequestUserInputResponse.json",
        &value,
        "user input answer",
    );
    // An unparsable decision is an error for the server to handle.
    assert!(
        serde_json::from_value::<CommandExecutionRequestApprovalResponse>(
            json!({"decision": "maybe"})
        )
        .is_err()
    );
}

//! Client requests (the params a client sends) validate against both schemas.

use super::*;

#[test]
fn params_we_send_validate() {
    let mut schemas = Schemas::load();
    let requests = vec![
        ClientRequest::Initialize {
            id: RequestId::Integer(1),
            params: InitializeParams {
                client_info: ClientInfo {
                    name: "t".into(),
                    title: None,
                    version: "1".into(),
                },
                capabilities: Some(InitializeCapabilities {
                    experimental_api: true,
                    opt_out_notification_methods: Some(vec!["thread/started".into()]),
                    ..Default::default()
                }),
            },
        },
        ClientRequest::ThreadStart {
            id: RequestId::Integer(2),
            params: ThreadStartParams {
                sandbox: Some(SandboxMode::WorkspaceWrite),
                approval_policy: Some(AskForApproval::OnRequest),
                ..Default::default()
            },
        },
        ClientRequest::ThreadResume {
            id: RequestId::Integer(3),
            params: ThreadResumeParams::new("t"),
        },
        ClientRequest::ThreadFork {
            id: RequestId::Integer(4),
            params: ThreadForkParams::new("t"),
        },
        ClientRequest::ThreadList {
            id: RequestId::Integer(5),
            params: ThreadListParams {
                cwd: Some(ThreadListCwdFilter::Many(vec!["/a".into()])),
                sort_key: Some(ThreadSortKey::UpdatedAt),
                ..Default::default()
            },
        },
        ClientRequest::ThreadRead {
            id: RequestId::Integer(6),
            params: ThreadReadParams {
                thread_id: "t".into(),
                include_turns: true,
            },
        },
        ClientRequest::ThreadLoadedList {
            id: RequestId::Integer(7),
            params: ThreadLoadedListParams::default(),
        },
        ClientRequest::ThreadArchive {
            id: RequestId::Integer(8),
            params: ThreadArchiveParams::new("t"),
        },
        ClientRequest::ThreadUnarchive {
            id: RequestId::Integer(9),
            params: ThreadUnarchiveParams::new("t"),
        },
        ClientRequest::ThreadUnsubscribe {
            id: RequestId::Integer(10),
            params: ThreadUnsubscribeParams::new("t"),
        },
        ClientRequest::ThreadSetName {
            id: RequestId::Integer(11),
            params: ThreadSetNameParams {
                thread_id: "t".into(),
                name: "n".into(),
            },
        },
        ClientRequest::ThreadCompactStart {
            id: RequestId::Integer(12),
            params: ThreadCompactStartParams::new("t"),
        },
        ClientRequest::TurnStart {
            id: RequestId::Integer(13),
            params: TurnStartParams {
                sandbox_policy: Some(SandboxPolicy::from_mode(SandboxMode::WorkspaceWrite)),
                summary: Some(ReasoningSummary::Concise),
                tool_output: Some(TurnToolOutput {
                    name: "n".into(),
                    namespace: None,
                    output: FunctionCallOutputBody::Text("o".into()),
                    retain: false,
                }),
                ..TurnStartParams::new("t", vec![UserInput::text("hi")])
            },
        },
        ClientRequest::TurnSteer {
            id: RequestId::String("s".into()),
            params: TurnSteerParams {
                thread_id: "t".into(),
                input: vec![UserInput::text("x")],
                expected_turn_id: "u".into(),
                client_user_message_id: None,
            },
        },
        ClientRequest::TurnInterrupt {
            id: RequestId::Integer(15),
            params: TurnInterruptParams {
                thread_id: "t".into(),
                turn_id: "u".into(),
            },
        },
        ClientRequest::ModelList {
            id: RequestId::Integer(16),
            params: ModelListParams::default(),
        },
    ];
    for request in &requests {
        let value = to_value(request);
        schemas.validate_both("ClientRequest.json", &value, request.method());
        let back = ClientRequest::from_value(value).unwrap();
        assert_eq!(&back, request);
    }
}

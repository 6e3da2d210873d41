//! Approval requests: when they are asked, their answers, remembered decisions, interrupts while
//! waiting, escalation.

use super::*;

#[tokio::test]
async fn untrusted_asks_before_writing_commands() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Untrusted, full_access());
    // A read-only command runs without asking.
    f.exec(&turn, "c0", "ls").await;
    assert_eq!(f.sink.requests(), 0);

    f.sink.answer(accept("accept"));
    let text = f
        .call(
            &turn,
            "c1",
            "exec_command",
            exec_args("touch made && echo created"),
        )
        .await;
    assert!(text.ends_with("created\n"), "{text}");
    assert!(f.cwd().join("made").exists());
    let labels = f.sink.labels();
    assert_eq!(
        labels[2..],
        [
            "status:waiting",
            "started:commandExecution",
            "request:command",
            "status:active",
            "delta",
            "completed:commandExecution"
        ],
        "{labels:?}"
    );
    let Seen::Request(ServerRequestParams::CommandApproval(params)) = &f.sink.seen()[4] else {
        panic!("no request");
    };
    assert_eq!(params.item_id.as_str(), "c1");
    assert_eq!(
        params.command.as_deref(),
        Some("/bin/bash -c 'touch made && echo created'")
    );
    assert_eq!(params.environment_id.as_deref(), Some("local"));
}

#[tokio::test]
async fn declined_cancelled_and_failed_approvals() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Untrusted, full_access());
    f.sink.answer(accept("decline"));
    let text = f.exec(&turn, "c1", "touch declined").await;
    assert_eq!(text, COMMAND_REJECTED);
    assert!(!f.cwd().join("declined").exists());
    assert_eq!(
        command(&f.sink.completed()[0]).status,
        CommandExecutionStatus::Declined
    );
    assert_eq!(
        f.sink.labels(),
        [
            "status:waiting",
            "started:commandExecution",
            "request:command",
            "completed:commandExecution",
            "status:active"
        ]
    );
    assert!(!f.cancel.is_cancelled());

    f.sink
        .answer(ServerRequestOutcome::Failed("client error".into()));
    let text = f.exec(&turn, "c2", "touch failed").await;
    assert!(
        text.contains("approval request failed (client error)"),
        "{text}"
    );
    assert_eq!(
        command(&f.sink.completed()[1]).status,
        CommandExecutionStatus::Failed
    );
    f.sink
        .answer(ServerRequestOutcome::Answered(json!({"decision": "maybe"})));
    let text = f.exec(&turn, "c3", "touch failed").await;
    assert!(text.contains("unparsable approval response"), "{text}");
    assert!(!f.cwd().join("failed").exists());
    assert!(!f.cancel.is_cancelled());

    f.sink.answer(accept("cancel"));
    let text = f.exec(&turn, "c4", "touch cancelled").await;
    assert_eq!(text, COMMAND_REJECTED);
    assert!(f.cancel.is_cancelled());
    assert_eq!(
        command(&f.sink.completed()[3]).status,
        CommandExecutionStatus::Declined
    );
}

#[tokio::test]
async fn accept_for_session_is_remembered_for_that_command() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Untrusted, full_access());
    f.sink.answer(accept("acceptForSession"));
    f.exec(&turn, "c1", "touch a").await;
    assert_eq!(f.sink.requests(), 1);
    f.exec(&turn, "c2", "touch a").await;
    assert_eq!(f.sink.requests(), 1, "the same command does not ask again");
    f.sink.answer(accept("accept"));
    f.exec(&turn, "c3", "touch b").await;
    assert_eq!(f.sink.requests(), 2, "another command asks");
    f.sink.answer(accept("accept"));
    f.exec(&turn, "c4", "touch b").await;
    assert_eq!(f.sink.requests(), 3, "accept is for one run only");
}

#[tokio::test]
async fn an_interrupt_while_waiting_for_approval_withdraws_it() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Untrusted, full_access());
    f.sink.never_answer();
    let call = exec_call("c1", "touch x");
    let task = tokio::spawn(f.handle(call, &turn));
    for _ in 0..200 {
        if f.sink.requests() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    f.cancel.cancel();
    let text = output_text(
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .unwrap()
            .unwrap(),
    );
    assert_eq!(text, COMMAND_REJECTED);
    assert_eq!(
        command(&f.sink.completed()[0]).status,
        CommandExecutionStatus::Declined
    );
    assert_eq!(
        f.sink.labels().last().map(String::as_str),
        Some("status:active")
    );
}

#[tokio::test]
async fn on_request_escalation_asks_and_runs_unconfined() {
    let f = Fixture::new();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escalated");
    let turn = f.turn(AskForApproval::OnRequest, workspace_write());
    let mut args = exec_args(&format!("touch {}", target.display()));
    // Sandboxed without asking: the write outside the workspace is denied (where the kernel can
    // sandbox), and the model is told how to escalate.
    let text = f.call(&turn, "c1", "exec_command", args.clone()).await;
    assert_eq!(f.sink.requests(), 0);
    assert!(!target.exists());
    if crate::sandbox::sandbox_support().landlock_abi.is_some() {
        assert!(
            text.contains("Warning: the command may have been blocked by the sandbox"),
            "{text}"
        );
        assert!(text.contains("require_escalated"), "{text}");
    } else {
        assert!(text.contains("sandbox unavailable"), "{text}");
    }
    args["sandbox_permissions"] = json!("require_escalated");
    args["justification"] = json!("needs to write outside");
    f.sink.answer(accept("accept"));
    let text = f.call(&turn, "c2", "exec_command", args).await;
    assert!(text.contains("Process exited with code 0"), "{text}");
    assert!(target.exists());
    let Seen::Request(ServerRequestParams::CommandApproval(params)) = f
        .sink
        .seen()
        .into_iter()
        .find(|s| matches!(s, Seen::Request(_)))
        .unwrap()
    else {
        panic!("no command request");
    };
    assert_eq!(params.reason.as_deref(), Some("needs to write outside"));
}

#[tokio::test]
async fn never_refuses_escalation() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, workspace_write());
    let mut args = exec_args("true");
    args["sandbox_permissions"] = json!("require_escalated");
    let text = f.call(&turn, "c1", "exec_command", args).await;
    assert!(text.contains("approval policy is `never`"), "{text}");
    assert!(f.sink.labels().is_empty());
}

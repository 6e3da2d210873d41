//! exec_command through the runtime: streamed output, failures, background sessions with
//! write_stdin, interrupts.

use super::*;

#[tokio::test]
async fn exec_command_streams_and_completes() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, full_access());
    let text = f.exec(&turn, "c1", "echo hi").await;
    assert!(text.contains("Process exited with code 0\n"), "{text}");
    assert!(text.ends_with("Output:\nhi\n"), "{text}");
    assert_eq!(
        f.sink.labels(),
        [
            "started:commandExecution",
            "delta",
            "completed:commandExecution"
        ]
    );
    let completed = f.sink.completed();
    let item = command(&completed[0]);
    assert_eq!(item.id.as_str(), "c1");
    assert_eq!(item.status, CommandExecutionStatus::Completed);
    assert_eq!(item.exit_code, Some(0));
    assert_eq!(item.aggregated_output.as_deref(), Some("hi\n"));
    assert_eq!(item.source, CommandExecutionSource::UnifiedExecStartup);
    assert_eq!(item.command, "/bin/bash -c 'echo hi'");
    assert!(item.duration_ms.is_some());
    f.runtime.shutdown().await;
}

#[tokio::test]
async fn a_failing_command_fails_its_item() {
    let f = Fixture::new();
    let text = f
        .exec(
            &f.turn(AskForApproval::Never, full_access()),
            "c1",
            "exit 3",
        )
        .await;
    assert!(text.contains("Process exited with code 3\n"), "{text}");
    let completed = f.sink.completed();
    assert_eq!(
        command(&completed[0]).status,
        CommandExecutionStatus::Failed
    );
    assert_eq!(command(&completed[0]).exit_code, Some(3));
}

#[tokio::test]
async fn background_sessions_and_write_stdin() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, full_access());
    let mut args = exec_args("read line; echo \"got $line\"");
    args["yield_time_ms"] = json!(250);
    let text = f.call(&turn, "c1", "exec_command", args).await;
    assert!(
        text.contains("Process running with session ID 1\n"),
        "{text}"
    );
    let completed = f.sink.completed();
    let item = command(&completed[0]);
    assert_eq!(item.status, CommandExecutionStatus::Completed);
    assert_eq!(item.exit_code, None);
    assert_eq!(item.process_id.as_deref(), Some("1"));

    let text = f
        .call(
            &turn,
            "c2",
            "write_stdin",
            json!({"session_id": 1, "chars": "hello\n", "yield_time_ms": 5000}),
        )
        .await;
    assert!(text.contains("Process exited with code 0\n"), "{text}");
    assert!(text.ends_with("got hello\n"), "{text}");
    let completed = f.sink.completed();
    let item = command(&completed[1]);
    assert_eq!(item.id.as_str(), "c2");
    assert_eq!(item.source, CommandExecutionSource::UnifiedExecInteraction);
    assert_eq!(item.process_id.as_deref(), Some("1"));
    assert_eq!(item.aggregated_output.as_deref(), Some("got hello\n"));
    assert_eq!(item.exit_code, Some(0));

    // The session is gone: no item, the model is told.
    let before = f.sink.seen().len();
    let text = f
        .call(&turn, "c3", "write_stdin", json!({"session_id": 1}))
        .await;
    assert!(text.contains("Unknown session ID 1"), "{text}");
    assert_eq!(f.sink.seen().len(), before);
}

#[tokio::test]
async fn interrupting_a_command_fails_its_item() {
    let f = Fixture::new();
    let turn = f.turn(AskForApproval::Never, full_access());
    let cancel = f.cancel.clone();
    let call = exec_call("c1", "echo started; sleep 30");
    let task = tokio::spawn(f.handle(call, &turn));
    // Wait for the first output, then interrupt.
    for _ in 0..200 {
        if f.sink.labels().contains(&"delta".to_string()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let interrupted = std::time::Instant::now();
    cancel.cancel();
    let text = output_text(
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .unwrap()
            .unwrap(),
    );
    assert!(interrupted.elapsed() < Duration::from_secs(1));
    assert!(text.ends_with("\naborted by user"), "{text}");
    assert!(text.starts_with("Wall time: "), "{text}");
    let completed = f.sink.completed();
    let item = command(&completed[0]);
    assert_eq!(item.status, CommandExecutionStatus::Failed);
    assert_eq!(item.aggregated_output.as_deref(), Some("started\n"));
    assert!(f.runtime.exec.pids().is_empty());
}

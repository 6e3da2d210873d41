//! The reviewer reads with tools that cannot write, whatever the thread's sandbox, and cannot act through the thread's command sessions.

use serde_json::json;
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::*;
use crate::tools::{cmd, exec_call, start_thread, write_stdin_call};
use crate::turns::Harness;

async fn the_reviewer_reads_with_tools_that_cannot_write(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let (repo, _) = repository();
    let cwd = repo.path().display().to_string();
    // The thread may write anything; its review may not.
    let thread = start_thread(&mut h.client, &cwd, "never", "danger-full-access").await;
    h.push(exec_call("c1", cmd("cat a.txt; touch written.txt")));
    h.push(Reply::new().text("Read it."));
    let messages = run_review(
        &mut h.client,
        &thread,
        json!({"type": "uncommittedChanges"}),
        "current changes",
    )
    .await;
    let command = item(&messages, "commandExecution");
    assert!(
        command["aggregatedOutput"]
            .as_str()
            .is_some_and(|o| o.contains("not committed")),
        "{command}"
    );
    assert!(!repo.path().join("written.txt").exists());
    // Only the rendered review is an agent message: the reviewer's own is not shown.
    assert_eq!(completed(&messages, "agentMessage").len(), 1);
    assert_eq!(item(&messages, "agentMessage")["text"], "Read it.");
    let requests = h.wait_for_requests(2).await;
    assert!(reviewer_request(&requests[0]).contains("not committed yet"));
}

async fn the_reviewer_cannot_write_to_the_threads_sessions(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let (repo, _) = repository();
    let cwd = repo.path().display().to_string();
    let thread = start_thread(&mut h.client, &cwd, "never", "workspace-write").await;
    // A regular turn leaves a shell running as a session, reading its input.
    h.push(exec_call("s1", json!({"cmd": "sh", "yield_time_ms": 300})));
    h.push(Reply::new().text("Started."));
    let run = h.run_turn(&thread, "start a shell").await;
    let session = run.completed_items_of("commandExecution")[0]["processId"]
        .as_str()
        .expect("a session")
        .to_string();
    // The reviewer tries to act through it, then only polls it.
    h.push(write_stdin_call("w1", &session, "touch written.txt\n"));
    h.push(write_stdin_call("w2", &session, ""));
    h.push(Reply::new().text("Looked."));
    run_review(
        &mut h.client,
        &thread,
        json!({"type": "custom", "instructions": "look"}),
        "look",
    )
    .await;
    let refused = h.output_in(4, "w1").await;
    assert!(refused.contains("this turn is read-only"), "{refused}");
    let polled = h.output_in(5, "w2").await;
    assert!(!polled.contains("read-only"), "{polled}");
    assert!(!repo.path().join("written.txt").exists());
}

on_both_transports!(
    the_reviewer_reads_with_tools_that_cannot_write,
    the_reviewer_cannot_write_to_the_threads_sessions,
);

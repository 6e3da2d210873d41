//! `codex exec --remote ws://… "prompt"`: the non-interactive client against Weft.

use std::time::Duration;

use weft_mock_model::Reply;
use weft_test_support::run_codex;

use crate::{Session, exec_call};

#[tokio::test]
async fn exec_remote_prints_the_answer_and_exits_0() {
    let s = Session::start("never").await;
    s.push(exec_call("call_echo", "echo exec-marker-7"));
    s.push(Reply::new().text("The exec client got its answer."));
    let url = s.url();
    let out = run_codex(
        &s.client,
        &["exec", "--remote", &url, "Run the echo and answer"],
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(
        out.code,
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        out.stdout.contains("The exec client got its answer."),
        "stdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    let requests = s.wait_for_requests(2).await;
    let output = requests[1].tool_output("call_echo").unwrap().to_string();
    assert!(output.contains("exec-marker-7"), "{output}");
}

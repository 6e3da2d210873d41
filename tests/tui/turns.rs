//! Turns from the TUI: a prompt that runs a command, Esc interrupting a running turn, and text
//! typed during a turn steering it.

use std::time::Duration;

use weft_mock_model::{Gate, Reply};
use weft_test_support::tui::composer_line;

use crate::{REQUEST_TIMEOUT, Session, exec_call, wait_idle, wait_turn_done};

/// Under `on-request` a sandboxed command runs without asking; its output goes to the model.
#[tokio::test]
async fn a_prompt_runs_a_command_and_answers() {
    let s = Session::start("on-request").await;
    let tui = s.ready_tui().await;
    s.push(exec_call("call_echo", "echo tui-marker-41"));
    let screen = s
        .prompt(&tui, "Run the echo", "The command printed the marker.")
        .await;
    assert!(
        screen.contains("echo tui-marker-41"),
        "the command is not shown"
    );
    let requests = s.wait_for_requests(2).await;
    let output = requests[1].tool_output("call_echo").unwrap().to_string();
    assert!(output.contains("tui-marker-41"), "{output}");
}

/// Esc while the model streams interrupts the turn: the stream is dropped and the TUI says so.
#[tokio::test]
async fn esc_interrupts_a_running_turn() {
    let s = Session::start("on-request").await;
    let tui = s.ready_tui().await;
    let gate = Gate::new();
    s.push(
        Reply::new()
            .text("Thinking it over")
            .gate(&gate)
            .text(" and never finishing."),
    );
    tui.submit("Take your time").await;
    gate.wait_reached(REQUEST_TIMEOUT).await.unwrap();
    // While an answer streams the TUI shows the text, not its status line (the reference's
    // server makes it do the same).
    tui.wait_for_text("Thinking it over").await;
    tui.press("Escape");
    tui.wait_for_text("Conversation interrupted").await;
    let screen = wait_idle(&tui).await;
    s.mock
        .wait_for_disconnect(Duration::from_secs(10))
        .await
        .unwrap();
    gate.release();
    assert!(!screen.contains("never finishing"), "{screen}");
}

/// Text submitted while a turn runs is sent with `turn/steer`; the model's next request of
/// the same turn carries it.
#[tokio::test]
async fn typing_during_a_turn_steers_it() {
    let s = Session::start("on-request").await;
    let tui = s.ready_tui().await;
    let gate = Gate::new();
    s.push(Reply::new().text("Starting.").gate(&gate).function_call(
        "call_step",
        "exec_command",
        r#"{"cmd":"echo step-done"}"#,
    ));
    s.push(Reply::new().text("Steered answer."));
    tui.submit("Start the work").await;
    gate.wait_reached(REQUEST_TIMEOUT).await.unwrap();
    tui.wait_for_text("Starting.").await;
    tui.submit("Also mention kiwis").await;
    // The TUI shows the steer (pending, or in the transcript) once it is sent. Whether Weft
    // has already abandoned the held response for it (docs/architecture.md §6.3) when the screen
    // shows it is a race, so only the outcome is checked below.
    tui.wait_for_screen("the steer outside the composer", |s| {
        let composer = composer_line(s);
        s.lines()
            .any(|l| l.contains("Also mention kiwis") && Some(l) != composer)
    })
    .await;
    gate.release();
    wait_turn_done(&tui, "Steered answer.").await;
    let requests = s.wait_for_requests(2).await;
    let users = requests[1].message_texts("user");
    assert!(
        users.iter().any(|t| t.contains("Also mention kiwis")),
        "the steer did not reach the model: {users:?}"
    );
    assert_eq!(requests.len(), 2, "the steer started another turn");
}

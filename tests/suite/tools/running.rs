//! Turns with a command running: steered input waits for the tool output; an interrupt kills
//! the foreground command at once but leaves background sessions alive.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::{
    Tools, completed_item, exec_call, input_position, item_event, item_status, output_of, position,
    read_through_turn_completed, write_stdin_call,
};
use crate::requests::{Requests, interrupt_params};
use crate::turns::read_through_turn_ending;
use crate::turns::user_texts;

async fn steer_while_a_command_runs(transport: Transport) {
    let mut t = Tools::start(transport).await;
    // The command runs until the test creates `go`: the steer surely lands while it runs.
    t.push_command(
        "call_wait",
        "while [ ! -e go ]; do sleep 0.02; done; echo finished",
    );
    t.push(Reply::new().text("Finished, and saw your steer."));
    let thread = t.thread("never", "danger-full-access").await;
    let turn = t.h.start_turn(&thread, "wait for it").await;
    t.h.client.wait_for_item_started("call_wait").await;
    let answer =
        t.h.client
            .steer(&thread, &turn, "steer during tool")
            .await
            .expect("turn/steer");
    assert_eq!(answer["turnId"], turn.as_str());
    std::fs::write(t.path("go"), "").unwrap();
    let messages = read_through_turn_ending(&mut t.h.client, "completed").await;
    // The command's item completes, then the steered userMessage appears.
    let command_done = position(&messages, "the command's item/completed", |m| {
        m["method"] == "item/completed" && m["params"]["item"]["id"] == "call_wait"
    });
    let steered = position(&messages, "the steered userMessage", |m| {
        m["method"] == "item/started"
            && m["params"]["item"]["type"] == "userMessage"
            && m["params"]["item"]["content"][0]["text"] == "steer during tool"
    });
    assert!(command_done < steered);
    assert_eq!(item_status(&messages, "call_wait"), "completed");

    // One follow-up request, carrying the tool output and then the steered input.
    let requests = t.h.wait_for_requests(2).await;
    assert_eq!(requests.len(), 2);
    let output_at = input_position(&requests[1], |i| {
        i["type"] == "function_call_output" && i["call_id"] == "call_wait"
    })
    .expect("the tool output");
    let steer_at = input_position(&requests[1], |i| {
        i["type"] == "message"
            && i["role"] == "user"
            && i["content"][0]["text"] == "steer during tool"
    })
    .expect("the steered message");
    assert!(
        output_at < steer_at,
        "the steered input precedes the tool output"
    );
    assert!(output_of(&requests[1], "call_wait").ends_with("Output:\nfinished\n"));
    t.finish().await;
}

async fn interrupt_during_a_long_command(transport: Transport) {
    let mut t = Tools::start(transport).await;
    // First a session that keeps running in the background, then `sleep 30`.
    t.push(exec_call(
        "call_bg",
        json!({"cmd": "read line; echo \"got $line\"", "yield_time_ms": 300}),
    ));
    t.push_command("call_sleep", "sleep 30");
    let thread = t.thread("never", "danger-full-access").await;
    let turn = t.h.start_turn(&thread, "run sleep 30").await;
    t.h.client.wait_for_item_started("call_sleep").await;
    let interrupted = Instant::now();
    let id =
        t.h.client
            .send_request("turn/interrupt", interrupt_params(&thread, &turn))
            .await;
    let messages = read_through_turn_completed(&mut t.h.client).await;
    let took = interrupted.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "the interrupted turn took {took:?} to complete"
    );
    let completed = &messages.last().unwrap()["params"]["turn"];
    assert_eq!(completed["status"], "interrupted");
    assert!(messages.iter().any(|m| m.get("id") == Some(&id)));
    let item = completed_item(&messages, "call_sleep");
    assert_eq!(item["status"], "failed");
    assert_eq!(item["exitCode"], Value::Null);
    let session = completed_item(t.h.client.log(), "call_bg")["processId"]
        .as_str()
        .expect("the background session's id")
        .to_string();

    // The next turn: the model saw the aborted command, and the session still answers.
    t.push(write_stdin_call("call_write", &session, "hello\n"));
    t.push(Reply::new().text("The session answered."));
    let run = t.h.run_turn(&thread, "is it still there?").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    let requests = t.h.wait_for_requests(4).await;
    let aborted = output_of(&requests[2], "call_sleep");
    assert!(aborted.starts_with("Wall time: "), "{aborted}");
    assert!(aborted.ends_with(" seconds\naborted by user"), "{aborted}");
    assert!(
        user_texts(&requests[2])
            .iter()
            .any(|t| t.contains("<turn_aborted>")),
        "no interruption marker"
    );
    let answered = output_of(&requests[3], "call_write");
    assert!(
        answered.contains("\nProcess exited with code 0\n"),
        "{answered}"
    );
    assert!(answered.ends_with("Output:\ngot hello\n"), "{answered}");
    let started = &item_event(&run.messages, "item/started", "call_write")["params"]["item"];
    assert_eq!(started["processId"], session.as_str());
    t.finish().await;
}

on_both_transports!(steer_while_a_command_runs, interrupt_during_a_long_command);

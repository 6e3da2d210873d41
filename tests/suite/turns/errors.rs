//! Refused turn requests, with the exact codes and texts of docs/protocol.md §5.3 (the
//! reference's `errors` scenario). Refused input is never recorded nor sent to the model.

use serde_json::{Value, json};
use weft_mock_model::{Gate, Reply};
use weft_test_support::Transport;

use super::{AGENT_MESSAGE, TURN_CLOSING};
use super::{
    Harness, assert_invalid_request, collapse, gated_message, read_through,
    read_through_turn_completed, text_input, user_texts, wait_gate,
};
use crate::requests::Requests;

/// A well-formed UUIDv7 that names no thread.
const UNKNOWN_THREAD: &str = "01a2a2a2-0000-7000-8000-000000000000";

/// The thread id `not-a-uuid` is refused with `invalid thread id: <uuid parser message>`
/// (docs/protocol.md §5.3; the parser's wording is the variable part: the reference's uuid version
/// says ``invalid character: expected an optional prefix of `urn:uuid:` followed by
/// [0-9a-fA-F-], found `n` at 1``).
fn assert_invalid_thread_id(answer: Result<Value, weft_test_support::RpcError>) {
    let err = answer.expect_err("a thread id that is not a UUID was accepted");
    assert_eq!(err.code, super::INVALID_REQUEST, "{err:?}");
    assert!(
        err.message
            .starts_with("invalid thread id: invalid character: ")
            && err.message.contains("found `n` at "),
        "{err:?}"
    );
}

fn steer(thread: &str, expected: &str, input: Value) -> Value {
    json!({"threadId": thread, "expectedTurnId": expected, "input": input})
}

async fn errors_without_a_running_turn(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let thread = h.start_thread().await;
    let c = &mut h.client;
    let some_turn = "01a2a2a2-0000-7000-8000-000000000001";

    // Idle thread: nothing to steer or interrupt ("no active turn" is checked first, even for
    // an empty input).
    assert_invalid_request(
        c.request(
            "turn/steer",
            steer(&thread, some_turn, json!([text_input("x")])),
        )
        .await,
        "no active turn to steer",
    );
    assert_invalid_request(
        c.request("turn/steer", steer(&thread, some_turn, json!([])))
            .await,
        "no active turn to steer",
    );
    assert_invalid_request(
        c.interrupt(&thread, &some_turn).await,
        "no active turn to interrupt",
    );

    // A thread that is not loaded.
    let not_found = format!("thread not found: {UNKNOWN_THREAD}");
    assert_invalid_request(
        c.request(
            "turn/start",
            json!({"threadId": UNKNOWN_THREAD, "input": [text_input("hi")]}),
        )
        .await,
        &not_found,
    );
    assert_invalid_request(
        c.request(
            "turn/steer",
            steer(UNKNOWN_THREAD, some_turn, json!([text_input("x")])),
        )
        .await,
        &not_found,
    );
    assert_invalid_request(c.interrupt(&UNKNOWN_THREAD, &some_turn).await, &not_found);

    // A thread id that is not a UUID.
    assert_invalid_thread_id(
        c.request(
            "turn/start",
            json!({"threadId": "not-a-uuid", "input": [text_input("hi")]}),
        )
        .await,
    );
    assert_invalid_thread_id(
        c.request(
            "turn/steer",
            steer("not-a-uuid", some_turn, json!([text_input("x")])),
        )
        .await,
    );
    assert_invalid_thread_id(c.interrupt("not-a-uuid", &some_turn).await);

    // Params errors (serde wording).
    assert_invalid_request(
        c.request("turn/start", json!({"threadId": thread})).await,
        "Invalid request: missing field `input`",
    );
    assert_invalid_request(
        c.request("turn/steer", json!({"threadId": thread, "input": []}))
            .await,
        "Invalid request: missing field `expectedTurnId`",
    );

    // None of it started anything or reached the model.
    c.expect_no_message_within(super::QUIET).await;
    assert!(h.mock.requests().is_empty());
}

async fn errors_while_a_turn_runs(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let gate = Gate::new();
    h.push(gated_message("msg_busy", "slow", &gate, "..."));
    let thread = h.start_thread().await;
    let turn = h.start_turn(&thread, "start").await;
    read_through(&mut h.client, |m| m["method"] == "item/agentMessage/delta").await;
    wait_gate(&gate).await;
    let other = "01a2a2a2-0000-7000-8000-000000000001";
    let c = &mut h.client;

    assert_invalid_request(
        c.request(
            "turn/steer",
            steer(&thread, other, json!([text_input("x")])),
        )
        .await,
        &format!("expected active turn id `{other}` but found `{turn}`"),
    );
    assert_invalid_request(
        c.request("turn/steer", steer(&thread, &turn, json!([])))
            .await,
        "input must not be empty",
    );
    assert_invalid_request(
        c.request("turn/steer", steer(&thread, "", json!([text_input("x")])))
            .await,
        "expectedTurnId must not be empty",
    );
    assert_invalid_request(
        c.interrupt(&thread, &other).await,
        &format!("expected active turn id {other} but found {turn}"),
    );

    // The turn goes on untouched: the refused inputs never became items or model input.
    gate.release();
    let messages = read_through_turn_completed(c).await;
    let labels: Vec<String> = messages.iter().map(super::label).collect();
    assert_eq!(
        collapse(&labels),
        [
            &["item/agentMessage/delta", "item/completed:agentMessage"],
            TURN_CLOSING
        ]
        .concat()
    );
    let completed = &messages.last().expect("turn/completed")["params"]["turn"];
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["items"][0]["text"], "slow...");
    let requests = h.mock.requests();
    assert_eq!(requests.len(), 1);
    assert!(!user_texts(&requests[0]).contains(&"x".to_owned()));
}

/// `turn/start` with `input: []` on an idle thread is accepted: a turn with no userMessage
/// item (docs/protocol.md §7.13).
async fn turn_start_with_empty_input(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    h.push(Reply::new().text("nothing asked, nothing to add"));
    let thread = h.start_thread().await;
    let id = h
        .client
        .send_request("turn/start", json!({"threadId": thread, "input": []}))
        .await;
    let messages = read_through(&mut h.client, |m| {
        m.get("id") == Some(&id) || m["method"] == "turn/completed"
    })
    .await;
    let answer = messages.last().expect("a message");
    assert!(
        answer.get("error").is_none(),
        "turn/start with [] was refused: {answer}"
    );
    let rest = read_through_turn_completed(&mut h.client).await;
    let labels: Vec<String> = rest.iter().map(super::label).collect();
    assert_eq!(
        collapse(&labels),
        [
            &["thread/status/changed:active", "turn/started"],
            AGENT_MESSAGE,
            TURN_CLOSING
        ]
        .concat()
    );
}

on_both_transports!(
    errors_without_a_running_turn,
    errors_while_a_turn_runs,
    turn_start_with_empty_input,
);

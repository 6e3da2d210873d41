//! `thread/inject_items` (docs/protocol.md §7.36): a gateway's replayed history reaches the
//! next model request (and survives a restart); malformed, empty and oversized injections are
//! refused and change nothing.

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::{on, with_tables};
use crate::persistence::{Persist, UNKNOWN_ID, assert_error, conversation, ok};

fn message(role: &str, text: &str) -> Value {
    let kind = if role == "assistant" {
        "output_text"
    } else {
        "input_text"
    };
    json!({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})
}

fn inject(thread: &str, items: Vec<Value>) -> Value {
    json!({"threadId": thread, "items": items})
}

/// `(role, text)` pairs.
fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(role, text)| (role.to_string(), text.to_string()))
        .collect()
}

async fn replayed_history_reaches_the_model(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let thread = p.start_thread().await;
    let answer = ok(
        &mut p.client,
        "thread/inject_items",
        inject(
            &thread,
            vec![
                message("user", "The password is kumquat."),
                message("assistant", "Noted."),
                json!({"type": "function_call", "name": "lookup", "arguments": "{}", "call_id": "c1"}),
                json!({"type": "function_call_output", "call_id": "c1", "output": "found"}),
            ],
        ),
    )
    .await;
    assert_eq!(answer, json!({}));
    p.client
        .expect_no_message_within(weft_test_support::QUIET_PERIOD)
        .await;
    p.push(Reply::new().text("kumquat"));
    p.run_turn(&thread, "What is the password?").await;
    let request = &p.wait_for_requests(1).await[0];
    assert_eq!(
        conversation(request),
        pairs(&[
            ("user", "The password is kumquat."),
            ("assistant", "Noted."),
            ("user", "What is the password?"),
        ])
    );
    let call = request
        .inputs_of_type("function_call")
        .next()
        .expect("the call");
    assert_eq!(call["call_id"], "c1");
    let output = request
        .inputs_of_type("function_call_output")
        .next()
        .expect("its output");
    assert_eq!(output["call_id"], "c1");

    // In the rollout: after a restart the next turn still sees them.
    p.restart().await;
    ok(&mut p.client, "thread/resume", on(&thread)).await;
    p.push(Reply::new().text("still kumquat"));
    p.run_turn(&thread, "Again?").await;
    let request = &p.wait_for_requests(2).await[1];
    assert_eq!(
        conversation(request)[..2],
        pairs(&[
            ("user", "The password is kumquat."),
            ("assistant", "Noted.")
        ])[..]
    );
}

async fn refusals(transport: Transport) {
    let mut p = with_tables(transport, "[limits]\nmax_injected_items = 2\n").await;
    let thread = p.start_thread().await;
    assert_error(
        p.client
            .request("thread/inject_items", inject(&thread, vec![]))
            .await,
        "items must not be empty",
    );
    let answer = p
        .client
        .request("thread/inject_items", inject(&thread, vec![json!(5)]))
        .await
        .unwrap_err();
    assert!(
        answer
            .message
            .starts_with("items[0] is not a valid response item: "),
        "{answer:?}"
    );
    let answer = p
        .client
        .request(
            "thread/inject_items",
            inject(&thread, vec![message("user", "a"), json!({"role": "user"})]),
        )
        .await
        .unwrap_err();
    assert!(
        answer
            .message
            .starts_with("items[1] is not a valid response item: "),
        "{answer:?}"
    );
    let three = vec![
        message("user", "a"),
        message("user", "b"),
        message("user", "c"),
    ];
    assert_error(
        p.client
            .request("thread/inject_items", inject(&thread, three))
            .await,
        "items must not hold more than 2 items ([limits] max_injected_items)",
    );
    assert_error(
        p.client
            .request(
                "thread/inject_items",
                inject(UNKNOWN_ID, vec![message("user", "a")]),
            )
            .await,
        &format!("thread not found: {UNKNOWN_ID}"),
    );
    // Nothing refused reached the history.
    p.push(Reply::new().text("ok"));
    p.run_turn(&thread, "hi").await;
    let request = &p.wait_for_requests(1).await[0];
    assert_eq!(conversation(request), pairs(&[("user", "hi")]));
}

async fn into_a_running_turn(transport: Transport) {
    let mut p = Persist::start(transport).await;
    let thread = p.start_thread().await;
    let gate = weft_mock_model::Gate::new();
    p.push(crate::turns::gated_message(
        "msg_inj", "working ", &gate, "done",
    ));
    p.begin_held_turn(&thread, "first", &gate).await;
    let answer = ok(
        &mut p.client,
        "thread/inject_items",
        inject(&thread, vec![message("user", "Injected mid-turn.")]),
    )
    .await;
    assert_eq!(answer, json!({}));
    gate.release();
    crate::turns::read_through_turn_completed(&mut p.client).await;
    p.push(Reply::new().text("ok"));
    p.run_turn(&thread, "second").await;
    let request = &p.wait_for_requests(2).await[1];
    let texts: Vec<String> = conversation(request).into_iter().map(|(_, t)| t).collect();
    assert!(
        texts.iter().any(|t| t == "Injected mid-turn."),
        "the injected item reaches a later request: {texts:?}"
    );
    // The running turn ended without another step: the next turn reads it at its first
    // step, after its own input (docs/protocol.md §7.36).
    assert_eq!(
        texts[texts.len() - 2..],
        ["second".to_string(), "Injected mid-turn.".to_string()]
    );
}

on_both_transports!(
    replayed_history_reaches_the_model,
    refusals,
    into_a_running_turn
);

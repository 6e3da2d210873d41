//! Steering a running turn (docs/protocol.md §7.13–§7.14, §10.1; docs/architecture.md §5.2, §6.3): `turn/steer` and
//! `turn/start` on a busy thread add input to the running turn; the in-flight response is
//! abandoned and the model is asked again with the input appended.

use serde_json::{Value, json};
use weft_mock_model::{Gate, Reply, Usage};
use weft_test_support::Transport;

use super::{AGENT_MESSAGE, TURN_CLOSING};
use super::{
    Harness, assistant_texts, collapse, gated_message, read_through, read_through_turn_completed,
    text_input, user_texts, wait_gate,
};
use crate::requests::Requests;

/// How the input is steered in.
#[derive(Clone, Copy)]
enum Via {
    Steer,
    TurnStart,
}

/// Start a turn whose first model reply is held after `partial`, steer `steered` in, and read
/// through `turn/completed`. Returns the harness, the thread and turn ids, the steer response
/// and the messages that followed the first `partial` delta.
async fn steer_mid_stream(
    transport: Transport,
    via: Via,
) -> (Harness, String, String, Value, Vec<Value>) {
    let mut h = Harness::responses(transport).await;
    let gate = Gate::new();
    h.push(gated_message("msg_slow", "Hel", &gate, "lo, and much more"));
    h.push(
        Reply::new()
            .id("resp_after_steer")
            .text("Noted: also saying bye. Bye!")
            .usage(Usage::new(30, 8)),
    );
    let thread = h.start_thread().await;
    let turn = h.start_turn(&thread, "tell me something slowly").await;
    let before = read_through(&mut h.client, |m| m["method"] == "item/agentMessage/delta").await;
    assert_eq!(before.last().expect("a delta")["params"]["delta"], "Hel");
    wait_gate(&gate).await;

    let (method, params) = match via {
        Via::Steer => (
            "turn/steer",
            json!({"threadId": thread, "expectedTurnId": turn,
                   "input": [text_input("also say bye at the end")],
                   "clientUserMessageId": "client-msg-2"}),
        ),
        Via::TurnStart => (
            "turn/start",
            json!({"threadId": thread, "input": [text_input("also say bye at the end")],
                   "clientUserMessageId": "client-msg-2"}),
        ),
    };
    let id = h.client.send_request(method, params).await;
    let messages = read_through_turn_completed(&mut h.client).await;
    let response = messages
        .iter()
        .find(|m| m.get("id") == Some(&id))
        .unwrap_or_else(|| panic!("no answer to {method}: {messages:#?}"))
        .clone();
    assert!(
        response.get("error").is_none(),
        "{method} failed: {response}"
    );
    (h, thread, turn, response, messages)
}

async fn check_steered_turn(h: &Harness, turn: &str, response: &Value, messages: &[Value]) {
    let labels: Vec<String> = messages.iter().map(super::label).collect();
    // No second turn: the same turn goes on and ends once.
    assert!(
        !labels.iter().any(|l| l == "turn/started"),
        "a second turn/started: {labels:?}"
    );
    let completed = messages.last().expect("turn/completed");
    assert_eq!(completed["params"]["turn"]["id"], turn);
    assert_eq!(completed["params"]["turn"]["status"], "completed");
    for msg in messages.iter().filter(|m| m.get("method").is_some()) {
        if let Some(turn_id) = msg["params"].get("turnId") {
            assert_eq!(turn_id, turn, "{msg}");
        }
    }

    // The abandoned message is completed with what was received, before the steered input
    // shows up; then the new answer streams.
    let abandoned_done = messages
        .iter()
        .position(|m| m["method"] == "item/completed" && m["params"]["item"]["id"] == "msg_slow")
        .unwrap_or_else(|| panic!("the abandoned agentMessage never completed: {labels:?}"));
    assert_eq!(messages[abandoned_done]["params"]["item"]["text"], "Hel");
    let user_started = messages
        .iter()
        .position(|m| m["method"] == "item/started" && m["params"]["item"]["type"] == "userMessage")
        .unwrap_or_else(|| panic!("no userMessage for the steered input: {labels:?}"));
    assert_eq!(
        messages[user_started]["params"]["item"]["content"],
        json!([{"type": "text", "text": "also say bye at the end", "text_elements": []}])
    );
    assert_eq!(
        messages[user_started]["params"]["item"]["clientId"],
        "client-msg-2"
    );
    assert!(abandoned_done < user_started, "{labels:?}");
    // The response comes before the input is injected into the turn.
    let response_at = messages
        .iter()
        .position(|m| m.get("id") == response.get("id"))
        .expect("response");
    assert!(
        response_at < user_started,
        "answer after the injected input: {labels:?}"
    );
    assert_eq!(
        collapse(&labels[user_started..]),
        [
            &["item/started:userMessage", "item/completed:userMessage"],
            AGENT_MESSAGE,
            TURN_CLOSING
        ]
        .concat()
    );
    // `turn/completed` shows the final answer, not the abandoned one.
    assert_eq!(
        completed["params"]["turn"]["items"][0]["text"],
        "Noted: also saying bye. Bye!"
    );

    // The model was asked again with the steered input appended; the abandoned partial answer
    // is not sent back, and the first response was dropped.
    let requests = h.wait_for_requests(2).await;
    assert_eq!(requests.len(), 2);
    let users = user_texts(&requests[1]);
    let first = users.iter().position(|t| t == "tell me something slowly");
    let steered = users.iter().position(|t| t == "also say bye at the end");
    assert!(
        matches!((first, steered), (Some(a), Some(b)) if a < b),
        "second request's user messages: {users:?}"
    );
    assert!(
        assistant_texts(&requests[1]).is_empty(),
        "{:?}",
        assistant_texts(&requests[1])
    );
    h.mock
        .wait_for_disconnect(weft_test_support::DEFAULT_TIMEOUT)
        .await
        .expect("the abandoned response's connection is closed");
}

/// `turn/steer` while the model streams: `{turnId}` of the running turn, the partial message
/// completes, the steered input becomes a userMessage, and the model is asked again.
async fn steer_while_streaming(transport: Transport) {
    let (h, _thread, turn, response, messages) = steer_mid_stream(transport, Via::Steer).await;
    assert_eq!(response["result"], json!({"turnId": turn}));
    check_steered_turn(&h, &turn, &response, &messages).await;
}

/// `turn/start` on a busy thread steers: the running turn's id comes back (in progress,
/// nothing loaded) and no second `turn/started` follows (docs/protocol.md §10.1).
async fn turn_start_on_busy_thread_steers(transport: Transport) {
    let (h, _thread, turn, response, messages) = steer_mid_stream(transport, Via::TurnStart).await;
    let result_turn = &response["result"]["turn"];
    assert_eq!(result_turn["id"], turn.as_str());
    assert_eq!(result_turn["status"], "inProgress");
    assert_eq!(result_turn["items"], json!([]));
    assert_eq!(result_turn["itemsView"], "notLoaded");
    check_steered_turn(&h, &turn, &response, &messages).await;
}

on_both_transports!(steer_while_streaming, turn_start_on_busy_thread_steers);

/// Requests to one thread are handled in the order they were sent, even when the client does
/// not wait for each answer: of two pipelined `turn/start`s, the first starts the turn and the
/// second steers into it (docs/architecture.md §5.1: one mailbox, processed in order). Repeated, because a
/// reordering shows only now and then. Every model reply stalls (so the number of requests a
/// round makes does not matter); each round ends with an interrupt.
#[tokio::test]
async fn pipelined_turn_starts_keep_their_order() {
    const ROUNDS: usize = 40;
    let mut h = Harness::responses(Transport::Stdio).await;
    let thread = h.start_thread().await;
    let mut reordered = Vec::new();
    for round in 0..ROUNDS {
        h.push(Reply::new().stall());
        h.push(Reply::new().stall());
        let first = format!("first {round}");
        let second = format!("second {round}");
        let a = h
            .client
            .send_request("turn/start", super::turn_start_params(&thread, &first))
            .await;
        let b = h
            .client
            .send_request("turn/start", super::turn_start_params(&thread, &second))
            .await;
        let mut turn_id = None;
        let mut users = Vec::new();
        while users.len() < 2 || turn_id.is_none() {
            let msg = h.client.next_message().await;
            if msg.get("id") == Some(&a) || msg.get("id") == Some(&b) {
                let turn = super::str_at(&msg, "/result/turn/id");
                assert!(
                    turn_id.get_or_insert(turn.clone()) == &turn,
                    "two turns: {msg}"
                );
            } else if msg["method"] == "item/completed"
                && msg["params"]["item"]["type"] == "userMessage"
            {
                users.push(msg["params"]["item"]["content"][0]["text"].clone());
            } else {
                assert_ne!(msg["method"], "turn/completed", "{msg}");
            }
        }
        if users[0] != first.as_str() {
            reordered.push(round);
        }
        let turn_id = turn_id.expect("a turn id");
        h.client
            .interrupt(&thread, &turn_id)
            .await
            .expect("turn/interrupt");
        let rest = read_through_turn_completed(&mut h.client).await;
        assert_eq!(
            rest.last().expect("turn/completed")["params"]["turn"]["status"],
            "interrupted"
        );
    }
    assert!(
        reordered.is_empty(),
        "in rounds {reordered:?} of {ROUNDS}, the second of two pipelined turn/start requests reached \
         the thread first"
    );
}

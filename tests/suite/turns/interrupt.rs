//! `turn/interrupt` (docs/protocol.md §7.15, §10.2; docs/architecture.md §6.3): the `{}` answer comes first, the
//! started items are completed, the model request is dropped, the thread goes idle, the turn
//! ends `interrupted`, and the next request tells the model about the interruption.

use serde_json::{Value, json};
use weft_mock_model::{Gate, Reply};
use weft_test_support::{DEFAULT_TIMEOUT, Transport};

use super::{
    Harness, gated_message, read_through, read_through_turn_completed, user_texts, wait_gate,
};
use crate::requests::{Requests, interrupt_params};

async fn interrupt_mid_stream(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let gate = Gate::new();
    h.push(gated_message("msg_long", "partial", &gate, " and the rest"));
    h.push(Reply::new().text("Second turn after interrupt."));
    let thread = h.start_thread().await;
    let turn = h.start_turn(&thread, "start something long").await;
    read_through(&mut h.client, |m| m["method"] == "item/agentMessage/delta").await;
    wait_gate(&gate).await;

    let id = h
        .client
        .send_request("turn/interrupt", interrupt_params(&thread, &turn))
        .await;
    let messages = read_through_turn_completed(&mut h.client).await;
    let labels: Vec<String> = messages.iter().map(super::label).collect();
    let response_at = messages
        .iter()
        .position(|m| m.get("id") == Some(&id))
        .unwrap_or_else(|| panic!("no turn/interrupt answer before turn/completed: {labels:?}"));
    assert_eq!(messages[response_at]["result"], json!({}));
    // Weft completes the half-streamed message with what it received.
    let partial = messages
        .iter()
        .find(|m| m["method"] == "item/completed" && m["params"]["item"]["id"] == "msg_long")
        .unwrap_or_else(|| panic!("the started agentMessage was not completed: {labels:?}"));
    assert_eq!(partial["params"]["item"]["text"], "partial");
    // `{}` → idle → turn/completed, with nothing of the turn after the answer but those two.
    let tail: Vec<&str> = labels[response_at..]
        .iter()
        .map(String::as_str)
        .filter(|l| *l != "item/completed:agentMessage")
        .collect();
    assert_eq!(
        tail,
        ["response", "thread/status/changed:idle", "turn/completed"],
        "{labels:?}"
    );
    let completed = &messages.last().expect("turn/completed")["params"]["turn"];
    assert_eq!(completed["id"], turn.as_str());
    assert_eq!(completed["status"], "interrupted");
    assert_eq!(completed["error"], Value::Null);
    assert_eq!(completed["items"], json!([]));
    assert_eq!(completed["itemsView"], "notLoaded");
    // The model request in flight was dropped.
    h.mock
        .wait_for_disconnect(DEFAULT_TIMEOUT)
        .await
        .expect("the mock sees the interrupted stream's connection close");

    // Interrupting again: nothing runs any more.
    super::assert_invalid_request(
        h.client.interrupt(&thread, &turn).await,
        "no active turn to interrupt",
    );

    // The next turn works, and its request carries the interruption marker between the
    // interrupted input and the new one.
    let next = h.run_turn(&thread, "what happened?").await;
    assert_eq!(next.completed_turn()["status"], "completed");
    assert_eq!(
        next.notifications("thread/status/changed")[0]["params"]["status"]["type"],
        "active"
    );
    let requests = h.wait_for_requests(2).await;
    let users = user_texts(&requests[1]);
    let first = users.iter().position(|t| t == "start something long");
    let marker = users.iter().position(|t| t.contains("<turn_aborted>"));
    let now = users.iter().position(|t| t == "what happened?");
    assert!(
        matches!((first, marker, now), (Some(a), Some(b), Some(c)) if a < b && b < c),
        "user messages of the request after the interrupt: {users:#?}"
    );
    assert!(
        !user_texts(&requests[0])
            .iter()
            .any(|t| t.contains("<turn_aborted>")),
        "the first request already had a marker"
    );
}

/// Interrupting while the model has not sent anything yet (a stalled stream): same ending.
async fn interrupt_before_any_output(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    h.push(Reply::new().stall());
    let thread = h.start_thread().await;
    let turn = h.start_turn(&thread, "think forever").await;
    h.wait_for_requests(1).await;
    let answer = h
        .client
        .interrupt(&thread, &turn)
        .await
        .expect("turn/interrupt");
    assert_eq!(answer, json!({}));
    let messages = read_through_turn_completed(&mut h.client).await;
    let labels: Vec<String> = messages.iter().map(super::label).collect();
    assert_eq!(
        labels[labels.len() - 2..],
        ["thread/status/changed:idle", "turn/completed"],
        "{labels:?}"
    );
    assert_eq!(
        messages.last().expect("turn/completed")["params"]["turn"]["status"],
        "interrupted"
    );
    h.mock
        .wait_for_disconnect(DEFAULT_TIMEOUT)
        .await
        .expect("the stalled stream's connection is closed");
}

on_both_transports!(interrupt_mid_stream, interrupt_before_any_output);

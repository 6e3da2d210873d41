//! Manual compaction, `thread/compact/start` (docs/protocol.md §7.12): the exact order on an idle
//! thread, the running turn interrupted first on a busy one, and steering into the compaction
//! turn rejected with the reference's error and `data` (§5.4).

use serde_json::{Value, json};
use weft_mock_model::{Gate, Reply, Usage};
use weft_test_support::{QUIET_PERIOD, Transport};

use super::{
    INVALID_REQUEST, UNDER_THE_LIMIT, answer, assert_compacted_conversation,
    assert_one_compaction_item, assert_summary_between, assert_summary_request, assistant, compact,
    conversation, label, push_answers, read_through, read_through_turn_completed, start,
    start_compacting, str_at, text_input, user, wait_gate,
};
use crate::turns::gated_message;

/// Check the compaction turn's own `turn/completed`: completed, `items: []`, `notLoaded`.
fn assert_compaction_turn_completed(message: &Value, turn: &str) {
    assert_eq!(message["method"], "turn/completed");
    let completed = &message["params"]["turn"];
    assert_eq!(completed["id"], turn);
    assert_eq!(completed["status"], "completed", "{completed}");
    assert_eq!(completed["items"], json!([]));
    assert_eq!(completed["itemsView"], "notLoaded");
    assert_eq!(completed["error"], Value::Null);
}

/// Labels of `messages` with `thread/tokenUsage/updated` left out, after checking that any
/// such notification sits where §7.12 allows it (between the compaction item's start and end;
/// `messages` may begin after the start).
fn labels_without_usage(messages: &[Value]) -> Vec<String> {
    let labels: Vec<String> = messages.iter().map(label).collect();
    let start = labels
        .iter()
        .position(|l| l == "item/started:contextCompaction");
    let end = labels
        .iter()
        .position(|l| l == "item/completed:contextCompaction");
    for (at, l) in labels.iter().enumerate() {
        if l == "thread/tokenUsage/updated" {
            assert!(
                start.is_none_or(|s| s < at) && end.is_some_and(|e| at < e),
                "token usage outside the compaction item: {labels:?}"
            );
        }
    }
    labels
        .into_iter()
        .filter(|l| l != "thread/tokenUsage/updated")
        .collect()
}

/// The labels (without usage) of a compaction turn, from its `thread/status/changed:active`
/// to its `turn/completed`.
const COMPACTION_TURN: &[&str] = &[
    "thread/status/changed:active",
    "turn/started",
    "item/started:contextCompaction",
    "item/completed:contextCompaction",
    "thread/status/changed:idle",
    "turn/completed",
];

/// On an idle thread: `{}` at once, then the compaction turn in the reference's order, with no
/// `userMessage`; the next turn's request carries the compacted history.
async fn manual_compaction_on_an_idle_thread(transport: Transport) {
    const SUMMARY: &str = "SUMMARY-MANUAL: the user greeted the model.";
    let replies = ["first answer", SUMMARY, "second answer"];
    let (mut p, thread) = start_compacting(transport, replies, UNDER_THE_LIMIT).await;
    p.run_turn(&thread, "first question").await;

    let (messages, turn) = compact(&mut p.client, &thread).await;
    assert_eq!(
        labels_without_usage(&messages),
        [&["response"], COMPACTION_TURN].concat(),
        "the order of docs/protocol.md §7.12"
    );
    for message in &messages[1..] {
        assert_eq!(message["params"]["threadId"], thread.as_str(), "{message}");
    }
    let started = &messages[2]["params"]["turn"];
    assert_eq!(started["status"], "inProgress");
    assert_eq!(started["items"], json!([]));
    assert!(started["startedAt"].is_i64(), "{started}");
    assert_one_compaction_item(&messages, &turn);
    assert_compaction_turn_completed(messages.last().expect("turn/completed"), &turn);
    assert!(
        !messages
            .iter()
            .any(|m| m["params"]["item"]["type"] == "userMessage"),
        "a compaction turn has no userMessage"
    );
    assert!(
        !messages.iter().any(|m| m["method"] == "thread/compacted"),
        "0.171.0 sends no thread/compacted"
    );
    p.client.expect_no_message_within(QUIET_PERIOD).await;

    let requests = p.wait_for_requests(2).await;
    assert_summary_request(&requests[1]);
    assert_eq!(
        conversation(&requests[1])[..2],
        [user("first question"), assistant("first answer")]
    );

    let next = p.run_turn(&thread, "second question").await;
    assert_eq!(next.completed_turn()["status"], "completed");
    let requests = p.wait_for_requests(3).await;
    assert_summary_between(&requests[2], "first question", "second question", SUMMARY);

    // A thread that is not loaded: the reference's error (§7.12).
    let unknown = crate::persistence::UNKNOWN_ID;
    let err = p
        .client
        .request("thread/compact/start", json!({"threadId": unknown}))
        .await
        .expect_err("thread/compact/start on an unknown thread");
    assert_eq!(
        (err.code, err.message),
        (INVALID_REQUEST, format!("thread not found: {unknown}"))
    );
}

/// On a busy thread the running turn completes `interrupted` first, then the compaction turn
/// runs; the compacted history keeps the user's message, not the interrupt marker.
async fn manual_compaction_on_a_busy_thread(transport: Transport) {
    const SUMMARY: &str = "SUMMARY-BUSY: a long task was interrupted.";
    let mut p = start(transport).await;
    let gate = Gate::new();
    p.push(gated_message("msg_long", "Working", &gate, " on it"));
    push_answers(&p, &[(SUMMARY, 80, 20), ("next answer", 90, 10)]);
    let thread = p.start_thread().await;
    let running = ok_turn_start(&mut p, &thread, "do the long task").await;
    read_through(&mut p.client, |m| m["method"] == "item/agentMessage/delta").await;
    wait_gate(&gate).await;

    let (messages, turn) = compact(&mut p.client, &thread).await;
    assert_ne!(turn, running);
    assert_eq!(
        labels_without_usage(&messages),
        [
            &[
                "response",
                "item/completed:agentMessage",
                "thread/status/changed:idle",
                "turn/completed",
            ],
            COMPACTION_TURN,
        ]
        .concat(),
        "the running turn ends interrupted, then the compaction turn runs"
    );
    let interrupted = &messages[3]["params"]["turn"];
    assert_eq!(interrupted["id"], running.as_str());
    assert_eq!(interrupted["status"], "interrupted", "{interrupted}");
    assert_eq!(messages[1]["params"]["item"]["text"], "Working");
    assert_eq!(messages[5]["params"]["turn"]["id"], turn.as_str());
    assert_one_compaction_item(&messages, &turn);
    assert_compaction_turn_completed(messages.last().expect("turn/completed"), &turn);
    gate.release();

    let requests = p.wait_for_requests(2).await;
    let summary_request = &requests[1];
    assert_summary_request(summary_request);
    let history = conversation(summary_request);
    assert_eq!(history[0], user("do the long task"));
    assert!(
        history[1].1.starts_with("<turn_aborted>"),
        "the summary request knows the turn was interrupted: {history:#?}"
    );
    assert_eq!(history.len(), 3, "{history:#?}");

    let next = p.run_turn(&thread, "what now?").await;
    assert_eq!(next.completed_turn()["status"], "completed");
    let requests = p.wait_for_requests(3).await;
    assert_eq!(requests.len(), 3);
    assert_summary_between(&requests[2], "do the long task", "what now?", SUMMARY);
}

/// While the compaction's summary request is held, `turn/steer` and `turn/start` are rejected
/// with `-32600 cannot steer a compact turn` and the `TurnError` data; the compaction then
/// finishes, and the rejected input never reaches the model.
async fn steer_into_a_compaction_is_rejected(transport: Transport) {
    let mut p = start(transport).await;
    let gate = Gate::new();
    p.push(answer("first answer", 100, 10));
    p.push(
        Reply::new()
            .gate(&gate)
            .text("SUMMARY-STEER")
            .usage(Usage::new(100, 10)),
    );
    p.push(answer("second answer", 100, 10));
    let thread = p.start_thread().await;
    p.run_turn(&thread, "first question").await;

    let id = p
        .client
        .send_request("thread/compact/start", json!({"threadId": thread}))
        .await;
    let before = read_through(&mut p.client, |m| {
        m["method"] == "item/started" && m["params"]["item"]["type"] == "contextCompaction"
    })
    .await;
    assert_eq!(
        before.iter().map(label).collect::<Vec<_>>(),
        [
            "response",
            "thread/status/changed:active",
            "turn/started",
            "item/started:contextCompaction"
        ]
    );
    assert_eq!(before[0]["id"], id);
    let turn = str_at(&before[2], "/params/turn/id");
    wait_gate(&gate).await;

    let expected_data = json!({
        "message": "cannot steer a compact turn",
        "codexErrorInfo": {"activeTurnNotSteerable": {"turnKind": "compact"}},
        "additionalDetails": null,
        "misalignment": null,
    });
    let steer = p
        .client
        .request(
            "turn/steer",
            json!({"threadId": thread, "expectedTurnId": turn,
                   "input": [text_input("steered into the compaction")]}),
        )
        .await
        .expect_err("turn/steer into a compaction must fail");
    assert_eq!(
        (steer.code, steer.message.as_str()),
        (INVALID_REQUEST, "cannot steer a compact turn")
    );
    assert_eq!(steer.data, Some(expected_data.clone()), "turn/steer data");

    // Weft's documented choice (docs/protocol.md §13): turn/start fails the same way (Codex
    // answers -32603 here).
    let start = p
        .client
        .request(
            "turn/start",
            json!({"threadId": thread, "input": [text_input("started into the compaction")]}),
        )
        .await
        .expect_err("turn/start during a compaction must fail");
    assert_eq!(
        (start.code, start.message.as_str()),
        (INVALID_REQUEST, "cannot steer a compact turn")
    );
    assert_eq!(start.data, Some(expected_data), "turn/start data");

    gate.release();
    let rest = read_through_turn_completed(&mut p.client).await;
    assert_eq!(
        labels_without_usage(&rest),
        [
            "item/completed:contextCompaction",
            "thread/status/changed:idle",
            "turn/completed"
        ],
        "nothing joined the compaction turn"
    );
    assert_compaction_turn_completed(rest.last().expect("turn/completed"), &turn);

    let next = p.run_turn(&thread, "second question").await;
    assert_eq!(next.completed_turn()["status"], "completed");
    let requests = p.wait_for_requests(3).await;
    assert_eq!(requests.len(), 3);
    assert_compacted_conversation(
        &conversation(&requests[2]),
        &[
            Some(user("first question")),
            None,
            Some(user("second question")),
        ],
        "SUMMARY-STEER",
    );
}

/// `turn/start` that must start a turn; returns its id.
async fn ok_turn_start(p: &mut super::Persist, thread: &str, text: &str) -> String {
    let result = p
        .client
        .request("turn/start", super::turn_start_params(thread, text))
        .await
        .unwrap_or_else(|err| panic!("turn/start failed: {err}"));
    str_at(&result, "/turn/id")
}

on_both_transports!(
    manual_compaction_on_an_idle_thread,
    manual_compaction_on_a_busy_thread,
    steer_into_a_compaction_is_rejected,
);

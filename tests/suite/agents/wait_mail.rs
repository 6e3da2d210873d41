//! v2 `wait_agent` waits for the next mail (docs/agents.md §6.2): with two workers the parent
//! waits, gets the first one's final answer, waits again and gets the second's; each arrives
//! as a `subAgentActivity` `completed` item in the parent's turn and a `FINAL_ANSWER` mail in
//! its next model request. Mail the parent's model has already read does not end a later wait.
//! A `turn/interrupt` while the parent waits finds the parent's turn and ends it.

use serde_json::{Value, json};
use weft_mock_model::{Gate, RecordedRequest, Reply};
use weft_test_support::{Recv, Transport};

use super::{
    child_says, gated_harness, is_child, namespaced_call, parent_output, parent_says,
    read_through_turn_of, str_at, wait_gate,
};
use crate::requests::Requests;

const V2: &str = "[features.multi_agent_v2]\nenabled = true\n";

fn v2_call(call_id: &str, tool: &str, arguments: Value) -> Reply {
    namespaced_call(call_id, "collaboration", tool, &arguments.to_string())
}

fn spawn(call_id: &str, task: &str, message: &str) -> Reply {
    v2_call(
        call_id,
        "spawn_agent",
        json!({"task_name": task, "fork_turns": "none", "message": message}),
    )
}

fn wait(call_id: &str) -> Reply {
    v2_call(call_id, "wait_agent", json!({"timeout_ms": 60_000}))
}

/// The texts of a request's `agent_message` items, in order.
fn mail(request: &RecordedRequest) -> Vec<String> {
    request
        .input()
        .iter()
        .filter(|item| item["type"] == "agent_message")
        .filter_map(|item| item["content"][0]["text"].as_str().map(str::to_string))
        .collect()
}

fn final_answer(worker: &str, answer: &str) -> String {
    format!(
        "Message Type: FINAL_ANSWER\nTask name: /root\nSender: /root/{worker}\nPayload:\n{answer}"
    )
}

/// The parent's first model request carrying `call_id`'s output.
fn after(h: &super::Harness, call_id: &str) -> RecordedRequest {
    h.mock
        .requests()
        .into_iter()
        .find(|r| !is_child(r) && r.tool_output(call_id).is_some())
        .unwrap_or_else(|| panic!("no parent request after {call_id}"))
}

/// Whether `m` is an item event `method` of the item `id` in `thread`.
fn is_item(m: &Value, method: &str, thread: &str, id: &str) -> bool {
    m["method"] == method && m["params"]["threadId"] == thread && m["params"]["item"]["id"] == id
}

async fn each_wait_gets_the_next_worker(transport: Transport) {
    let mut h = gated_harness(transport, V2).await;
    let parent = h.start_thread().await;
    let (gate_a, gate_b) = (Gate::new(), Gate::new());
    child_says(&h, "Answer ALPHA", Reply::new().gate(&gate_a).text("ALPHA"));
    child_says(&h, "Answer BETA", Reply::new().gate(&gate_b).text("BETA"));
    for reply in [
        spawn("call_spawn_a", "worker_a", "Answer ALPHA."),
        spawn("call_spawn_b", "worker_b", "Answer BETA."),
        wait("call_wait_1"),
        wait("call_wait_2"),
    ] {
        parent_says(&h, reply);
    }
    parent_says(&h, Reply::new().text("both answered"));
    let started = h
        .client
        .request_ok(
            "turn/start",
            json!({"threadId": parent, "input": [{"type": "text", "text": "ask two workers"}]}),
        )
        .await;
    let turn = str_at(&started, "/turn/id");
    wait_gate(&gate_a).await;
    wait_gate(&gate_b).await;
    h.client
        .wait_for("the first wait", |m| {
            is_item(m, "item/started", &parent, "call_wait_1")
        })
        .await;
    // Nothing has arrived: the wait holds the turn.
    assert!(
        !h.client
            .log()
            .iter()
            .any(|m| is_item(m, "item/completed", &parent, "call_wait_1")),
        "the first wait returned before any mail"
    );
    gate_a.release();
    h.client
        .wait_for("the second wait", |m| {
            is_item(m, "item/started", &parent, "call_wait_2")
        })
        .await;
    // The first answer was read: the second wait waits for new mail.
    let quiet = tokio::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        let left = quiet.saturating_duration_since(tokio::time::Instant::now());
        match h.client.recv(left).await {
            Recv::Message(m) => assert!(
                !is_item(&m, "item/completed", &parent, "call_wait_2"),
                "the second wait returned on mail already read: {m}"
            ),
            Recv::TimedOut => break,
            Recv::Closed(how) => panic!("closed: {how}"),
        }
    }
    gate_b.release();
    let messages = read_through_turn_of(&mut h.client, &parent).await;
    let done = messages.last().unwrap();
    assert_eq!(done["params"]["turn"]["status"], "completed", "{done}");

    for call in ["call_wait_1", "call_wait_2"] {
        assert_eq!(
            parent_output(&h, call),
            json!({"message": "Wait completed.", "timed_out": false})
        );
    }
    // Each final answer reaches the parent's model after the wait it ended.
    let alpha = final_answer("worker_a", "ALPHA");
    let beta = final_answer("worker_b", "BETA");
    assert_eq!(mail(&after(&h, "call_wait_1")), vec![alpha.clone()]);
    assert_eq!(mail(&after(&h, "call_wait_2")), vec![alpha, beta]);

    // Each completion shows in the parent's turn as a `subAgentActivity` item, before the
    // wait it ended completes.
    let log = h.client.log().to_vec();
    let position = |pred: &dyn Fn(&Value) -> bool| log.iter().position(pred);
    for (worker, call) in [("worker_a", "call_wait_1"), ("worker_b", "call_wait_2")] {
        let path = format!("/root/{worker}");
        let activity = position(&|m| {
            m["method"] == "item/completed"
                && m["params"]["threadId"] == parent.as_str()
                && m["params"]["item"]["type"] == "subAgentActivity"
                && m["params"]["item"]["kind"] == "completed"
                && m["params"]["item"]["agentPath"] == path.as_str()
        })
        .unwrap_or_else(|| panic!("no completed activity of {worker} in the parent"));
        assert_eq!(log[activity]["params"]["turnId"], turn.as_str());
        assert!(str_at(&log[activity]["params"]["item"], "/id").starts_with("subagent-completed-"));
        let waited = position(&|m| is_item(m, "item/completed", &parent, call)).unwrap();
        assert!(
            activity < waited,
            "{worker}'s activity after {call} completed"
        );
        assert_eq!(log[waited]["params"]["item"]["status"], "completed");
    }
}

async fn an_interrupt_while_waiting_ends_the_parent_turn(transport: Transport) {
    let mut h = gated_harness(transport, V2).await;
    let parent = h.start_thread().await;
    let gate = Gate::new();
    child_says(&h, "Answer GAMMA", Reply::new().gate(&gate).text("GAMMA"));
    parent_says(&h, spawn("call_spawn_c", "worker_c", "Answer GAMMA."));
    parent_says(&h, wait("call_wait_c"));
    let started = h
        .client
        .request_ok(
            "turn/start",
            json!({"threadId": parent, "input": [{"type": "text", "text": "ask a worker"}]}),
        )
        .await;
    let turn = str_at(&started, "/turn/id");
    wait_gate(&gate).await;
    h.client
        .wait_for("the wait", |m| {
            is_item(m, "item/started", &parent, "call_wait_c")
        })
        .await;
    // The parent's turn is still running: the interrupt finds it.
    let answer = h.client.interrupt(&parent, &turn).await;
    assert_eq!(answer.as_ref().ok(), Some(&json!({})), "{answer:?}");
    let messages = read_through_turn_of(&mut h.client, &parent).await;
    let done = messages.last().unwrap();
    assert_eq!(done["params"]["turn"]["status"], "interrupted", "{done}");
    let waited = messages
        .iter()
        .find(|m| is_item(m, "item/completed", &parent, "call_wait_c"))
        .expect("the wait's item completes");
    assert_eq!(waited["params"]["item"]["status"], "interrupted");

    // The worker keeps running; its answer waits for the parent's next turn, which also sees
    // the interrupted wait.
    gate.release();
    let child_done = h
        .client
        .wait_for("the worker's turn", |m| {
            m["method"] == "turn/completed" && m["params"]["threadId"] != parent.as_str()
        })
        .await;
    assert_eq!(child_done["params"]["turn"]["status"], "completed");
    parent_says(&h, Reply::new().text("noted"));
    h.client
        .request_ok(
            "turn/start",
            json!({"threadId": parent, "input": [{"type": "text", "text": "and now?"}]}),
        )
        .await;
    read_through_turn_of(&mut h.client, &parent).await;
    let next = after(&h, "call_wait_c");
    assert!(
        super::output_of(&next, "call_wait_c").starts_with("aborted by user"),
        "{}",
        super::output_of(&next, "call_wait_c")
    );
    let last = h
        .mock
        .requests()
        .into_iter()
        .rev()
        .find(|r| !is_child(r))
        .unwrap();
    assert!(
        mail(&last).contains(&final_answer("worker_c", "GAMMA")),
        "{:?}",
        mail(&last)
    );
}

/// Read events for a second; fail if one matches `pred`.
async fn quiet_for_a_second(client: &mut weft_test_support::Client, pred: impl Fn(&Value) -> bool) {
    let quiet = tokio::time::Instant::now() + std::time::Duration::from_secs(1);
    loop {
        let left = quiet.saturating_duration_since(tokio::time::Instant::now());
        match client.recv(left).await {
            Recv::Message(m) => assert!(!pred(&m), "unexpected: {m}"),
            Recv::TimedOut => break,
            Recv::Closed(how) => panic!("closed: {how}"),
        }
    }
}

async fn mail_read_before_a_wait_does_not_end_it(transport: Transport) {
    let mut h = gated_harness(transport, V2).await;
    let parent = h.start_thread().await;
    let (parent_gate, gate_b) = (Gate::new(), Gate::new());
    child_says(&h, "Answer ALPHA", Reply::new().text("ALPHA"));
    child_says(&h, "Answer BETA", Reply::new().gate(&gate_b).text("BETA"));
    parent_says(&h, spawn("call_spawn_a", "worker_a", "Answer ALPHA."));
    parent_says(&h, spawn("call_spawn_b", "worker_b", "Answer BETA."));
    // The parent is busy (its model is answering) while worker_a finishes.
    let list = v2_call("call_list", "list_agents", json!({}));
    parent_says(&h, list.gate(&parent_gate));
    parent_says(&h, wait("call_wait"));
    parent_says(&h, Reply::new().text("done"));
    h.client
        .request_ok(
            "turn/start",
            json!({"threadId": parent, "input": [{"type": "text", "text": "ask two workers"}]}),
        )
        .await;
    wait_gate(&gate_b).await;
    wait_gate(&parent_gate).await;
    h.client
        .wait_for("worker_a's completion in the parent", |m| {
            m["method"] == "item/completed"
                && m["params"]["threadId"] == parent.as_str()
                && m["params"]["item"]["agentPath"] == "/root/worker_a"
                && m["params"]["item"]["kind"] == "completed"
        })
        .await;
    parent_gate.release();
    h.client
        .wait_for("the wait", |m| {
            is_item(m, "item/started", &parent, "call_wait")
        })
        .await;
    // worker_a's answer reached the model before the wait: the wait waits for worker_b.
    let alpha = final_answer("worker_a", "ALPHA");
    assert_eq!(mail(&after(&h, "call_list")), vec![alpha.clone()]);
    quiet_for_a_second(&mut h.client, |m| {
        is_item(m, "item/completed", &parent, "call_wait")
    })
    .await;
    gate_b.release();
    let messages = read_through_turn_of(&mut h.client, &parent).await;
    assert_eq!(
        messages.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );
    assert_eq!(
        parent_output(&h, "call_wait"),
        json!({"message": "Wait completed.", "timed_out": false})
    );
    assert_eq!(
        mail(&after(&h, "call_wait")),
        vec![alpha, final_answer("worker_b", "BETA")]
    );
}

/// `timeout_ms` of zero or less is refused, as the reference refuses it, with no item.
async fn a_wait_of_zero_is_refused(transport: Transport) {
    let mut h = gated_harness(transport, V2).await;
    let parent = h.start_thread().await;
    parent_says(
        &h,
        v2_call("call_wait_0", "wait_agent", json!({"timeout_ms": 0})),
    );
    parent_says(&h, Reply::new().text("ok"));
    h.client
        .request_ok(
            "turn/start",
            json!({"threadId": parent, "input": [{"type": "text", "text": "wait"}]}),
        )
        .await;
    let messages = read_through_turn_of(&mut h.client, &parent).await;
    assert_eq!(
        parent_output(&h, "call_wait_0"),
        json!("timeout_ms must be greater than zero")
    );
    assert!(
        !messages
            .iter()
            .any(|m| m["params"]["item"]["id"] == "call_wait_0"),
        "a refused wait has no item"
    );
}

on_both_transports!(
    each_wait_gets_the_next_worker,
    an_interrupt_while_waiting_ends_the_parent_turn,
    mail_read_before_a_wait_does_not_end_it,
    a_wait_of_zero_is_refused
);

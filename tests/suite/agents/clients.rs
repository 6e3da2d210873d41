//! Sub-agents as clients see them: v1 deferred behind `tool_search` (as the reference offers
//! it to gpt-5.5), and a child driven with the ordinary methods (`turn/interrupt`,
//! `turn/start`) while its parent's `wait_agent` is interrupted.

use serde_json::json;
use weft_mock_model::{Gate, Reply};
use weft_test_support::Transport;

use super::{
    child_says, completed_item, first_child_request, harness, input_types, is_child, parent_says,
    parent_turn, read_through_turn_of, run_parent_turn, seen_or_wait, spawn_call, spawned,
    spawned_and_told, str_at, tool_names, v1_call, wait_turn_completed,
};
use crate::mcp::tool_search::search_call;
use crate::requests::Requests;

/// `[features] tool_search`: the v1 namespace is deferred, found by a search, then called; a
/// forked child is told the namespace was removed.
async fn deferred_behind_tool_search(transport: Transport) {
    let mut h = harness(transport, "[features]\ntool_search = true\n").await;
    let parent = h.start_thread().await;
    child_says(
        &h,
        "Summarize what the user asked",
        Reply::new().text("A worker."),
    );
    let task = json!({"message": "Summarize what the user asked.", "fork_context": true});
    let calls = [
        search_call("call_ts_1", json!({"query": "spawn sub-agent", "limit": 8})),
        v1_call("call_spawn_1", "spawn_agent", task),
    ];
    let messages = parent_turn(&mut h, &parent, "spawn a worker, please", calls, "done").await;

    let requests: Vec<_> = h
        .mock
        .requests()
        .into_iter()
        .filter(|r| !is_child(r))
        .collect();
    let first = &requests[0];
    let names = tool_names(first);
    assert!(!names.contains(&"multi_agent_v1".to_string()), "{names:?}");
    assert!(
        first.tools().iter().any(|t| t["type"] == "tool_search"),
        "{names:?}"
    );
    let developer = first.message_texts("developer");
    assert!(
        developer.contains(&"<tools>\nDeferred tool namespaces:\n- multi_agent_v1: Tools for spawning and managing sub-agents.\n</tools>".to_string()),
        "{developer:?}"
    );
    let output = requests[1]
        .input()
        .iter()
        .find(|item| item["type"] == "tool_search_output")
        .expect("the search's output")
        .clone();
    assert_eq!(output["tools"][0]["name"], "multi_agent_v1");
    let found: Vec<&str> = output["tools"][0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(found.contains(&"spawn_agent"), "{found:?}");
    assert_eq!(output["tools"][0]["tools"][0]["defer_loading"], true);

    let child = spawned_and_told(&h, &messages, "call_spawn_1");
    wait_turn_completed(&mut h.client, &messages, &child).await;
    // The fork: the parent's messages, no tool calls or searches, the removal note, the task.
    let fork = first_child_request(&h, "Summarize what the user asked");
    let kinds = input_types(&fork);
    assert!(
        !kinds
            .iter()
            .any(|k| k.contains("call") || k.contains("output")),
        "{kinds:?}"
    );
    assert!(
        fork.input()
            .iter()
            .any(|i| i.to_string().contains("spawn a worker, please"))
    );
    assert!(
        fork.message_texts("developer").iter().any(|t| t.starts_with("<tools>\nRemoved deferred tool namespaces:\n- multi_agent_v1:")),
        "{:?}",
        fork.message_texts("developer")
    );
    assert_eq!(
        fork.message_texts("user").last().map(String::as_str),
        Some("Summarize what the user asked.")
    );
}

/// A client interrupts a child's turn and starts one of its own with the ordinary methods;
/// the parent's `turn/interrupt` during `wait_agent` completes the wait's item `interrupted`.
async fn clients_drive_a_child(transport: Transport) {
    let mut h = harness(transport, "[agents]\nmax_threads = 2\n").await;
    let parent = h.start_thread().await;
    let held = Gate::new();
    child_says(
        &h,
        "Hold on, worker A",
        Reply::new().text("held").gate(&held),
    );
    let spawn = [spawn_call("call_spawn_a", "Hold on, worker A.")];
    let messages = parent_turn(&mut h, &parent, "spawn one", spawn, "spawned").await;
    let child = spawned(&messages, "call_spawn_a");
    let started = seen_or_wait(&mut h.client, &messages, "the child's turn/started", |m| {
        m["method"] == "turn/started" && m["params"]["threadId"] == child.as_str()
    })
    .await;
    let turn = str_at(&started, "/params/turn/id");
    let answer = h.client.interrupt(&child, &turn).await.unwrap();
    assert_eq!(answer, json!({}));
    let done = wait_turn_completed(&mut h.client, &[], &child).await;
    assert_eq!(done["params"]["turn"]["status"], "interrupted");
    held.release();

    child_says(&h, "direct input", Reply::new().text("direct reply"));
    let messages = run_parent_turn(&mut h.client, &child, "direct input").await;
    let user = messages
        .iter()
        .find(|m| m["method"] == "item/completed" && m["params"]["item"]["type"] == "userMessage")
        .expect("the client's input as a userMessage");
    assert_eq!(user["params"]["threadId"], child.as_str());
    assert_eq!(
        messages.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );

    // The parent waits on a held child; the user interrupts the parent.
    let held_b = Gate::new();
    let spawned = Gate::new();
    parent_says(
        &h,
        spawn_call("call_spawn_b", "Hold on, worker B.").gate(&spawned),
    );
    child_says(
        &h,
        "Hold on, worker B",
        Reply::new().text("held").gate(&held_b),
    );
    let turn = h
        .client
        .request(
            "turn/start",
            json!({"threadId": parent, "input": [{"type": "text", "text": "spawn and wait"}]}),
        )
        .await
        .unwrap();
    let turn = str_at(&turn, "/turn/id");
    let spawn = h
        .client
        .wait_for("the spawn's item/completed", |m| {
            m["method"] == "item/completed" && m["params"]["item"]["id"] == "call_spawn_b"
        })
        .await;
    let child_b = str_at(&spawn, "/params/item/receiverThreadIds/0");
    parent_says(
        &h,
        v1_call("call_wait_b", "wait_agent", json!({"targets": [child_b]})),
    );
    spawned.release();
    let waiting = h
        .client
        .wait_for("the wait's item/started", |m| {
            m["method"] == "item/started" && m["params"]["item"]["id"] == "call_wait_b"
        })
        .await;
    assert_eq!(waiting["params"]["item"]["tool"], "wait");
    let answer = h.client.interrupt(&parent, &turn).await.unwrap();
    assert_eq!(answer, json!({}));
    let messages = read_through_turn_of(&mut h.client, &parent).await;
    assert_eq!(
        messages.last().unwrap()["params"]["turn"]["status"],
        "interrupted"
    );
    assert_eq!(
        completed_item(&messages, "call_wait_b")["status"],
        "interrupted"
    );
    held_b.release();
}

on_both_transports!(deferred_behind_tool_search, clients_drive_a_child);

//! The v1 tools one by one, as the reference's `collab_v1_spawn` scenario runs them: spawn,
//! wait, send_input, close, resume; the items clients see and what each model is sent.

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::{
    Harness, child_says, completed_item, first_child_request, harness, is_status, item_event,
    listed, parent_output, seen_or_wait, str_at, tool_names, v1_step, wait_turn_completed,
};
use crate::requests::Requests;

/// One parent turn (`text`) whose model calls `tool` with `args` as `call_id`, then says "ok";
/// the turn's messages.
async fn v1_turn(
    h: &mut Harness,
    parent: &str,
    text: &str,
    call: (&str, &str, Value),
) -> Vec<Value> {
    v1_step(h, parent, text, call, "ok").await.0
}

/// [`v1_turn`], whose item shows the tool as `item_tool` and whose output to the model is
/// `told`; the turn's messages.
async fn v1_turn_told(
    h: &mut Harness,
    parent: &str,
    text: &str,
    call: (&str, &str, Value),
    (item_tool, told): (&str, Value),
) -> Vec<Value> {
    let call_id = call.0;
    let (messages, output) = v1_step(h, parent, text, call, "ok").await;
    assert_eq!(completed_item(&messages, call_id)["tool"], item_tool);
    assert_eq!(output, told);
    messages
}

/// Whether `thread/loaded/list` has `thread`.
async fn is_loaded(h: &mut Harness, thread: &str) -> bool {
    let loaded = listed(&mut h.client, "thread/loaded/list", json!({})).await;
    loaded.iter().any(|id| id == thread)
}

async fn spawn_wait_send_close_resume(transport: Transport) {
    let mut h = harness(transport, "").await;
    let parent = h.start_thread().await;

    // spawn_agent: the item, the child announced idle, its own turn with the task.
    child_says(&h, "single word PONG", Reply::new().text("PONG"));
    let task = json!({"message": "Reply with the single word PONG."});
    let spawn = ("call_spawn_1", "spawn_agent", task);
    let messages = v1_turn(&mut h, &parent, "spawn a worker, please", spawn).await;
    let started = item_event(&messages, "item/started", "call_spawn_1");
    let item = &started["params"]["item"];
    assert_eq!(item["type"], "collabAgentToolCall");
    assert_eq!(item["tool"], "spawnAgent");
    assert_eq!(item["status"], "inProgress");
    assert_eq!(item["senderThreadId"], parent.as_str());
    assert_eq!(item["receiverThreadIds"], json!([]));
    assert_eq!(item["prompt"], "Reply with the single word PONG.");
    assert_eq!(item["model"], "");
    assert_eq!(item["agentsStates"], json!({}));
    let done = completed_item(&messages, "call_spawn_1");
    assert_eq!(done["status"], "completed");
    let child = str_at(done, "/receiverThreadIds/0");
    assert_eq!(done["model"], "mock-model", "the parent's model");
    assert_eq!(
        done["agentsStates"],
        json!({ child.clone(): {"status": "pendingInit", "message": null} })
    );
    let output = parent_output(&h, "call_spawn_1");
    assert_eq!(output["agent_id"], child.as_str());
    assert!(
        output["nickname"].as_str().is_some_and(|n| !n.is_empty()),
        "{output}"
    );
    // No `thread/started` for a sub-agent: it shows as idle first.
    assert!(!messages.iter().any(|m| m["method"] == "thread/started"));
    assert!(messages.iter().any(|m| is_status(m, &child, "idle")));
    let child_done = wait_turn_completed(&mut h.client, &messages, &child).await;
    assert_eq!(child_done["params"]["turn"]["status"], "completed");
    // The child's turn belongs to the parent's turn that spawned it (`rootTurnId`).
    let parent_turn = messages
        .iter()
        .find(|m| m["method"] == "turn/started" && m["params"]["threadId"] == parent.as_str())
        .map(|m| str_at(m, "/params/turn/id"))
        .expect("the parent's turn/started");
    let child_started = seen_or_wait(&mut h.client, &messages, "the child's turn/started", |m| {
        m["method"] == "turn/started" && m["params"]["threadId"] == child.as_str()
    })
    .await;
    assert_eq!(
        child_started["params"]["turn"]["rootTurnId"],
        parent_turn.as_str()
    );
    assert_ne!(child_started["params"]["turn"]["id"], parent_turn.as_str());

    // The child's first request: the reference's headers, its task, no multi-agent tools
    // (depth 1 = the default max_depth).
    let first = first_child_request(&h, "single word PONG");
    assert_eq!(first.header("thread-id"), Some(child.as_str()));
    assert_eq!(first.header("session-id"), Some(parent.as_str()));
    let metadata: Value =
        serde_json::from_str(first.header("x-codex-turn-metadata").expect("metadata")).unwrap();
    assert_eq!(metadata["parent_thread_id"], parent.as_str());
    assert_eq!(metadata["subagent_kind"], "thread_spawn");
    assert_eq!(metadata["thread_source"], "subagent");
    assert_eq!(metadata["parent_turn_id"], parent_turn.as_str());
    assert!(!tool_names(&first).contains(&"multi_agent_v1".to_string()));
    let parent_first = h
        .mock
        .requests()
        .into_iter()
        .find(|r| !super::is_child(r))
        .unwrap();
    assert!(tool_names(&parent_first).contains(&"multi_agent_v1".to_string()));

    // wait_agent: the child's final status; the parent's next request also carries the
    // `<subagent_notification>` queued while it was idle.
    let call = ("call_wait_1", "wait_agent", json!({"targets": [child]}));
    let told = json!({"status": { child.clone(): {"completed": "PONG"} }, "timed_out": false});
    let messages = v1_turn_told(&mut h, &parent, "wait for it", call, ("wait", told)).await;
    let wait = completed_item(&messages, "call_wait_1");
    assert_eq!(wait["receiverThreadIds"], json!([child]));
    assert_eq!(
        wait["agentsStates"],
        json!({ child.clone(): {"status": "completed", "message": "PONG"} })
    );
    let notified = h.mock.requests().into_iter().any(|r| {
        !super::is_child(&r)
            && r.message_texts("user").iter().any(|t| {
                t == &format!(
                    "<subagent_notification>\n{{\"agent_path\":\"{child}\",\"status\":{{\"completed\":\"PONG\"}}}}\n</subagent_notification>"
                )
            })
    });
    assert!(notified, "the parent was told the child completed");

    // send_input: a new turn of the child, with its userMessage.
    child_says(&h, "Now reply with PING", Reply::new().text("PING"));
    let input = json!({"target": child, "message": "Now reply with PING."});
    let messages = v1_turn(
        &mut h,
        &parent,
        "send more",
        ("call_send_1", "send_input", input),
    )
    .await;
    let send = completed_item(&messages, "call_send_1");
    assert_eq!(send["tool"], "sendInput");
    assert_eq!(send["prompt"], "Now reply with PING.");
    assert!(parent_output(&h, "call_send_1")["submission_id"].is_string());
    let user_message = seen_or_wait(&mut h.client, &messages, "the child's userMessage", |m| {
        m["method"] == "item/completed"
            && m["params"]["threadId"] == child.as_str()
            && m["params"]["item"]["type"] == "userMessage"
            && m["params"]["item"]["content"][0]["text"] == "Now reply with PING."
    })
    .await;
    assert_eq!(user_message["params"]["threadId"], child.as_str());
    wait_turn_completed(&mut h.client, &messages, &child).await;

    // close_agent: its status before; the child is unloaded.
    let close = ("call_close_1", "close_agent", json!({"target": child}));
    let told = json!({"previous_status": {"completed": "PING"}});
    let messages = v1_turn_told(&mut h, &parent, "close it", close, ("closeAgent", told)).await;
    assert!(messages.iter().any(|m| is_status(m, &child, "notLoaded")));
    assert!(!is_loaded(&mut h, &child).await);

    // resume_agent: loaded again, pending.
    let resume = ("call_resume_1", "resume_agent", json!({"id": child}));
    let told = json!({"status": "pending_init"});
    v1_turn_told(&mut h, &parent, "resume it", resume, ("resumeAgent", told)).await;
    assert!(is_loaded(&mut h, &child).await);

    // The child is an ordinary stored thread: listed under its parent, readable.
    let listed = h
        .client
        .request("thread/list", json!({"parentThreadId": parent}))
        .await
        .unwrap();
    let data = listed["data"].as_array().unwrap();
    assert_eq!(data.len(), 1, "{listed}");
    assert_eq!(data[0]["id"], child.as_str());
    assert_eq!(data[0]["parentThreadId"], parent.as_str());
    assert_eq!(data[0]["source"]["subAgent"]["thread_spawn"]["depth"], 1);
    assert!(data[0]["agentNickname"].is_string());
    let roots = h.client.request("thread/list", json!({})).await.unwrap();
    let ids: Vec<&str> = roots["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["id"].as_str())
        .collect();
    assert_eq!(ids, [parent.as_str()], "unfiltered: roots only");
    let read = h.client.thread_read(&child, true).await.unwrap();
    assert_eq!(read["thread"]["threadSource"], "subagent");
    assert_eq!(read["thread"]["turns"].as_array().map(Vec::len), Some(2));
}

on_both_transports!(spawn_wait_send_close_resume);

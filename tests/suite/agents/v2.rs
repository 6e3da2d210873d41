//! The v2 tools (`[features.multi_agent_v2]`), as the reference's `collab_v2_*` scenarios run
//! them: agents named by path, mail between them (`agent_message`), `subAgentActivity` items.

use serde_json::{Value, json};
use weft_mock_model::{Gate, RecordedRequest, Reply};
use weft_test_support::Transport;

use super::{
    child_says, completed_item, first_child_request, harness, is_child, item_event,
    namespaced_call, parent_calls, parent_output, parent_says, parent_turn, str_at, tool_names,
    wait_turn_completed,
};
use crate::requests::Requests;

const V2: &str = "[features.multi_agent_v2]\nenabled = true\n";

fn v2_call(call_id: &str, tool: &str, arguments: Value) -> Reply {
    namespaced_call(call_id, "collaboration", tool, &arguments.to_string())
}

/// The replies calling v2 tools, one a reply: `(call_id, tool, arguments)`.
fn v2_calls(calls: &[(&str, &str, Value)]) -> Vec<Reply> {
    calls
        .iter()
        .map(|(call_id, tool, arguments)| v2_call(call_id, tool, arguments.clone()))
        .collect()
}

/// The `agent_message` items of a request.
fn agent_messages(request: &RecordedRequest) -> Vec<Value> {
    request
        .input()
        .iter()
        .filter(|item| item["type"] == "agent_message")
        .cloned()
        .collect()
}

/// Check that `request` carries exactly one `agent_message`, from `author` to `recipient`,
/// whose text is `text`; that message.
fn the_one_mail(request: &RecordedRequest, author: &str, recipient: &str, text: &str) -> Value {
    let mail = agent_messages(request);
    assert_eq!(mail.len(), 1, "{mail:?}");
    assert_eq!(mail[0]["author"], author);
    assert_eq!(mail[0]["recipient"], recipient);
    assert_eq!(mail[0]["content"][0]["text"], text);
    mail[0].clone()
}

fn developer_texts(request: &RecordedRequest) -> Vec<String> {
    request.message_texts("developer")
}

async fn spawn_wait_list_fork_followup(transport: Transport) {
    let mut h = harness(transport, V2).await;
    let parent = h.start_thread().await;
    child_says(&h, "single word PONG", Reply::new().text("PONG"));
    child_says(
        &h,
        "Summarize what the user asked",
        Reply::new().text("The user asked for two workers."),
    );
    let calls = v2_calls(&[
        (
            "call_spawn_a",
            "spawn_agent",
            json!({"task_name": "worker_a", "fork_turns": "none",
                   "message": "Reply with the single word PONG."}),
        ),
        ("call_wait_1", "wait_agent", json!({})),
        ("call_list_1", "list_agents", json!({})),
        (
            "call_spawn_b",
            "spawn_agent",
            json!({"task_name": "worker_b", "message": "Summarize what the user asked."}),
        ),
    ]);
    let text = "spawn two workers, please";
    let messages = parent_turn(&mut h, &parent, text, calls, "spawned").await;

    // spawn_agent: its path; a `subAgentActivity` started item with the child's model.
    assert_eq!(
        parent_output(&h, "call_spawn_a"),
        json!({"task_name": "/root/worker_a"})
    );
    let started = completed_item(&messages, "call_spawn_a");
    assert_eq!(started["type"], "subAgentActivity");
    assert_eq!(started["kind"], "started");
    assert_eq!(started["agentPath"], "/root/worker_a");
    assert_eq!(started["model"], "mock-model");
    let child_a = str_at(started, "/agentThreadId");
    assert_eq!(
        item_event(&messages, "item/started", "call_spawn_a")["params"]["item"]["completedAtMs"],
        Value::Null
    );

    // The child's first request: a member's messages, no collaboration tools, the task as mail.
    let first = first_child_request(&h, "single word PONG");
    assert!(!tool_names(&first).contains(&"collaboration".to_string()));
    let developer = developer_texts(&first);
    assert!(
        developer
            .iter()
            .any(|t| t.starts_with("You are an agent in a team of agents")),
        "{developer:?}"
    );
    assert!(
        developer
            .iter()
            .any(|t| t.starts_with("<multi_agent_mode>"))
    );
    let task = "Message Type: NEW_TASK\nTask name: /root/worker_a\nSender: /root\nPayload:\n\
                Reply with the single word PONG.";
    let mail = the_one_mail(&first, "/root", "/root/worker_a", task);
    assert_eq!(
        first.input().last(),
        Some(&mail),
        "the task is the last input item"
    );
    // A v2 child's turn has no userMessage item.
    assert!(
        !messages
            .iter()
            .any(|m| m["params"]["threadId"] == child_a.as_str()
                && m["params"]["item"]["type"] == "userMessage")
    );

    // The root: its team messages and the tools inline.
    let root_first = h
        .mock
        .requests()
        .into_iter()
        .find(|r| !is_child(r))
        .unwrap();
    assert!(tool_names(&root_first).contains(&"collaboration".to_string()));
    assert!(
        developer_texts(&root_first)
            .iter()
            .any(|t| t.starts_with("You are `/root`"))
    );

    // wait_agent: until the child's final answer; its completion shows in the parent's turn.
    assert_eq!(
        parent_output(&h, "call_wait_1"),
        json!({"message": "Wait completed.", "timed_out": false})
    );
    let wait = completed_item(&messages, "call_wait_1");
    assert_eq!(wait["type"], "collabAgentToolCall");
    assert_eq!(wait["tool"], "wait");
    assert_eq!(wait["receiverThreadIds"], json!([]));
    let completed = messages
        .iter()
        .find(|m| {
            m["method"] == "item/completed"
                && m["params"]["threadId"] == parent.as_str()
                && m["params"]["item"]["kind"] == "completed"
        })
        .expect("a subAgentActivity completed item in the parent");
    assert_eq!(
        completed["params"]["item"]["agentThreadId"],
        child_a.as_str()
    );
    assert!(str_at(&completed["params"]["item"], "/id").starts_with("subagent-completed-"));
    // The final answer reaches the parent's model as mail.
    let after_wait = h
        .mock
        .requests()
        .into_iter()
        .find(|r| !is_child(r) && r.tool_output("call_wait_1").is_some())
        .unwrap();
    let answer =
        "Message Type: FINAL_ANSWER\nTask name: /root\nSender: /root/worker_a\nPayload:\nPONG";
    the_one_mail(&after_wait, "/root/worker_a", "/root", answer);

    // list_agents: the root and the child, no item.
    assert_eq!(
        parent_output(&h, "call_list_1"),
        json!({"agents": [{"agent_name": "/root", "agent_status": "running"},
                          {"agent_name": "/root/worker_a", "agent_status": {"completed": "PONG"}}]})
    );
    assert!(
        !messages
            .iter()
            .any(|m| m["params"]["item"]["id"] == "call_list_1")
    );

    // A full-history fork: the parent's input, its open spawn call answered `aborted`, the
    // fork note, then the task.
    let fork = first_child_request(&h, "Summarize what the user asked");
    let input = fork.input();
    assert!(
        input
            .iter()
            .any(|i| i.to_string().contains("spawn two workers, please"))
    );
    let open = input
        .iter()
        .find(|i| i["type"] == "function_call_output" && i["call_id"] == "call_spawn_b")
        .expect("the open spawn call's output");
    assert_eq!(open["output"], "aborted");
    assert!(
        developer_texts(&fork)
            .iter()
            .any(|t| t.starts_with("You are now a newly spawned sub-agent"))
    );
    assert_eq!(
        agent_messages(&fork).last().map(|m| m["recipient"].clone()),
        Some(json!("/root/worker_b"))
    );
    let child_b = str_at(completed_item(&messages, "call_spawn_b"), "/agentThreadId");

    // followup_task starts a turn of worker_a; send_message only queues mail on worker_b.
    child_says(&h, "Now reply with PING", Reply::new().text("PING"));
    let calls = v2_calls(&[
        (
            "call_follow_1",
            "followup_task",
            json!({"target": "worker_a", "message": "Now reply with PING."}),
        ),
        (
            "call_send_1",
            "send_message",
            json!({"target": "/root/worker_b", "message": "FYI"}),
        ),
    ]);
    let messages = parent_turn(&mut h, &parent, "follow up", calls, "sent").await;
    assert_eq!(parent_output(&h, "call_follow_1"), json!(""));
    assert_eq!(parent_output(&h, "call_send_1"), json!(""));
    assert_eq!(
        completed_item(&messages, "call_follow_1")["kind"],
        "interacted"
    );
    assert_eq!(
        completed_item(&messages, "call_send_1")["kind"],
        "interacted"
    );
    let done = wait_turn_completed(&mut h.client, &messages, &child_a).await;
    assert_eq!(done["params"]["turn"]["status"], "completed");
    let read_b = h.client.thread_read(&child_b, true).await.unwrap();
    assert_eq!(
        read_b["thread"]["turns"].as_array().map(Vec::len),
        Some(1),
        "send_message starts no turn"
    );
    assert_eq!(
        read_b["thread"]["source"]["subAgent"]["thread_spawn"]["agent_path"],
        "/root/worker_b"
    );

    // The queued message is read with worker_b's next task, before it.
    child_says(&h, "Now list the workers", Reply::new().text("a and b"));
    let task = json!({"target": "worker_b", "message": "Now list the workers."});
    let follow = [v2_call("call_follow_2", "followup_task", task)];
    let messages = parent_turn(&mut h, &parent, "ask b", follow, "asked").await;
    wait_turn_completed(&mut h.client, &messages, &child_b).await;
    let next = first_child_request(&h, "Now list the workers");
    let mail: Vec<String> = agent_messages(&next)
        .iter()
        .filter_map(|m| m["content"][0]["text"].as_str().map(str::to_string))
        .collect();
    let fyi = mail
        .iter()
        .position(|t| {
            t == "Message Type: MESSAGE\nTask name: /root/worker_b\nSender: /root\nPayload:\nFYI"
        })
        .unwrap_or_else(|| panic!("the queued message: {mail:?}"));
    let task = mail
        .iter()
        .position(|t| {
            t.starts_with("Message Type: NEW_TASK") && t.ends_with("Now list the workers.")
        })
        .unwrap_or_else(|| panic!("the new task: {mail:?}"));
    assert!(fyi < task, "{mail:?}");
}

async fn limits_and_interrupt(transport: Transport) {
    let mut h = harness(
        transport,
        &format!("{V2}max_concurrent_threads_per_session = 2\n"),
    )
    .await;
    let parent = h.start_thread().await;
    let child_gate = Gate::new();
    let parent_gate = Gate::new();
    parent_says(
        &h,
        v2_call(
            "call_spawn_a",
            "spawn_agent",
            json!({"task_name": "worker_a", "fork_turns": "none", "message": "Work slowly."}),
        ),
    );
    // Held until the child is running (in its second request).
    let never = json!({"task_name": "worker_b", "fork_turns": "none", "message": "Never runs."});
    let mut calls = vec![v2_call("call_spawn_b", "spawn_agent", never).gate(&parent_gate)];
    calls.extend(v2_calls(&[
        (
            "call_int_a",
            "interrupt_agent",
            json!({"target": "worker_a"}),
        ),
        (
            "call_list_1",
            "list_agents",
            json!({"path_prefix": "/root/worker_a"}),
        ),
    ]));
    parent_calls(&h, calls, "done");
    // The child calls a tool it is not offered, then is held until interrupted.
    child_says(
        &h,
        "Work slowly",
        v2_call(
            "call_child_spawn",
            "spawn_agent",
            json!({"task_name": "deeper", "message": "x"}),
        ),
    );
    child_says(
        &h,
        "Work slowly",
        Reply::new().text("partial").gate(&child_gate),
    );
    h.client
        .send_request(
            "turn/start",
            json!({"threadId": parent, "input": [{"type": "text", "text": "spawn slow workers"}]}),
        )
        .await;
    let second = h
        .mock
        .wait_for_request(
            "the child's second request",
            |r| is_child(r) && r.tool_output("call_child_spawn").is_some(),
            std::time::Duration::from_secs(10),
        )
        .await
        .unwrap();
    // A member of a v2 team has no collaboration tools: calling one anyway is refused.
    assert_eq!(
        super::output_of(&second, "call_child_spawn"),
        "unsupported call: collaborationspawn_agent"
    );
    parent_gate.release();
    let messages = super::read_through_turn_of(&mut h.client, &parent).await;
    assert_eq!(
        parent_output(&h, "call_spawn_b"),
        json!("collab spawn failed: agent thread limit reached")
    );
    assert!(
        !messages
            .iter()
            .any(|m| m["params"]["item"]["id"] == "call_spawn_b"),
        "a refused v2 spawn has no item"
    );
    let child = str_at(completed_item(&messages, "call_spawn_a"), "/agentThreadId");
    assert_eq!(
        parent_output(&h, "call_int_a"),
        json!({"previous_status": "running"})
    );
    assert_eq!(
        completed_item(&messages, "call_int_a")["kind"],
        "interrupted"
    );
    let child_turn = wait_turn_completed(&mut h.client, &messages, &child).await;
    assert_eq!(child_turn["params"]["turn"]["status"], "interrupted");
    assert_eq!(
        parent_output(&h, "call_list_1"),
        json!({"agents": [{"agent_name": "/root/worker_a", "agent_status": "interrupted"}]})
    );
    child_gate.release();
}

on_both_transports!(spawn_wait_list_fork_followup, limits_and_interrupt);

//! The v1 tools' limits, as the reference's `collab_v1_limits` scenario has them: the cap on
//! open sub-agents (and a closed one's slot used again), the depth limit at its default and
//! at 2, a spawn that fails after its slot was reserved, `wait_agent`'s timeout, and twenty
//! sub-agents of one root finishing together.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde_json::{Value, json};
use weft_mock_model::{Gate, Reply};
use weft_test_support::{Client, Transport};

use super::{
    Harness, child_requests, completed_item, completes, gated_harness, harness, logged_or_wait,
    output_of, parent_output, parent_turn, sorted, spawn_call, spawn_calls, spawned,
    spawned_and_told, task_calls, task_says, tool_names, v1_call, v1_step,
};
use crate::turns::wait_gate;

const NAMESPACE: &str = "multi_agent_v1";

/// `thread/list` with these params: the ids listed, sorted.
async fn listed(client: &mut Client, params: Value) -> Vec<String> {
    super::listed(client, "thread/list", params).await
}

/// `[agents] max_threads = 1`: the second spawn of a turn is refused with the reference's
/// text and a failed item; once the first child is closed, its slot takes a new one.
async fn thread_cap_and_a_closed_slot(transport: Transport) {
    let mut h = harness(transport, "[agents]\nmax_threads = 1\n").await;
    let parent = h.start_thread().await;
    task_says(&h, "Say A.", Reply::new().text("A"));
    let calls = [
        spawn_call("call_spawn_1", "Say A."),
        spawn_call("call_spawn_2", "Say B."),
    ];
    let then = "Only one worker could be spawned.";
    let messages = parent_turn(&mut h, &parent, "spawn two workers", calls, then).await;
    let child = spawned_and_told(&h, &messages, "call_spawn_1");
    assert_eq!(
        parent_output(&h, "call_spawn_2"),
        json!("collab spawn failed: agent thread limit reached")
    );
    let refused = completed_item(&messages, "call_spawn_2");
    assert_eq!(refused["tool"], "spawnAgent");
    assert_eq!(refused["status"], "failed");
    assert_eq!(refused["prompt"], "Say B.");
    assert_eq!(refused["receiverThreadIds"], json!([]));
    assert_eq!(refused["agentsStates"], json!({}));
    assert_eq!(
        listed(&mut h.client, json!({"parentThreadId": parent})).await,
        [child.as_str()]
    );
    completes(&mut h.client, &child).await;

    // close_agent frees the slot: a spawn in the same turn succeeds.
    task_says(&h, "Say C.", Reply::new().text("C"));
    let calls = [
        v1_call("call_close_1", "close_agent", json!({"target": child})),
        spawn_call("call_spawn_3", "Say C."),
    ];
    let text = "close it, spawn another";
    let messages = parent_turn(&mut h, &parent, text, calls, "replaced").await;
    assert_eq!(
        parent_output(&h, "call_close_1"),
        json!({"previous_status": {"completed": "A"}})
    );
    let replacement = spawned_and_told(&h, &messages, "call_spawn_3");
    assert_ne!(replacement, child);
    completes(&mut h.client, &replacement).await;
}

/// One parent turn (`text`) spawning a child with the task "Spawn a helper." (`call_spawn_1`):
/// the turn's messages and the child.
async fn spawn_a_helper(h: &mut Harness, parent: &str, text: &str) -> (Vec<Value>, String) {
    let spawn = [spawn_call("call_spawn_1", "Spawn a helper.")];
    let messages = parent_turn(h, parent, text, spawn, "ok").await;
    let child = spawned(&messages, "call_spawn_1");
    (messages, child)
}

/// The default `max_depth` (1): the child is offered no multi-agent tool, and a spawn it
/// calls anyway is an unsupported call.
async fn depth_limit_by_default(transport: Transport) {
    let mut h = harness(transport, "").await;
    let parent = h.start_thread().await;
    let spawn = [spawn_call("call_child_spawn", "Help me.")];
    task_calls(&h, "Spawn a helper.", spawn, "I could not spawn a helper.");
    let (_, child) = spawn_a_helper(&mut h, &parent, "spawn a worker").await;
    completes(&mut h.client, &child).await;

    let requests = child_requests(&h, "Spawn a helper.");
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert!(!tool_names(request).contains(&NAMESPACE.to_string()));
    }
    assert_eq!(
        output_of(&requests[1], "call_child_spawn"),
        "unsupported call: multi_agent_v1spawn_agent"
    );
    assert!(child_requests(&h, "Help me.").is_empty());
    let tree = listed(&mut h.client, json!({"ancestorThreadId": parent})).await;
    assert_eq!(tree, [child]);
}

/// `max_depth = 2`: the depth-1 child gets the namespace and spawns a grandchild (depth 2,
/// which gets none); the lineage filters of `thread/list` see the whole tree.
async fn depth_two_grandchild(transport: Transport) {
    let mut h = harness(transport, "[agents]\nmax_depth = 2\n").await;
    let parent = h.start_thread().await;
    let spawn = [spawn_call("call_child_spawn", "Go deeper.")];
    task_calls(&h, "Spawn a helper.", spawn, "Helper spawned.");
    let spawn = [spawn_call("call_gc_spawn", "Deeper still.")];
    task_calls(&h, "Go deeper.", spawn, "I could not go deeper.");
    let (_, child) = spawn_a_helper(&mut h, &parent, "spawn a worker that spawns").await;
    let item = logged_or_wait(&mut h.client, "the child's spawn item", |m| {
        m["method"] == "item/completed" && m["params"]["item"]["id"] == "call_child_spawn"
    })
    .await;
    assert_eq!(item["params"]["threadId"], child.as_str());
    assert_eq!(item["params"]["item"]["senderThreadId"], child.as_str());
    let grandchild = spawned(std::slice::from_ref(&item), "call_child_spawn");
    for thread in [&child, &grandchild] {
        completes(&mut h.client, thread).await;
    }

    let middle = child_requests(&h, "Spawn a helper.");
    assert!(tool_names(&middle[0]).contains(&NAMESPACE.to_string()));
    let output: Value = serde_json::from_str(&output_of(&middle[1], "call_child_spawn")).unwrap();
    assert_eq!(output["agent_id"], grandchild.as_str());
    let deepest = child_requests(&h, "Go deeper.");
    assert!(!tool_names(&deepest[0]).contains(&NAMESPACE.to_string()));
    assert_eq!(
        output_of(&deepest[1], "call_gc_spawn"),
        "unsupported call: multi_agent_v1spawn_agent"
    );
    let headers = (
        deepest[0].header("thread-id"),
        deepest[0].header("session-id"),
    );
    assert_eq!(headers, (Some(grandchild.as_str()), Some(parent.as_str())));

    let read = h
        .client
        .request("thread/read", json!({"threadId": grandchild}))
        .await
        .unwrap();
    let spawn = &read["thread"]["source"]["subAgent"]["thread_spawn"];
    assert_eq!(spawn["depth"], 2, "{read}");
    assert_eq!(spawn["parent_thread_id"], child.as_str());
    assert_eq!(read["thread"]["parentThreadId"], child.as_str());
    assert_eq!(
        listed(&mut h.client, json!({"ancestorThreadId": parent})).await,
        sorted(vec![child.clone(), grandchild.clone()])
    );
    assert_eq!(
        listed(&mut h.client, json!({"parentThreadId": parent})).await,
        [child.as_str()]
    );
    assert_eq!(
        listed(&mut h.client, json!({"parentThreadId": child})).await,
        [grandchild]
    );
}

/// A spawn whose child thread cannot be created (its rollout: a file stands where
/// `sessions/` was — file modes would not stop a daemon running as root) fails after its
/// slot was reserved; with `max_threads = 1` the next spawn succeeds, so the slot came back.
async fn a_failed_spawn_gives_its_slot_back(transport: Transport) {
    let mut h = harness(transport, "[agents]\nmax_threads = 1\n").await;
    let parent = h.start_thread().await;
    let sessions = h.home.path().join("sessions");
    let away = h.home.path().join("sessions.away");
    std::fs::rename(&sessions, &away).unwrap();
    std::fs::write(&sessions, "not a folder").unwrap();
    let spawn = [spawn_call("call_spawn_1", "Say A.")];
    let messages = parent_turn(&mut h, &parent, "spawn a worker", spawn, "it failed").await;
    std::fs::remove_file(&sessions).unwrap();
    std::fs::rename(&away, &sessions).unwrap();
    let output = parent_output(&h, "call_spawn_1");
    let text = output.as_str().unwrap_or_default();
    assert!(text.starts_with("collab spawn failed: "), "{output}");
    assert_ne!(text, "collab spawn failed: agent thread limit reached");
    let failed = completed_item(&messages, "call_spawn_1");
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["receiverThreadIds"], json!([]));
    assert!(child_requests(&h, "Say A.").is_empty());
    let others: Vec<&Value> = messages
        .iter()
        .filter(|m| {
            m["params"]["threadId"]
                .as_str()
                .is_some_and(|t| t != parent)
        })
        .collect();
    assert!(others.is_empty(), "no child thread: {others:?}");
    assert!(
        listed(&mut h.client, json!({"parentThreadId": parent}))
            .await
            .is_empty()
    );

    task_says(&h, "Say B.", Reply::new().text("B"));
    let spawn = [spawn_call("call_spawn_2", "Say B.")];
    let messages = parent_turn(&mut h, &parent, "try again", spawn, "spawned").await;
    let child = spawned_and_told(&h, &messages, "call_spawn_2");
    completes(&mut h.client, &child).await;
}

/// `wait_agent` on a child whose reply is held: after its timeout (10 s, the least the tool
/// takes) no status and `timed_out`; the child runs on.
async fn wait_times_out(transport: Transport) {
    let mut h = gated_harness(transport, "").await;
    h.client.set_timeout(Duration::from_secs(40));
    let gate = Gate::new();
    let parent = h.start_thread().await;
    task_says(&h, "Work slowly.", Reply::new().gate(&gate).text("finally"));
    let spawn = [spawn_call("call_spawn_1", "Work slowly.")];
    let text = "spawn a slow worker";
    let messages = parent_turn(&mut h, &parent, text, spawn, "spawned").await;
    let child = spawned(&messages, "call_spawn_1");
    wait_gate(&gate).await;

    let args = json!({"targets": [child], "timeout_ms": 10000});
    let wait = ("call_wait_1", "wait_agent", args);
    let (messages, output) = v1_step(&mut h, &parent, "wait for it", wait, "still working").await;
    assert_eq!(output, json!({"status": {}, "timed_out": true}));
    let wait = completed_item(&messages, "call_wait_1");
    assert_eq!(
        (&wait["tool"], &wait["status"]),
        (&json!("wait"), &json!("completed"))
    );
    assert_eq!(wait["agentsStates"], json!({}));
    assert!(
        !h.client
            .log()
            .iter()
            .any(|m| m["method"] == "turn/completed" && m["params"]["threadId"] == child.as_str()),
        "the child still runs"
    );
    gate.release();
    completes(&mut h.client, &child).await;
}

/// Twenty sub-agents spawned by one reply finish together: every turn completes, every spawn
/// item completes, every item started is completed, and one wait sees all twenty.
async fn twenty_children_at_once(transport: Transport) {
    const N: usize = 20;
    let mut h = harness(transport, "[agents]\nmax_threads = 20\n").await;
    let parent = h.start_thread().await;
    let tasks: Vec<String> = (1..=N).map(|n| format!("Task number {n:02}.")).collect();
    let spawn = [spawn_calls(&tasks, |n| format!("call_spawn_{n:02}"))];
    for (n, task) in tasks.iter().enumerate() {
        task_says(&h, task, Reply::new().text(format!("done {n:02}")));
    }
    let text = "spawn twenty workers";
    let messages = parent_turn(&mut h, &parent, text, spawn, "all spawned").await;
    let children: Vec<String> = (0..N)
        .map(|n| spawned_and_told(&h, &messages, &format!("call_spawn_{n:02}")))
        .collect();
    assert_eq!(children.iter().collect::<BTreeSet<_>>().len(), N);
    let mut expected = serde_json::Map::new();
    for (n, child) in children.iter().enumerate() {
        completes(&mut h.client, child).await;
        expected.insert(child.clone(), json!({"completed": format!("done {n:02}")}));
    }

    let wait = ("call_wait_1", "wait_agent", json!({"targets": children}));
    let (messages, output) = v1_step(&mut h, &parent, "wait for them", wait, "all done").await;
    assert_eq!(
        completed_item(&messages, "call_wait_1")["status"],
        "completed"
    );
    assert_eq!(output, json!({"status": expected, "timed_out": false}));

    let mut open: BTreeMap<(String, String), usize> = BTreeMap::new();
    for message in h.client.log() {
        let key = (
            message["params"]["threadId"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            message["params"]["item"]["id"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        );
        match message["method"].as_str() {
            Some("item/started") => *open.entry(key).or_default() += 1,
            Some("item/completed") => {
                if let Some(count) = open.get_mut(&key) {
                    *count -= 1;
                }
            }
            _ => {}
        }
    }
    open.retain(|_, count| *count > 0);
    assert!(open.is_empty(), "started and never completed: {open:?}");
    let started = h
        .client
        .log()
        .iter()
        .filter(|m| m["method"] == "item/started")
        .count();
    // Per child its task and its answer; per parent turn its message, its calls, its answer.
    assert_eq!(started, N * 2 + (1 + N + 1) + (1 + 1 + 1));
}

on_both_transports!(
    thread_cap_and_a_closed_slot,
    depth_limit_by_default,
    depth_two_grandchild,
    a_failed_spawn_gives_its_slot_back,
    wait_times_out,
    twenty_children_at_once,
);

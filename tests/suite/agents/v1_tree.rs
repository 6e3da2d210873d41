//! The v1 tree over time, as the reference's `collab_v1_spawn` and `collab_v1_interrupt`
//! scenarios: a forked child's history, interrupting a child (`send_input {interrupt}`) and
//! the parent (`turn/interrupt` during a wait, which leaves the child running), the tree
//! after a daemon restart, `thread/list`'s source filters, and the tree closed with its root
//! (archived, or unloaded as idle).

use serde_json::{Value, json};
use weft_mock_model::{Gate, MockModel, Reply, WireApi};
use weft_test_support::{Client, Daemon, TestHome, Transport, mock_model_config};

use super::{
    Harness, child_requests, completed_item, completes, experimental_init, gated_harness, harness,
    held_child, input_types, is_status, listed, logged_or_wait, parent_output, parent_says,
    parent_turn, run_parent_turn, sorted, spawn_call, spawn_calls, spawn_one, spawned,
    spawned_and_told, str_at, task_says, turn_completed_of, v1_call, v1_calls, v1_step,
};
use crate::requests::Requests;
use crate::turns::{assistant_texts, read_through, user_texts, wait_gate};

/// The ids `thread/loaded/list` answers, sorted.
async fn loaded(client: &mut Client) -> Vec<String> {
    listed(client, "thread/loaded/list", json!({})).await
}

/// A parent thread and its child that was told "Reply with PONG." and has answered PONG.
async fn parent_and_pong_child(h: &mut Harness) -> (String, String) {
    let parent = h.start_thread().await;
    let pong = Reply::new().text("PONG");
    let child = spawn_one(h, &parent, "Reply with PONG.", pong).await;
    completes(&mut h.client, &child).await;
    (parent, child)
}

/// A `thread/status/changed {notLoaded}` of `thread`, received or still to come.
async fn not_loaded(client: &mut Client, thread: &str) -> Value {
    logged_or_wait(client, &format!("{thread} notLoaded"), |m| {
        is_status(m, thread, "notLoaded")
    })
    .await
}

/// The text of an input item (a message's text parts joined).
fn text_of(item: &Value) -> String {
    item["content"]
        .as_array()
        .map(|parts| parts.iter().filter_map(|p| p["text"].as_str()).collect())
        .unwrap_or_default()
}

/// `fork_context: true`: the child starts from the parent's messages, without its tool calls
/// and their outputs, and its task comes last; a fresh child has none of the parent's text.
async fn fork_context(transport: Transport) {
    let mut h = harness(transport, "").await;
    let parent = h.start_thread().await;
    let calls = [
        (
            "call_fork".to_string(),
            "spawn_agent",
            json!({"message": "Forked task.", "fork_context": true}),
        ),
        (
            "call_fresh".to_string(),
            "spawn_agent",
            json!({"message": "Fresh task."}),
        ),
    ];
    task_says(&h, "Forked task.", Reply::new().text("forked done"));
    task_says(&h, "Fresh task.", Reply::new().text("fresh done"));
    let said = "The secret word is BANANA. Spawn two workers.";
    let messages = parent_turn(&mut h, &parent, said, [v1_calls(&calls)], "spawned").await;
    for child in [
        spawned(&messages, "call_fork"),
        spawned(&messages, "call_fresh"),
    ] {
        completes(&mut h.client, &child).await;
    }

    let forked = &child_requests(&h, "Forked task.")[0];
    assert!(
        user_texts(forked).contains(&said.to_string()),
        "{:?}",
        forked.input()
    );
    let types = input_types(forked);
    assert!(
        !types
            .iter()
            .any(|t| t == "function_call" || t == "function_call_output"),
        "{types:?}"
    );
    let last = forked.input().last().unwrap();
    assert_eq!(
        (&last["type"], &last["role"]),
        (&json!("message"), &json!("user"))
    );
    assert_eq!(text_of(last), "Forked task.");

    let fresh = &child_requests(&h, "Fresh task.")[0];
    assert!(
        !fresh
            .input()
            .iter()
            .any(|item| item.to_string().contains("BANANA")),
        "{:?}",
        fresh.input()
    );
    assert_eq!(text_of(fresh.input().last().unwrap()), "Fresh task.");
}

/// `send_input {interrupt: true}` to a child whose reply is held: its turn ends
/// `interrupted`, and its next request ends with the interruption marker and the new input.
async fn send_input_interrupts_the_child(transport: Transport) {
    let mut h = gated_harness(transport, "").await;
    let parent = h.start_thread().await;
    let (gate, child) = held_child(&mut h, &parent, "slow result").await;
    let started = logged_or_wait(&mut h.client, "the child's turn/started", |m| {
        m["method"] == "turn/started" && m["params"]["threadId"] == child.as_str()
    })
    .await;
    let first_turn = str_at(&started, "/params/turn/id");

    let args = json!({"target": child, "interrupt": true, "message": "Stop and reply STOPPED."});
    task_says(&h, "Stop and reply STOPPED.", Reply::new().text("STOPPED"));
    let send = [v1_call("call_send_int", "send_input", args)];
    let messages = parent_turn(&mut h, &parent, "stop the worker", send, "interrupted it").await;
    let output = parent_output(&h, "call_send_int");
    assert!(
        output["submission_id"]
            .as_str()
            .is_some_and(|id| !id.is_empty()),
        "{output}"
    );
    let send = completed_item(&messages, "call_send_int");
    assert_eq!(send["status"], "completed");
    assert_eq!(
        send["agentsStates"],
        json!({ child.clone(): {"status": "running", "message": null} })
    );
    let interrupted = turn_completed_of(&mut h.client, &child).await;
    assert_eq!(interrupted["params"]["turn"]["id"], first_turn.as_str());
    assert_eq!(interrupted["params"]["turn"]["status"], "interrupted");
    let next = next_turn_completed(&mut h.client, &child, &first_turn).await;
    assert_eq!(next["params"]["turn"]["status"], "completed");

    let request = &child_requests(&h, "Stop and reply STOPPED.")[0];
    let input = request.input();
    let [.., marker, message] = input else {
        panic!("a short request: {input:?}");
    };
    assert_eq!(marker["role"], "user");
    assert!(text_of(marker).starts_with("<turn_aborted>"), "{marker}");
    assert_eq!(message["role"], "user");
    assert_eq!(text_of(message), "Stop and reply STOPPED.");
    gate.release();
}

/// `turn/interrupt` of the parent during a `wait_agent`: `{}`, the parent's turn ends
/// `interrupted`, the child is not interrupted, and the parent's next request has the wait's
/// output.
async fn parent_interrupt_during_wait(transport: Transport) {
    let mut h = gated_harness(transport, "").await;
    let parent = h.start_thread().await;
    let (gate, child) = held_child(&mut h, &parent, "slow result").await;

    parent_says(
        &h,
        v1_call("call_wait_2", "wait_agent", json!({"targets": [child]})),
    );
    let id = h
        .client
        .send_request(
            "turn/start",
            json!({"threadId": parent, "input": [{"type": "text", "text": "wait for it"}]}),
        )
        .await;
    let turn = str_at(&h.client.response_to(&id).await.unwrap(), "/turn/id");
    logged_or_wait(&mut h.client, "the wait's item/started", |m| {
        m["method"] == "item/started" && m["params"]["item"]["id"] == "call_wait_2"
    })
    .await;
    let answer = h.client.interrupt(&parent, &turn).await.unwrap();
    assert_eq!(answer, json!({}));
    let done = logged_or_wait(&mut h.client, "the parent's turn/completed", |m| {
        m["method"] == "turn/completed" && m["params"]["turn"]["id"] == turn.as_str()
    })
    .await;
    assert_eq!(done["params"]["turn"]["status"], "interrupted");
    // The reference leaves the wait's item open; Weft's turn end completes every item it
    // started (as it stands: no agent state).
    let log = h.client.log();
    let wait = log
        .iter()
        .position(|m| m["method"] == "item/completed" && m["params"]["item"]["id"] == "call_wait_2")
        .expect("the turn's end completes the wait's item");
    let end = log.iter().position(|m| m == &done).unwrap();
    assert!(wait < end);
    assert_eq!(log[wait]["params"]["item"]["agentsStates"], json!({}));
    assert!(
        !log.iter()
            .any(|m| m["method"] == "turn/completed" && m["params"]["threadId"] == child.as_str()),
        "the child still runs"
    );

    gate.release();
    completes(&mut h.client, &child).await;
    parent_says(&h, Reply::new().text("The wait was aborted."));
    run_parent_turn(&mut h.client, &parent, "what happened?").await;
    let output = parent_output(&h, "call_wait_2");
    assert!(
        output
            .as_str()
            .is_some_and(|text| text.starts_with("aborted by user after ")),
        "{output}"
    );
}

/// Stop the daemon (SIGTERM) and start a new one on the same home, with a new client.
async fn restart(h: &mut Harness, transport: Transport) {
    h.daemon.sigterm();
    let status = h.daemon.wait_exit().await;
    assert!(status.success(), "the daemon exited with {status}");
    h.daemon = Daemon::builder(&h.home)
        .listen(transport.listen_url())
        .start()
        .await;
    h.client = h.daemon.client().await;
    h.client.initialize_with(experimental_init()).await;
}

/// `thread/resume` of `thread`, which must succeed.
async fn resume(h: &mut Harness, thread: &str) {
    let params = json!({"threadId": thread});
    h.client.request("thread/resume", params).await.unwrap();
}

/// The next `turn/completed` of `thread` other than that of `turn`, received or still to come.
async fn next_turn_completed(client: &mut Client, thread: &str, turn: &str) -> Value {
    logged_or_wait(
        client,
        &format!("{thread}'s turn/completed after {turn}"),
        |m| {
            m["method"] == "turn/completed"
                && m["params"]["threadId"] == thread
                && m["params"]["turn"]["id"] != turn
        },
    )
    .await
}

/// Resume `parent`, then one parent turn (`text`) whose model calls `wait_agent` on `child`
/// (`call_wait_1`) and then says `then`; the wait's output as the model got it.
async fn resumed_wait(h: &mut Harness, parent: &str, child: &str, text: &str, then: &str) -> Value {
    resume(h, parent).await;
    let wait = ("call_wait_1", "wait_agent", json!({"targets": [child]}));
    v1_step(h, parent, text, wait, then).await.1
}

/// After a restart the tree comes back cold: a wait reads the child's status from its
/// rollout, and `send_input` loads it again, with its history.
async fn the_tree_after_a_restart(transport: Transport) {
    let mut h = harness(transport, "").await;
    let (parent, child) = parent_and_pong_child(&mut h).await;

    restart(&mut h, transport).await;
    assert_eq!(
        resumed_wait(&mut h, &parent, &child, "how did it go?", "it said PONG").await,
        json!({"status": { child.clone(): {"completed": "PONG"} }, "timed_out": false})
    );
    let loaded_now = loaded(&mut h.client).await;
    assert_eq!(
        loaded_now,
        [parent.as_str()],
        "a wait does not load the child"
    );

    let args = json!({"target": child, "message": "Now reply with PING."});
    task_says(&h, "Now reply with PING.", Reply::new().text("PING"));
    let send = [v1_call("call_send_1", "send_input", args)];
    parent_turn(&mut h, &parent, "send more", send, "sent").await;
    assert!(parent_output(&h, "call_send_1")["submission_id"].is_string());
    completes(&mut h.client, &child).await;
    let request = &child_requests(&h, "Now reply with PING.")[0];
    let users = user_texts(request);
    assert!(users.contains(&"Reply with PONG.".to_string()), "{users:?}");
    assert_eq!(
        users.last().map(String::as_str),
        Some("Now reply with PING.")
    );
    assert_eq!(assistant_texts(request), ["PONG"]);
    assert_eq!(loaded(&mut h.client).await, sorted(vec![parent, child]));
}

/// A closed child stays closed after a restart: it takes no slot (with `max_threads = 1` a new
/// spawn succeeds), a wait reports it `shutdown`, and `resume_agent` opens it again.
async fn a_closed_child_stays_closed_after_a_restart(transport: Transport) {
    let mut h = harness(transport, "[agents]\nmax_threads = 1\n").await;
    let (parent, child) = parent_and_pong_child(&mut h).await;
    let close = ("call_close_1", "close_agent", json!({"target": child}));
    let (_, output) = v1_step(&mut h, &parent, "close it", close, "closed").await;
    assert_eq!(output, json!({"previous_status": {"completed": "PONG"}}));

    restart(&mut h, transport).await;
    resume(&mut h, &parent).await;
    task_says(&h, "Reply with PANG.", Reply::new().text("PANG"));
    let calls = [
        v1_call("call_wait_2", "wait_agent", json!({"targets": [child]})),
        spawn_call("call_spawn_2", "Reply with PANG."),
    ];
    let messages = parent_turn(&mut h, &parent, "after the restart", calls, "spawned").await;
    assert_eq!(
        parent_output(&h, "call_wait_2"),
        json!({"status": { child.clone(): "shutdown" }, "timed_out": false})
    );
    let second = spawned_and_told(&h, &messages, "call_spawn_2");
    assert_ne!(second, child);

    // The one slot is the new child's now: resuming the closed one is refused.
    let again = ("call_resume_1", "resume_agent", json!({"id": child}));
    let (_, output) = v1_step(&mut h, &parent, "resume the first", again, "refused").await;
    assert_eq!(
        output,
        json!("collab resume failed: agent thread limit reached")
    );
}

/// `thread/list`'s source filters list the children, unfiltered only roots;
/// `thread/loaded/list` has the live children.
async fn list_filters(transport: Transport) {
    let mut h = harness(transport, "").await;
    let parent = h.start_thread().await;
    let spawn = spawn_calls(&["Say A.", "Say B."], |n| format!("call_spawn_{n}"));
    task_says(&h, "Say A.", Reply::new().text("A"));
    task_says(&h, "Say B.", Reply::new().text("B"));
    let messages = parent_turn(&mut h, &parent, "spawn two workers", [spawn], "spawned").await;
    let children = sorted(vec![
        spawned(&messages, "call_spawn_0"),
        spawned(&messages, "call_spawn_1"),
    ]);
    for kinds in [json!(["subAgentThreadSpawn"]), json!(["subAgent"])] {
        let params = json!({"sourceKinds": kinds});
        assert_eq!(listed(&mut h.client, "thread/list", params).await, children);
    }
    let roots = listed(&mut h.client, "thread/list", json!({})).await;
    assert_eq!(roots, [parent.as_str()]);
    let mut all = children.clone();
    all.push(parent);
    assert_eq!(loaded(&mut h.client).await, sorted(all));
    for child in &children {
        turn_completed_of(&mut h.client, child).await;
    }
}

/// `thread/archive` of a root closes its tree: the root is `notLoaded` first, then an idle
/// child and a running one (its turn interrupted) are unloaded, each `notLoaded`, before the
/// answer.
async fn archiving_the_root_closes_its_tree(transport: Transport) {
    let mut h = gated_harness(transport, "").await;
    let gate = Gate::new();
    let parent = h.start_thread().await;
    let spawn = spawn_calls(&["Say A.", "Work slowly."], |n| {
        ["call_idle", "call_busy"][n].to_string()
    });
    task_says(&h, "Say A.", Reply::new().text("A"));
    task_says(
        &h,
        "Work slowly.",
        Reply::new().gate(&gate).text("slow result"),
    );
    let messages = parent_turn(&mut h, &parent, "spawn two workers", [spawn], "spawned").await;
    let (idle, busy) = (
        spawned(&messages, "call_idle"),
        spawned(&messages, "call_busy"),
    );
    turn_completed_of(&mut h.client, &idle).await;
    wait_gate(&gate).await;

    let id = h
        .client
        .send_request("thread/archive", json!({"threadId": parent}))
        .await;
    let messages = read_through(&mut h.client, |m| m["method"] == "thread/archived").await;
    let answer = messages.iter().position(|m| m["id"] == id).unwrap();
    let not_loaded = |thread: &str| {
        messages
            .iter()
            .position(|m| is_status(m, thread, "notLoaded"))
    };
    let root_gone = not_loaded(parent.as_str()).expect("the root's notLoaded");
    for child in [&idle, &busy] {
        let gone = not_loaded(child.as_str());
        assert!(
            gone.is_some_and(|at| root_gone < at && at < answer),
            "{child}: {messages:?}"
        );
    }
    let stopped = turn_completed_of(&mut h.client, &busy).await;
    assert_eq!(stopped["params"]["turn"]["status"], "interrupted");
    let loaded_now = loaded(&mut h.client).await;
    assert!(loaded_now.is_empty(), "{loaded_now:?}");
    gate.release();
}

/// A harness with `thread_idle_timeout_secs = 1` (a top-level key, before the provider).
async fn idle_harness(transport: Transport) -> Harness {
    let mock = MockModel::start().await.expect("start the mock model");
    let provider = mock_model_config(&mock.base_url(), "responses").replace(
        "stream_idle_timeout_ms = 10000",
        "stream_idle_timeout_ms = 60000",
    );
    let home = TestHome::with_config(&format!("thread_idle_timeout_secs = 1\n{provider}"));
    let mut daemon = Daemon::builder(&home)
        .listen(transport.listen_url())
        .start()
        .await;
    let mut client = daemon.client().await;
    client.initialize_with(experimental_init()).await;
    Harness {
        mock,
        home,
        daemon,
        client,
        wire_api: WireApi::Responses,
    }
}

/// An unsubscribed idle root is not unloaded while its child runs (a witness thread,
/// unsubscribed later and idle for less long, goes first); once the child is done the root
/// goes with its tree, and the tree's statuses are there when it comes back.
async fn an_idle_root_waits_for_its_running_child(transport: Transport) {
    let mut h = idle_harness(transport).await;
    let parent = h.start_thread().await;
    let (gate, child) = held_child(&mut h, &parent, "slow result").await;
    let witness = h.start_thread().await;
    for thread in [&parent, &witness] {
        let answer = h
            .client
            .request("thread/unsubscribe", json!({"threadId": thread}))
            .await
            .unwrap();
        assert_eq!(answer["status"], "unsubscribed");
    }
    logged_or_wait(&mut h.client, "the witness's thread/closed", |m| {
        m["method"] == "thread/closed" && m["params"]["threadId"] == witness.as_str()
    })
    .await;
    let tree = sorted(vec![parent.clone(), child.clone()]);
    assert_eq!(loaded(&mut h.client).await, tree);

    gate.release();
    completes(&mut h.client, &child).await;
    logged_or_wait(&mut h.client, "the root's thread/closed", |m| {
        m["method"] == "thread/closed" && m["params"]["threadId"] == parent.as_str()
    })
    .await;
    not_loaded(&mut h.client, &child).await;
    let loaded_now = loaded(&mut h.client).await;
    assert!(loaded_now.is_empty(), "{loaded_now:?}");

    assert_eq!(
        resumed_wait(&mut h, &parent, &child, "is it done?", "it is done").await,
        json!({"status": { child: {"completed": "slow result"} }, "timed_out": false})
    );
}

on_both_transports!(
    fork_context,
    send_input_interrupts_the_child,
    parent_interrupt_during_wait,
    the_tree_after_a_restart,
    a_closed_child_stays_closed_after_a_restart,
    list_filters,
    archiving_the_root_closes_its_tree,
    an_idle_root_waits_for_its_running_child,
);

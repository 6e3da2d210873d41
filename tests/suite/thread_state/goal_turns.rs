//! What stops or withholds goal pursuit (docs/protocol.md §7.26): an interrupt, a failed turn,
//! an automatic turn in which the model produced nothing, `[goals] max_continuation_turns`;
//! ephemeral threads and `[features] goals = false` (no goal tools, no continuation); a restart
//! and a resume (no continuation until a turn ends); and a user's `turn/start` while a
//! continuation runs, which steers it like any running turn.

use std::time::Duration;

use serde_json::{Value, json};
use weft_mock_model::{Gate, Reply, Script};
use weft_test_support::{Client, Recv, Transport};

use super::goal_pursuit::{
    GOAL_TOOLS, assert_no_user_message, goal_updates, last_user_text, read_turns, turn_id_of,
};
use super::{Tui, thread_param, through_answer};
use crate::modes::tool_names;
use crate::turns::read_through_turn_ending;
use crate::turns::{run_turn_on, str_at, text_input};

const QUIET: Duration = Duration::from_millis(300);

/// `thread/goal/set` with an active objective; returns once it is answered.
async fn set_goal(t: &mut Tui, thread: &str, objective: &str) {
    let id = t
        .client
        .send_request(
            "thread/goal/set",
            json!({"threadId": thread, "objective": objective}),
        )
        .await;
    let answered = through_answer(&mut t.client, &id).await;
    assert!(
        answered.last().unwrap().get("result").is_some(),
        "{answered:?}"
    );
}

/// Every message until none comes for a while.
async fn settle(client: &mut Client) -> Vec<Value> {
    let mut messages = Vec::new();
    while let Recv::Message(message) = client.recv(QUIET).await {
        messages.push(message);
    }
    messages
}

/// The last goal state a turn announced.
fn last_goal(turn: &[Value]) -> Value {
    goal_updates(turn)
        .last()
        .map(|update| update["goal"].clone())
        .unwrap_or_else(|| panic!("no goal update in {turn:?}"))
}

/// The `warning` notifications' messages.
fn warnings(turn: &[Value]) -> Vec<String> {
    turn.iter()
        .filter(|m| m["method"] == "warning")
        .map(|m| str_at(m, "/params/message"))
        .collect()
}

/// `turn/interrupt` on a continuation turn pauses the goal: announced with the turn's id, and
/// no further turn.
async fn an_interrupt_pauses_the_goal(transport: Transport) {
    let mut t = Tui::start(transport).await;
    let thread = t.thread().await;
    t.push(Reply::new().stall());
    set_goal(&mut t, &thread, "Refactor the module").await;
    let started = t.client.wait_for_notification("turn/started").await;
    let turn = str_at(&started, "/params/turn/id");
    t.mock
        .wait_for_requests(1, Duration::from_secs(10))
        .await
        .unwrap();
    let answer = t
        .ok(
            "turn/interrupt",
            json!({"threadId": thread, "turnId": turn}),
        )
        .await;
    assert_eq!(answer, json!({}));
    let messages = read_through_turn_ending(&mut t.client, "interrupted").await;
    // The set's own announcement (no turn id), then the turn's.
    let updates = goal_updates(&messages);
    assert_eq!(updates.len(), 2, "{messages:?}");
    assert_eq!(updates[0]["turnId"], Value::Null);
    assert_eq!(updates[1]["turnId"], turn.as_str());
    assert_eq!(updates[1]["goal"]["status"], "paused");
    t.client.expect_no_message_within(QUIET).await;
    assert_eq!(t.mock.requests().len(), 1);
}

/// A failed turn pauses the goal; so does an automatic turn in which the model says and calls
/// nothing (with a `warning`).
async fn a_failure_or_an_empty_turn_pauses_the_goal(transport: Transport) {
    let mut t = Tui::start(transport).await;
    let failing = t.thread().await;
    t.mock.push(Script::api_error(
        400,
        "invalid_request_error",
        "no such model",
    ));
    set_goal(&mut t, &failing, "Fix the build").await;
    let turn = read_turns(&mut t.client, 1).await.remove(0);
    assert_eq!(turn.last().unwrap()["params"]["turn"]["status"], "failed");
    assert_eq!(last_goal(&turn)["status"], "paused");
    t.client.expect_no_message_within(QUIET).await;

    let silent = t.thread().await;
    t.push(Reply::new());
    set_goal(&mut t, &silent, "Fix the docs").await;
    let turn = read_turns(&mut t.client, 1).await.remove(0);
    assert_eq!(
        turn.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );
    assert_eq!(last_goal(&turn)["status"], "paused");
    let warned = warnings(&turn);
    assert!(
        warned.iter().any(|w| w.contains("produced nothing")),
        "{warned:?}"
    );
    t.client.expect_no_message_within(QUIET).await;
    assert_eq!(t.mock.requests().len(), 2);
}

/// `[goals] max_continuation_turns = 2`: two automatic turns, then the goal is paused with a
/// warning. Setting it active again is the user's request: two more.
async fn the_continuation_limit_pauses_the_goal(transport: Transport) {
    let mut t = Tui::start_with(transport, "[goals]\nmax_continuation_turns = 2\n").await;
    let thread = t.thread().await;
    for step in 1..=4 {
        t.push(Reply::new().text(format!("step {step}")));
    }
    set_goal(&mut t, &thread, "Translate the site").await;
    let turns = read_turns(&mut t.client, 2).await;
    assert_eq!(last_goal(&turns[0])["status"], "active");
    assert_eq!(last_goal(&turns[1])["status"], "paused");
    let warned = warnings(&turns[1]);
    assert!(
        warned
            .iter()
            .any(|w| w.contains("2 automatic continuation turns")),
        "{warned:?}"
    );
    t.client.expect_no_message_within(QUIET).await;
    assert_eq!(t.mock.requests().len(), 2);

    t.ok(
        "thread/goal/set",
        json!({"threadId": thread, "status": "active"}),
    )
    .await;
    let turns = read_turns(&mut t.client, 2).await;
    assert_eq!(last_goal(&turns[1])["status"], "paused");
    t.client.expect_no_message_within(QUIET).await;
    assert_eq!(t.mock.requests().len(), 4);
}

/// An ephemeral thread gets no goal tools (a call is refused); with `[features] goals = false`
/// no thread gets them, and an active goal starts no turn.
async fn ephemeral_threads_and_the_feature_switch(transport: Transport) {
    let mut t = Tui::start(transport).await;
    let ephemeral = t
        .thread_with(json!({"ephemeral": true, "approvalPolicy": "never"}))
        .await;
    t.push(Reply::new().function_call("call_get", "get_goal", "{}"));
    t.push(Reply::new().text("No goal here."));
    run_turn_on(&mut t.client, &ephemeral, "what is the goal?").await;
    let requests = t.mock.requests();
    let names = tool_names(&requests[0]);
    assert!(names.contains(&"update_plan".to_string()), "{names:?}");
    assert!(
        !names.iter().any(|n| GOAL_TOOLS.contains(&n.as_str())),
        "{names:?}"
    );
    assert_eq!(
        requests[1].tool_output("call_get").unwrap(),
        "Goal tools require a persistent thread."
    );

    let mut t = Tui::start_with(transport, "[features]\ngoals = false\n").await;
    let thread = t.thread().await;
    t.push(Reply::new().text("Hi."));
    run_turn_on(&mut t.client, &thread, "hello").await;
    let names = tool_names(&t.mock.requests()[0]);
    assert!(
        !names.iter().any(|n| GOAL_TOOLS.contains(&n.as_str())),
        "{names:?}"
    );
    let id = t
        .client
        .send_request(
            "thread/goal/set",
            json!({"threadId": thread, "objective": "Stay stored"}),
        )
        .await;
    through_answer(&mut t.client, &id).await;
    let updated = t.client.wait_for_notification("thread/goal/updated").await;
    assert_eq!(updated["params"]["goal"]["status"], "active");
    t.client.expect_no_message_within(QUIET).await;
    assert_eq!(t.mock.requests().len(), 1, "goals are stored, not pursued");
}

/// After a restart, neither activating the goal of an unloaded thread nor resuming it starts a
/// turn; the end of the next user turn does.
async fn a_resumed_goal_waits_for_a_turn_end(transport: Transport) {
    let mut t = Tui::start(transport).await;
    let thread = t.thread().await;
    t.ok(
        "thread/goal/set",
        json!({"threadId": thread, "objective": "Migrate the DB", "status": "paused"}),
    )
    .await;
    t.restart().await;
    t.ok(
        "thread/goal/set",
        json!({"threadId": thread, "status": "active"}),
    )
    .await;
    t.ok("thread/resume", thread_param(&thread)).await;
    let after = settle(&mut t.client).await;
    let told = goal_updates(&after);
    assert_eq!(told.len(), 2, "the set's, then the resume's: {after:?}");
    assert!(told.iter().all(|u| u["goal"]["status"] == "active"));
    assert!(
        !after.iter().any(|m| m["method"] == "turn/started"),
        "{after:?}"
    );
    assert!(t.mock.requests().is_empty());

    t.push(Reply::new().text("Looking at the schema."));
    t.push(Reply::new().function_call("call_done", "update_goal", r#"{"status":"complete"}"#));
    t.push(Reply::new().text("Migrated."));
    let user = run_turn_on(&mut t.client, &thread, "go on").await;
    assert_eq!(goal_updates(&user.messages).len(), 1);
    let continuation = read_turns(&mut t.client, 1).await.remove(0);
    assert_no_user_message(&continuation);
    assert_eq!(last_goal(&continuation)["status"], "complete");
    t.client.expect_no_message_within(QUIET).await;
}

/// A `turn/start` while a continuation runs steers it: the same turn, with the user's message.
async fn a_user_turn_steers_a_running_continuation(transport: Transport) {
    let mut t = Tui::start(transport).await;
    let thread = t.thread().await;
    let gate = Gate::new();
    t.push(Reply::new().text("Working").gate(&gate).text(" on it."));
    t.push(Reply::new().function_call("call_done", "update_goal", r#"{"status":"complete"}"#));
    t.push(Reply::new().text("Complete, as you asked."));
    set_goal(&mut t, &thread, "Clean the repo").await;
    gate.wait_reached(Duration::from_secs(10)).await.unwrap();
    let steered = t
        .ok(
            "turn/start",
            json!({"threadId": thread, "input": [text_input("call it done")]}),
        )
        .await;
    gate.release();
    let turn = read_turns(&mut t.client, 1).await.remove(0);
    assert_eq!(steered["turn"]["id"], turn_id_of(&turn).as_str());
    assert!(
        turn.iter().any(
            |m| m["method"] == "item/completed" && m["params"]["item"]["type"] == "userMessage"
        ),
        "{turn:?}"
    );
    assert_eq!(last_goal(&turn)["status"], "complete");
    t.client.expect_no_message_within(QUIET).await;
    let requests = t.mock.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(last_user_text(&requests[1]), "call it done");
}

on_both_transports!(
    an_interrupt_pauses_the_goal,
    a_failure_or_an_empty_turn_pauses_the_goal,
    the_continuation_limit_pauses_the_goal,
    ephemeral_threads_and_the_feature_switch,
    a_resumed_goal_waits_for_a_turn_end,
    a_user_turn_steers_a_running_continuation
);

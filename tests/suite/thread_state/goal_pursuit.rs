//! Pursuing a goal (docs/protocol.md §7.26): the goal tools a persistent thread offers, a goal
//! the model creates and completes, continuation turns started by `thread/goal/set` on an idle
//! thread with the turns' usage counted until the budget stops them, and a new objective told
//! to the running turn. The mock model's recorded requests show what the model saw.

use std::time::Duration;

use serde_json::{Value, json};
use weft_mock_model::{Gate, RecordedRequest, Reply, Usage};
use weft_test_support::{Client, Transport};

use super::{Tui, through_answer};
use crate::turns::{label, run_turn_on};

/// What a goal context message (the continuation, a new objective) starts with.
pub const GOAL_CONTEXT: &str = "<codex_internal_context source=\"goal\">";

/// The goal tools' names.
pub const GOAL_TOOLS: [&str; 3] = ["get_goal", "create_goal", "update_goal"];

/// Read `n` turns: every message through each `turn/completed`, one list per turn.
pub async fn read_turns(client: &mut Client, n: usize) -> Vec<Vec<Value>> {
    let mut turns = Vec::new();
    for _ in 0..n {
        turns.push(crate::turns::read_through_turn_completed(client).await);
    }
    turns
}

/// The `thread/goal/updated` params among `messages`.
pub fn goal_updates(messages: &[Value]) -> Vec<&Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "thread/goal/updated")
        .map(|m| &m["params"])
        .collect()
}

/// The id of the turn these messages belong to (from `turn/completed`).
pub fn turn_id_of(messages: &[Value]) -> String {
    messages.last().unwrap()["params"]["turn"]["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The text of the last input of a request, which must be a user message.
pub fn last_user_text(request: &RecordedRequest) -> String {
    let last = request.input().last().expect("the request has input");
    assert_eq!(
        (&last["type"], &last["role"]),
        (&json!("message"), &json!("user")),
        "{last}"
    );
    last["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|part| part["text"].as_str())
        .collect()
}

/// The goal context message that ends a request (its last input, a user message): it starts
/// with [`GOAL_CONTEXT`] and names `objective`.
pub fn goal_context(request: &RecordedRequest, objective: &str) -> String {
    let text = last_user_text(request);
    assert!(text.starts_with(GOAL_CONTEXT), "{text}");
    let named = format!("<objective>\n{objective}\n</objective>");
    assert!(text.contains(&named), "{named:?} in {text}");
    text
}

/// No `userMessage` item in the turn: it started by itself.
pub fn assert_no_user_message(messages: &[Value]) {
    assert!(
        !messages
            .iter()
            .any(|m| m["method"] == "item/started" && m["params"]["item"]["type"] == "userMessage"),
        "a continuation turn has no user message: {messages:?}"
    );
}

/// A spec without descriptions.
fn shape(spec: &Value) -> Value {
    match spec {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(key, _)| key.as_str() != "description")
                .map(|(key, value)| (key.clone(), shape(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        other => other.clone(),
    }
}

/// The model creates a goal in a user turn (`thread/goal/updated` with that turn's id), the
/// thread continues on its own, and the model completes the goal: no further turn.
async fn the_model_creates_and_completes_a_goal(transport: Transport) {
    let mut t = Tui::start(transport).await;
    let thread = t.thread().await;
    let create = r#"{"objective":"Port the parser","token_budget":1000}"#;
    t.push(
        Reply::new()
            .function_call("call_create", "create_goal", create)
            .usage(Usage::new(90, 10)),
    );
    t.push(
        Reply::new()
            .text("The goal is set.")
            .usage(Usage::new(100, 10)),
    );
    t.push(
        Reply::new()
            .function_call("call_done", "update_goal", r#"{"status":"complete"}"#)
            .usage(Usage::new(100, 20)),
    );
    t.push(Reply::new().text("Done: 230 of 1000 tokens."));
    let first = run_turn_on(&mut t.client, &thread, "make porting the parser a goal").await;

    let requests = t
        .mock
        .wait_for_requests(1, Duration::from_secs(10))
        .await
        .unwrap();
    let tools: Vec<&Value> = requests[0]
        .tools()
        .iter()
        .filter(|tool| GOAL_TOOLS.contains(&tool["name"].as_str().unwrap_or_default()))
        .collect();
    let object = |properties: Value, required: Value| {
        json!({"type": "object", "properties": properties, "required": required,
               "additionalProperties": false})
    };
    assert_eq!(
        tools.iter().map(|tool| shape(tool)).collect::<Vec<_>>(),
        [
            json!({"type": "function", "name": "get_goal", "strict": false,
                   "parameters": object(json!({}), json!([]))}),
            json!({"type": "function", "name": "create_goal", "strict": false,
                   "parameters": object(
                       json!({"objective": {"type": "string"},
                              "token_budget": {"type": "integer"}}),
                       json!(["objective"]))}),
            json!({"type": "function", "name": "update_goal", "strict": false,
                   "parameters": object(
                       json!({"status": {"type": "string",
                                         "enum": ["complete", "blocked", "paused"]}}),
                       json!(["status"]))}),
        ]
    );
    // After the other built-in tools.
    let names: Vec<&str> = requests[0]
        .tools()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(&names[names.len() - 3..], GOAL_TOOLS);

    // The creation, then the turn's accounting (only what followed the creation: 110).
    let updates = goal_updates(&first.messages);
    assert_eq!(updates.len(), 2, "{:?}", first.labels());
    for update in &updates {
        assert_eq!(update["threadId"], thread.as_str());
        assert_eq!(update["turnId"], first.turn_id.as_str());
        assert_eq!(update["goal"]["status"], "active");
        assert_eq!(update["goal"]["objective"], "Port the parser");
        assert_eq!(update["goal"]["tokenBudget"], 1000);
    }
    assert_eq!(updates[0]["goal"]["tokensUsed"], 0);
    assert_eq!(updates[1]["goal"]["tokensUsed"], 110);
    let labels = first.labels();
    let usage = labels
        .iter()
        .rposition(|l| l == "thread/tokenUsage/updated")
        .unwrap();
    assert_eq!(labels[usage + 1], "thread/goal/updated", "{labels:?}");

    // The continuation turn: no user message; the model completes the goal.
    let continuation = read_turns(&mut t.client, 1).await.remove(0);
    assert_no_user_message(&continuation);
    let continuation_id = turn_id_of(&continuation);
    assert_ne!(continuation_id, first.turn_id);
    let updates = goal_updates(&continuation);
    assert_eq!(
        updates.len(),
        1,
        "nothing to count once complete: {updates:?}"
    );
    assert_eq!(updates[0]["turnId"], continuation_id.as_str());
    assert_eq!(updates[0]["goal"]["status"], "complete");
    assert_eq!(updates[0]["goal"]["tokensUsed"], 230);
    t.client
        .expect_no_message_within(Duration::from_millis(300))
        .await;
    let requests = t.mock.requests();
    assert_eq!(requests.len(), 4, "no turn after the goal is complete");

    let created: Value = serde_json::from_str(
        requests[1]
            .tool_output("call_create")
            .unwrap()
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(created["goal"]["objective"], "Port the parser");
    assert_eq!(created["goal"]["threadId"], thread.as_str());
    assert_eq!(created["remainingTokens"], 1000);
    let prompt = goal_context(&requests[2], "Port the parser");
    assert!(prompt.contains("- Tokens used: 110\n"), "{prompt}");
    assert!(prompt.contains("- Tokens remaining: 890\n"), "{prompt}");
    let done: Value = serde_json::from_str(
        requests[3]
            .tool_output("call_done")
            .unwrap()
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(done["goal"]["status"], "complete");
    assert_eq!(done["remainingTokens"], 770);
    let report = done["completionBudgetReport"].as_str().unwrap();
    assert!(report.contains("230 of its 1000-token budget"), "{report}");
}

/// `thread/goal/set` on an idle thread starts continuation turns; each turn's 110 tokens are
/// counted (after `thread/tokenUsage/updated`, before `turn/completed`) until the tenth
/// reaches the budget of 1000: `budgetLimited`, and no eleventh turn.
async fn set_continues_until_the_budget_is_spent(transport: Transport) {
    let mut t = Tui::start(transport).await;
    let thread = t.thread().await;
    for step in 1..=10 {
        t.push(
            Reply::new()
                .text(format!("step {step}"))
                .usage(Usage::new(100, 10)),
        );
    }
    let id = t
        .client
        .send_request(
            "thread/goal/set",
            json!({"threadId": thread, "objective": "Ship the release", "tokenBudget": 1000}),
        )
        .await;
    let answered = through_answer(&mut t.client, &id).await;
    assert_eq!(
        answered.last().unwrap()["result"]["goal"]["status"],
        "active"
    );
    let turns = read_turns(&mut t.client, 10).await;
    // The set's own announcement comes first, then the turn.
    let first = &goal_updates(&turns[0])[0];
    assert_eq!(first["turnId"], Value::Null);
    for (index, turn) in turns.iter().enumerate() {
        assert_no_user_message(turn);
        let labels: Vec<String> = turn.iter().map(label).collect();
        let usage = labels
            .iter()
            .rposition(|l| l == "thread/tokenUsage/updated")
            .expect("usage reported");
        assert_eq!(labels[usage + 1], "thread/goal/updated", "{labels:?}");
        let update = &turn[usage + 1]["params"];
        assert_eq!(update["turnId"], turn_id_of(turn).as_str());
        let used = 110 * (index as i64 + 1);
        assert_eq!(update["goal"]["tokensUsed"], used, "{labels:?}");
        let status = if index == 9 {
            "budgetLimited"
        } else {
            "active"
        };
        assert_eq!(update["goal"]["status"], status);
    }
    t.client
        .expect_no_message_within(Duration::from_millis(300))
        .await;
    let requests = t.mock.requests();
    assert_eq!(requests.len(), 10);
    let prompt = goal_context(&requests[0], "Ship the release");
    for line in [
        "- Tokens used: 0\n",
        "- Token budget: 1000\n",
        "- Tokens remaining: 1000\n",
    ] {
        assert!(prompt.contains(line), "{line:?} in {prompt}");
    }
    let last = last_user_text(&requests[9]);
    assert!(last.contains("- Tokens used: 990\n"), "{last}");
    assert!(last.contains("- Tokens remaining: 10\n"), "{last}");
    let stored = t.ok("thread/goal/get", json!({"threadId": thread})).await;
    assert_eq!(stored["goal"]["status"], "budgetLimited");
    assert_eq!(stored["goal"]["tokensUsed"], 1100);
}

/// A client changes the objective while a continuation turn runs: the model is told at its
/// next step, and the next continuation carries the new objective.
async fn a_new_objective_reaches_the_running_turn(transport: Transport) {
    let mut t = Tui::start(transport).await;
    let thread = t.thread().await;
    let gate = Gate::new();
    t.push(
        Reply::new()
            .gate(&gate)
            .function_call("call_get", "get_goal", "{}"),
    );
    t.push(Reply::new().text("Switching to the new objective."));
    t.push(Reply::new().function_call("call_pause", "update_goal", r#"{"status":"paused"}"#));
    t.push(Reply::new().text("Paused."));
    t.ok(
        "thread/goal/set",
        json!({"threadId": thread, "objective": "Write the manual"}),
    )
    .await;
    gate.wait_reached(Duration::from_secs(10)).await.unwrap();
    t.ok(
        "thread/goal/set",
        json!({"threadId": thread, "objective": "Write the tutorial"}),
    )
    .await;
    gate.release();
    let turns = read_turns(&mut t.client, 2).await;
    let requests = t.mock.requests();
    assert_eq!(requests.len(), 4);
    goal_context(&requests[1], "Write the tutorial");
    // The step's own tool output comes before the note.
    let input = requests[1].input();
    assert_eq!(input[input.len() - 2]["type"], "function_call_output");
    let next = last_user_text(&requests[2]);
    assert!(next.contains("Write the tutorial") && !next.contains("Write the manual"));
    // The model paused at the user's request: the pursuit stops.
    let paused = goal_updates(&turns[1]);
    assert_eq!(paused.last().unwrap()["goal"]["status"], "paused");
    t.client
        .expect_no_message_within(Duration::from_millis(300))
        .await;
    assert_eq!(t.mock.requests().len(), 4);
}

on_both_transports!(
    the_model_creates_and_completes_a_goal,
    set_continues_until_the_budget_is_spent,
    a_new_objective_reaches_the_running_turn
);

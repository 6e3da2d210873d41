//! Plan mode's proposed plan (docs/protocol.md §7.25): a `<proposed_plan>` block the model
//! streams becomes a `plan` item (`item/started`, `item/plan/delta`, `item/completed`, id
//! `<turn id>-plan`) and the text around it the agent message, without the tags; a message
//! that is only a plan shows no agent message; a block left open closes at the message's end;
//! outside Plan mode the tags stay text. The items are stored: `thread/read`, and
//! `thread/resume` after a restart, show them as the turn did; the model reads its message as
//! it wrote it.

use serde_json::{Value, json};
use weft_mock_model::{Gate, Reply, WireApi};
use weft_test_support::{Daemon, Transport};

use super::{Modes, experimental_init, in_mode};
use crate::turns::{Harness, Setup, str_at, wait_gate};

/// The item events and deltas of a turn's messages, as `(method, item type or "", id, text)`.
fn item_flow(messages: &[Value]) -> Vec<(String, String, String, String)> {
    messages
        .iter()
        .filter_map(|m| {
            let method = m["method"].as_str()?;
            let params = &m["params"];
            match method {
                "item/started" | "item/completed" => {
                    let item = &params["item"];
                    let kind = item["type"].as_str().unwrap_or_default();
                    if kind == "userMessage" {
                        return None;
                    }
                    Some((
                        method.to_string(),
                        kind.to_string(),
                        item["id"].as_str().unwrap_or_default().to_string(),
                        item["text"].as_str().unwrap_or_default().to_string(),
                    ))
                }
                "item/plan/delta" | "item/agentMessage/delta" => Some((
                    method.to_string(),
                    String::new(),
                    params["itemId"].as_str().unwrap_or_default().to_string(),
                    params["delta"].as_str().unwrap_or_default().to_string(),
                )),
                _ => None,
            }
        })
        .collect()
}

/// Consecutive deltas of one item merged (a connection may coalesce them).
fn merged(flow: Vec<(String, String, String, String)>) -> Vec<(String, String, String, String)> {
    let mut out: Vec<(String, String, String, String)> = Vec::new();
    for step in flow {
        if let Some(last) = out.last_mut()
            && last.0 == step.0
            && last.2 == step.2
            && step.0.ends_with("/delta")
        {
            last.3.push_str(&step.3);
            continue;
        }
        out.push(step);
    }
    out
}

fn step(method: &str, kind: &str, id: &str, text: &str) -> (String, String, String, String) {
    (method.into(), kind.into(), id.into(), text.into())
}

/// The turn id of a run's messages.
fn turn_id(messages: &[Value]) -> String {
    let completed = messages.last().expect("turn/completed");
    str_at(completed, "/params/turn/id")
}

/// The items of a stored turn, as `(type, id, text)`, the user's message left out.
fn stored(turn: &Value) -> Vec<(String, String, String)> {
    turn["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|item| item["type"] != "userMessage")
        .map(|item| {
            (
                item["type"].as_str().unwrap_or_default().to_string(),
                item["id"].as_str().unwrap_or_default().to_string(),
                item["text"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

async fn a_proposed_plan_becomes_a_plan_item(transport: Transport) {
    let mut m = Modes::start(transport).await;
    let thread = m.plain_thread().await;
    m.push(Reply::new().text_deltas([
        "Here is my plan.\n<prop",
        "osed_plan>\n# Plan\n- step 1\n",
        "- step 2\n</proposed_",
        "plan>\nShall I go ahead?",
    ]));
    let messages = m.turn(&thread, "plan it", in_mode("plan")).await;
    assert_eq!(
        messages.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );
    let turn = turn_id(&messages);
    let plan_id = format!("{turn}-plan");
    let flow = merged(item_flow(&messages));
    let msg = flow
        .iter()
        .find(|s| s.1 == "agentMessage")
        .map(|s| s.2.clone())
        .expect("an agent message");
    let plan = "# Plan\n- step 1\n- step 2\n";
    assert_eq!(
        flow,
        vec![
            step("item/started", "agentMessage", &msg, ""),
            step("item/agentMessage/delta", "", &msg, "Here is my plan.\n"),
            step("item/started", "plan", &plan_id, ""),
            step("item/plan/delta", "", &plan_id, plan),
            step("item/agentMessage/delta", "", &msg, "Shall I go ahead?"),
            step("item/completed", "plan", &plan_id, plan),
            step(
                "item/completed",
                "agentMessage",
                &msg,
                "Here is my plan.\nShall I go ahead?"
            ),
        ],
        "{messages:#?}"
    );
    // thread/read's items, in completion order.
    let expected = vec![
        ("plan".to_string(), plan_id.clone(), plan.to_string()),
        (
            "agentMessage".to_string(),
            msg.clone(),
            "Here is my plan.\nShall I go ahead?".to_string(),
        ),
    ];
    let read =
        m.h.client
            .request_ok(
                "thread/read",
                json!({"threadId": thread, "includeTurns": true}),
            )
            .await;
    assert_eq!(stored(&read["thread"]["turns"][0]), expected, "{read}");

    // The model reads its own message as it wrote it, tags and all.
    m.push(Reply::new().text("Done."));
    m.turn(&thread, "thanks", json!({})).await;
    let requests = m.h.wait_for_requests(2).await;
    let said = requests[1].message_texts("assistant");
    assert!(
        said.iter().any(|t| t
            == "Here is my plan.\n<proposed_plan>\n# Plan\n- step 1\n- step 2\n</proposed_plan>\nShall I go ahead?"),
        "{said:?}"
    );

    // After a restart, thread/resume shows the same items.
    m.h.daemon.sigterm();
    assert!(m.h.daemon.wait_exit().await.success());
    m.h.daemon = Daemon::start(transport, &m.h.home, &[]).await;
    m.h.client = m.h.daemon.client().await;
    m.h.client.initialize_with(experimental_init()).await;
    let resumed =
        m.h.client
            .request_ok("thread/resume", json!({"threadId": thread}))
            .await;
    assert_eq!(
        stored(&resumed["thread"]["turns"][0]),
        expected,
        "{resumed}"
    );
}

async fn plan_only_unterminated_and_default_mode(transport: Transport) {
    let mut m = Modes::start(transport).await;
    let thread = m.plain_thread().await;
    // A message that is only a plan shows no agent message; a block left open at the end of
    // the message closes with what it had, its last line included.
    m.push(Reply::new().text_deltas(["\n<proposed_plan>\n1. Read", " the code\n2. Fix it"]));
    let messages = m.turn(&thread, "plan only", in_mode("plan")).await;
    let plan_id = format!("{}-plan", turn_id(&messages));
    let plan = "1. Read the code\n2. Fix it";
    assert_eq!(
        merged(item_flow(&messages)),
        vec![
            step("item/started", "plan", &plan_id, ""),
            step("item/plan/delta", "", &plan_id, plan),
            step("item/completed", "plan", &plan_id, plan),
        ],
        "{messages:#?}"
    );

    // A tag not alone on its line is text.
    m.push(Reply::new().text("Use <proposed_plan> tags.\n"));
    let messages = m.turn(&thread, "explain", json!({})).await;
    let flow = merged(item_flow(&messages));
    assert_eq!(flow.len(), 3, "{flow:?}");
    assert_eq!(flow[2].3, "Use <proposed_plan> tags.\n");

    // In Default mode the tags stay in the agent message.
    let raw = "<proposed_plan>\n- a\n</proposed_plan>\n";
    m.push(Reply::new().text(raw));
    let messages = m.turn(&thread, "default now", in_mode("default")).await;
    let flow = merged(item_flow(&messages));
    assert!(
        flow.iter()
            .all(|s| s.1 != "plan" && s.0 != "item/plan/delta"),
        "{flow:?}"
    );
    assert_eq!(flow.last().unwrap().1, "agentMessage");
    assert_eq!(flow.last().unwrap().3, raw);
}

/// On the Chat Completions wire (no item announcements) the plan is split out alike.
async fn chat_completions_plans_alike(transport: Transport) {
    let setup = Setup::new(transport)
        .init_params(experimental_init())
        .wire_api(WireApi::Chat);
    let mut h = Harness::start(setup).await;
    let thread = h.start_thread().await;
    h.push(
        Reply::new().text_deltas(["Plan:\n<proposed_plan>\n1. a\n", "2. b\n</proposed_plan>\n"]),
    );
    let mut params = json!({
        "threadId": thread,
        "input": [{"type": "text", "text": "plan", "text_elements": []}],
    });
    params["collaborationMode"] = in_mode("plan")["collaborationMode"].clone();
    let messages = h.run_turn_with(params).await.messages;
    let plan_id = format!("{}-plan", turn_id(&messages));
    let flow = merged(item_flow(&messages));
    let plan = "1. a\n2. b\n";
    assert!(
        flow.contains(&step("item/completed", "plan", &plan_id, plan)),
        "{flow:?}"
    );
    assert!(
        flow.contains(&step("item/plan/delta", "", &plan_id, plan)),
        "{flow:?}"
    );
    let message = flow
        .iter()
        .find(|s| s.0 == "item/completed" && s.1 == "agentMessage")
        .expect("the agent message");
    assert_eq!(message.3, "Plan:\n");
}

/// A turn interrupted in the middle of its plan completes the plan item as streamed so far;
/// the message, which had no text of its own yet, never showed.
async fn an_interrupted_plan_completes_as_streamed(transport: Transport) {
    let mut m = Modes::start(transport).await;
    let thread = m.plain_thread().await;
    let gate = Gate::new();
    let message = json!({"type": "message", "id": "msg_held", "role": "assistant", "content": []});
    m.push(
        Reply::new()
            .raw_event(
                json!({"type": "response.output_item.added", "output_index": 0, "item": message}),
            )
            .raw_event(
                json!({"type": "response.output_text.delta", "item_id": "msg_held",
                              "output_index": 0, "content_index": 0,
                              "delta": "<proposed_plan>\n- one\n- tw"}),
            )
            .gate(&gate),
    );
    let started =
        m.h.client
            .request_ok(
                "turn/start",
                json!({"threadId": thread, "input": [{"type": "text", "text": "plan"}],
                   "collaborationMode": in_mode("plan")["collaborationMode"]}),
            )
            .await;
    let turn = str_at(&started, "/turn/id");
    m.h.client
        .wait_for("the plan's delta", |msg| msg["method"] == "item/plan/delta")
        .await;
    wait_gate(&gate).await;
    m.h.client
        .request_ok(
            "turn/interrupt",
            json!({"threadId": thread, "turnId": turn}),
        )
        .await;
    let messages =
        crate::turns::read_through(&mut m.h.client, |msg| msg["method"] == "turn/completed").await;
    assert_eq!(
        messages.last().unwrap()["params"]["turn"]["status"],
        "interrupted"
    );
    let plan_id = format!("{turn}-plan");
    let flow = merged(item_flow(&messages));
    assert!(
        flow.contains(&step("item/completed", "plan", &plan_id, "- one\n- tw")),
        "{flow:?}"
    );
    assert!(flow.iter().all(|s| s.1 != "agentMessage"), "{flow:?}");
    gate.release();
}

on_both_transports!(
    an_interrupted_plan_completes_as_streamed,
    a_proposed_plan_becomes_a_plan_item,
    plan_only_unterminated_and_default_mode,
    chat_completions_plans_alike
);

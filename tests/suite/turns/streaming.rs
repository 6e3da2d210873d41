//! Plain turns: text and reasoning streaming, the exact notification order of a turn, history
//! across turns, token usage, the Chat Completions wire, and the delta opt-out.

use serde_json::{Value, json};
use weft_mock_model::{Reasoning, Reply, Usage, WireApi};
use weft_test_support::Transport;

use super::{Harness, Setup, assistant_texts, collapse, index_of, str_at, user_texts};
use super::{TURN_CLOSING, TURN_OPENING};

/// 1,000 deltas arrive in order, all between the message's `item/started` and `item/completed`,
/// and the completed item's text is their concatenation.
async fn thousand_deltas_in_order(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    let deltas: Vec<String> = (0..1000).map(|i| format!("<{i}>")).collect();
    h.push(
        Reply::new()
            .text_deltas(deltas.clone())
            .usage(Usage::new(10, 1000)),
    );
    let thread = h.start_thread().await;
    let run = h.run_turn(&thread, "count to a thousand").await;

    let started_at = run
        .messages
        .iter()
        .position(|m| {
            m["method"] == "item/started" && m["params"]["item"]["type"] == "agentMessage"
        })
        .expect("agentMessage item/started");
    let item_id = str_at(&run.messages[started_at], "/params/item/id");
    let completed_at = run
        .messages
        .iter()
        .position(|m| {
            m["method"] == "item/completed" && m["params"]["item"]["id"] == item_id.as_str()
        })
        .expect("agentMessage item/completed");
    let mut received = Vec::new();
    for (at, msg) in run.messages.iter().enumerate() {
        if msg["method"] != "item/agentMessage/delta" {
            continue;
        }
        assert!(
            started_at < at && at < completed_at,
            "delta #{} outside its item (started at {started_at}, completed at {completed_at})",
            received.len()
        );
        assert_eq!(msg["params"]["itemId"], item_id.as_str());
        assert_eq!(msg["params"]["turnId"], run.turn_id.as_str());
        assert_eq!(msg["params"]["threadId"], thread.as_str());
        received.push(
            msg["params"]["delta"]
                .as_str()
                .expect("delta text")
                .to_owned(),
        );
    }
    assert_eq!(received, deltas, "deltas out of order or missing");
    let item = &run.messages[completed_at]["params"]["item"];
    assert_eq!(item["text"], deltas.concat());
    assert_eq!(run.completed_turn()["status"], "completed");
    // `turn/completed` carries only the final agent message (itemsView summary).
    assert_eq!(run.completed_turn()["itemsView"], "summary");
    assert_eq!(run.completed_turn()["items"][0]["text"], deltas.concat());
}

/// The exact order of a simple turn (docs/protocol.md §8.2, the reference's `text` scenario).
async fn notification_order_of_a_turn(transport: Transport) {
    let mut h = Harness::responses(transport).await;
    h.push(
        Reply::new()
            .id("resp_order")
            .text_deltas(["Hel", "lo", "!"])
            .usage(Usage::new(12, 3)),
    );
    let thread = h.start_thread().await;
    let run = h.run_turn(&thread, "hello").await;
    assert_eq!(
        run.labels(),
        [
            "response",
            "thread/status/changed:active",
            "turn/started",
            "item/started:userMessage",
            "item/completed:userMessage",
            "item/started:agentMessage",
            "item/agentMessage/delta",
            "item/agentMessage/delta",
            "item/agentMessage/delta",
            "item/completed:agentMessage",
            "thread/tokenUsage/updated",
            "thread/status/changed:idle",
            "turn/completed",
        ],
        "{:#?}",
        run.messages
    );
    let m = &run.messages;
    let turn_id = run.turn_id.as_str();
    // The response: an in-progress turn with nothing loaded yet.
    let response_turn = &m[0]["result"]["turn"];
    assert_eq!(response_turn["items"], json!([]));
    assert_eq!(response_turn["itemsView"], "notLoaded");
    assert_eq!(response_turn["startedAt"], Value::Null);
    assert_eq!(response_turn["rootTurnId"], turn_id);
    assert_eq!(
        m[1]["params"]["status"],
        json!({"type": "active", "activeFlags": []})
    );
    assert_eq!(m[1]["params"]["threadId"], thread.as_str());
    let started = &m[2]["params"]["turn"];
    assert_eq!(started["id"], turn_id);
    assert_eq!(started["status"], "inProgress");
    assert!(started["startedAt"].is_i64(), "{started}");
    // The user message echoes the input (with `text_elements: []`) and has a UUID id.
    let user = &m[3]["params"]["item"];
    assert_eq!(
        user["content"],
        json!([{"type": "text", "text": "hello", "text_elements": []}])
    );
    uuid_of(user["id"].as_str().expect("item id"));
    assert_eq!(m[4]["params"]["item"]["id"], user["id"]);
    // The agent message keeps the model's item id.
    assert_eq!(m[5]["params"]["item"]["id"], "msg_order_0");
    assert_eq!(m[5]["params"]["item"]["text"], "");
    assert_eq!(m[9]["params"]["item"]["text"], "Hello!");
    for msg in &m[3..10] {
        assert_eq!(msg["params"]["turnId"], turn_id, "{msg}");
    }
    let usage = &m[10]["params"];
    assert_eq!(usage["turnId"], turn_id);
    assert_eq!(usage["tokenUsage"]["last"]["inputTokens"], 12);
    assert_eq!(usage["tokenUsage"]["last"]["outputTokens"], 3);
    assert_eq!(usage["tokenUsage"]["total"]["totalTokens"], 15);
    assert_eq!(m[11]["params"]["status"], json!({"type": "idle"}));
    let completed = &m[12]["params"]["turn"];
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["error"], Value::Null);
    assert!(completed["completedAt"].is_i64() && completed["durationMs"].is_i64());
    // Nothing else follows the turn.
    h.client.expect_no_message_within(super::QUIET).await;
}

/// Reasoning: `summaryPartAdded` opens each part, `summaryTextDelta`s carry its index, raw
/// reasoning streams as `textDelta`, and the completed item has the whole summary and content
/// (docs/protocol.md §8.4).
#[tokio::test]
async fn reasoning_summary_and_raw_text() {
    let mut h = Harness::responses(Transport::Stdio).await;
    h.push(
        Reply::new()
            .id("resp_think")
            .reasoning(
                Reasoning::new()
                    .summary_deltas(["Thinking ", "hard"])
                    .summary("More")
                    .raw_deltas(["let me ", "think"]),
            )
            .text_deltas(["Hi", " there"]),
    );
    let thread = h.start_thread().await;
    let run = h.run_turn(&thread, "think, then say hi").await;
    let reasoning: Vec<&Value> = run
        .messages
        .iter()
        .filter(|m| {
            m["params"]["itemId"] == "rs_think_0" || m["params"]["item"]["id"] == "rs_think_0"
        })
        .collect();
    let shape: Vec<String> = reasoning
        .iter()
        .map(|m| {
            let p = &m["params"];
            match m["method"].as_str().unwrap_or_default() {
                "item/reasoning/summaryPartAdded" => format!("part {}", p["summaryIndex"]),
                "item/reasoning/summaryTextDelta" => {
                    format!(
                        "summary {} {}",
                        p["summaryIndex"],
                        p["delta"].as_str().unwrap_or("?")
                    )
                }
                "item/reasoning/textDelta" => {
                    format!(
                        "raw {} {}",
                        p["contentIndex"],
                        p["delta"].as_str().unwrap_or("?")
                    )
                }
                other => other.to_owned(),
            }
        })
        .collect();
    assert_eq!(
        shape,
        [
            "item/started",
            "part 0",
            "summary 0 Thinking ",
            "summary 0 hard",
            "part 1",
            "summary 1 More",
            "raw 0 let me ",
            "raw 0 think",
            "item/completed",
        ],
        "{reasoning:#?}"
    );
    let started = &reasoning[0]["params"]["item"];
    assert_eq!(started["type"], "reasoning");
    assert_eq!(started["summary"], json!([]));
    assert_eq!(started["content"], json!([]));
    let completed = &reasoning[8]["params"]["item"];
    assert_eq!(completed["summary"], json!(["Thinking hard", "More"]));
    assert_eq!(completed["content"], json!(["let me think"]));
    // The reasoning item completes before the answer starts.
    assert_eq!(
        collapse(&run.labels())[5..],
        [
            "item/started:reasoning",
            "item/reasoning/summaryPartAdded",
            "item/reasoning/summaryTextDelta×2",
            "item/reasoning/summaryPartAdded",
            "item/reasoning/summaryTextDelta",
            "item/reasoning/textDelta×2",
            "item/completed:reasoning",
            "item/started:agentMessage",
            "item/agentMessage/delta×2",
            "item/completed:agentMessage",
            "thread/tokenUsage/updated",
            "thread/status/changed:idle",
            "turn/completed",
        ]
    );
    assert_eq!(
        run.completed_items_of("agentMessage")[0]["text"],
        "Hi there"
    );
}

/// The second turn's model request carries the first turn's question and answer, and the token
/// totals add up across turns.
#[tokio::test]
async fn second_turn_sees_the_first() {
    let mut h = Harness::responses(Transport::Stdio).await;
    h.push(
        Reply::new()
            .text("The answer is 42.")
            .usage(Usage::new(100, 20)),
    );
    h.push(
        Reply::new()
            .text("You asked about 42.")
            .usage(Usage::new(150, 30)),
    );
    let thread = h.start_thread().await;
    let first = h.run_turn(&thread, "what is the answer?").await;
    let second = h.run_turn(&thread, "what did I ask?").await;
    assert_ne!(first.turn_id, second.turn_id);
    // Each turn is its own: a second turn/started with the new id.
    assert_eq!(second.notifications("turn/started").len(), 1);
    assert_eq!(
        second.notifications("turn/started")[0]["params"]["turn"]["id"],
        second.turn_id.as_str()
    );

    let requests = h.wait_for_requests(2).await;
    assert_eq!(requests.len(), 2);
    let users = user_texts(&requests[1]);
    let asked = index_of(&users, "what is the answer?");
    let now = index_of(&users, "what did I ask?");
    assert!(asked < now, "{users:?}");
    assert_eq!(assistant_texts(&requests[1]), ["The answer is 42."]);
    // The first request did not see the future.
    assert!(!user_texts(&requests[0]).contains(&"what did I ask?".to_owned()));
    // Both requests use the thread id as the prompt cache key.
    for request in &requests {
        assert_eq!(
            request.body["prompt_cache_key"],
            thread.as_str(),
            "{}",
            request.body
        );
    }

    let usage = &second.notifications("thread/tokenUsage/updated")[0]["params"]["tokenUsage"];
    assert_eq!(usage["last"]["totalTokens"], 180);
    assert_eq!(usage["total"]["inputTokens"], 250);
    assert_eq!(usage["total"]["outputTokens"], 50);
    assert_eq!(usage["total"]["totalTokens"], 300);
}

/// A text turn over Chat Completions (`wire_api = "chat"`): same items and order as Responses.
async fn chat_completions_text_turn(transport: Transport) {
    let mut h = Harness::start(Setup::new(transport).wire_api(WireApi::Chat)).await;
    h.push(
        Reply::new()
            .text_deltas(["Hello", " from", " chat"])
            .usage(Usage::new(7, 3)),
    );
    let (thread, run) = h.thread_with_turn("again", "hi chat").await;
    assert_eq!(
        collapse(&run.labels()),
        [
            TURN_OPENING,
            &[
                "item/started:agentMessage",
                "item/agentMessage/delta×3",
                "item/completed:agentMessage"
            ],
            TURN_CLOSING
        ]
        .concat()
    );
    assert_eq!(
        run.completed_items_of("agentMessage")[0]["text"],
        "Hello from chat"
    );
    let usage = &run.notifications("thread/tokenUsage/updated")[0]["params"]["tokenUsage"];
    assert_eq!(usage["last"]["inputTokens"], 7);
    assert_eq!(usage["last"]["outputTokens"], 3);

    let second = h.run_turn(&thread, "once more").await;
    assert_eq!(
        second.completed_items_of("agentMessage")[0]["text"],
        "again"
    );
    let requests = h.wait_for_requests(2).await;
    for request in &requests {
        assert!(
            request.path.ends_with("/chat/completions"),
            "{}",
            request.path
        );
        assert_eq!(request.body["stream"], true);
    }
    // The environment context and the prompt are one user message on Chat (roles merged,
    // docs/architecture.md §7.3).
    assert!(
        user_texts(&requests[0])
            .iter()
            .any(|t| t.ends_with("hi chat"))
    );
    let users = user_texts(&requests[1]);
    assert!(
        users.iter().any(|t| t.ends_with("hi chat")) && users.contains(&"once more".to_owned())
    );
    assert_eq!(assistant_texts(&requests[1]), ["Hello from chat"]);
}

/// `optOutNotificationMethods: ["item/agentMessage/delta"]` suppresses the deltas but not the
/// item's start and completion (docs/protocol.md §4.3).
async fn opt_out_of_deltas(transport: Transport) {
    let setup = Setup::new(transport).init_params(json!({
        "clientInfo": {"name": "weft-e2e", "version": "0.1.0"},
        "capabilities": {"optOutNotificationMethods": ["item/agentMessage/delta"]}
    }));
    let mut h = Harness::start(setup).await;
    h.push(Reply::new().text_deltas(["a", "b", "c", "d", "e"]));
    let thread = h.start_thread().await;
    let run = h.run_turn(&thread, "stream please").await;
    assert!(
        run.notifications("item/agentMessage/delta").is_empty(),
        "an opted-out delta arrived"
    );
    assert_eq!(run.notifications("item/started").len(), 2);
    assert_eq!(run.completed_items_of("agentMessage")[0]["text"], "abcde");
    assert_eq!(run.completed_turn()["status"], "completed");
}

on_both_transports!(
    thousand_deltas_in_order,
    notification_order_of_a_turn,
    chat_completions_text_turn,
    opt_out_of_deltas,
);

/// A UUID (any version); panics otherwise.
fn uuid_of(text: &str) {
    let parts: Vec<&str> = text.split('-').collect();
    let lengths: Vec<usize> = parts.iter().map(|p| p.len()).collect();
    assert!(
        lengths == [8, 4, 4, 4, 12]
            && parts
                .iter()
                .all(|p| p.chars().all(|c| c.is_ascii_hexdigit())),
        "not a UUID: {text}"
    );
    // Minted ids are UUIDv7.
    assert_eq!(&parts[2][..1], "7", "not a UUIDv7: {text}");
}

/// Chat Completions `reasoning_content` deltas become a reasoning item with raw content; the
/// reasoning starts before the answer and every delta lies inside its own item.
///
/// (Weft currently completes the reasoning item only at the end of the stream, after the
/// answer started; the reference completes reasoning before the answer starts on the
/// Responses wire. Not required by docs/protocol.md §8.3, so only the invariants are checked.)
#[tokio::test]
async fn chat_completions_reasoning_content() {
    let mut h = Harness::start(Setup::new(Transport::Stdio).wire_api(WireApi::Chat)).await;
    h.push(
        Reply::new()
            .reasoning(Reasoning::new().raw_deltas(["thinking ", "it over"]))
            .text_deltas(["the ", "answer"]),
    );
    let thread = h.start_thread().await;
    let run = h.run_turn(&thread, "think").await;
    let labels = run.labels();
    let at = |label: &str| index_of(&labels, label);
    assert!(
        at("item/started:reasoning") < at("item/started:agentMessage"),
        "{labels:?}"
    );
    for (delta, started, completed) in [
        (
            "item/reasoning/textDelta",
            "item/started:reasoning",
            "item/completed:reasoning",
        ),
        (
            "item/agentMessage/delta",
            "item/started:agentMessage",
            "item/completed:agentMessage",
        ),
    ] {
        for (i, label) in labels.iter().enumerate() {
            if label == delta {
                assert!(at(started) < i && i < at(completed), "{labels:?}");
            }
        }
    }
    let reasoning = run.completed_items_of("reasoning");
    assert_eq!(reasoning[0]["content"], json!(["thinking it over"]));
    assert_eq!(
        run.completed_items_of("agentMessage")[0]["text"],
        "the answer"
    );
    assert_eq!(run.completed_turn()["status"], "completed");
}

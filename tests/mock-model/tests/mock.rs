//! Tests of the mock model server over real HTTP.
// Test helpers outside `#[test]` functions panic on failure too.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use serde_json::{Value, json};
use weft_mock_model::{Gate, MockModel, Reasoning, Reply, Script, Usage, WireApi};

const TIMEOUT: Duration = Duration::from_secs(10);

async fn post(mock: &MockModel, path: &str, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}{path}", mock.base_url()))
        .header("authorization", "Bearer test-key")
        .json(&body)
        .send()
        .await
        .unwrap()
}

/// The body of the answer to a POST of `body` to `path`.
async fn post_text(mock: &MockModel, path: &str, body: Value) -> String {
    post(mock, path, body).await.text().await.unwrap()
}

/// The JSON payloads of the `data:` lines of an SSE body (`[DONE]` kept as a string).
fn data_lines(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .map(|data| serde_json::from_str(data).unwrap_or_else(|_| Value::String(data.into())))
        .collect()
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().unwrap()).collect()
}

#[tokio::test]
async fn responses_text_reasoning_and_tool_calls() {
    let mock = MockModel::start().await.unwrap();
    mock.push(
        Reply::new()
            .id("resp_a")
            .reasoning(
                Reasoning::new()
                    .summary_deltas(["**Plan", "ning**"])
                    .raw("thinking"),
            )
            .text_chunks("Hello world", 2)
            .phase("commentary")
            .end_turn(false)
            .function_call("call_1", "shell", r#"{"command":["ls"]}"#)
            .custom_tool_call("call_2", "apply_patch", "*** Begin Patch")
            .usage(Usage {
                input_tokens: 10,
                cached_input_tokens: 4,
                output_tokens: 5,
                reasoning_output_tokens: 2,
                total_tokens: 15,
            })
            .responses(),
    );
    let response = post(&mock, "/responses", json!({"model": "m", "input": []})).await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let body = response.text().await.unwrap();
    assert!(body.starts_with("event: response.created\ndata: {"));
    let events = data_lines(&body);
    assert_eq!(
        types(&events),
        vec![
            "response.created",
            "response.output_item.added",
            "response.reasoning_summary_part.added",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.delta",
            "response.reasoning_text.delta",
            "response.output_item.done",
            "response.output_item.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_item.done",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.output_item.done",
            "response.output_item.added",
            "response.output_item.done",
            "response.completed",
        ]
    );
    assert_eq!(
        events[6]["item"],
        json!({"type": "reasoning", "id": "rs_a_0",
               "summary": [{"type": "summary_text", "text": "**Planning**"}],
               "content": [{"type": "reasoning_text", "text": "thinking"}],
               "encrypted_content": "gAAAAB-mock-encrypted-reasoning"})
    );
    assert_eq!(events[8]["item_id"], "msg_a_1");
    assert_eq!(events[10]["item"]["content"][0]["text"], "Hello world");
    assert_eq!(events[10]["item"]["phase"], "commentary");
    assert_eq!(events[10]["item"]["end_turn"], false);
    assert_eq!(events[13]["item"]["call_id"], "call_1");
    assert_eq!(events[13]["item"]["arguments"], r#"{"command":["ls"]}"#);
    assert_eq!(events[15]["item"]["type"], "custom_tool_call");
    assert_eq!(events[15]["item"]["input"], "*** Begin Patch");
    let usage = &events[16]["response"]["usage"];
    assert_eq!(usage["input_tokens_details"]["cached_tokens"], 4);
    assert_eq!(usage["output_tokens_details"]["reasoning_tokens"], 2);
    assert_eq!(usage["total_tokens"], 15);

    let requests = mock.wait_for_requests(1, TIMEOUT).await.unwrap();
    assert_eq!(requests[0].path, "/v1/responses");
    assert_eq!(requests[0].header("Authorization"), Some("Bearer test-key"));
    assert_eq!(requests[0].body["model"], "m");
    assert_eq!(mock.remaining_scripts(), 0);
    assert_eq!(mock.finished_streams(), 1);
}

#[tokio::test]
async fn ten_thousand_deltas_in_one_body() {
    let mock = MockModel::start().await.unwrap();
    let text = "tok ".repeat(10_000);
    mock.push(Reply::new().text_chunks(&text, 10_000).responses());
    let body = post_text(&mock, "/responses", json!({})).await;
    let events = data_lines(&body);
    let deltas: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .map(|e| e["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas.len(), 10_000);
    assert_eq!(deltas.concat(), text);
}

#[tokio::test]
async fn chat_stream_with_fragmented_tool_calls_and_usage() {
    let mock = MockModel::start().await.unwrap();
    mock.push(
        Reply::new()
            .reasoning(Reasoning::new().raw_deltas(["a", "b"]))
            .text_deltas(["Hi", "!"])
            .function_call("call_a", "shell", r#"{"command":["ls","-la"]}"#)
            .function_call("call_b", "read", "{}")
            .finish_reason("stop")
            .usage(Usage::new(7, 3))
            .chat(),
    );
    let body = post_text(&mock, "/chat/completions", json!({"messages": []})).await;
    assert!(body.ends_with("data: [DONE]\n\n"));
    assert!(!body.contains("event:"));
    let chunks = data_lines(&body);
    let deltas: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c["choices"].get(0).map(|choice| &choice["delta"]))
        .collect();
    let reasoning: String = deltas
        .iter()
        .filter_map(|d| d["reasoning_content"].as_str())
        .collect();
    assert_eq!(reasoning, "ab");
    let content: String = deltas
        .iter()
        .filter_map(|d| d["content"].as_str())
        .collect();
    assert_eq!(content, "Hi!");
    let mut arguments = [String::new(), String::new()];
    for delta in &deltas {
        for call in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = call["index"].as_u64().unwrap() as usize;
            arguments[index] += call["function"]["arguments"].as_str().unwrap();
        }
    }
    assert_eq!(arguments[0], r#"{"command":["ls","-la"]}"#);
    assert_eq!(arguments[1], "{}");
    let finish: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c["choices"].get(0))
        .filter(|choice| !choice["finish_reason"].is_null())
        .collect();
    assert_eq!(finish.len(), 1);
    assert_eq!(finish[0]["finish_reason"], "stop");
    let usage = &chunks[chunks.len() - 2];
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["prompt_tokens"], 7);
    assert_eq!(usage["usage"]["total_tokens"], 10);
    assert_eq!(chunks.last().unwrap(), &json!("[DONE]"));
}

#[tokio::test]
async fn empty_queue_and_wrong_api_are_visible_500s() {
    let mock = MockModel::start().await.unwrap();
    let response = post(&mock, "/responses", json!({})).await;
    assert_eq!(response.status(), 500);
    assert!(
        response
            .text()
            .await
            .unwrap()
            .contains("no scripted response")
    );

    mock.push(Reply::new().text("hi").chat());
    let response = post(&mock, "/responses", json!({})).await;
    assert_eq!(response.status(), 500);
    assert!(response.text().await.unwrap().contains("Chat"));
}

#[tokio::test]
async fn http_errors_with_retry_after_and_failed_events() {
    let mock = MockModel::start().await.unwrap();
    mock.push(Script::api_error(429, "rate_limit_exceeded", "slow down").retry_after("3"));
    mock.push(
        Reply::new()
            .text("x")
            .failed("context_length_exceeded", "too long")
            .responses(),
    );
    let response = post(&mock, "/responses", json!({})).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "3");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limit_exceeded");

    let body = post_text(&mock, "/responses", json!({})).await;
    let events = data_lines(&body);
    let last = events.last().unwrap();
    assert_eq!(last["type"], "response.failed");
    assert_eq!(last["response"]["error"]["code"], "context_length_exceeded");
}

#[tokio::test]
async fn gate_holds_the_stream_until_released() {
    let mock = MockModel::start().await.unwrap();
    let gate = Gate::new();
    mock.push(
        Reply::new()
            .text("before")
            .gate(&gate)
            .text("after")
            .responses(),
    );
    let mut response = post(&mock, "/responses", json!({})).await;
    let mut received = String::new();
    while !received.contains("\"delta\":\"before\"") {
        let chunk = tokio::time::timeout(TIMEOUT, response.chunk())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        received += std::str::from_utf8(&chunk).unwrap();
    }
    gate.wait_reached(TIMEOUT).await.unwrap();
    assert!(!received.contains("after"));
    gate.release();
    while let Some(chunk) = response.chunk().await.unwrap() {
        received += std::str::from_utf8(&chunk).unwrap();
    }
    assert!(received.contains("\"after\""));
    assert!(received.contains("response.completed"));
}

#[tokio::test]
async fn stall_then_client_drop_is_seen_as_disconnect() {
    let mock = MockModel::start().await.unwrap();
    mock.push(Reply::new().text("partial").stall().responses());
    let mut response = post(&mock, "/responses", json!({})).await;
    let first = response.chunk().await.unwrap().unwrap();
    assert!(
        std::str::from_utf8(&first)
            .unwrap()
            .contains("response.created")
    );
    assert_eq!(mock.disconnects(), 0);
    drop(response);
    mock.wait_for_disconnect(TIMEOUT).await.unwrap();
    assert_eq!(mock.finished_streams(), 0);
}

#[tokio::test]
async fn cut_aborts_the_body() {
    let mock = MockModel::start().await.unwrap();
    mock.push(Reply::new().text("partial").cut().responses());
    mock.push(Reply::new().text("partial").close_early().responses());
    let response = post(&mock, "/responses", json!({})).await;
    assert!(
        response.text().await.is_err(),
        "a cut body must not end cleanly"
    );

    let body = post_text(&mock, "/responses", json!({})).await;
    assert!(body.contains("partial"));
    assert!(!body.contains("response.completed"));
}

#[tokio::test]
async fn models_list_and_request_log() {
    let mock = MockModel::start().await.unwrap();
    mock.set_models(["a", "b"]);
    let body: Value = reqwest::get(format!("{}/models", mock.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let ids: Vec<&str> = body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec!["a", "b"]);
    assert!(
        mock.requests().is_empty(),
        "GET /models is not a model request"
    );
    assert_eq!(mock.all_requests().len(), 1);
    let err = mock
        .wait_for_requests(1, Duration::from_millis(50))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("got 0"), "{err}");
}

#[tokio::test]
async fn broken_tool_pairing_gets_400() {
    let mock = MockModel::start().await.unwrap();
    mock.push(Reply::new().text("never served").responses());
    let body = json!({"input": [
        {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"}
    ]});
    let response = post(&mock, "/responses", body).await;
    assert_eq!(response.status(), 400);
    assert!(response.text().await.unwrap().contains("c1"));
    assert_eq!(
        mock.remaining_scripts(),
        1,
        "a rejected request keeps the script"
    );
}

#[tokio::test]
async fn event_delay_and_raw_scripts() {
    let mock = MockModel::start().await.unwrap();
    mock.push(
        Reply::new()
            .event_delay(Duration::from_millis(1))
            .text_deltas(["a", "b"])
            .responses(),
    );
    mock.push(Script::raw_sse(
        WireApi::Chat,
        "data: {\"choices\":[]}\n\ndata: [DONE]\n\n",
    ));
    let body = post_text(&mock, "/responses", json!({})).await;
    assert_eq!(data_lines(&body).len(), 6);
    let body = post_text(&mock, "/chat/completions", json!({})).await;
    assert_eq!(body, "data: {\"choices\":[]}\n\ndata: [DONE]\n\n");
}

#[tokio::test]
async fn standing_replies_answer_matching_requests_without_the_queue() {
    let mock = MockModel::start().await.unwrap();
    mock.set_standing_reply(
        |request| request.body["text"]["format"]["type"] == "json_schema",
        Reply::new().text(r#"{"title":"Mock title"}"#).responses(),
    );
    mock.push(Reply::new().text("queued").responses());
    let structured = json!({"text": {"format": {"type": "json_schema"}}});
    for _ in 0..2 {
        let response = post(&mock, "/responses", structured.clone()).await;
        assert_eq!(response.status(), 200);
        assert!(response.text().await.unwrap().contains("Mock title"));
    }
    assert_eq!(mock.remaining_scripts(), 1);
    let response = post(&mock, "/responses", json!({})).await;
    assert!(response.text().await.unwrap().contains("queued"));
    assert_eq!(
        mock.requests().len(),
        1,
        "standing replies are not queue requests"
    );
    assert_eq!(mock.all_requests().len(), 3);
}

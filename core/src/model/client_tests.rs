//! [`ModelClient`] against the scripted mock model server.

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;
use weft_mock_model::{Gate, MockModel, Reasoning, Reply, Script, Usage};

use super::*;
use crate::http_client::{HttpConfig, HttpUse, build_http_client};
use crate::model::test_support::{done_items, function_call};
use crate::model::{
    ContentItem, ReasoningContent, ResponseEvent, ResponseItem, Role, SummaryPart, TokenUsage,
};

const TIMEOUT: Duration = Duration::from_secs(10);

fn provider(mock: &MockModel, wire_api: WireApi) -> ProviderConfig {
    let mut provider = ProviderConfig::new("mock", "Mock", mock.base_url());
    provider.wire_api = wire_api;
    provider.request_max_retries = 0;
    provider.stream_idle_timeout_ms = 5_000;
    provider
}

fn client(provider: ProviderConfig) -> ModelClient {
    let http = build_http_client(&HttpConfig::default(), HttpUse::Model);
    ModelClient::new(provider, http)
}

/// A client whose next two streams break after a text delta: one cut, one closed early.
async fn broken_streams(wire_api: WireApi) -> (MockModel, ModelClient) {
    let mock = MockModel::start().await.unwrap();
    let ends: [fn(Reply) -> Reply; 2] = [Reply::cut, Reply::close_early];
    for end in ends {
        let broken = end(Reply::new().text("partial"));
        mock.push(match wire_api {
            WireApi::Responses => broken.responses(),
            WireApi::Chat => broken.chat(),
        });
    }
    let client = client(provider(&mock, wire_api));
    (mock, client)
}

fn prompt() -> Prompt {
    Prompt {
        model: "mock-model".into(),
        instructions: "be brief".into(),
        input: vec![ResponseItem::user_text("hi")],
        prompt_cache_key: Some("thread-1".into()),
        ..Prompt::default()
    }
}

type Events = Vec<Result<ResponseEvent, ModelError>>;

async fn collect(client: &ModelClient, prompt: &Prompt) -> Result<Events, ModelError> {
    let stream = client.stream(prompt).await?;
    Ok(tokio::time::timeout(TIMEOUT, stream.collect::<Events>())
        .await
        .expect("the stream must end"))
}

fn text_deltas(events: &Events) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            Ok(ResponseEvent::OutputTextDelta { delta, .. }) => Some(delta.clone()),
            _ => None,
        })
        .collect()
}

fn completed(events: &Events) -> Option<(Option<TokenUsage>, Option<bool>)> {
    match events.last() {
        Some(Ok(ResponseEvent::Completed {
            token_usage,
            end_turn,
            ..
        })) => Some((*token_usage, *end_turn)),
        _ => None,
    }
}

#[tokio::test]
async fn responses_text_stream_with_headers_and_usage() {
    let mock = MockModel::start().await.unwrap();
    mock.push(
        Reply::new()
            .id("resp_1")
            .text_chunks("Hello world", 3)
            .usage(Usage {
                input_tokens: 10,
                cached_input_tokens: 4,
                output_tokens: 5,
                reasoning_output_tokens: 1,
                total_tokens: 15,
            })
            .responses(),
    );
    let mut provider = provider(&mock, WireApi::Responses);
    provider.experimental_bearer_token = Some("sk-test".into());
    provider.http_headers.insert("X-Extra".into(), "1".into());
    provider
        .query_params
        .insert("api-version".into(), "2025".into());
    let events = collect(&client(provider), &prompt()).await.unwrap();

    assert_eq!(events[0], Ok(ResponseEvent::Created));
    assert!(matches!(
        &events[1],
        Ok(ResponseEvent::OutputItemAdded(ResponseItem::Message { id: Some(id), .. })) if id == "msg_1_0"
    ));
    assert_eq!(text_deltas(&events), vec!["Hel", "lo w", "orld"]);
    assert!(
        matches!(&events[2], Ok(ResponseEvent::OutputTextDelta { item_id, .. }) if item_id == "msg_1_0")
    );
    assert_eq!(
        done_items(&events)[0].message_text().as_deref(),
        Some("Hello world")
    );
    assert_eq!(
        events.last(),
        Some(&Ok(ResponseEvent::Completed {
            response_id: "resp_1".into(),
            token_usage: Some(TokenUsage {
                input_tokens: 10,
                cached_input_tokens: 4,
                output_tokens: 5,
                reasoning_output_tokens: 1,
                total_tokens: 15,
            }),
            end_turn: None,
        }))
    );

    let request = mock.single_request();
    assert_eq!(request.path, "/v1/responses");
    assert_eq!(request.query_param("api-version"), Some("2025"));
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(request.header("accept"), Some("text/event-stream"));
    assert_eq!(request.header("x-extra"), Some("1"));
    assert_eq!(request.header("session_id"), Some("thread-1"));
    assert_eq!(request.header("session-id"), Some("thread-1"));
    assert_eq!(request.header("thread-id"), Some("thread-1"));
    assert_eq!(request.body["model"], "mock-model");
    assert_eq!(request.body["instructions"], "be brief");
    assert_eq!(request.body["stream"], true);
    assert_eq!(request.body["prompt_cache_key"], "thread-1");
    assert_eq!(request.message_texts("user"), vec!["hi"]);
}

#[tokio::test]
async fn responses_reasoning_tool_calls_and_end_turn() {
    let mock = MockModel::start().await.unwrap();
    mock.push(
        Reply::new()
            .reasoning(
                Reasoning::new()
                    .summary_deltas(["**Plan", "ning**"])
                    .raw_deltas(["think ", "hard"]),
            )
            .text("Running ls.")
            .phase("commentary")
            .end_turn(false)
            .function_call("call_1", "shell", r#"{"command":["ls"]}"#)
            .custom_tool_call("call_2", "apply_patch", "*** Begin Patch\n*** End Patch")
            .responses(),
    );
    let events = collect(&client(provider(&mock, WireApi::Responses)), &prompt())
        .await
        .unwrap();
    let reasoning_events: Vec<&ResponseEvent> = events
        .iter()
        .filter_map(|e| e.as_ref().ok())
        .filter(|e| {
            matches!(
                e,
                ResponseEvent::ReasoningSummaryPartAdded { .. }
                    | ResponseEvent::ReasoningSummaryDelta { .. }
                    | ResponseEvent::ReasoningContentDelta { .. }
            )
        })
        .collect();
    assert_eq!(reasoning_events.len(), 5);
    assert!(matches!(
        reasoning_events[2],
        ResponseEvent::ReasoningSummaryDelta { summary_index: 0, delta, .. } if delta == "ning**"
    ));
    assert!(matches!(
        reasoning_events[4],
        ResponseEvent::ReasoningContentDelta { content_index: 0, delta, .. } if delta == "hard"
    ));
    let items = done_items(&events);
    assert_eq!(items.len(), 4);
    assert!(matches!(
        &items[0],
        ResponseItem::Reasoning { summary, content: Some(content), encrypted_content: Some(_), .. }
            if summary == &vec![SummaryPart::SummaryText { text: "**Planning**".into() }]
            && content == &vec![ReasoningContent::ReasoningText { text: "think hard".into() }]
    ));
    assert!(matches!(
        &items[1],
        ResponseItem::Message {
            role: Role::Assistant,
            end_turn: Some(false),
            phase: Some(_),
            ..
        }
    ));
    let ResponseItem::FunctionCall { id, .. } = &items[2] else {
        panic!("{:?}", items[2]);
    };
    assert!(id.is_some());
    let ResponseItem::CustomToolCall {
        call_id,
        name,
        input,
        ..
    } = &items[3]
    else {
        panic!("{:?}", items[3]);
    };
    assert_eq!((call_id.as_str(), name.as_str()), ("call_2", "apply_patch"));
    assert!(input.starts_with("*** Begin Patch"));
    assert_eq!(
        completed(&events),
        Some((Some(TokenUsage::default()), Some(false)))
    );
}

#[tokio::test]
async fn server_error_then_success_is_retried() {
    let mock = MockModel::start().await.unwrap();
    mock.push(Script::api_error(500, "server_error", "boom"));
    mock.push(Reply::new().text("ok").responses());
    let mut provider = provider(&mock, WireApi::Responses);
    provider.request_max_retries = 1;
    let events = collect(&client(provider), &prompt()).await.unwrap();
    assert_eq!(text_deltas(&events), vec!["ok"]);
    assert_eq!(mock.requests().len(), 2);

    mock.push(Script::api_error(500, "server_error", "boom"));
    let err = client(self::provider(&mock, WireApi::Responses))
        .stream(&prompt())
        .await
        .unwrap_err();
    assert!(
        matches!(err, ModelError::InternalServerError { .. }),
        "{err:?}"
    );
    assert!(err.is_retryable());
    assert_eq!(err.http_status(), Some(500));
    assert_eq!(
        mock.requests().len(),
        3,
        "request_max_retries = 0 sends once"
    );
}

#[tokio::test]
async fn rate_limit_is_retried_after_retry_after() {
    let mock = MockModel::start().await.unwrap();
    mock.push(Script::api_error(429, "rate_limit_exceeded", "slow down").retry_after("1"));
    mock.push(Reply::new().text("ok").responses());
    let mut provider = provider(&mock, WireApi::Responses);
    provider.request_max_retries = 2;
    let started = Instant::now();
    let events = collect(&client(provider.clone()), &prompt()).await.unwrap();
    assert_eq!(text_deltas(&events), vec!["ok"]);
    assert_eq!(mock.requests().len(), 2, "the 429 was retried");
    // A lower bound only: the retry waited for the server's Retry-After (backoff would have
    // waited about 200 ms).
    assert!(started.elapsed() >= Duration::from_millis(990));

    // Retries exhausted: a non-retryable rate-limit error.
    mock.push(Script::api_error(429, "rate_limit_exceeded", "slow").retry_after("0"));
    mock.push(Script::api_error(429, "rate_limit_exceeded", "slow").retry_after("0"));
    provider.request_max_retries = 1;
    let err = client(provider.clone())
        .stream(&prompt())
        .await
        .unwrap_err();
    assert!(matches!(err, ModelError::RateLimited { .. }), "{err:?}");
    assert!(!err.is_retryable());
    assert_eq!(mock.requests().len(), 4);

    // Quota errors are final at once.
    mock.push(Script::api_error(429, "insufficient_quota", "pay up"));
    let err = client(provider).stream(&prompt()).await.unwrap_err();
    assert!(matches!(err, ModelError::QuotaExceeded { .. }), "{err:?}");
    assert_eq!(mock.requests().len(), 5);
}

#[tokio::test]
async fn broken_streams_are_retryable_errors() {
    let (_mock, client) = broken_streams(WireApi::Responses).await;

    let events = collect(&client, &prompt()).await.unwrap();
    assert_eq!(text_deltas(&events), vec!["partial"]);
    let Some(Err(err)) = events.last() else {
        panic!("{events:?}");
    };
    assert!(
        matches!(err, ModelError::Stream { .. }) && err.is_retryable(),
        "{err:?}"
    );

    let events = collect(&client, &prompt()).await.unwrap();
    assert_eq!(events.last(), Some(&Err(ModelError::stream_closed())));
}

#[tokio::test]
async fn idle_timeout_on_a_stalled_stream() {
    let mock = MockModel::start().await.unwrap();
    mock.push(Reply::new().text("partial").stall().responses());
    let mut provider = provider(&mock, WireApi::Responses);
    provider.stream_idle_timeout_ms = 200;
    let events = collect(&client(provider), &prompt()).await.unwrap();
    assert_eq!(text_deltas(&events), vec!["partial"]);
    let Some(Err(err)) = events.last() else {
        panic!("{events:?}");
    };
    assert!(err.to_string().contains("idle timeout"), "{err}");
    assert!(err.is_retryable());
    // The client let go of the connection.
    mock.wait_for_disconnect(TIMEOUT).await.unwrap();
}

#[tokio::test]
async fn failed_event_ends_the_stream_at_once() {
    let mock = MockModel::start().await.unwrap();
    mock.push(
        Reply::new()
            .failed(
                "context_length_exceeded",
                "Your input exceeds the context window",
            )
            .keep_open()
            .responses(),
    );
    mock.push(
        Reply::new()
            .failed("rate_limit_exceeded", "Please try again in 1.5s.")
            .responses(),
    );
    let client = client(provider(&mock, WireApi::Responses));
    let events = collect(&client, &prompt()).await.unwrap();
    let Some(Err(err)) = events.last() else {
        panic!("{events:?}");
    };
    assert!(
        err.is_context_window_exceeded() && !err.is_retryable(),
        "{err:?}"
    );
    let events = collect(&client, &prompt()).await.unwrap();
    let Some(Err(err)) = events.last() else {
        panic!("{events:?}");
    };
    assert!(err.is_retryable());
    assert_eq!(err.retry_after(), Some(Duration::from_millis(1500)));
}

#[tokio::test]
async fn dropping_the_stream_closes_the_connection() {
    let mock = MockModel::start().await.unwrap();
    let gate = Gate::new();
    mock.push(
        Reply::new()
            .text("partial")
            .gate(&gate)
            .text("rest")
            .responses(),
    );
    let client = client(provider(&mock, WireApi::Responses));
    let mut stream = client.stream(&prompt()).await.unwrap();
    loop {
        let event = tokio::time::timeout(TIMEOUT, stream.next()).await.unwrap();
        if let Some(Ok(ResponseEvent::OutputItemDone(_))) = event {
            break;
        }
    }
    gate.wait_reached(TIMEOUT).await.unwrap();
    drop(stream);
    mock.wait_for_disconnect(TIMEOUT).await.unwrap();
    gate.release();
}

#[tokio::test]
async fn missing_api_key_fails_before_any_request() {
    let mock = MockModel::start().await.unwrap();
    let mut provider = provider(&mock, WireApi::Responses);
    provider.env_key = Some("WEFT_TEST_KEY_THAT_IS_NEVER_SET_5E2B".into());
    let err = client(provider.clone())
        .stream(&prompt())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ModelError::MissingApiKey { env_key, .. } if env_key == "WEFT_TEST_KEY_THAT_IS_NEVER_SET_5E2B"),
        "{err:?}"
    );
    assert!(!err.is_retryable());
    let err = client(provider).list_models().await.unwrap_err();
    assert!(matches!(err, ModelError::MissingApiKey { .. }));
    assert!(mock.all_requests().is_empty());
}

#[tokio::test]
async fn chat_text_tool_calls_and_usage() {
    let mock = MockModel::start().await.unwrap();
    mock.push(
        Reply::new()
            .reasoning(Reasoning::new().raw_deltas(["hm", "m"]))
            .text_deltas(["Let me ", "look."])
            .function_call("call_a", "shell", r#"{"command":["ls","-la"]}"#)
            .function_call("call_b", "read_file", r#"{"path":"README.md"}"#)
            .argument_fragments(4)
            .finish_reason("stop")
            .usage(Usage {
                input_tokens: 900,
                cached_input_tokens: 512,
                output_tokens: 40,
                reasoning_output_tokens: 3,
                total_tokens: 940,
            })
            .chat(),
    );
    let prompt = Prompt {
        tools: vec![json!({"type": "function", "name": "shell", "parameters": {"type": "object"}})]
            .into(),
        ..prompt()
    };
    let events = collect(&client(provider(&mock, WireApi::Chat)), &prompt)
        .await
        .unwrap();
    assert_eq!(text_deltas(&events), vec!["Let me ", "look."]);
    let items = done_items(&events);
    assert_eq!(items.len(), 4, "{items:?}");
    assert!(
        matches!(&items[0], ResponseItem::Reasoning { content: Some(c), .. }
        if c == &vec![ReasoningContent::ReasoningText { text: "hmm".into() }])
    );
    assert!(
        matches!(&items[1], ResponseItem::Message { id: Some(_), content, .. }
        if content == &vec![ContentItem::OutputText { text: "Let me look.".into() }])
    );
    assert_eq!(
        items[2],
        function_call("call_a", "shell", r#"{"command":["ls","-la"]}"#)
    );
    assert_eq!(
        items[3],
        function_call("call_b", "read_file", r#"{"path":"README.md"}"#)
    );
    assert_eq!(
        completed(&events),
        Some((
            Some(TokenUsage {
                input_tokens: 900,
                cached_input_tokens: 512,
                output_tokens: 40,
                reasoning_output_tokens: 3,
                total_tokens: 940,
            }),
            None
        ))
    );
    let request = mock.single_request();
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(
        request.body["stream_options"],
        json!({"include_usage": true})
    );
    assert_eq!(
        request.body["messages"],
        json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}])
    );
    assert_eq!(request.body["tools"][0]["function"]["name"], "shell");
}

#[tokio::test]
async fn chat_cut_stream_is_a_retryable_error() {
    let (_mock, client) = broken_streams(WireApi::Chat).await;
    for _ in 0..2 {
        let events = collect(&client, &prompt()).await.unwrap();
        let Some(Err(err)) = events.last() else {
            panic!("{events:?}");
        };
        assert!(err.is_retryable(), "{err:?}");
        assert!(done_items(&events).is_empty());
    }
}

#[tokio::test]
async fn ten_thousand_deltas() {
    let mock = MockModel::start().await.unwrap();
    let text = "tok ".repeat(10_000);
    mock.push(Reply::new().text_chunks(&text, 10_000).responses());
    mock.push(Reply::new().text_chunks(&text, 10_000).chat());
    for wire_api in [WireApi::Responses, WireApi::Chat] {
        let events = collect(&client(provider(&mock, wire_api)), &prompt())
            .await
            .unwrap();
        assert_eq!(text_deltas(&events).len(), 10_000);
        assert_eq!(
            done_items(&events)[0].message_text().as_deref(),
            Some(text.as_str())
        );
    }
}

#[tokio::test]
async fn list_models() {
    let mock = MockModel::start().await.unwrap();
    mock.set_models(["gpt-a", "gpt-b"]);
    let models = client(provider(&mock, WireApi::Chat))
        .list_models()
        .await
        .unwrap();
    assert_eq!(models, vec!["gpt-a", "gpt-b"]);
}

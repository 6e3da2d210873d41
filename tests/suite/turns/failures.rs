//! Model failures (docs/architecture.md §7.4–§7.5; docs/protocol.md §10.3): request retries (5xx, 429 with
//! `Retry-After`), stream retries (cut, stalled), a failure after the retries, and a provider
//! without its API key.

use serde_json::{Value, json};
use weft_mock_model::{Reply, Script};
use weft_test_support::{DEFAULT_TIMEOUT, Transport};

use super::{AGENT_MESSAGE, TURN_CLOSING, TURN_OPENING};
use super::{Harness, Setup, TurnRun, assistant_texts, collapse, partial_message};

/// A harness with these request and stream retries whose model answers a 500 first, then
/// `recovered`; a thread with one turn, which must complete: the harness, thread and run.
async fn recovered_after_a_500(request: u32, stream: u32) -> (Harness, String, TurnRun) {
    let mut h = Harness::start(Setup::new(Transport::Stdio).retries(request, stream)).await;
    h.push_script(Script::api_error(500, "server_error", "boom"));
    let (thread, run) = h.thread_with_turn("recovered", "hi").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    (h, thread, run)
}

/// A 500 answered to the first request is retried by the model client itself
/// (`request_max_retries`): no `error` notification, the turn completes.
#[tokio::test]
async fn http_500_then_success_is_retried() {
    let (h, _, run) = recovered_after_a_500(1, 0).await;
    assert_eq!(
        run.completed_items_of("agentMessage")[0]["text"],
        "recovered"
    );
    assert!(
        run.notifications("error").is_empty(),
        "a request retry is not reported: {:#?}",
        run.notifications("error")
    );
    assert_eq!(h.mock.requests().len(), 2);
}

/// With request retries off, the turn loop retries the sampling request (`stream_max_retries`)
/// and says so with an `error` notification, `willRetry: true`; the turn then completes and the
/// thread is idle, not in `systemError`.
#[tokio::test]
async fn http_500_then_success_via_stream_retry() {
    let (h, thread, run) = recovered_after_a_500(0, 1).await;
    let errors = run.notifications("error");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    let error = &errors[0]["params"];
    assert_eq!(error["willRetry"], true);
    assert_eq!(error["turnId"], run.turn_id.as_str());
    assert_eq!(error["threadId"], thread.as_str());
    assert!(
        error["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
    assert_eq!(
        collapse(&run.labels()),
        [TURN_OPENING, &["error"], AGENT_MESSAGE, TURN_CLOSING].concat()
    );
    assert_eq!(h.mock.requests().len(), 2);
}

/// A stream cut in the middle of a message: the partial message is completed with what
/// arrived, the request is retried, the retried answer completes the turn, and the partial text
/// is not sent back to the model.
async fn stream_cut_then_success(transport: Transport) {
    let mut h = Harness::start(Setup::new(transport).retries(0, 1)).await;
    h.push(partial_message("msg_cut", "half an answer").cut());
    h.push(Reply::new().id("resp_whole").text("the whole answer"));
    let thread = h.start_thread().await;
    let run = h.run_turn(&thread, "hi").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    let messages = run.completed_items_of("agentMessage");
    let texts: Vec<(&Value, &Value)> = messages.iter().map(|m| (&m["id"], &m["text"])).collect();
    assert_eq!(
        texts,
        [
            (&json!("msg_cut"), &json!("half an answer")),
            (&json!("msg_whole_0"), &json!("the whole answer"))
        ]
    );
    let errors = run.notifications("error");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert_eq!(errors[0]["params"]["willRetry"], true);
    // Every started item was completed, each exactly once.
    assert_eq!(run.notifications("item/started").len(), 3);
    assert_eq!(run.notifications("item/completed").len(), 3);
    assert_eq!(run.completed_turn()["items"][0]["text"], "the whole answer");
    let requests = h.wait_for_requests(2).await;
    assert_eq!(requests.len(), 2);
    assert!(
        assistant_texts(&requests[1]).is_empty(),
        "{:?}",
        assistant_texts(&requests[1])
    );
}

/// A stream that goes silent: the idle timeout (`stream_idle_timeout_ms`) drops it and the
/// request is retried.
#[tokio::test]
async fn stalled_stream_times_out_and_is_retried() {
    let setup = Setup::new(Transport::Stdio)
        .retries(0, 1)
        .idle_timeout_ms(300);
    let mut h = Harness::start(setup).await;
    h.push(Reply::new().text_deltas(["so far"]).stall());
    let (_, run) = h.thread_with_turn("after the stall", "hi").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    assert_eq!(run.notifications("error").len(), 1);
    assert_eq!(run.notifications("error")[0]["params"]["willRetry"], true);
    assert_eq!(
        run.completed_items_of("agentMessage")
            .last()
            .expect("an agentMessage")["text"],
        "after the stall"
    );
    h.mock
        .wait_for_disconnect(DEFAULT_TIMEOUT)
        .await
        .expect("the stalled stream's connection is closed");
}

/// A 429 with `Retry-After` is retried after the delay the server asked for (unlike the
/// reference, issue 3 §3); the turn completes.
#[tokio::test]
async fn rate_limited_429_with_retry_after() {
    let mut h = Harness::start(Setup::new(Transport::Stdio).retries(1, 0)).await;
    h.push_script(
        Script::api_error(429, "rate_limit_exceeded", "Rate limit reached").retry_after("1"),
    );
    let (_, run) = h.thread_with_turn("after waiting", "hi").await;
    assert_eq!(run.completed_turn()["status"], "completed");
    assert_eq!(
        run.completed_items_of("agentMessage")[0]["text"],
        "after waiting"
    );
    assert_eq!(h.mock.requests().len(), 2);
}

/// Every attempt fails: `error` with `willRetry: true` for the retry, then
/// `thread/status/changed {systemError}` → `error {willRetry: false}` → `turn/completed
/// {failed}` with the same `TurnError` (docs/protocol.md §8.2, the reference's `model_error` scenario).
/// The next `turn/start` moves the thread from `systemError` to `active`.
async fn failure_after_retries(transport: Transport) {
    let mut h = Harness::start(Setup::new(transport).retries(0, 1)).await;
    h.push_script(Script::api_error(500, "server_error", "still broken"));
    h.push_script(Script::api_error(500, "server_error", "still broken"));
    let (thread, run) = h.thread_with_turn("fine again", "hi").await;
    assert_eq!(
        collapse(&run.labels()),
        [
            TURN_OPENING,
            &[
                "error",
                "thread/status/changed:systemError",
                "error",
                "turn/completed"
            ]
        ]
        .concat()
    );
    let errors = run.notifications("error");
    assert_eq!(errors[0]["params"]["willRetry"], true);
    let last = &errors[1]["params"];
    assert_eq!(last["willRetry"], false);
    assert_eq!(last["turnId"], run.turn_id.as_str());
    let error = &last["error"];
    let message = error["message"].as_str().expect("error message");
    assert!(message.contains("still broken"), "{error}");
    let turn = run.completed_turn();
    assert_eq!(turn["status"], "failed");
    assert_eq!(
        &turn["error"], error,
        "turn/completed carries the error notification's TurnError"
    );
    assert_eq!(turn["items"], json!([]));
    assert_eq!(turn["itemsView"], "notLoaded");
    assert_eq!(h.mock.requests().len(), 2);

    // The next turn clears systemError.
    let next = h.run_turn(&thread, "try again").await;
    assert_eq!(next.completed_turn()["status"], "completed");
    let statuses: Vec<&Value> = next
        .notifications("thread/status/changed")
        .iter()
        .map(|m| &m["params"]["status"]["type"])
        .collect();
    assert_eq!(statuses, ["active", "idle"]);
}

/// A provider whose `env_key` variable is not set: the turn fails at once with a message
/// naming the variable; nothing reaches the model.
#[tokio::test]
async fn missing_api_key_fails_the_turn_clearly() {
    let setup = Setup::new(Transport::Stdio).env_key("WEFT_E2E_SURELY_UNSET_API_KEY");
    let mut h = Harness::start(setup).await;
    let thread = h.start_thread().await;
    let run = h.run_turn(&thread, "hi").await;
    let turn = run.completed_turn();
    assert_eq!(turn["status"], "failed");
    let message = turn["error"]["message"].as_str().expect("error message");
    assert!(
        message.contains("WEFT_E2E_SURELY_UNSET_API_KEY"),
        "{message}"
    );
    assert_eq!(turn["error"]["codexErrorInfo"], "unauthorized");
    let errors = run.notifications("error");
    assert_eq!(errors.len(), 1, "no retry for a missing key: {errors:#?}");
    assert_eq!(errors[0]["params"]["willRetry"], false);
    assert!(
        h.mock.requests().is_empty(),
        "a request went out without a key"
    );
}

/// `response.failed` for a context-window overflow is not retried and fails the turn with
/// `contextWindowExceeded`.
#[tokio::test]
async fn context_window_exceeded_is_not_retried() {
    let mut h = Harness::start(Setup::new(Transport::Stdio).retries(0, 2)).await;
    h.push(Reply::new().failed(
        "context_length_exceeded",
        "Your input exceeds the context window of this model.",
    ));
    let thread = h.start_thread().await;
    let run = h.run_turn(&thread, "hi").await;
    let turn = run.completed_turn();
    assert_eq!(turn["status"], "failed");
    assert_eq!(turn["error"]["codexErrorInfo"], "contextWindowExceeded");
    assert!(
        run.notifications("error")
            .iter()
            .all(|e| e["params"]["willRetry"] == false)
    );
    assert_eq!(h.mock.requests().len(), 1);
}

on_both_transports!(stream_cut_then_success, failure_after_retries);

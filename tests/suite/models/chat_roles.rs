//! Chat Completions against a strict chat template (docs/architecture.md §7.3): the mock
//! refuses with `400 Conversation roles must alternate…` (as llama.cpp does for Gemma or
//! Mistral) any request whose roles do not alternate, so turns with the environment context,
//! a tool call and a second prompt pass only because Weft merges runs of one role; with
//! `fold_system_prompt` the system prompt rides at the top of the first user message for a
//! template without a system role; `model_max_output_tokens` is sent as `max_tokens` (Chat)
//! and `max_output_tokens` (Responses).

use serde_json::{Value, json};
use weft_mock_model::{Alternation, Reply, WireApi};
use weft_test_support::Transport;

use super::{Config, harness};
use crate::tools::start_thread;

fn roles(messages: &[Value]) -> Vec<&str> {
    messages
        .iter()
        .map(|m| m["role"].as_str().unwrap_or(""))
        .collect()
}

fn text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

async fn turns_pass_a_template_that_requires_alternation(transport: Transport) {
    let mut h = harness(transport, WireApi::Chat, Config::default()).await;
    h.mock
        .set_strict_alternation(Some(Alternation::SystemFirst));
    let arguments = json!({"cmd": "echo hi"}).to_string();
    h.push(Reply::new().function_call("call_echo", "exec_command", arguments));
    h.push(Reply::new().text("It said hi."));
    h.push(Reply::new().text("Second answer."));
    let cwd = h.home.path().display().to_string();
    let thread = start_thread(&mut h.client, &cwd, "never", "danger-full-access").await;
    let first = h.run_turn(&thread, "say hi").await;
    assert_eq!(
        first.completed_turn()["status"],
        "completed",
        "{:?}",
        first.messages
    );
    let second = h.run_turn(&thread, "and again").await;
    assert_eq!(
        second.completed_turn()["status"],
        "completed",
        "{:?}",
        second.messages
    );

    let requests = h.wait_for_requests(3).await;
    let opening = requests[0].messages();
    assert_eq!(roles(opening), ["system", "user"], "{opening:?}");
    let user = text(&opening[1]);
    assert!(
        user.contains("<environment_context>") && user.ends_with("say hi"),
        "the environment context and the prompt are one message: {user}"
    );
    assert_eq!(
        roles(requests[1].messages()),
        ["system", "user", "assistant", "tool"]
    );
    let last = requests[2].messages();
    assert_eq!(
        roles(last),
        ["system", "user", "assistant", "tool", "assistant", "user"]
    );
    assert!(text(&last[5]).ends_with("and again"));
    assert!(
        requests[0].body.get("max_tokens").is_none(),
        "not configured"
    );
    assert_eq!(h.mock.remaining_scripts(), 0);
}

async fn the_system_prompt_folds_into_the_first_user_message(transport: Transport) {
    let config = Config {
        top: "model_max_output_tokens = 321",
        provider: "fold_system_prompt = true",
        ..Config::default()
    };
    let mut h = harness(transport, WireApi::Chat, config).await;
    h.mock.set_strict_alternation(Some(Alternation::NoSystem));
    h.push(Reply::new().text("Folded."));
    let thread = h.start_thread().await;
    let run = h.run_turn(&thread, "hello gemma").await;
    assert_eq!(
        run.completed_turn()["status"],
        "completed",
        "{:?}",
        run.messages
    );
    let request = h.mock.single_request();
    let messages = request.messages();
    assert_eq!(roles(messages), ["user"], "{messages:?}");
    let folded = text(&messages[0]);
    assert!(
        folded.starts_with("You are") && folded.ends_with("hello gemma"),
        "the base instructions first, the prompt last: {folded}"
    );
    assert_eq!(request.body["max_tokens"], 321);
}

async fn a_template_violation_fails_the_turn_with_the_servers_error(transport: Transport) {
    // The strict mock is not fooled: a system message is refused by a template without one
    // when the provider does not fold it.
    let mut h = harness(transport, WireApi::Chat, Config::default()).await;
    h.mock.set_strict_alternation(Some(Alternation::NoSystem));
    let thread = h.start_thread().await;
    let run = h.run_turn(&thread, "hello").await;
    let message = run.failure_message();
    assert!(message.contains("System role not supported"), "{message}");
    // The thread and the daemon go on: the same thread answers once the server relents.
    h.mock.set_strict_alternation(None);
    h.push(Reply::new().text("fine"));
    let again = h.run_turn(&thread, "hello").await;
    assert_eq!(again.completed_turn()["status"], "completed");
}

async fn max_output_tokens_on_the_responses_api(transport: Transport) {
    let config = Config {
        top: "model_max_output_tokens = 4096",
        ..Config::default()
    };
    let mut h = harness(transport, WireApi::Responses, config).await;
    h.push(Reply::new().text("ok"));
    let thread = h.start_thread().await;
    h.run_turn(&thread, "hi").await;
    let request = h.mock.single_request();
    assert_eq!(request.body["max_output_tokens"], 4096);
    assert!(request.body.get("max_tokens").is_none());
}

on_both_transports!(
    turns_pass_a_template_that_requires_alternation,
    the_system_prompt_folds_into_the_first_user_message,
    a_template_violation_fails_the_turn_with_the_servers_error,
    max_output_tokens_on_the_responses_api,
);

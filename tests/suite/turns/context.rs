//! What the model sees (issue 3 §4): Weft's base instructions (or the thread's), developer
//! instructions, `AGENTS.md`, the environment context, the user's text and images; thread and
//! turn settings (`model`, `effort`), sticky across turns; `prompt_cache_key` = thread id.

use serde_json::{Value, json};
use weft_mock_model::Reply;
use weft_test_support::Transport;

use super::{Harness, str_at, user_texts};

#[tokio::test]
async fn thread_settings_instructions_and_environment() {
    let mut h = Harness::responses(Transport::Stdio).await;
    for text in ["one", "two", "three"] {
        h.push(Reply::new().text(text));
    }
    let work = h.home.path().join("work");
    std::fs::create_dir_all(&work).expect("create the work folder");
    std::fs::write(work.join("AGENTS.md"), "Always answer in haiku.\n").expect("write AGENTS.md");
    let cwd = work.display().to_string();
    let started = h
        .client
        .request(
            "thread/start",
            json!({
                "cwd": cwd,
                "model": "thread-model",
                "approvalPolicy": "never",
                "sandbox": "read-only",
                "baseInstructions": "You are Weft under test.",
                "developerInstructions": "Be terse.",
            }),
        )
        .await
        .expect("thread/start");
    let thread = str_at(&started, "/thread/id");
    assert_eq!(started["model"], "thread-model");
    assert_eq!(started["modelProvider"], "mock");
    let first = h.run_turn(&thread, "first question").await;
    assert_eq!(first.completed_turn()["status"], "completed");

    let request = &h.wait_for_requests(1).await[0];
    let body = &request.body;
    assert_eq!(body["model"], "thread-model");
    assert_eq!(body["instructions"], "You are Weft under test.");
    assert_eq!(body["stream"], true);
    assert_eq!(body["prompt_cache_key"], thread.as_str());
    assert_eq!(request.header("session_id"), Some(thread.as_str()));
    assert_eq!(request.message_texts("developer"), ["Be terse."]);
    let users = user_texts(request);
    assert_eq!(
        users.last().map(String::as_str),
        Some("first question"),
        "{users:#?}"
    );
    assert!(
        users.iter().any(|t| t.contains("Always answer in haiku.")),
        "AGENTS.md is not in the request: {users:#?}"
    );
    let environment = users
        .iter()
        .find(|t| t.contains("<environment_context>"))
        .unwrap_or_else(|| panic!("no environment context: {users:#?}"));
    for part in [
        format!("<cwd>{cwd}</cwd>"),
        "<approval_policy>never</approval_policy>".to_owned(),
        "<sandbox_mode>read-only</sandbox_mode>".to_owned(),
    ] {
        assert!(
            environment.contains(&part),
            "{part} missing from {environment}"
        );
    }

    // Per-turn overrides apply to this turn and stick for the next ones.
    h.run_turn_with(
        json!({"threadId": thread, "input": [{"type": "text", "text": "second"}],
               "model": "turn-model", "effort": "high"}),
    )
    .await;
    h.run_turn(&thread, "third").await;
    let requests = h.wait_for_requests(3).await;
    assert_eq!(requests[1].body["model"], "turn-model");
    assert_eq!(requests[1].body["reasoning"]["effort"], "high");
    assert_eq!(requests[2].body["model"], "turn-model");
    assert_eq!(requests[2].body["reasoning"]["effort"], "high");
    // The instructions are sent once, not repeated every turn.
    assert_eq!(requests[2].message_texts("developer"), ["Be terse."]);
    let agents = user_texts(&requests[2])
        .iter()
        .filter(|t| t.contains("Always answer in haiku."))
        .count();
    assert_eq!(agents, 1);
}

/// Without `baseInstructions` the model gets Weft's own instructions, never another
/// product's prompt.
#[tokio::test]
async fn default_base_instructions_are_weft_s_own() {
    let mut h = Harness::responses(Transport::Stdio).await;
    h.thread_with_turn("ok", "hi").await;
    let request = &h.wait_for_requests(1).await[0];
    let instructions = request.body["instructions"].as_str().expect("instructions");
    assert!(instructions.contains("Weft"), "{instructions}");
    assert!(!instructions.contains("Codex"), "{instructions}");
    assert_eq!(request.body["model"], "mock-model");
}

/// Image inputs: a URL goes to the model as is, a local image inline as a `data:` URL; the
/// userMessage item echoes the input.
#[tokio::test]
async fn image_inputs_reach_the_model() {
    let mut h = Harness::responses(Transport::Stdio).await;
    h.push(Reply::new().text("nice pictures"));
    let thread = h.start_thread().await;
    let png = h.home.write_file("pixel.png", "not really a png");
    let png = png.display().to_string();
    let input = json!([
        {"type": "text", "text": "look"},
        {"type": "image", "url": "https://example.com/cat.png"},
        {"type": "localImage", "path": png},
    ]);
    let messages = h
        .run_turn_with(json!({"threadId": thread, "input": input}))
        .await
        .messages;
    let user = messages
        .iter()
        .find(|m| m["method"] == "item/completed" && m["params"]["item"]["type"] == "userMessage")
        .expect("userMessage");
    let content = &user["params"]["item"]["content"];
    assert_eq!(
        content[0],
        json!({"type": "text", "text": "look", "text_elements": []})
    );
    assert_eq!(content[1]["url"], "https://example.com/cat.png");
    assert_eq!(content[2]["path"], png.as_str());

    let request = &h.wait_for_requests(1).await[0];
    let last_user = request
        .input()
        .iter()
        .rev()
        .find(|i| i["type"] == "message" && i["role"] == "user")
        .expect("a user message");
    let images: Vec<&str> = last_user["content"]
        .as_array()
        .expect("content parts")
        .iter()
        .filter(|p| p["type"] == "input_image")
        .map(|p| p["image_url"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(images.len(), 2, "{last_user}");
    assert_eq!(images[0], "https://example.com/cat.png");
    assert!(
        images[1].starts_with("data:image/png;base64,"),
        "{}",
        images[1]
    );
    let texts: Vec<&Value> = last_user["content"]
        .as_array()
        .expect("content parts")
        .iter()
        .filter(|p| p["type"] == "input_text")
        .map(|p| &p["text"])
        .collect();
    assert_eq!(texts, ["look"]);
}

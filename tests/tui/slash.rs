//! Slash commands against Weft: `/new`, `/rename`, `/compact`, `/status`.

use serde_json::json;
use weft_mock_model::Reply;
use weft_test_support::Tui;

use crate::{Session, wait_idle};

/// An `on-request` session and its TUI, after one turn: `prompt`, answered with `answer`.
async fn after_one_turn(prompt: &str, answer: &str) -> (Session, Tui) {
    let s = Session::start("on-request").await;
    let tui = s.ready_tui().await;
    s.prompt(&tui, prompt, answer).await;
    (s, tui)
}

/// Type a slash command and run it (the first Enter may only pick it from the popup).
async fn slash(tui: &Tui, command: &str) {
    tui.type_text(command);
    tui.wait_for_text(command).await;
    tui.press("Enter");
}

/// The names of the threads Weft lists.
async fn thread_names(s: &mut Session) -> Vec<String> {
    let mut client = s.daemon.initialized_client().await;
    let list = client.request("thread/list", json!({})).await.unwrap();
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[tokio::test]
async fn new_starts_a_fresh_thread() {
    let (s, tui) = after_one_turn("Remember apples", "Apples remembered.").await;
    slash(&tui, "/new").await;
    tui.wait_for_screen("a fresh thread", |screen| {
        !screen.contains("Apples remembered.") && screen.contains("? for shortcuts")
    })
    .await;
    s.prompt(&tui, "Anything remembered?", "Nothing so far.")
        .await;
    let requests = s.wait_for_requests(2).await;
    let users = requests[1].message_texts("user");
    assert!(
        !users.iter().any(|t| t.contains("Remember apples")),
        "the new thread carries the old one's history: {users:?}"
    );
}

#[tokio::test]
async fn rename_sets_the_thread_name() {
    let (mut s, tui) = after_one_turn("Name me", "Named soon.").await;
    slash(&tui, "/rename").await;
    tui.wait_for_text("Rename thread").await;
    // The suggestion (a title side request) fills the field; wait for it before clearing.
    tui.wait_for_text("Suggested from this conversation").await;
    tui.press("C-u");
    tui.submit("Renamed by the test").await;
    tui.wait_for_screen("the new name in the footer", |screen| {
        screen.contains("Renamed by the test") && !screen.contains("Rename thread")
    })
    .await;
    assert_eq!(thread_names(&mut s).await, ["Renamed by the test"]);
}

#[tokio::test]
async fn compact_compacts_the_thread() {
    let (s, tui) = after_one_turn("Some history", "History made.").await;
    s.push(Reply::new().text("Summary: the user made some history."));
    slash(&tui, "/compact").await;
    tui.wait_for_text("Context compacted").await;
    wait_idle(&tui).await;
    s.prompt(&tui, "After compaction", "Still here.").await;
    let requests = s.wait_for_requests(3).await;
    let last = requests[2].message_texts("user").join("\n");
    assert!(
        last.contains("Summary: the user made some history."),
        "the summary is not in the next request: {last}"
    );
}

#[tokio::test]
async fn status_shows_the_session() {
    let (s, tui) = after_one_turn("Status please", "Status coming.").await;
    slash(&tui, "/status").await;
    let screen = tui.wait_for_text("Session:").await;
    let line = |label: &str| {
        screen
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no `{label}` line:\n{screen}"))
            .to_owned()
    };
    assert!(line("Model:").contains("mock-model"), "{screen}");
    assert!(line("Model provider:").contains("mock"), "{screen}");
    assert!(
        line("Directory:").contains(&s.client.workspace().display().to_string()),
        "{screen}"
    );
    assert!(line("Server:").contains(&s.url()), "{screen}");
    let problems = crate::screen_problems(&screen);
    assert!(problems.is_empty(), "{problems:?}\n{screen}");
}

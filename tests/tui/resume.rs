//! Coming back to earlier threads: the resume picker (`codex resume --remote …`),
//! `codex resume --last --remote …` and `codex fork --last --remote …`.

use serde_json::json;
use weft_mock_model::Reply;
use weft_test_support::{Client, Tui};

use crate::{Session, wait_idle, wait_ready, wait_turn_done};

/// A thread in the workspace with one finished turn and a name, made by a plain client.
async fn named_thread(client: &mut Client, s: &Session, prompt: &str, name: &str) -> String {
    let cwd = s.client.workspace().display().to_string();
    let started = client
        .request("thread/start", json!({ "cwd": cwd }))
        .await
        .unwrap();
    let thread = started["thread"]["id"].as_str().unwrap().to_owned();
    s.push(Reply::new().text(format!("Answer to {prompt}.")));
    client
        .request(
            "turn/start",
            json!({"threadId": thread, "input": [{"type": "text", "text": prompt}]}),
        )
        .await
        .unwrap();
    client
        .wait_for("turn/completed", |m| {
            m["method"] == "turn/completed" && m["params"]["threadId"] == thread.as_str()
        })
        .await;
    client
        .request("thread/name/set", json!({"threadId": thread, "name": name}))
        .await
        .unwrap();
    thread
}

/// A conversation of two turns made in the TUI, which is then closed.
async fn earlier_conversation(s: &Session) {
    let tui = s.ready_tui().await;
    for (prompt, answer) in [
        ("Remember the word kiwi", "I will remember kiwi."),
        ("And the word plum", "Plum is noted too."),
    ] {
        s.push(Reply::new().text(answer));
        tui.submit(prompt).await;
        wait_turn_done(&tui, answer).await;
    }
    drop(tui);
}

#[tokio::test]
async fn the_resume_picker_lists_earlier_threads_by_name() {
    let mut s = Session::start("on-request").await;
    let mut client = s.daemon.initialized_client().await;
    named_thread(&mut client, &s, "first", "Alpha thread").await;
    named_thread(&mut client, &s, "second", "Beta thread").await;
    let tui = s.tui(&["resume"]);
    let screen = tui.wait_for_text("Resume a previous session").await;
    let screen = if screen.contains("Beta thread") && screen.contains("Alpha thread") {
        screen
    } else {
        tui.wait_for_screen("both threads in the picker", |screen| {
            screen.contains("Alpha thread") && screen.contains("Beta thread")
        })
        .await
    };
    // Most recent first.
    let alpha = screen.find("Alpha thread").unwrap();
    let beta = screen.find("Beta thread").unwrap();
    assert!(beta < alpha, "not most recent first:\n{screen}");
    // Enter resumes the selected (most recent) thread.
    tui.press("Enter");
    tui.wait_for_text("Answer to second.").await;
    wait_ready(&tui).await;
}

#[tokio::test]
async fn resume_last_shows_the_conversation_and_continues_it() {
    let s = Session::start("on-request").await;
    earlier_conversation(&s).await;
    let tui = s.tui(&["resume", "--last"]);
    for text in [
        "Remember the word kiwi",
        "I will remember kiwi.",
        "And the word plum",
        "Plum is noted too.",
    ] {
        tui.wait_for_text(text).await;
    }
    wait_idle(&tui).await;
    s.push(Reply::new().text("Kiwi and plum."));
    tui.submit("Which words?").await;
    tui.wait_for_text("Kiwi and plum.").await;
    let requests = s.wait_for_requests(3).await;
    let users = requests[2].message_texts("user").join("\n");
    assert!(
        users.contains("Remember the word kiwi") && users.contains("Which words?"),
        "the resumed turn lacks the history: {users}"
    );
}

#[tokio::test]
async fn fork_last_copies_the_conversation_into_a_new_thread() {
    let mut s = Session::start("on-request").await;
    earlier_conversation(&s).await;
    let tui: Tui = s.tui(&["fork", "--last"]);
    tui.wait_for_text("I will remember kiwi.").await;
    wait_turn_done(&tui, "Plum is noted too.").await;
    s.push(Reply::new().text("Forked and answering."));
    tui.submit("Go on in the fork").await;
    wait_turn_done(&tui, "Forked and answering.").await;
    let requests = s.wait_for_requests(3).await;
    let users = requests[2].message_texts("user").join("\n");
    assert!(users.contains("And the word plum"), "{users}");
    let mut client = s.daemon.initialized_client().await;
    let list = client.request("thread/list", json!({})).await.unwrap();
    assert_eq!(
        list["data"].as_array().unwrap().len(),
        2,
        "the fork is not a thread of its own: {list}"
    );
}
